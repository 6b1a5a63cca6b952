/**
 * Token counting as the core sees it: a port. The o200k adapter lives in
 * src/adapters; tests may inject any deterministic counter.
 */
export interface TokenCounter {
  count(text: string): number;
  /**
   * Builds what counting needs ahead of the first count, without blocking the
   * caller's event loop (a counter whose tables take long to build). Counting
   * before it settles still works: it builds what is left at once.
   */
  prepare?(): Promise<void>;
}

/**
 * A counter that remembers what it counted, by text: between two model calls
 * almost every message (or summary line) is unchanged, so only the new ones are
 * tokenized. Bounded: it holds at most `capacity` texts, the most recently used
 * (GenerationalCache).
 */
export class MemoTokenCounter implements TokenCounter {
  private readonly cache: GenerationalCache<string, number>;
  constructor(private readonly inner: TokenCounter, capacity: number) {
    this.cache = new GenerationalCache(capacity);
  }

  count(text: string): number {
    let n = this.cache.get(text);
    if (n === undefined) {
      n = this.inner.count(text);
      this.cache.set(text, n);
    }
    return n;
  }
}

/**
 * A bounded cache in two generations: lookups read the current one, then the
 * one before (a hit there is carried forward); when the current one holds
 * `capacity / 2` entries it becomes the one before and the oldest is dropped.
 * So the most recently used half is always kept, and every operation is O(1):
 * evicting a Map's oldest key one at a time costs more the more keys were
 * evicted before (its iterator steps over every deleted slot until the table
 * is compacted), which made a long replay quadratic.
 */
export class GenerationalCache<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();
  private readonly half: number;

  constructor(capacity: number) {
    this.half = Math.max(1, Math.floor(capacity / 2));
  }

  get(key: K): V | undefined {
    const value = this.current.get(key);
    if (value !== undefined) return value;
    const older = this.previous.get(key);
    if (older !== undefined) this.set(key, older);
    return older;
  }

  set(key: K, value: V): void {
    if (this.current.size >= this.half) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(key, value);
  }

  /** Entries held (a key carried forward may be counted in both generations). */
  get size(): number {
    return this.current.size + this.previous.size;
  }
}

/**
 * Texts longer than this are estimated from a sample rather than fully
 * tokenized on the hot path: a 50 MB tool output would otherwise hold the
 * event loop for seconds. The estimate is part of the increment, which the next
 * real measurement corrects.
 */
export const ESTIMATE_ABOVE_CHARS = 256 * 1024;
/** The share of a huge text that is really tokenized to estimate the rest. */
export const ESTIMATE_SAMPLE_CHARS = 64 * 1024;

/**
 * Counts each distinct piece of content once. Keys are addresses plus the form
 * the part is rendered in, so unchanged content is never re-tokenized on the
 * hot path. Bounded: at most `capacity` entries, the most recently used
 * (GenerationalCache).
 */
export class CachedTokenCounter {
  private readonly cache: GenerationalCache<string, number>;
  private misses = 0;
  private hits = 0;

  constructor(readonly counter: TokenCounter, capacity = 200_000) {
    this.cache = new GenerationalCache(capacity);
  }

  /**
   * Tokens of `text`, cached under `key` (which must change whenever the text
   * does). Pass a function to build the text only on a miss.
   */
  countKeyed(key: string, text: string | (() => string)): number {
    const cached = this.cache.get(key);
    if (cached !== undefined) {
      this.hits++;
      return cached;
    }
    this.misses++;
    const value = typeof text === 'string' ? text : text();
    const n = value.length > ESTIMATE_ABOVE_CHARS ? this.estimate(value) : this.counter.count(value);
    this.cache.set(key, n);
    return n;
  }

  /**
   * A huge text: count a 64 KB sample from its middle and extrapolate, so dense
   * content (CJK, base64, minified code) is not undercounted the way a fixed
   * characters-per-token ratio would.
   */
  private estimate(text: string): number {
    const sampleChars = ESTIMATE_SAMPLE_CHARS;
    const start = Math.max(0, Math.floor(text.length / 2 - sampleChars / 2));
    const sample = text.slice(start, start + sampleChars);
    const tokens = this.counter.count(sample);
    return Math.ceil((tokens * text.length) / Math.max(1, sample.length));
  }

  /** Uncached count, for content that has no stable key. */
  count(text: string): number {
    this.misses++;
    return this.counter.count(text);
  }

  stats(): { hits: number; misses: number; size: number } {
    return { hits: this.hits, misses: this.misses, size: this.cache.size };
  }
}

/** A crude counter (≈ 4 characters a token) for tests that must not depend on a tokenizer. */
export class CharRatioTokenCounter implements TokenCounter {
  constructor(private readonly charsPerToken = 4) {}
  count(text: string): number {
    return Math.ceil(text.length / this.charsPerToken);
  }
}

