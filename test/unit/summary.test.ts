import { strict as assert } from 'node:assert';
import { ROLLING_SUMMARY_BUDGET_TOKENS } from '../../src/core/budget';
import { SessionRecord } from '../../src/core/parts';
import {
  ExtractiveSummarizer,
  extractConstraints,
  handlesOf,
  protectedFromRaw,
  REQUEST_MAX_CHARS,
  StaticCheckpointSummarizer,
  topicKey,
} from '../../src/core/summarizer';
import {
  emptySummary,
  enforceCap,
  formatFact,
  keyRestatesText,
  renderSummary,
  SECTION_NAMES,
  SummaryBuilder,
  summaryToJson,
  validateTaskContext,
  type SummaryState,
} from '../../src/core/summary';
import { CharRatioTokenCounter } from '../../src/core/tokens';
import type { Unit } from '../../src/core/types';
import { RecordBuilder } from './engineHarness';

const counter = new CharRatioTokenCounter();

function unitsOf(b: RecordBuilder): { record: SessionRecord; units: readonly Unit[] } {
  const record = new SessionRecord();
  for (const r of b.records) record.append(r);
  return { record, units: record.units };
}

describe('Task Context sections', () => {
  it('renders every section, in order, and validates', () => {
    const text = renderSummary(emptySummary());
    assert.deepEqual(validateTaskContext(text), []);
    const broken = text.replace('### Findings', '### Finds');
    assert.deepEqual(validateTaskContext(broken), ['missing section "Findings"']);
    const swapped = text.replace('### Decisions', '### TMP').replace('### Constraints', '### Decisions').replace('### TMP', '### Constraints');
    assert.ok(validateTaskContext(swapped).some((p) => /out of order/.test(p)));
    assert.deepEqual(Object.keys(summaryToJson(emptySummary())), [...SECTION_NAMES]);
  });

  it('a reused topic key supersedes the earlier fact', () => {
    const b = new SummaryBuilder(emptySummary());
    b.upsert('Decisions', { key: 'db-driver', text: 'use pg', sources: [3], priority: 2 });
    b.upsert('Decisions', { key: 'cache', text: 'use redis', sources: [4], priority: 2 });
    b.upsert('Decisions', { key: 'db-driver', text: 'use postgres.js instead of pg', sources: [9], priority: 2 });
    const d = b.facts.Decisions;
    assert.equal(d.length, 2);
    assert.equal(d[0]!.text, 'use postgres.js instead of pg');
    assert.deepEqual(d[0]!.sources, [3, 9]);
    // a key that moves section leaves its old one
    b.upsert('Ruled out', { key: 'cache', text: 'redis is not available', sources: [12], priority: 2 });
    assert.equal(b.facts.Decisions.length, 1);
    assert.equal(b.facts['Ruled out'][0]!.key, 'cache');
  });
});

describe('demotion under the cap', () => {
  function bloated(): SummaryState {
    const b = new SummaryBuilder(emptySummary());
    for (let i = 0; i < 5; i++) b.requests.push({ ordinal: i + 1, text: `Request number ${i} with some words`, record: i, elided: 0 });
    b.upsert('Constraints', { key: 'never-touch-prod', text: 'Never touch the production database.', sources: [0], priority: 0 });
    b.upsert('Deliverables', { key: 'src/app.ts', text: 'created, modified ×4', sources: [10], priority: 1 });
    for (let i = 0; i < 120; i++) b.upsert('Findings', { key: `finding-${i}`, text: `A finding about module ${i} `.repeat(4), sources: [100 + i], priority: 3 });
    for (let i = 0; i < 60; i++) b.upsert('Decisions', { key: `decision-${i}`, text: `Decided thing ${i} because reasons `.repeat(3), sources: [300 + i], priority: 2 });
    return b.build(500, 3);
  }

  it('brings the head under the cap without deleting a P0 or P1 line', () => {
    const state = bloated();
    const before = counter.count(renderSummary(state));
    assert.ok(before > ROLLING_SUMMARY_BUDGET_TOKENS);
    const { state: capped, report } = enforceCap(state, counter);
    assert.ok(report.tokens <= ROLLING_SUMMARY_BUDGET_TOKENS, `${report.tokens}`);
    assert.equal(report.overCap, false);
    assert.ok(report.demoted > 0);
    assert.equal(capped.requests.length, 5);
    assert.deepEqual(capped.requests, state.requests);
    assert.ok(capped.facts.Constraints.some((c) => c.key === 'never-touch-prod' && c.text === 'Never touch the production database.'));
    assert.ok(capped.facts.Deliverables.some((d) => d.key === 'src/app.ts'));
    // lowest priority goes first: findings are demoted before decisions
    const archivedText = renderSummary(capped);
    assert.match(archivedText, /finding-0/);
    // every demoted key still has a pointer in Archived
    for (let i = 0; i < 120; i++) assert.ok(archivedText.includes(`finding-${i}`), `finding-${i} lost`);
  });

  it('reports when P0 alone exceeds the cap, and still keeps it', () => {
    const b = new SummaryBuilder(emptySummary());
    for (let i = 0; i < 80; i++) b.requests.push({ ordinal: i + 1, text: `Please do task ${i}: ${'detail '.repeat(30)}`, record: i, elided: 0 });
    const { state, report } = enforceCap(b.build(100, 1), counter, 1000);
    assert.equal(report.overCap, true);
    assert.equal(state.requests.length, 80);
    for (const r of state.requests) assert.match(r.text, /^Please do task \d+: detail/);
  });
});

describe('fact lines said once', () => {
  it('a key that only restates its statement is not repeated; any other key stays', () => {
    const text = 'Port 53 is bound to dnsmasq, not blocky.';
    assert.equal(keyRestatesText(topicKey(text), text), true);
    assert.equal(formatFact({ key: topicKey(text), text, sources: [72], priority: 3 }), 'Port 53 is bound to dnsmasq, not blocky. (r72)');
    // a key naming something the text does not say is information: kept
    assert.equal(formatFact({ key: 'db-driver', text: 'use postgres.js instead of pg', sources: [9], priority: 2 }), 'db-driver: use postgres.js instead of pg (r9)');
    assert.equal(formatFact({ key: 'cmd-npm-test', text: '`npm test` failed (exit 1)', sources: [3, 4], priority: 2 }), 'cmd-npm-test: `npm test` failed (exit 1) (r3, r4)');
    // an archived pointer whose gist is gone is its key
    assert.equal(formatFact({ key: 'outcome-r181', text: '', sources: [181], priority: 3 }), 'outcome-r181:  (r181)');
    // the key still identifies the line: reusing it supersedes
    const b = new SummaryBuilder(emptySummary());
    b.upsert('Findings', { key: topicKey(text), text, sources: [72], priority: 3 });
    b.upsert('Findings', { key: topicKey(text), text: 'Port 53 is bound to dnsmasq, not blocky; blocky listens on 5353.', sources: [90], priority: 3 });
    assert.equal(b.facts.Findings.length, 1);
    assert.deepEqual(b.facts.Findings[0]!.sources, [72, 90]);
  });

  it('a finished command is quoted once, after its description when it has one', async () => {
    const b = new RecordBuilder()
      .user('Commit the fix.')
      .step('', [{ name: 'Bash', input: { command: 'git commit -m "fix parser"' }, output: '[main 1a2b3c] fix parser' }])
      .step('', [{ name: 'Bash', input: { command: 'git push origin main', description: 'Push the fix to the remote' }, output: 'done' }]);
    const state = await new ExtractiveSummarizer(counter).fold({ previous: undefined, units: unitsOf(b).units, coverageEnd: b.records.length });
    const texts = state.facts.Decisions.map((d) => d.text);
    assert.ok(texts.includes('done: `git commit -m "fix parser"`'), JSON.stringify(texts));
    assert.ok(texts.includes('done: Push the fix to the remote — `git push origin main`'), JSON.stringify(texts));
  });
});

describe('demotion by later references', () => {
  it('names the handles a later record would use: code spans, paths, identifiers', () => {
    assert.deepEqual(handlesOf('The bug is in `parseHeader` in src/parser.ts, see MAX_DEPTH and fooBar.'), ['parseheader', 'src/parser.ts', 'max_depth', 'foobar']);
    assert.deepEqual(handlesOf('Nothing to point at here.'), []);
  });

  it('counts the later units that name a line, and the cap demotes the least referred first', async () => {
    const b = new RecordBuilder()
      .user('Fix the parser.')
      .step('The root cause is that `parseHeader` drops the last byte.', [])
      .step('The root cause of the flaky clock test is unrelated to timing.', [])
      .read('src/other.ts', 5, 'Looking at the parser again: parseHeader is called twice.')
      .read('src/more.ts', 5, 'And parseHeader once more.');
    const { units } = unitsOf(b);
    const s = new ExtractiveSummarizer(counter);
    const first = await s.fold({ previous: undefined, units: units.slice(0, 3), coverageEnd: units[3]!.firstRecord });
    const second = await s.fold({ previous: first, units: units.slice(3), coverageEnd: b.records.length });
    const referred = second.facts.Findings.find((l) => /parseHeader/.test(l.text))!;
    const other = second.facts.Findings.find((l) => /flaky clock/.test(l.text))!;
    assert.equal(referred.refs, 2);
    assert.equal(other.refs ?? 0, 0);
  });

  it('under the cap, the least referred line is demoted first, then the oldest', () => {
    const b = new SummaryBuilder(emptySummary());
    b.requests.push({ ordinal: 1, text: 'Fix the parser.', record: 0, elided: 0 });
    const long = (what: string): string => `${what} ${'and a long explanation of why it matters here '.repeat(6)}`;
    b.upsert('Findings', { key: 'old-referred', text: long('The parser drops the last byte.'), sources: [1], priority: 3, refs: 2 });
    b.upsert('Findings', { key: 'newer-unreferred', text: long('The clock test is flaky.'), sources: [2], priority: 3 });
    b.upsert('Findings', { key: 'newest-unreferred', text: long('The lint step is slow.'), sources: [3], priority: 3 });
    const state = b.build(10, 1);
    const full = counter.count(renderSummary(state));
    const { state: capped } = enforceCap(state, counter, full - 20);
    assert.deepEqual(capped.facts.Findings.map((l) => l.key), ['old-referred', 'newest-unreferred']);
    assert.deepEqual(capped.facts.Archived.map((l) => l.key), ['newer-unreferred'], 'demoted, not deleted');
  });
});

describe('extractive summarizer', () => {
  it('keeps requests verbatim with stable ordinals across folds', async () => {
    const b = new RecordBuilder()
      .user('Add a --verbose flag to the CLI. Do not change the JSON output format.')
      .step('I will use commander for parsing.', [{ name: 'Read', input: { file_path: 'src/cli.ts' }, output: 'x' }])
      .user('Now also write tests.')
      .step('Done.', [{ name: 'Write', input: { file_path: 'test/cli.test.ts', content: 'it()' }, output: 'ok' }]);
    const { units } = unitsOf(b);
    const s = new ExtractiveSummarizer(counter);
    const first = await s.fold({ previous: undefined, units: units.slice(0, 2), coverageEnd: units[2]!.firstRecord });
    const second = await s.fold({ previous: first, units: units.slice(2), coverageEnd: b.records.length });
    assert.deepEqual(second.requests.map((r) => [r.ordinal, r.text]), [
      [1, 'Add a --verbose flag to the CLI. Do not change the JSON output format.'],
      [2, 'Now also write tests.'],
    ]);
    assert.ok(second.facts.Constraints.some((c) => c.text === 'Do not change the JSON output format.'));
    assert.ok(second.facts.Decisions.some((d) => /commander/.test(d.text)));
    assert.ok(second.facts.Deliverables.some((d) => d.key === 'test/cli.test.ts'));
    // append-only: every fact line of the first fold is still present (or superseded by key)
    for (const section of ['Constraints', 'Decisions'] as const) {
      for (const line of first.facts[section]) assert.ok(second.facts[section].some((l) => l.key === line.key));
    }
    // Current state is overwritten
    assert.match(second.current.goal, /^#2: Now also write tests/);
    assert.deepEqual(validateTaskContext(renderSummary(second)), []);
  });

  it('records failed commands with their exit code under Ruled out, and supersedes them on success', async () => {
    const b = new RecordBuilder()
      .user('Make the tests pass.')
      .step('', [{ name: 'Bash', input: { command: 'npm test' }, output: 'FAIL src/a.test.ts\nError: expected 2 got 3\nExit code: 1', isError: true }])
      .step('', [{ name: 'Bash', input: { command: 'npm test' }, output: 'all good\nExit code: 0' }]);
    const { units } = unitsOf(b);
    const s = new ExtractiveSummarizer(counter);
    const afterFail = await s.fold({ previous: undefined, units: units.slice(0, 2), coverageEnd: units[2]!.firstRecord });
    const failed = afterFail.facts['Ruled out'].find((l) => l.key.startsWith('cmd-npm-test'));
    assert.ok(failed, JSON.stringify(afterFail.facts['Ruled out']));
    assert.match(failed.text, /`npm test` failed \(exit 1\)/);
    assert.match(failed.text, /expected 2 got 3|FAIL/);
    const afterPass = await s.fold({ previous: afterFail, units: units.slice(2), coverageEnd: b.records.length });
    assert.ok(!afterPass.facts['Ruled out'].some((l) => l.key === failed.key), 'the failure must not stay current');
    assert.ok(afterPass.facts.Findings.some((l) => l.key === failed.key && /now succeeds/.test(l.text)));
  });

  it('detects safety constraints as P0 and keeps long requests verbatim at the head', () => {
    const cs = extractConstraints('Please refactor. You must not modify the production database. Always use tabs.');
    assert.deepEqual(cs.map((c) => [c.sentence, c.safety]), [
      ['You must not modify the production database.', true],
      ['Always use tabs.', false],
    ]);
    const long = 'Fix this: ' + 'log line\n'.repeat(1000);
    const b = new RecordBuilder().user(long);
    const p = protectedFromRaw(unitsOf(b).units);
    assert.equal(p.requests[0]!.text, long.trim().slice(0, REQUEST_MAX_CHARS));
    assert.equal(p.requests[0]!.elided, long.trim().length - REQUEST_MAX_CHARS);
    assert.equal(topicKey('Never touch the production database!'), 'never-touch-production-database');
  });

  it('the static checkpoint always produces the last ask and an action count', async () => {
    const b = new RecordBuilder().user('Ship it. Never force-push to main.').step('', [{ name: 'Bash', input: { command: 'git push' }, output: 'ok' }]);
    const s = new StaticCheckpointSummarizer(counter);
    const state = await s.fold({ previous: undefined, units: unitsOf(b).units, coverageEnd: b.records.length });
    assert.match(state.current.goal, /#1: Ship it/);
    assert.match(state.current.status, /checkpoint: 1 tool action/);
    assert.ok(state.facts.Constraints.some((c) => c.priority === 0 && /force-push/.test(c.text)));
  });
});
