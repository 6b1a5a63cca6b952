/**
 * The o200k_base tokenizer (GPT-4o family) behind the core's `TokenCounter` port.
 *
 * `gpt-tokenizer` first splits text into pieces with a regular expression and then
 * runs byte-pair encoding on each piece. BPE time grows with the square of a
 * piece's length, and some texts are one enormous piece: 300 000 lowercase
 * letters, a run of `=` or of spaces, CJK prose without punctuation. Counted in
 * one call such a text takes minutes (measured: 300 KB of `a` ≈ 37 s, and it
 * quadruples each time the length doubles).
 *
 * So texts longer than `directLimit` are counted in segments of about
 * `segmentChars`, each cut at a boundary where the splitting expression is
 * certain to start a new piece (see `isPieceBoundary`). Pieces never straddle
 * such a boundary and BPE never merges across pieces, so the sum over the
 * segments equals the count of the whole text.
 *
 * The one approximation: a stretch longer than `maxRunChars` that contains no
 * such boundary is cut at a hard limit. The pieces on either side of a hard cut
 * are encoded separately, which usually adds one token per cut (it can differ by
 * a few): at most a few tokens per `maxRunChars` characters of pathological
 * input, and nothing at all for ordinary prose, code, JSON or logs.
 *
 * Texts of CHUNK_MEMO_MIN_CHARS to CHUNK_MEMO_MAX_CHARS (the head of the view,
 * a summary, the blocks) are counted in chunks cut at such boundaries where the
 * text itself says so (a hash of the 32 characters before the boundary), and
 * each chunk's count is remembered by a hash of its content. The head is counted
 * again after every fold, and as a whole besides its parts; most of it is text
 * counted before (the summary lines kept, the passages still quoted), and the
 * chunks of an unchanged stretch come out the same wherever it stands, so only
 * the chunks around what changed are tokenized. The count is the same as in one
 * call, unless two different chunks share their 52-bit key (for the 16K chunks
 * kept, about one lookup in 10^11; it would misstate that chunk's count).
 *
 * Special-token text such as `<|endoftext|>` is counted as ordinary text:
 * transcripts quote it, and the tokenizer's default would throw on it.
 *
 * Throughput is the tokenizer's: about 7 s for 50 MB of source code, 2 min for
 * 50 MB of random base64 words (measured on Node 20), synchronously.
 */
import { existsSync, promises as fsp, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { GenerationalCache, type TokenCounter } from '../core/tokens';
import { nextTurn } from '../core/turns';
// The CommonJS build, by an explicit path: tsc finds its typings with
// `moduleResolution: node` (which ignores package `exports`), and Node and esbuild
// resolve the package's `./cjs/*` export, which only offers a `require` condition.
type O200k = typeof import('gpt-tokenizer/cjs/encoding/o200k_base');
type Encoding = Pick<O200k, 'countTokens'>;

/**
 * The o200k_base rank table the build writes beside the bundle (esbuild.mjs):
 * the ranks in order, a few thousand to a JSON array on each line, a token as
 * its string or, when its bytes are no UTF-8, as the array of its bytes.
 */
export const RANK_TABLE_FILE = 'o200k.ranks';
/** o200k_base's mergeable ranks: a table with fewer is cut short. */
const O200K_RANKS = 199_998;
/** A slice of the table's building runs this long before it gives the event loop back. */
const SLICE_MS = 8;

/** The fields of gpt-tokenizer's byte-pair core (3.4.0, pinned) the rank table fills (its encoder only asks `get`). */
interface CoreTables {
  bytePairStringRankEncoder: Pick<Map<string, number>, 'get'>;
  bytePairNonUtfSortedEncoder: [Uint8Array, number][];
  mergeableBytePairRankCount: number;
}

/**
 * The string ranks of the table (about 200k tokens) with no heap object per
 * token: their characters in a string per line of the table, where each
 * starts and its rank in typed arrays, found by open addressing on an FNV-1a
 * hash. gpt-tokenizer's
 * encoder asks it `get(piece)` as it asked its Map. The Map held 200k strings:
 * while it was built the collector copied them from scavenge to scavenge
 * (pauses of 65-120 ms measured in the extension host during a first turn), and
 * every later full collection of the host marked them again.
 */
export class CompactStringRanks {
  /** The tokens' characters, a string per line of the table (no string per token, and no 1.4M-character join). */
  private readonly pieces: string[] = [];
  private readonly pending: string[] = [];
  private pendingLength = 0;
  private count = 0;
  /** Per token: the piece holding it, where it starts there, its length and its rank. */
  private readonly pieceOf: Uint16Array;
  private readonly starts: Int32Array;
  private readonly lengths: Int32Array;
  private readonly ranks: Int32Array;
  /** Token index + 1 per slot; 0 is an empty slot. */
  private readonly slots: Int32Array;
  private readonly mask: number;

  constructor(capacity: number) {
    this.pieceOf = new Uint16Array(capacity);
    this.starts = new Int32Array(capacity);
    this.lengths = new Int32Array(capacity);
    this.ranks = new Int32Array(capacity);
    let size = 1;
    while (size < capacity * 2) size <<= 1;
    this.slots = new Int32Array(size);
    this.mask = size - 1;
  }

  add(token: string, rank: number): void {
    if (this.count === this.ranks.length) throw new Error(`more than ${this.ranks.length} string ranks`);
    if (this.pieces.length > 0xffff) throw new Error('too many pieces: flush less often');
    const entry = this.count++;
    this.pieceOf[entry] = this.pieces.length;
    this.starts[entry] = this.pendingLength;
    this.lengths[entry] = token.length;
    this.ranks[entry] = rank;
    this.pending.push(token);
    this.pendingLength += token.length;
    let slot = hashOf(token) & this.mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask;
    this.slots[slot] = entry + 1;
  }

  /** Joins the tokens added since the last call into one piece (once a line of the table). `get` finds tokens flushed. */
  flush(): this {
    if (this.pending.length > 0) this.pieces.push(this.pending.join(''));
    this.pending.length = 0;
    this.pendingLength = 0;
    return this;
  }

  get(key: string): number | undefined {
    const { pieces, pieceOf, starts, lengths, slots, mask } = this;
    const length = key.length;
    let slot = hashOf(key) & mask;
    for (;;) {
      const entry = slots[slot]! - 1;
      if (entry < 0) return undefined;
      if (lengths[entry] === length) {
        const text = pieces[pieceOf[entry]!]!;
        const start = starts[entry]!;
        let i = 0;
        while (i < length && text.charCodeAt(start + i) === key.charCodeAt(i)) i++;
        if (i === length) return this.ranks[entry];
      }
      slot = (slot + 1) & mask;
    }
  }
}

/** FNV-1a over UTF-16 code units. */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * Builds the tokenizer from the rank table, a slice at a time. Loading it as
 * gpt-tokenizer's module does is one block of about 330 ms (parsing 2.2 MB of
 * script, then a map of 200k entries built in one loop): in the extension host
 * every extension waits that long. Here the table is read off the event loop,
 * and the encoder is made with no ranks and filled in slices of SLICE_MS with
 * the event loop given back between them; the encoder counts exactly as the
 * module's (tested on the same texts). `finishSync` builds what is left at once,
 * for a count that cannot wait.
 */
export class RankTableLoader {
  /** The table's bytes, a line of it decoded when applied (decoding 2.6 MB at once was one block of 15-50 ms in the host). */
  private bytes: Buffer | undefined;
  /** Where the next line starts in `bytes`. */
  private offset = 0;
  private rank = 0;
  private readonly binary: [Uint8Array, number][] = [];
  /** Made on the first line applied: its 5 MB of typed arrays were 16-21 ms of activation's block in the host. */
  private strings: CompactStringRanks | undefined;
  private encoder: { readonly api: O200k; readonly core: CoreTables } | undefined;
  private built: Encoding | undefined;
  private loading: Promise<Encoding> | undefined;

  constructor(private readonly file: string) {}

  /** The encoder with no ranks yet (its modules load here, about 25 ms: after the table is read, not in the caller's block). */
  private get tables(): { readonly api: O200k; readonly core: CoreTables } {
    if (this.encoder) return this.encoder;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { GptEncoding } = require('gpt-tokenizer/cjs/GptEncoding') as typeof import('gpt-tokenizer/cjs/GptEncoding');
    const api = GptEncoding.getEncodingApi('o200k_base', () => []) as unknown as O200k;
    return (this.encoder = { api, core: (api as unknown as { bytePairEncodingCoreProcessor: CoreTables }).bytePairEncodingCoreProcessor });
  }

  /** The encoder, built in slices; the same promise for every caller. */
  load(): Promise<Encoding> {
    return (this.loading ??= this.loadInSlices());
  }

  /** The encoder now: what is left of the table is read and built in one go. */
  finishSync(): Encoding {
    if (this.built) return this.built;
    this.bytes ??= readFileSync(this.file);
    while (this.linesLeft()) this.applyLine();
    return this.finish();
  }

  private async loadInSlices(): Promise<Encoding> {
    const bytes = await fsp.readFile(this.file);
    if (this.built) return this.built;
    this.bytes ??= bytes;
    // gpt-tokenizer's modules load on a turn of their own (15-20 ms), not in the last slice's.
    await nextTurn();
    void this.tables;
    await nextTurn();
    while (!this.built && this.linesLeft()) {
      const start = Date.now();
      do this.applyLine();
      while (this.linesLeft() && Date.now() - start < SLICE_MS);
      await nextTurn();
    }
    return this.built ?? this.finish();
  }

  private linesLeft(): boolean {
    return this.offset < this.bytes!.length;
  }

  private applyLine(): void {
    const bytes = this.bytes!;
    const newline = bytes.indexOf(10, this.offset);
    const end = newline < 0 ? bytes.length : newline;
    const line = bytes.toString('utf8', this.offset, end);
    this.offset = end + 1;
    const entries = JSON.parse(line) as (string | number[])[];
    const strings = (this.strings ??= new CompactStringRanks(O200K_RANKS));
    for (const entry of entries) {
      if (typeof entry === 'string') strings.add(entry, this.rank);
      else this.binary.push([new Uint8Array(entry), this.rank]);
      this.rank++;
    }
    strings.flush();
  }

  private finish(): Encoding {
    if (this.rank !== O200K_RANKS) throw new Error(`the tokenizer's rank table ${this.file} holds ${this.rank} ranks, not ${O200K_RANKS}: rebuild with \`npm run build\``);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { compareUint8Arrays } = require('gpt-tokenizer/cjs/utfUtil') as { compareUint8Arrays(a: Uint8Array, b: Uint8Array): number };
    const { api, core } = this.tables;
    core.bytePairNonUtfSortedEncoder = this.binary.sort((a, b) => compareUint8Arrays(a[0], b[0]));
    // Counting never decodes: the rank decoders stay empty.
    core.bytePairStringRankEncoder = (this.strings ?? new CompactStringRanks(0)).flush();
    core.mergeableBytePairRankCount = this.rank;
    return (this.built = api);
  }
}

let tables: Encoding | undefined;
let loader: RankTableLoader | undefined;

/** The loader of the rank table beside this bundle (dist/), made once; none without a table (tests from `out/` use the module). */
function tableLoader(): RankTableLoader | undefined {
  if (loader) return loader;
  const file = path.join(__dirname, RANK_TABLE_FILE);
  return existsSync(file) ? (loader = new RankTableLoader(file)) : undefined;
}

/**
 * The tokenizer, loaded on first use (or prepared ahead by `prepareTokenizer`):
 * building its tables takes about 330 ms in one block from gpt-tokenizer's
 * module, which an extension's activation (or a CLI that never counts) should
 * not pay.
 */
function o200k(): Encoding {
  if (tables) return tables;
  const table = tableLoader();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (tables = table ? table.finishSync() : (require('gpt-tokenizer/cjs/encoding/o200k_base') as O200k));
}

/**
 * Builds the tokenizer in the background, in slices that give the event loop
 * back (the extension calls it at activation and awaits it before a turn
 * counts). Without a rank table beside the bundle there is nothing to prepare:
 * the first count loads the module.
 */
export async function prepareTokenizer(): Promise<void> {
  if (tables) return;
  const table = tableLoader();
  if (!table) return;
  const built = await table.load();
  // The first count compiles the splitting pattern (for one-byte text, and again for two-byte): 13-23 ms measured in
  // the first turn's block. Counted here first, a turn each, before the tables are handed out.
  for (const sample of COUNT_WARM_UP) {
    await nextTurn();
    built.countTokens(sample, COUNT_AS_TEXT);
  }
  tables ??= built;
}

/** A one-byte (Latin-1) and a two-byte text: V8 compiles a pattern for each kind of string apart. */
const COUNT_WARM_UP = ["Let's count: 12 tokens, maybe 13.", 'Counting “tokens” — 12, maybe 13 ✓.'];

/**
 * Texts up to this many characters are counted in one call (worst case, one
 * piece of 16 K CJK letters, ≈ 0.5 s).
 */
export const DIRECT_COUNT_LIMIT_CHARS = 16 * 1024;
/** Largest segment counted in one call once a text is split. */
export const SEGMENT_CHARS = 1024 * 1024;
/** Longest stretch without a piece boundary before it is cut anyway (≈ 6 ms of BPE). */
export const MAX_RUN_CHARS = 4 * 1024;

/** Texts from this size up to CHUNK_MEMO_MAX_CHARS are counted in remembered chunks. */
export const CHUNK_MEMO_MIN_CHARS = 2 * 1024;
/** Larger texts (tool outputs, files) are counted once, by the caller's key, and never again. */
export const CHUNK_MEMO_MAX_CHARS = 256 * 1024;
/** A chunk ends at a piece boundary once it has this many characters and the hash says so… */
const CHUNK_MIN_CHARS = 256;
/** …one boundary in 64 past the minimum… */
const CHUNK_CUT_MASK = 0x3f;
/** …or at the first boundary past this many characters. */
const CHUNK_MAX_CHARS = 8 * 1024;
/** Chunk counts remembered (by a 52-bit content hash, about 30 bytes each); the least recently used go first. */
const CHUNK_MEMO_ENTRIES = 16_384;

/** 256 fixed pseudo-random words for the boundary hash (a gear hash: each character shifts the last one out after 32). */
const GEAR = ((): Int32Array => {
  const out = new Int32Array(256);
  let state = 0x9e3779b9;
  for (let i = 0; i < 256; i++) {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = t ^ (t >>> 14);
  }
  return out;
})();

export interface O200kTokenCounterOptions {
  readonly directLimit?: number;
  readonly segmentChars?: number;
  readonly maxRunChars?: number;
}

/** Count special tokens as text: neither allowed as special tokens nor rejected. */
const COUNT_AS_TEXT = { disallowedSpecial: new Set<string>() };

export class O200kTokenCounter implements TokenCounter {
  private readonly directLimit: number;
  private readonly segmentChars: number;
  private readonly maxRunChars: number;

  constructor(options: O200kTokenCounterOptions = {}) {
    this.directLimit = options.directLimit ?? DIRECT_COUNT_LIMIT_CHARS;
    this.segmentChars = Math.max(1, options.segmentChars ?? SEGMENT_CHARS);
    this.maxRunChars = Math.max(2, options.maxRunChars ?? MAX_RUN_CHARS);
  }

  private readonly chunks = new GenerationalCache<number, number>(CHUNK_MEMO_ENTRIES);

  /** Builds the tokenizer's tables in the background (see `prepareTokenizer`). */
  prepare(): Promise<void> {
    return prepareTokenizer();
  }

  count(text: string): number {
    if (text.length === 0) return 0;
    if (text.length <= this.directLimit && text.length < CHUNK_MEMO_MIN_CHARS) return o200k().countTokens(text, COUNT_AS_TEXT);
    if (text.length <= CHUNK_MEMO_MAX_CHARS) return this.countInChunks(text);
    let total = 0;
    for (const segment of splitAtPieceBoundaries(text, this.segmentChars, this.maxRunChars)) {
      total += o200k().countTokens(segment, COUNT_AS_TEXT);
    }
    return total;
  }

  /**
   * The sum of the counts of content-defined chunks, each looked up first. The
   * cuts are piece boundaries (exact), plus, in a text over `directLimit`, the
   * same hard cuts of boundary-less runs as `splitAtPieceBoundaries` makes.
   */
  private countInChunks(text: string): number {
    const hardCuts = text.length > this.directLimit;
    let total = 0;
    let start = 0;
    let lastBoundary = 0;
    let gear = 0;
    let h1 = 0x811c9dc5;
    let h2 = 0x27d4eb2f;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (i > 0) {
        let cut = false;
        if (isPieceBoundary(text, i)) {
          lastBoundary = i;
          const length = i - start;
          cut = length >= CHUNK_MIN_CHARS && ((gear & CHUNK_CUT_MASK) === 0 || length >= CHUNK_MAX_CHARS);
        } else if (hardCuts && i - lastBoundary >= this.maxRunChars && !isLowSurrogate(code)) {
          lastBoundary = i;
          cut = true;
        }
        if (cut) {
          total += this.chunkTokens(text, start, i, h1, h2);
          start = i;
          h1 = 0x811c9dc5;
          h2 = 0x27d4eb2f;
        }
      }
      gear = ((gear << 1) + GEAR[code & 0xff]!) | 0;
      h1 = Math.imul(h1 ^ code, 0x01000193);
      h2 = (Math.imul(h2 ^ (h2 >>> 13), 0x5bd1e995) + code) | 0;
    }
    return total + this.chunkTokens(text, start, text.length, h1, h2);
  }

  private chunkTokens(text: string, start: number, end: number, h1: number, h2: number): number {
    // One number (52 bits of the two hashes and the length): a string key built per chunk cost more than the scan.
    const key = (h1 >>> 0) * 0x100000 + ((h2 ^ Math.imul(end - start, 0x9e3779b1)) & 0xfffff);
    let n = this.chunks.get(key);
    if (n === undefined) {
      n = o200k().countTokens(text.slice(start, end), COUNT_AS_TEXT);
      this.chunks.set(key, n);
    }
    return n;
  }
}

/**
 * Yields consecutive slices of `text` that together are `text`. Each slice ends at
 * a piece boundary once it reaches `segmentChars`; a stretch of `maxRunChars`
 * without any boundary is cut where it stands (never inside a surrogate pair).
 */
export function* splitAtPieceBoundaries(text: string, segmentChars: number, maxRunChars: number): Generator<string> {
  let segmentStart = 0;
  let lastBoundary = 0;
  for (let i = 1; i < text.length; i++) {
    if (isPieceBoundary(text, i)) {
      lastBoundary = i;
      if (i - segmentStart >= segmentChars) {
        yield text.slice(segmentStart, i);
        segmentStart = i;
      }
    } else if (i - lastBoundary >= maxRunChars && !isLowSurrogate(text.charCodeAt(i))) {
      yield text.slice(segmentStart, i);
      segmentStart = i;
      lastBoundary = i;
    }
  }
  if (segmentStart < text.length) yield text.slice(segmentStart);
}

/**
 * True when the o200k splitting expression always starts a new piece at `i`,
 * whatever comes before `i - 1` or after `i`:
 * - a space or tab after a non-whitespace character (no piece contains
 *   non-whitespace followed by a space: a space can only open a piece);
 * - an ASCII letter or digit after a line feed (newlines end a piece, except
 *   before `/`, which a punctuation piece may absorb);
 * - ASCII punctuation other than `'` after an ASCII letter or digit (a letter
 *   piece continues only into letters or an `'s`-style suffix, a number piece only
 *   into digits).
 * Matching from `i` depends only on the text from `i` on: the expression has no
 * look-behind, and its only look-ahead follows whitespace.
 */
export function isPieceBoundary(text: string, i: number): boolean {
  const previous = text.charCodeAt(i - 1);
  const current = text.charCodeAt(i);
  if (current === SPACE || current === TAB) return !isWhitespace(previous);
  if (previous === LINE_FEED) return isAsciiAlphanumeric(current);
  return isAsciiAlphanumeric(previous) && isAsciiPunctuation(current) && current !== APOSTROPHE;
}

const TAB = 0x09;
const LINE_FEED = 0x0a;
const SPACE = 0x20;
const APOSTROPHE = 0x27;

/** JavaScript's `\s` (the splitting expression's whitespace), one UTF-16 unit. */
function isWhitespace(code: number): boolean {
  if (code <= 0x20) return code === SPACE || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 ||
    code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff
  );
}

function isAsciiAlphanumeric(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

function isAsciiPunctuation(code: number): boolean {
  return (code >= 0x21 && code <= 0x2f) || (code >= 0x3a && code <= 0x40) || (code >= 0x5b && code <= 0x60) || (code >= 0x7b && code <= 0x7e);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
