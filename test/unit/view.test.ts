import { strict as assert } from 'node:assert';
import { MESSAGE_OVERHEAD_TOKENS } from '../../src/core/budget';
import { SessionRecord } from '../../src/core/parts';
import type { ReducedForm } from '../../src/core/store';
import { emptySummary, SummaryLineCounter, type SummaryState } from '../../src/core/summary';
import { CachedTokenCounter, CharRatioTokenCounter } from '../../src/core/tokens';
import { View, currentTurnRecord } from '../../src/core/view';
import { budgetOf, RecordBuilder } from './engineHarness';

function session(): { record: SessionRecord; view: View } {
  const b = new RecordBuilder().user('start the work');
  for (let i = 0; i < 6; i++) b.read(`src/f${i}.ts`, 60, `Reading ${i}.`);
  b.user('now the tests');
  b.read('test/a.test.ts', 60, 'Reading the test.');
  const record = new SessionRecord();
  for (const r of b.records) record.append(r);
  const counter = new CharRatioTokenCounter();
  const view = new View({ record, counter: new CachedTokenCounter(counter), summaryCounter: new SummaryLineCounter(counter), budget: budgetOf(20_000), cap: 3000, protectRecentSteps: 2 });
  return { record, view };
}

const shrunk: ReducedForm = { how: 'shrunk', input: '{"file_path":"src/f0.ts"}', output: 'first lines\n[… lines elided; full output: view_tool_call("call_1")]', recover: 'view_tool_call("call_1")' };

describe('view: what the model sees, as state', () => {
  it('derives the view afresh: the coverage, the stored forms, every unit counted', () => {
    const { record, view } = session();
    const restored = view.derive(0, undefined, (address) => (address === 'tool:call_1' ? shrunk : undefined));
    assert.equal(restored, 1);
    assert.equal(view.formOf('tool:call_1'), shrunk);
    const units = record.units;
    let sum = 0;
    for (let i = 0; i < units.length; i++) sum += view.unitTokens(i);
    assert.equal(view.estimate, sum);
    assert.equal(view.spanTokens(units.length), sum);
    assert.equal(view.unitTokens(0), MESSAGE_OVERHEAD_TOKENS + view.partTokens(units[0]!.parts[0]!), 'a user message: its text and the message overhead');
  });

  it('a fold leaves the span and its forms, and unfold puts the view back exactly', () => {
    const { record, view } = session();
    view.derive(0, undefined, (address) => (address === 'tool:call_1' ? shrunk : undefined));
    view.setBlocks(0);
    const estimate = view.estimate;
    const revision = view.forms.revision;
    const state: SummaryState = { ...emptySummary(), coverageEnd: record.units[3]!.firstRecord, current: { goal: 'start the work', deliverable: '', status: 'reading', next: 'tests' } };
    const undo = view.fold(3, state);
    assert.equal(view.coverageUnit, 3);
    assert.equal(view.summary, state);
    assert.equal(view.coverageEnd, record.units[3]!.firstRecord);
    assert.equal(view.formOf('tool:call_1'), undefined, 'the forms of folded parts leave the view');
    assert.ok(view.forms.revision > revision);
    assert.ok(view.estimate < estimate);
    view.unfold(undo);
    assert.equal(view.coverageUnit, 0);
    assert.equal(view.summary, undefined);
    assert.equal(view.formOf('tool:call_1'), shrunk);
    assert.equal(view.estimate, estimate);
  });

  it('knows where the near window starts and where a fold would end', () => {
    const { record, view } = session();
    view.derive(0, undefined, () => undefined);
    const units = record.units;
    // Two protected steps: the last read, and the one before the second user message.
    assert.equal(view.nearWindowStart(), units.length - 3);
    assert.equal(view.coverageEndAt(2), units[2]!.firstRecord);
    assert.equal(view.coverageEndAt(units.length), record.records.length);
    assert.equal(view.unitStartingAt(units[4]!.firstRecord), 4);
    assert.equal(view.unitStartingAt(units[4]!.firstRecord + 1), undefined);
    assert.equal(view.unitStartingAt(record.records.length), units.length);
    assert.equal(currentTurnRecord(units), units[units.length - 2]!.firstRecord);
    assert.equal(currentTurnRecord([]), -1);
    const boundary = view.foldBoundary(view.nearWindowStart(), view.predicted() + 100_000);
    assert.equal(boundary, view.nearWindowStart(), 'a view far over its target folds everything it may');
    assert.ok(view.foldBoundary(view.nearWindowStart()) >= 1);
  });
});
