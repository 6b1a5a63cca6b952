import { strict as assert } from 'node:assert';
import { KeyedMemo, PrefixFold, RevisedMap } from '../../src/core/memo';

describe('memo: caches with explicit keys', () => {
  it('KeyedMemo computes once per key and again when the key changes', () => {
    const memo = new KeyedMemo<number, string>();
    let computed = 0;
    const get = (key: number): string => memo.get(key, () => `v${key}#${++computed}`);
    assert.equal(get(1), 'v1#1');
    assert.equal(get(1), 'v1#1');
    assert.equal(get(2), 'v2#2');
    // Only the last key is remembered.
    assert.equal(get(1), 'v1#3');
    assert.equal(computed, 3);
  });

  it('KeyedMemo compares composite keys with the given comparison', () => {
    const state = {};
    const memo = new KeyedMemo<{ state: object; at: number }, number>((a, b) => a.state === b.state && a.at === b.at);
    let computed = 0;
    memo.get({ state, at: 3 }, () => ++computed);
    assert.equal(memo.get({ state, at: 3 }, () => ++computed), 1, 'an equal key is a hit, whatever the object');
    assert.equal(memo.get({ state: {}, at: 3 }, () => ++computed), 2, 'another state is a miss');
  });

  it('KeyedMemo puts back an entry saved before a change that was undone', () => {
    const memo = new KeyedMemo<string, string>();
    memo.get('a', () => 'A');
    const saved = memo.entry;
    memo.get('b', () => 'B');
    memo.restore(saved);
    assert.equal(memo.get('a', () => 'recomputed'), 'A');
    memo.restore(undefined);
    assert.equal(memo.get('a', () => 'recomputed'), 'recomputed');
  });

  it('PrefixFold extends over new items only, and folds from the start when the prefix shrinks', () => {
    const calls: [number, number][] = [];
    const fold = new PrefixFold<number[]>((value, from, to) => {
      calls.push([from, to]);
      const out = value ? [...value] : [];
      for (let i = from; i < to; i++) out.push(i);
      return out;
    });
    assert.deepEqual(fold.upTo(3), [0, 1, 2]);
    assert.deepEqual(fold.upTo(5), [0, 1, 2, 3, 4]);
    assert.deepEqual(fold.upTo(5), [0, 1, 2, 3, 4]);
    assert.deepEqual(fold.upTo(2), [0, 1]);
    assert.deepEqual(calls, [
      [0, 3],
      [3, 5],
      [5, 5],
      [0, 2],
    ]);
  });

  it('RevisedMap counts real changes only', () => {
    const map = new RevisedMap<string, object>();
    const a = {};
    map.set('x', a);
    assert.equal(map.revision, 1);
    map.set('x', a);
    assert.equal(map.revision, 1, 'setting the same value is no change');
    map.set('x', {});
    assert.equal(map.revision, 2);
    map.delete('missing');
    assert.equal(map.revision, 2);
    map.delete('x');
    assert.equal(map.revision, 3);
    map.clear();
    assert.equal(map.revision, 3, 'clearing an empty map is no change');
    map.set('y', a);
    map.clear();
    assert.equal(map.revision, 5);
  });
});
