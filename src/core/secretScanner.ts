/**
 * The scanner the secret detectors share: a text read through lookup tables
 * and memoised searches (so nothing backtracks and nothing is scanned twice),
 * the priorities that settle overlapping candidates, and the test every
 * detector applies to a value (placeholders and filler are not secrets).
 */
import type { RedactionKind } from './redact';

/** Called for each candidate; returns true to stop the scan. */
export type Emit = (start: number, end: number, kind: RedactionKind, priority: number) => boolean;

export const P_PRIVATE_KEY = 1;
export const P_URL = 2;
export const P_PREFIX = 3;
export const P_AUTH = 4;
export const P_LABEL = 5;
export const P_EMAIL = 6;
export const P_PII = 7;

// ---------------------------------------------------------------------------
// Character classes (ASCII lookup tables)

/** A lookup table from `ranges` (pairs of inclusive bounds, `azAZ`) and single `chars`. */
function charTable(ranges: string, chars = ''): Uint8Array {
  const t = new Uint8Array(128);
  for (let i = 0; i + 1 < ranges.length; i += 2) {
    for (let c = ranges.charCodeAt(i); c <= ranges.charCodeAt(i + 1); c++) t[c] = 1;
  }
  for (let i = 0; i < chars.length; i++) t[chars.charCodeAt(i)] = 1;
  return t;
}

export const ALNUM = charTable('azAZ09');
export const UPPER_ALNUM = charTable('AZ09');
export const WORD = charTable('azAZ09', '_');
export const TOKEN = charTable('azAZ09', '_-');
export const ALNUM_DASH = charTable('azAZ09', '-');
export const BASE64 = charTable('azAZ09', '+/=');
export const TOKEN68 = charTable('azAZ09', '._~+/-');
export const LETTER_DASH = charTable('azAZ', '-');
export const SLACK_PATH = charTable('azAZ09', '_/-');
export const IDENT = charTable('azAZ09', '_.-');
export const LOCAL = charTable('azAZ09', '._%+-');
export const DOMAIN = charTable('azAZ09', '.-');
export const SCHEME = charTable('azAZ09', '+.-');
export const SPACE = charTable('', ' \t\n\r\f\v');
export const BLANK = charTable('', ' \t');
/** Characters that end an unquoted value. */
export const VALUE_STOP = charTable('', ' \t\n\r\f\v"\'`,;)]}<>\\');
/** Characters that end a URL authority (`user:pass@host:port`). */
export const AUTHORITY_STOP = charTable('', ' \t\n\r\f\v/?#"\'`<>\\');

export function inTable(table: Uint8Array, code: number): boolean {
  return code < 128 && table[code] === 1;
}

export function isAlpha(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

export function isQuote(code: number): boolean {
  return code === 34 || code === 39 || code === 96;
}

// ---------------------------------------------------------------------------
// Memoised forward search

/**
 * `next(p)` is the first match at or after `p` (or the text length). Queries
 * come in increasing order, so the cached answer usually covers the next
 * query and the text between is never scanned twice.
 */
class Finder {
  private from = -1;
  private at = -1;
  constructor(private readonly search: (from: number) => number) {}
  next(p: number): number {
    if (p >= this.from && p <= this.at) return this.at;
    const r = this.search(p);
    this.from = p;
    this.at = r;
    return r;
  }
}

// ---------------------------------------------------------------------------
// The scanner

const MARKER = /\[REDACTED[^\]\r\n]{0,120}\]/g;

/**
 * A text being scanned, read the way every detector needs it: characters by
 * code, runs of a character class, literals, memoised forward searches, and
 * the `[REDACTED…]` markers already in it (never touched again).
 */
export class Scanner {
  readonly length: number;
  private readonly protectedRanges: Array<[number, number]> = [];
  private readonly finders = new Map<string, Finder>();
  private readonly valueEnd: Finder;

  constructor(readonly text: string) {
    this.length = text.length;
    if (text.includes('[REDACTED')) {
      const re = new RegExp(MARKER.source, 'g');
      for (let m = re.exec(text); m !== null; m = re.exec(text)) this.protectedRanges.push([m.index, m.index + m[0].length]);
    }
    // An unquoted value ends at a space, a quote, `,;)]}<>\`, or at an `&` that starts the next query parameter.
    this.valueEnd = new Finder((from) => {
      for (let i = from; i < this.length; i++) {
        const c = this.text.charCodeAt(i);
        if (inTable(VALUE_STOP, c)) return i;
        if (c === 38 && this.isParameterStart(i + 1)) return i;
      }
      return this.length;
    });
  }

  /** True when [start, end) overlaps an existing `[REDACTED…]` marker. */
  isProtected(start: number, end: number): boolean {
    const r = this.protectedRanges;
    if (r.length === 0) return false;
    let lo = 0;
    let hi = r.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (r[mid]![1] <= start) lo = mid + 1;
      else hi = mid;
    }
    const hit = r[lo];
    return hit !== undefined && hit[0] < end;
  }

  /** End of the unquoted value that starts at `from` (memoised: see the constructor). */
  valueEndAt(from: number): number {
    return this.valueEnd.next(from);
  }

  /** `name=` at `i` (at most 64 name characters): the next query parameter after an `&`. */
  private isParameterStart(i: number): boolean {
    const max = Math.min(this.length, i + 64);
    let j = i;
    while (j < max && inTable(IDENT, this.code(j))) j++;
    return j > i && j < max && this.code(j) === 61 && (isAlpha(this.code(i)) || this.code(i) === 95);
  }

  /** First index at or after `from` whose character is not in `table`. */
  run(table: Uint8Array, from: number): number {
    let i = from;
    while (i < this.length && inTable(table, this.text.charCodeAt(i))) i++;
    return i;
  }

  /** End of a run of `table` characters from `from` if it is at least `min` long, else -1. */
  atLeast(table: Uint8Array, from: number, min: number): number {
    const e = this.run(table, from);
    return e - from >= min ? e : -1;
  }

  /** Length of the first of `options` found at `at`, else -1. */
  literalAt(at: number, options: readonly string[]): number {
    for (const o of options) if (this.text.startsWith(o, at)) return o.length;
    return -1;
  }

  nextOf(needle: string, from: number): number {
    let f = this.finders.get(needle);
    if (f === undefined) {
      f = new Finder((p) => {
        const i = this.text.indexOf(needle, p);
        return i === -1 ? this.length : i;
      });
      this.finders.set(needle, f);
    }
    return f.next(from);
  }

  code(i: number): number {
    return this.text.charCodeAt(i);
  }
}

// ---------------------------------------------------------------------------
// Values that are no secret

/**
 * Placeholders, references and filler: `<your-key>`, `xxx`, `***`, `${API_KEY}`,
 * `$API_KEY`, `%API_KEY%`, `{{ secret }}`, `[REDACTED…]`, `YOUR_API_KEY`, `…`.
 */
export function isPlaceholder(value: string): boolean {
  const first = value.charCodeAt(0);
  // < $ % { [ ( * …
  if (first === 60 || first === 36 || first === 37 || first === 123 || first === 91 || first === 40 || first === 0x2026) return true;
  if (isFiller(value)) return true;
  if (/redacted|\.\.\.|…/i.test(value)) return true;
  if (/^(?:your|my|insert|enter|replace|put|example|sample|dummy|fake|placeholder|changeme|todo|tbd|fixme)(?:[-_ .]|$)/i.test(value)) return true;
  if (/[-_](?:here|placeholder)$/i.test(value)) return true;
  // An environment variable name used as a reference: `API_KEY`, `YOUR_TOKEN`.
  if (/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(value) && /_[A-Z]{2,}/.test(value)) return true;
  return false;
}

/** Filler: only x, *, dots, dashes, zeros, #, bullets (`xxxxxxxx`, `********`). */
export function isFiller(value: string): boolean {
  return /^[xX*.\-_#0•·?]*$/.test(value);
}
