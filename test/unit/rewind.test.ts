/**
 * A rewind (VS Code's Restore Checkpoint, Start Over or Retry on @keeper's
 * turns): the record keeps the turns taken out, every view leaves them out.
 */
import { strict as assert } from 'node:assert';
import { defaultBudget } from '../../src/core/budget';
import { REWIND_TOOL, rewoundRecords } from '../../src/core/parts';
import { replay } from '../../src/core/replay';
import { InMemorySnapshotStore } from '../../src/core/store';
import { CharRatioTokenCounter } from '../../src/core/tokens';
import type { RawRecord } from '../../src/core/types';
import { RecordBuilder } from './engineHarness';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

/** A task of three turns; the second one (a rule, a decision and long tool output) is the one the user takes back. */
function task(padding = 0): { records: RawRecord[]; from: number } {
  const b = new RecordBuilder().user('Port the parser to the new AST.');
  b.step('The parser lives in `src/parser.ts`; its visitor is the part to port.', [{ name: 'Read', input: { file_path: 'src/parser.ts' }, output: 'export class Parser {}\n'.repeat(40) }]);
  const from = b.records.length;
  b.user('Always write the port in CoffeeScript. Rename the visitor to ZebraWalker.');
  for (let i = 0; i < padding; i++) {
    b.step(`Decided to name the walker ZebraWalker${i} because the old API expects one per node kind.`, [{ name: 'Bash', input: { command: `npm test -- zebra${i}` }, output: `FAIL zebra${i}\n${'  expected ZebraWalker but got undefined\n'.repeat(30)}exit code 1` }]);
  }
  b.step('I renamed the visitor to ZebraWalker in CoffeeScript.', [{ name: 'Edit', input: { file_path: 'src/parser.ts', old_string: 'Visitor', new_string: 'ZebraWalker' }, output: 'The file src/parser.ts has been updated.' }]);
  const records = b.records;
  const at = records.length;
  records.push({ index: at, role: 'assistant', content: '', toolName: REWIND_TOOL, toolCallId: 'rewind-1', toolInput: { fromRecord: from, turns: [2], files: ['src/parser.ts'], by: 'user' }, messageId: 'rewind' });
  records.push({ index: at + 1, role: 'tool', content: '', toolName: REWIND_TOOL, toolCallId: 'rewind-1', toolOutput: `The user took turn 2 (records r${from}–r${at - 1}) out of the chat.` });
  records.push({ index: at + 2, role: 'user', content: 'What is left to do for the port?' });
  return { records, from };
}

const everything = (messages: readonly { content: string }[]): string => messages.map((m) => m.content).join('\n');

describe('a rewind', () => {
  const counter = new CharRatioTokenCounter();

  it('names the records it took out: from its fromRecord to itself, for each rewind', () => {
    const { records, from } = task();
    const marker = records.findIndex((r) => r.toolName === REWIND_TOOL);
    assert.deepEqual([...rewoundRecords(records)], Array.from({ length: marker - from }, (_, i) => from + i));
    // What the user did outside the chat in between (an undo of @keeper's edits) stays.
    const undo: RawRecord[] = [
      { index: 0, role: 'user', content: 'Fix add.' },
      { index: 1, role: 'assistant', content: 'Fixed.', messageId: 'm1' },
      { index: 2, role: 'assistant', content: '', toolName: 'undo_edits', toolCallId: 'undo-2', toolInput: { turns: [1], files: ['a.js'], by: 'user' }, messageId: 'u' },
      { index: 3, role: 'tool', content: '', toolName: 'undo_edits', toolCallId: 'undo-2', toolOutput: 'Undone by the user.' },
      { index: 4, role: 'assistant', content: '', toolName: REWIND_TOOL, toolCallId: 'rewind-4', toolInput: { fromRecord: 0, by: 'user' }, messageId: 'r' },
    ];
    assert.deepEqual([...rewoundRecords(undo)], [0, 1]);
    // A rewind that names no record before it takes nothing out.
    const bad: RawRecord[] = [{ index: 0, role: 'assistant', content: '', toolName: REWIND_TOOL, toolCallId: 'r', toolInput: { fromRecord: 3 } }];
    assert.equal(rewoundRecords(bad).size, 0);
  });

  it('leaves its turns out of the view and the protected state; the record keeps them; a view before it still shows them', async () => {
    const { records, from } = task();
    const budget = defaultBudget({ window: 200_000, reserve: 8_000 });
    const after = await replay(records, { budget, counter, redactor });
    const text = everything(after.messages);
    assert.ok(!/ZebraWalker|CoffeeScript/.test(text), text);
    assert.ok(text.includes(`took turn 2 (records r${from}–`), text);
    assert.match(text, /Port the parser to the new AST\./);
    assert.equal(after.session.record.records.length, records.length, 'the record keeps every record');
    assert.ok(!after.session.state.active().some((f) => /CoffeeScript/.test(f.value)), 'a rule said in the rewound turn is no protected fact');
    const marker = records.findIndex((r) => r.toolName === REWIND_TOOL);
    const before = await replay(records, { budget, counter, at: marker, redactor });
    assert.match(everything(before.messages), /Always write the port in CoffeeScript\./);
  });

  it('no fold summarizes its turns, and a floor stored before it that covers them is not restored', async () => {
    const { records } = task(40);
    const budget = defaultBudget({ window: 8_000, reserve: 1_000 });
    const snapshots = new InMemorySnapshotStore();
    const marker = records.findIndex((r) => r.toolName === REWIND_TOOL);
    // Live, the turn was folded before the user took it back.
    const live = await replay(records, { budget, counter, snapshots, at: marker, redactor });
    assert.ok(live.totals.floorSummaries > 0, 'the rewound turn was folded while it stood');
    assert.match(everything(live.messages), /ZebraWalker/);
    // Derived again from the same store once the rewind is recorded (what @keeper does): nothing of the turn is left.
    const resumed = await replay(records, { budget, counter, snapshots, resumeFrom: records.length, redactor });
    const text = everything(resumed.messages);
    assert.ok(!/ZebraWalker|CoffeeScript/.test(text), text);
    assert.ok(!(resumed.session.engine.currentSummary?.requests ?? []).some((r) => /CoffeeScript|ZebraWalker/.test(r.text)), 'the request log leaves the rewound ask out');
    // And the same as a replay that never saw the turn.
    const fresh = await replay(records, { budget, counter, redactor });
    assert.deepEqual(resumed.messages.map((m) => m.content), fresh.messages.map((m) => m.content));
  });
});
