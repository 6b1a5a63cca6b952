import { strict as assert } from 'node:assert';
import { DEFAULT_RETRIEVAL, Head, ProtectedBudget, withoutRepeatedRules, type ContextBlock } from '../../src/core/head';
import { SessionRecord } from '../../src/core/parts';
import { InMemorySnapshotStore, RETRIEVAL_KEY } from '../../src/core/store';
import { emptySummary, renderSummary, type SummaryState } from '../../src/core/summary';
import { CachedTokenCounter, CharRatioTokenCounter } from '../../src/core/tokens';
import { budgetOf, RecordBuilder } from './engineHarness';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

/** A protected block whose text the test sets, with a revision bumped at each change. */
class Block implements ContextBlock {
  revision = 0;
  constructor(private text: string) {}
  set(text: string): void {
    this.text = text;
    this.revision++;
  }
  bump(): void {
    this.revision++;
  }
  render(): string {
    return this.text;
  }
}

function setup(protectedText = '## Protected state\n- never touch prod (r0)') {
  const b = new RecordBuilder().user('Fix the flaky parser test in src/parser.ts');
  b.step('Looking.', [{ name: 'Bash', input: { command: 'npm test -- parser' }, output: 'FAIL src/parser.test.ts\nexpected 3 got 4' }]);
  b.read('src/parser.ts', 40, 'Reading the parser.');
  b.user('Also check why the parser test expected 3');
  b.read('src/lexer.ts', 40);
  const record = new SessionRecord();
  for (const r of b.records) record.append(r);
  const snapshots = new InMemorySnapshotStore();
  const block = new Block(protectedText);
  const head = new Head({ record, snapshots, budget: budgetOf(40_000), counter: new CachedTokenCounter(new CharRatioTokenCounter()), blocks: [block], retrieval: DEFAULT_RETRIEVAL, redactor });
  const folded: SummaryState = { ...emptySummary(), coverageEnd: record.units[3]!.firstRecord, current: { goal: 'fix the parser test', deliverable: '', status: 'failing', next: 'read the lexer' } };
  return { record, snapshots, block, head, folded };
}

describe('head: the Task Context and the blocks sent with it', () => {
  it('measures the blocks again only when what they come from changed, and only a changed text costs a count', () => {
    const { head, block } = setup();
    const first = head.measure(0, undefined);
    assert.equal(first, Math.ceil(block.render().length / 4) + 1);
    assert.equal(head.measure(0, undefined), undefined, 'same coverage and revisions');
    block.bump();
    assert.equal(head.measure(0, undefined), undefined, 'a new revision with the same text');
    block.set('## Protected state\n- never touch prod (r0)\n- use pnpm (r4)');
    assert.equal(head.measure(0, undefined), Math.ceil(block.render().length / 4) + 1);
    head.invalidate();
    assert.equal(head.measure(0, undefined), undefined, 'derived again, same text: nothing to count');
  });

  it('before the first fold the head holds the protected blocks only', () => {
    const { head, block } = setup();
    const text = head.render(0, undefined);
    assert.equal(text.text, block.render());
    assert.deepEqual(text.parts.map((p) => p.block), ['protectedState']);
    assert.equal(head.render(0, undefined), text, 'kept while nothing changed');
  });

  it('after a fold: the Task Context, the protected state, passages of the folded record, the evidence not loaded', () => {
    const { head, folded, snapshots, record } = setup();
    const text = head.render(3, folded);
    assert.deepEqual(
      text.parts.map((p) => p.block),
      ['summary', 'protectedState', 'retrieved', 'evidence'],
    );
    assert.equal(text.parts[0]!.text, renderSummary(folded));
    assert.match(text.parts[3]!.text, /## Evidence not loaded/);
    assert.match(text.parts[3]!.text, /view_tool_call\("call_2"\): Read src\/parser\.ts \(folded, r\d+\)/);
    assert.equal(text.text, text.parts.map((p) => p.text).join('\n\n'));
    // The request the retrieval block was built for is kept with the coverage.
    const stored = snapshots.get(RETRIEVAL_KEY);
    assert.equal(stored?.type, 'retrieval');
    if (stored?.type === 'retrieval') assert.deepEqual(stored.retrieval, { coverageEnd: folded.coverageEnd, queryRecord: record.units[3]!.firstRecord });
  });

  it('a checkpoint puts the blocks back as they were, with the request they were built for', () => {
    const { head, folded, snapshots, record } = setup();
    assert.notEqual(head.measure(3, folded), undefined);
    const saved = head.checkpoint();
    const before = snapshots.get(RETRIEVAL_KEY);
    assert.notEqual(head.measure(5, { ...folded, coverageEnd: record.records.length }), undefined);
    assert.notEqual(snapshots.get(RETRIEVAL_KEY), before);
    head.restore(saved);
    assert.equal(snapshots.get(RETRIEVAL_KEY), before);
    assert.equal(head.measure(3, folded), undefined, 'measured for coverage 3 again');
  });

  it('tells the user once per size class when the protected blocks are over their budget', () => {
    const budget = new ProtectedBudget();
    const counter = new CachedTokenCounter(new CharRatioTokenCounter());
    budget.check('short', 10_000, counter);
    assert.deepEqual(budget.notices, []);
    budget.check('x'.repeat(6200), 10_000, counter); // 1550 tokens over a block of 1500
    budget.check('x'.repeat(6400), 10_000, counter); // 1600: the same size class
    assert.equal(budget.notices.length, 1);
    assert.match(budget.notices[0]!, /takes 1550 tokens, over its block of 1500 \(15% of the effective window\)/);
    budget.check('x'.repeat(8000), 10_000, counter); // 2000: the next class
    assert.equal(budget.notices.length, 2);
  });
});

describe('the protected block beside the Task Context', () => {
  const block = [
    '## Protected state',
    'Stated by the user or decided, verbatim with their source records; what the user stated overrides anything a summary says.',
    '### constraint',
    '- Never push to main, not even a one-line fix: open a pull request and wait for the review. (r3)',
    '- Keep the public API of the exporter stable: no renamed export, no changed signature, no removed option. (r5, r9)',
    '- Do not reformat files you did not change. (r7)',
    '### decision',
    '- Never push to main, not even a one-line fix: open a pull request and wait for the review. (r3)',
  ].join('\n');

  it('does not repeat a rule the Task Context shows word for word under Constraints, and says where it is', () => {
    const summary = ['## Task Context', '### Constraints', '- Never push to main, not even a one-line fix: open a pull request and wait for the review. (r3)', '- Keep the public API of the exporter stable: no renamed export, no changed signature, no removed option. (r5, r9)', '### Findings', '- Do not reformat files you did not change. (r7)'].join('\n');
    const out = withoutRepeatedRules(block, summary);
    assert.doesNotMatch(out, /### constraint\n- Never push to main/);
    assert.doesNotMatch(out, /Keep the public API of the exporter stable/);
    // Only Constraints count: the same words under another heading are no copy of the rule.
    assert.match(out, /- Do not reformat files you did not change\. \(r7\)/);
    assert.match(out, /- 2 more rules of the user's, word for word in the Task Context above/);
    // Other sections keep their lines.
    assert.match(out, /### decision\n- Never push to main, not even a one-line fix: open a pull request and wait for the review\. \(r3\)/);
  });

  it('finds rules added at a later fold, and leaves the block whole when the summary shortened a rule', () => {
    // A rule the user corrected since stays here, whatever the summary says.
    const corrected = block.replace('- Do not reformat files you did not change. (r7)', '- Do not reformat files you did not change. (r7; v2, corrected by the user)');
    assert.match(withoutRepeatedRules(corrected, '### Constraints\n- Do not reformat files you did not change. (r7)'), /Do not reformat files you did not change\. \(r7; v2, corrected by the user\)/);
    const later = withoutRepeatedRules(block, ['## Task Context', '### Added at later folds (newest last)', '- [Constraints] Never push to main, not even a one-line fix: open a pull request and wait for the review. (r3)', '- [Constraints] Keep the public API of the exporter stable: no renamed export, no changed signature, no removed option. (r5, r9)'].join('\n'));
    assert.match(later, /- 2 more rules of the user's/);
    // A rule shorter than the line that would point to it stays here: the pointer would cost more than it saves.
    const short = '## Protected state\n### constraint\n- Never push to main. (r3)';
    assert.equal(withoutRepeatedRules(short, '### Constraints\n- Never push to main. (r3)'), short);
    const shortened = ['## Task Context', '### Constraints', '- Never push to main… (r3)'].join('\n');
    assert.equal(withoutRepeatedRules(block, shortened), block);
    assert.equal(withoutRepeatedRules('## Workspace rules\n- Never push to main. (r3)', '### Constraints\n- Never push to main. (r3)'), '## Workspace rules\n- Never push to main. (r3)');
  });

  it('does not repeat a choice or an objection the request log shows word for word, and names the requests', () => {
    const protectedBlock = [
      '## Protected state',
      'Stated by the user or decided, verbatim with their source records; what the user stated overrides anything a summary says.',
      '### constraint',
      '- the user objected: "you\'re editing files in the main workspace" (r318)',
      '- never commit without signing. (r901)',
      '### decision',
      '- "2" → chose "2. Close Claude Code and do a full rebase - for perfectionism" (offered r602) (r604)',
      '- "1" → chose "1. Push to GitHub (`git push origin main`)" (offered r975) (r977)',
      '- "3" → chose "3. Keep the old config" (offered r990) (r992)',
      '### decision (the agent\'s own as of r999: later messages may have changed one)',
      '- "1" → chose "1. Push to GitHub (`git push origin main`)" (offered r975) (r977)',
    ].join('\n');
    const summary = [
      '## Task Context',
      '### Requests',
      '- #13 (r318): you\'re editing files in the main workspace',
      '- #14 (r604): "2" → chose "2. Close Claude Code and do a full rebase - for perfectionism" (offered r602)',
      '- #21 (r901): never commit without signing. use ps GPG alt',
      '### Findings',
      '- "3" → chose "3. Keep the old config" (offered r990) (r992)',
      '### Added at later folds (newest last)',
      '- [Request] #22 (r977): "1" → chose "1. Push to GitHub (`git push origin main`)" (offered r975)',
    ].join('\n');
    const out = withoutRepeatedRules(protectedBlock, summary);
    // The two choices the request log holds, including one appended at a later fold, give way to one line naming them.
    assert.match(out, /\n- 2 more choices of the user's, word for word in the Task Context above as requests #14, #22: in force as if listed here\n/);
    assert.doesNotMatch(out, /### decision\n[^#]*full rebase/);
    // The same words under another heading are no request: that choice stays.
    assert.match(out, /- "3" → chose "3\. Keep the old config"/);
    // One objection is shorter than a line pointing to it: it stays, as does a rule a longer request only contains.
    assert.match(out, /### constraint\n- the user objected: "you're editing files in the main workspace" \(r318\)\n- never commit without signing\. \(r901\)\n/);
    // Objections are named as such, so their framing survives.
    const twice = withoutRepeatedRules(
      protectedBlock.replace('(r318)', '(r318)\n- the user objected: "you\'re making changes in the main workspace" (r96)'),
      summary.replace('### Requests', '### Requests\n- #6 (r96): you\'re making changes in the main workspace'),
    );
    assert.match(twice, /### constraint\n- never commit without signing\. \(r901\)\n- the user's objections to what the agent did, word for word in the Task Context above as requests #13, #6: in force as if listed here\n/);
    // The agent's own decisions are not the user's words: never pointed away.
    assert.match(out, /### decision \(the agent's own[^\n]*\n- "1" → chose "1\. Push to GitHub/);
    // Without the request log, the block is whole.
    assert.equal(withoutRepeatedRules(protectedBlock, '## Task Context\n### Findings\n- nothing'), protectedBlock);
  });
});
