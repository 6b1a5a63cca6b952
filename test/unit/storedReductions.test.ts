import { strict as assert } from 'node:assert';
import { SessionRecord } from '../../src/core/parts';
import { InMemorySnapshotStore, floorKey, type ReducedForm } from '../../src/core/store';
import { StoredReductions } from '../../src/core/storedReductions';
import { emptySummary, type SummaryState } from '../../src/core/summary';
import { RecordBuilder } from './engineHarness';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

function setup() {
  const b = new RecordBuilder().user('Refactor the parser. Never touch the production database.');
  for (let i = 0; i < 4; i++) b.read(`src/f${i}.ts`, 20, `Reading ${i}.`);
  b.user('Now the lexer, please.');
  b.read('src/lexer.ts', 20);
  const record = new SessionRecord();
  for (const r of b.records) record.append(r);
  const snapshots = new InMemorySnapshotStore();
  return { record, snapshots, stored: new StoredReductions(record, snapshots, redactor) };
}

const form: ReducedForm = { how: 'shrunk', input: '{}', output: 'head\n[… elided; full output: view_tool_call("call_1")]', recover: 'view_tool_call("call_1")' };

function floorAt(record: SessionRecord, unit: number): SummaryState {
  return { ...emptySummary(), coverageEnd: record.units[unit]!.firstRecord, folds: 1 };
}

describe('storedReductions: the view in the store', () => {
  it('keeps forms, and knows whether anything was written since the view was derived', () => {
    const { stored, snapshots } = setup();
    assert.equal(stored.isDerived(0, undefined), false);
    stored.markDerived(0, undefined);
    assert.equal(stored.isDerived(0, undefined), true);
    assert.equal(stored.isDerived(2, undefined), false, 'derived for another coverage');
    stored.putForm('tool:call_1', form);
    assert.equal(stored.formOf('tool:call_1'), form);
    assert.equal(stored.formOf('tool:call_9'), undefined);
    assert.equal(snapshots.get('tool:call_1')?.type, 'form');
    assert.equal(stored.isDerived(0, undefined), false, 'a form was written since');
    stored.markDerived(0, undefined);
    assert.equal(stored.isDerived(0, undefined), true);
  });

  it('restores the deepest floor that still matches the raw, its drift reset once per coverage', () => {
    const { stored, record } = setup();
    assert.deepEqual(stored.restore(), { coverageUnit: 0, summary: undefined, drifted: 0 });
    const shallow = floorAt(record, 2);
    stored.putFloor(shallow.coverageEnd, record.coverageDigest(2), shallow);
    const deep = floorAt(record, 4);
    stored.putFloor(deep.coverageEnd, record.coverageDigest(4), deep);
    // A deeper floor of another record (its digest does not match this one) is passed over.
    const foreign = floorAt(record, 5);
    stored.putFloor(foreign.coverageEnd, 'not-this-record', foreign);
    const first = stored.restore();
    assert.equal(first.coverageUnit, 4);
    assert.equal(first.summary!.coverageEnd, deep.coverageEnd);
    assert.ok(first.drifted > 0, 'the request folded is missing from the stored summary: reset from the raw');
    assert.ok(first.summary!.requests.some((r) => r.text.includes('Refactor the parser')));
    const again = stored.restore();
    assert.equal(again.summary, first.summary, 'checked once: the same repaired summary');
    assert.equal(again.drifted, 0);
  });

  it('writing a floor is a write: a view derived before it must be derived again', () => {
    const { stored, record } = setup();
    stored.markDerived(0, undefined);
    const state = floorAt(record, 3);
    stored.putFloor(state.coverageEnd, record.coverageDigest(3), state);
    assert.equal(stored.isDerived(0, undefined), false);
    assert.ok(record.coverageDigest(3).length > 0);
    assert.ok(floorKey(state.coverageEnd, record.coverageDigest(3)).startsWith('floor:'));
  });
});
