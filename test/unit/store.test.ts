import { strict as assert } from 'node:assert';
import { contentHash, contentHashOf } from '../../src/core/hash';
import { ANCHOR_KEY, FACT_PREFIX, FLOOR_PREFIX, floorKey, InMemorySnapshotStore, parseFloorKey, STATE_EVENT_PREFIX, stateEventKey, type ReducedForm } from '../../src/core/store';
import { emptySummary } from '../../src/core/summary';

const shrunk: ReducedForm = { how: 'shrunk', input: '{}', output: 'head…tail', recover: 'view_tool_call("a")' };
const dropped: ReducedForm = { how: 'dropped', input: '{}', output: '[output dropped: disposable tool]', recover: undefined };

const factKey = (n: number): string => `${FACT_PREFIX}${String(n).padStart(7, '0')}`;

describe('snapshot store (in memory)', () => {
  it('upserts forms monotonically: a drop is never replaced by a shrink', () => {
    const store = new InMemorySnapshotStore();
    store.put('tool:a', { type: 'form', form: shrunk });
    store.put('tool:a', { type: 'form', form: dropped });
    assert.deepEqual(store.get('tool:a'), { type: 'form', form: dropped });
    store.put('tool:a', { type: 'form', form: shrunk });
    assert.deepEqual(store.get('tool:a'), { type: 'form', form: dropped });
  });

  it('writes floors once, keyed by coverage, and lists them by prefix', () => {
    const store = new InMemorySnapshotStore();
    const key = floorKey(120, 'abc123');
    assert.deepEqual(parseFloorKey(key), { coverageEnd: 120, digest: 'abc123' });
    assert.equal(parseFloorKey('meta:anchor'), undefined);
    const first = { coverageEnd: 120, digest: 'abc123', state: emptySummary() };
    store.put(key, { type: 'floor', floor: first });
    store.put(key, { type: 'floor', floor: { ...first, state: { ...emptySummary(), folds: 9 } } });
    const entry = store.get(key);
    assert.ok(entry?.type === 'floor' && entry.floor.state.folds === 0);
    store.put(ANCHOR_KEY, { type: 'anchor', anchor: { real: 10, estimate: 9 } });
    store.put(ANCHOR_KEY, { type: 'anchor', anchor: { real: 20, estimate: 19 } });
    assert.deepEqual(store.get(ANCHOR_KEY), { type: 'anchor', anchor: { real: 20, estimate: 19 } });
    assert.deepEqual(store.keys(FLOOR_PREFIX), [key]);
  });

  it('lists facts and user acts apart, and both under the state prefix', () => {
    const store = new InMemorySnapshotStore();
    const form = { type: 'form', form: shrunk } as const;
    for (let i = 0; i < 3; i++) store.put(factKey(i), form);
    store.put(stateEventKey(0), form);
    assert.deepEqual(store.keys(STATE_EVENT_PREFIX), [stateEventKey(0)]);
    assert.deepEqual(store.keys(FACT_PREFIX).sort(), [factKey(0), factKey(1), factKey(2)]);
    assert.deepEqual(store.keys('state:').sort(), [factKey(0), factKey(1), factKey(2), stateEventKey(0)].sort());
    assert.deepEqual(store.keys('state:f').length, 3);
  });
});

describe('content hashing', () => {
  it('content hashes are stable, 16 hex digits, and differ for different content', () => {
    assert.match(contentHash('hello'), /^[0-9a-f]{16}$/);
    assert.equal(contentHash('hello'), contentHash('hello'));
    const seen = new Set<string>();
    for (let i = 0; i < 20000; i++) seen.add(contentHash(`part ${i}`));
    assert.equal(seen.size, 20000);
    assert.notEqual(contentHash('ab'), contentHash('ba'));
  });

  it('keeps the digests stores already hold, and hashes pieces as their joined text', () => {
    // Part addresses and coverage digests are stored keys: the function may not change.
    assert.equal(contentHash('hello'), '410c0bc094fbed49');
    assert.equal(contentHash('abc|step@12:tool:c1,text:ab12'), '7732eb3b2c40405a');
    assert.equal(contentHashOf(['abc|step@12:tool:c1', 'text:ab12'], ','), '7732eb3b2c40405a');
    const pieces = ['', 'a', 'tool:x,y', '\u00e9\ud83d\ude00', ''];
    for (let n = 0; n <= pieces.length; n++) {
      for (const separator of ['', ',', '|-']) {
        const some = pieces.slice(0, n);
        assert.equal(contentHashOf(some, separator), contentHash(some.join(separator)), `${n} pieces joined by '${separator}'`);
      }
    }
  });
});
