/**
 * Caches with explicit keys. Each one remembers what it computed together
 * with what it was computed from, so whether a cached answer still holds is
 * decided in one place, by comparing keys, rather than by every caller. The
 * engine asks the same questions at every model call (the head's blocks, the
 * summary's size, the drift of a restored floor); these caches make the
 * second asking a comparison.
 */

/** A remembered value and the key it was computed for. */
export interface MemoEntry<K, V> {
  readonly key: K;
  readonly value: V;
}

/**
 * One value, remembered with the key it was computed for: asked again under
 * the same key (`same`, `===` unless given) it is returned as is; under another
 * key it is computed again and replaces the old one.
 */
export class KeyedMemo<K, V> {
  private last: MemoEntry<K, V> | undefined;

  constructor(private readonly same: (a: K, b: K) => boolean = (a, b) => a === b) {}

  /** The value for `key`: the remembered one if it was computed for the same key, else `compute()` (remembered). */
  get(key: K, compute: () => V): V {
    const last = this.last;
    if (last !== undefined && this.same(last.key, key)) return last.value;
    const value = compute();
    this.last = { key, value };
    return value;
  }

  /** What is remembered now, to put back later with `restore` (a change that was undone). */
  get entry(): MemoEntry<K, V> | undefined {
    return this.last;
  }

  restore(entry: MemoEntry<K, V> | undefined): void {
    this.last = entry;
  }
}

/**
 * A value folded over a prefix [0, end) of a sequence that only grows: asked
 * for a longer prefix it extends the last value over the new items only; asked
 * for a shorter one (a rebuilt coverage) it folds again from the start.
 * `extend(value, from, to)` folds items [from, to) into `value` (undefined: from
 * nothing) and returns the result; it may update `value` in place.
 */
export class PrefixFold<T> {
  private last: { readonly end: number; readonly value: T } | undefined;

  constructor(private readonly extend: (value: T | undefined, from: number, to: number) => T) {}

  /** The value folded over items [0, end). */
  upTo(end: number): T {
    const last = this.last;
    const value = last && last.end <= end ? this.extend(last.value, last.end, end) : this.extend(undefined, 0, end);
    this.last = { end, value };
    return value;
  }
}

/** A map read only, with the revision it is at. */
export interface RevisedView<K, V> extends ReadonlyMap<K, V> {
  readonly revision: number;
}

/** A map that counts its changes: a projection built at one revision is still valid at the same revision. */
export class RevisedMap<K, V> extends Map<K, V> {
  revision = 0;

  override set(key: K, value: V): this {
    if (super.get(key) !== value || !super.has(key)) this.revision++;
    return super.set(key, value);
  }

  override delete(key: K): boolean {
    const had = super.delete(key);
    if (had) this.revision++;
    return had;
  }

  override clear(): void {
    if (this.size > 0) this.revision++;
    super.clear();
  }
}
