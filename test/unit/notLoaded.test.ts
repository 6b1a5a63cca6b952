import { strict as assert } from 'node:assert';
import { NotLoadedList, callLabel, evidenceBlock, notLoadedTotals, type NotLoadedEntry } from '../../src/core/notLoaded';
import { SessionRecord } from '../../src/core/parts';
import { emptySummary, SummaryLineCounter } from '../../src/core/summary';
import { CachedTokenCounter, CharRatioTokenCounter } from '../../src/core/tokens';
import type { ToolInvocation } from '../../src/core/types';
import { View } from '../../src/core/view';
import { budgetOf, RecordBuilder } from './engineHarness';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

function recordOf(b: RecordBuilder): SessionRecord {
  const record = new SessionRecord();
  for (const r of b.records) record.append(r);
  return record;
}

function bash(command: string): ToolInvocation {
  return { callId: 't1', name: 'Bash', input: { command }, output: 'ok', isError: false, callRecord: 1, resultRecord: 2 };
}

describe('notLoaded: what the model does not see in full', () => {
  it('adds up the folded span once, and counts shrunk and dropped parts', () => {
    const entries: NotLoadedEntry[] = [
      { address: 'span:r0-r9', kind: 'span', tokens: 1000, how: 'folded', recover: 'records r0–r9' },
      { address: 'tool:a', kind: 'tool', tokens: 400, how: 'folded', recover: 'view_tool_call("a")' },
      { address: 'tool:b', kind: 'tool', tokens: 300, how: 'shrunk', recover: 'view_tool_call("b")' },
      { address: 'tool:c', kind: 'tool', tokens: 50, how: 'dropped', recover: 'not recoverable' },
    ];
    assert.deepEqual(notLoadedTotals(entries), { tokens: 1350, shrunk: 1, dropped: 1 });
    assert.deepEqual(notLoadedTotals(entries.slice(1)), { tokens: 750, shrunk: 1, dropped: 1 }, 'without a span, a folded call counts');
  });

  it('labels a call by its command or first file, secrets hidden before the cut', () => {
    assert.deepEqual(callLabel(bash('npm test\nnpm run lint'), redactor), { tool: 'Bash', subject: 'npm test' });
    const secret = callLabel(bash('curl -H "Authorization: Bearer abcdefghijklmnop1234567890" https://x.example'), redactor);
    assert.ok(!secret.subject!.includes('abcdefghijklmnop1234567890'));
    assert.match(secret.subject!, /\[REDACTED:token:[0-9a-f]{6}\]/);
    const long = callLabel(bash(`echo ${'a'.repeat(200)}`), redactor, 20);
    assert.equal(long.subject, `echo ${'a'.repeat(14)}…`);
    assert.deepEqual(callLabel({ ...bash(''), name: 'Think', input: {} }, redactor), { tool: 'Think' });
    // A search is named by what it looked for, and where.
    assert.deepEqual(callLabel({ ...bash(''), name: 'Grep', input: { pattern: 'TODO|FIXME', path: 'src' } }, redactor), { tool: 'Grep', subject: '"TODO|FIXME" in src' });
    assert.deepEqual(callLabel({ ...bash(''), name: 'Grep', input: { pattern: 'isRevoked' } }, redactor), { tool: 'Grep', subject: '"isRevoked"' });
  });

  it('names the latest folded calls in the head, newest first, and says when there are more', () => {
    const b = new RecordBuilder().user('go');
    for (let i = 0; i < 8; i++) b.step('', [{ name: 'Bash', input: { command: `make step${i}` }, output: 'done' }]);
    const record = recordOf(b);
    assert.equal(evidenceBlock(record.units, 0, 0, 10_000, redactor), '');
    const all = evidenceBlock(record.units, 9, record.records.length, 10_000, redactor);
    const lines = all.split('\n');
    assert.equal(lines[0], '## Evidence not loaded');
    assert.equal(lines.length, 2 + 8);
    assert.match(lines[2]!, /^- view_tool_call\("call_8"\): Bash `make step7` \(folded, r\d+\)$/);
    const few = evidenceBlock(record.units, 9, record.records.length, 1_000, redactor);
    assert.equal(few.split('\n').length, 2 + 5, 'five at least, one per 1,000 tokens of wEff');
    assert.match(few, new RegExp(`earlier ones of records r0–r${record.records.length - 1} too`));
    // A snippet an export turned into a call (an empty result, a comment) never ran: nothing to get back.
    const quoted = new RecordBuilder().user('go').step('', [{ name: 'run_terminal_cmd', input: { command: '# After every commit, push to the session branch\n# then open the PR' }, output: '' }]);
    quoted.step('', [{ name: 'Bash', input: { command: 'make all' }, output: 'done' }]);
    const q = recordOf(quoted);
    assert.deepEqual(evidenceBlock(q.units, q.units.length, q.records.length, 10_000, redactor).split('\n').slice(2).map((l) => l.replace(/ \(folded, r\d+\)$/, '')), ['- view_tool_call("call_2"): Bash `make all`']);
    // A call that printed nothing says so: nothing shows what it did, or that it ran.
    const empty = new RecordBuilder().user('go').step('', [{ name: 'run_terminal_cmd', input: { command: 'minsky git pr --path .' }, output: '' }]);
    const e = recordOf(empty);
    assert.match(evidenceBlock(e.units, e.units.length, e.records.length, 10_000, redactor), /- view_tool_call\("call_1"\): run_terminal_cmd `minsky git pr --path \.` \(no output recorded; folded, r1\)$/);
    // The same call made again takes one entry (its newest run) and counts the others; they leave room for more.
    const again = new RecordBuilder().user('go');
    for (let i = 0; i < 6; i++) again.step('', [{ name: 'Bash', input: { command: i % 2 ? 'swift build' : `make step${i}` }, output: 'done' }]);
    const a = recordOf(again);
    const listed = evidenceBlock(a.units, a.units.length, a.records.length, 1_000, redactor).split('\n').slice(2);
    assert.deepEqual(listed.map((l) => l.replace(/^- view_tool_call\("[^"]+"\): /, '')), ['Bash `swift build` (folded, r11; made 2 more times before)', 'Bash `make step4` (folded, r9)', 'Bash `make step2` (folded, r5)', 'Bash `make step0` (folded, r1)']);
  });

  it('lists the folded span with its calls, then every part in view sent in a reduced form', () => {
    const b = new RecordBuilder().user('go');
    for (let i = 0; i < 4; i++) b.read(`src/f${i}.ts`, 30);
    const record = recordOf(b);
    const counter = new CharRatioTokenCounter();
    const view = new View({ record, counter: new CachedTokenCounter(counter), summaryCounter: new SummaryLineCounter(counter), budget: budgetOf(50_000), cap: 3000, protectRecentSteps: 2 });
    const list = new NotLoadedList(record, view, redactor);
    view.derive(0, undefined, () => undefined);
    assert.deepEqual(list.list(), []);
    view.setForm('tool:call_4', { how: 'shrunk', input: '{}', output: 'head', recover: 'view_tool_call("call_4")' });
    view.fold(3, { ...emptySummary(), coverageEnd: record.units[3]!.firstRecord });
    const entries = list.list();
    assert.deepEqual(
      entries.map((e) => `${e.kind} ${e.address} ${e.how}`),
      ['span span:r0-r' + (record.units[3]!.firstRecord - 1) + ' folded', 'tool tool:call_1 folded', 'tool tool:call_2 folded', 'tool tool:call_4 shrunk'],
    );
    const [span, first, , shrunk] = entries;
    let folded = 0;
    for (let i = 0; i < 3; i++) for (const p of record.units[i]!.parts) folded += view.rawTokens(p);
    assert.equal(span!.tokens, folded);
    assert.deepEqual({ tool: first!.tool, subject: first!.subject, recover: first!.recover }, { tool: 'Read', subject: 'src/f0.ts', recover: 'view_tool_call("call_1")' });
    assert.equal(shrunk!.tokens, view.rawTokens(record.units[4]!.parts[0]!), 'the raw size of what was shrunk');
  });
});
