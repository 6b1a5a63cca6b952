/**
 * Secret and personal-data redaction. Everything that leaves the raw record (a
 * summary, a state fact, a retrieval index, the panel, the projected context)
 * passes through `redact` first; the raw record keeps the original.
 *
 * Design, so that 50 MB of tool output costs a few linear passes and nothing
 * ever backtracks:
 *
 * - No regular expression is run "everywhere". Candidates are found by cheap
 *   anchors (a literal prefix such as `ghp_`, a label keyword such as
 *   `password`, an `@`, a `://`, a `-----BEGIN `), and each anchor is then
 *   validated by a hand-written scan over lookup tables (never a regex
 *   quantifier over an unbounded run, which can also overflow V8's backtrack
 *   stack). Token anchors must sit at the start of a run (a boundary check
 *   before the prefix), so the runs inspected from different anchors do not
 *   overlap and the total work stays linear.
 * - Forward searches that could be repeated from many anchors (the closing
 *   quote of a value, the end of an unquoted value, the `-----END` of a
 *   private key) go through memoised finders: anchors are visited in order, so
 *   a search never rescans text an earlier search already crossed. Backward
 *   scans (an identifier, an e-mail's local part, a URL scheme) are bounded.
 * - The few regexes left are either literal alternations (the anchors) or
 *   have bounded quantifiers, and run on short slices.
 *
 * Each secret becomes `[REDACTED:<kind>:<id>]` where `<id>` is a 24-bit FNV-1a
 * hash of the secret: equal secrets get equal placeholders, and the id is too
 * short to confirm a guess reliably. A labelled value keeps its label
 * (`password=[REDACTED:password:ab12cd]`), a URL keeps its user and host.
 * Existing `[REDACTED…]` markers are never touched, so `redact` is idempotent.
 */

import { VENDOR_TOKEN_RULES } from './secretRules';

export type RedactionKind = 'private-key' | 'api-key' | 'token' | 'password' | 'email' | 'connection-string' | 'jwt' | 'aws-key' | 'card' | 'iban' | 'ssn' | 'phone';

export interface Redaction {
  readonly kind: RedactionKind;
  /** Offset of the secret in the original text (UTF-16 code units). */
  readonly start: number;
  /** End offset (exclusive) of the secret in the original text. */
  readonly end: number;
  /** A stable short id of the secret (hash of the value), so the same secret gets the same placeholder. */
  readonly id: string;
}

export interface RedactionResult {
  readonly text: string;
  readonly redactions: readonly Redaction[];
}

/**
 * Replaces every secret with a placeholder like `[REDACTED:api-key:3f9a1c]`
 * (the id is a short hash of the value so equal secrets match and the
 * placeholder reveals nothing). Linear time; safe on 50 MB inputs. Returns the
 * input unchanged (the same string) when nothing matched.
 */
export function redact(text: string): RedactionResult {
  let chosen = detect(text);
  if (chosen.length === 0) return { text, redactions: [] };
  let out = render(text, chosen);
  // Replacing a secret can change what its neighbour sees: `KEY-----xoxb-…`
  // hides the Slack token behind a `-` until the key before it becomes
  // `[REDACTED:…]`. Scanning the output again (the placeholders are protected,
  // so only original text is searched) until nothing new turns up makes
  // `redact` idempotent. It costs one more pass, over texts that had a secret
  // only; the chain is cut off after a few rounds.
  for (let round = 0; round < 4; round++) {
    const more = detect(out.text);
    if (more.length === 0) break;
    const growth = growthBefore(out.redactions);
    const redactions = out.redactions;
    chosen = mergeSorted(chosen, more.map((c) => toOriginal(c, redactions, growth)));
    out = render(text, chosen);
  }
  return out;
}

/** The chosen (non-overlapping, sorted) candidates in `text`, outside existing markers. */
function detect(text: string): Candidate[] {
  if (text.length === 0) return [];
  const scanner = new Scanner(text);
  const candidates: Candidate[] = [];
  scanner.scan((start, end, kind, priority) => {
    if (!scanner.isProtected(start, end)) candidates.push({ start, end, kind, priority });
    return false;
  });
  return candidates.length === 0 ? candidates : choose(candidates);
}

function render(text: string, chosen: readonly Candidate[]): RedactionResult {
  const redactions: Redaction[] = [];
  const parts: string[] = [];
  let cursor = 0;
  for (const c of chosen) {
    const id = secretId(text.slice(c.start, c.end));
    redactions.push({ kind: c.kind, start: c.start, end: c.end, id });
    parts.push(text.slice(cursor, c.start), placeholder(c.kind, id));
    cursor = c.end;
  }
  parts.push(text.slice(cursor));
  return { text: parts.join(''), redactions };
}

/**
 * Maps a candidate found in the output of `render` back to the original text.
 * It lies between two placeholders (they are protected), so one shift applies:
 * `growth[k]` is how much longer the output is than the original before
 * redaction k (placeholder length minus secret length, summed).
 */
function toOriginal(c: Candidate, redactions: readonly Redaction[], growth: readonly number[]): Candidate {
  let lo = 0;
  let hi = redactions.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (redactions[mid]!.start + growth[mid]! < c.start) lo = mid + 1;
    else hi = mid;
  }
  const shift = growth[lo]!;
  return { start: c.start - shift, end: c.end - shift, kind: c.kind, priority: c.priority };
}

function growthBefore(redactions: readonly Redaction[]): number[] {
  const growth: number[] = [0];
  for (let k = 0; k < redactions.length; k++) {
    const r = redactions[k]!;
    growth.push(growth[k]! + placeholder(r.kind, r.id).length - (r.end - r.start));
  }
  return growth;
}

/** Merges two sorted, mutually non-overlapping candidate lists. */
function mergeSorted(a: readonly Candidate[], b: readonly Candidate[]): Candidate[] {
  const out: Candidate[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]!.start <= b[j]!.start)) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}

/** Fast check without building the output: true exactly when `redact` would change the text. */
export function containsSecret(text: string): boolean {
  if (text.length === 0) return false;
  const scanner = new Scanner(text);
  let found = false;
  scanner.scan((start, end) => {
    if (scanner.isProtected(start, end)) return false;
    found = true;
    return true;
  });
  return found;
}

/** The placeholder that replaces a secret of `kind` whose id is `id`. */
export function placeholder(kind: RedactionKind, id: string): string {
  return `[REDACTED:${kind}:${id}]`;
}

/**
 * A short, stable id of a secret: FNV-1a (32-bit) over its UTF-16 code units,
 * folded to 24 bits, as 6 hex digits. Deliberately short: enough to tell the
 * secrets of one session apart, too short to confirm a guessed password.
 */
export function secretId(value: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) {
    h ^= value.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h >>>= 0;
  return (((h >>> 24) ^ h) & 0xffffff).toString(16).padStart(6, '0');
}

// ---------------------------------------------------------------------------
// Candidates and their resolution

interface Candidate {
  readonly start: number;
  readonly end: number;
  readonly kind: RedactionKind;
  /** Lower wins when two candidates overlap. */
  readonly priority: number;
}

/** Returns true to stop the scan. */
type Emit = (start: number, end: number, kind: RedactionKind, priority: number) => boolean;

const P_PRIVATE_KEY = 1;
const P_URL = 2;
const P_PREFIX = 3;
const P_AUTH = 4;
const P_LABEL = 5;
const P_EMAIL = 6;
const P_PII = 7;

/**
 * Non-overlapping candidates in text order. Overlapping candidates form a
 * cluster; inside it the lower priority number wins, then the longer span,
 * then the earlier one, and every candidate that still fits is kept.
 */
function choose(candidates: Candidate[]): Candidate[] {
  candidates.sort((a, b) => a.start - b.start || a.priority - b.priority || b.end - a.end);
  const out: Candidate[] = [];
  let i = 0;
  while (i < candidates.length) {
    const first = candidates[i]!;
    let end = first.end;
    let j = i + 1;
    while (j < candidates.length && candidates[j]!.start < end) {
      end = Math.max(end, candidates[j]!.end);
      j++;
    }
    if (j === i + 1) {
      out.push(first);
    } else {
      const cluster = candidates.slice(i, j).sort((a, b) => a.priority - b.priority || b.end - b.start - (a.end - a.start) || a.start - b.start);
      const kept: Candidate[] = []; // sorted by start
      for (const c of cluster) {
        let lo = 0;
        let hi = kept.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (kept[mid]!.start < c.start) lo = mid + 1;
          else hi = mid;
        }
        const before = kept[lo - 1];
        const after = kept[lo];
        if ((before !== undefined && before.end > c.start) || (after !== undefined && after.start < c.end)) continue;
        kept.splice(lo, 0, c);
      }
      for (const c of kept) out.push(c);
    }
    i = j;
  }
  return out;
}

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

const ALNUM = charTable('azAZ09');
const UPPER_ALNUM = charTable('AZ09');
const WORD = charTable('azAZ09', '_');
const TOKEN = charTable('azAZ09', '_-');
const ALNUM_DASH = charTable('azAZ09', '-');
const BASE64 = charTable('azAZ09', '+/=');
const TOKEN68 = charTable('azAZ09', '._~+/-');
const LETTER_DASH = charTable('azAZ', '-');
const SLACK_PATH = charTable('azAZ09', '_/-');
const IDENT = charTable('azAZ09', '_.-');
const LOCAL = charTable('azAZ09', '._%+-');
const DOMAIN = charTable('azAZ09', '.-');
const SCHEME = charTable('azAZ09', '+.-');
const SPACE = charTable('', ' \t\n\r\f\v');
const BLANK = charTable('', ' \t');
/** Characters that end an unquoted value. */
const VALUE_STOP = charTable('', ' \t\n\r\f\v"\'`,;)]}<>\\');
/** Characters that end a URL authority (`user:pass@host:port`). */
const AUTHORITY_STOP = charTable('', ' \t\n\r\f\v/?#"\'`<>\\');

function inTable(table: Uint8Array, code: number): boolean {
  return code < 128 && table[code] === 1;
}

function isAlpha(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
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

/** A provider token from the rule table (secretRules.ts): its prefix, then its body. */
interface VendorRule extends TokenRule {
  readonly body: RegExp;
  /** The token ends where its alphabet ends (a longer run is not this token). */
  readonly exact: boolean;
}

const VENDOR_RULES: ReadonlyMap<string, VendorRule> = new Map(
  VENDOR_TOKEN_RULES.flatMap((r) =>
    r.prefixes.map((prefix): [string, VendorRule] => [prefix, { kind: r.kind, before: r.boundary === 'none' ? null : r.boundary === 'alnum' ? ALNUM : TOKEN, prefix: prefix.length, body: new RegExp(r.body, 'y'), exact: r.exact ?? true }]),
  ),
);

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const PREFIX_ANCHOR = [
  '-----BEGIN |gh[pousr]_|github_pat_|sk-|[srp]k_|whsec_|xox[abporsce]-|xapp-|AIza|A(?:KIA|SIA|BIA|CCA)|eyJ|glpat-|npm_|hf_|SG\\.|hooks\\.slack\\.com/',
  // The provider rules of secretRules.ts, longest prefix first so none hides another.
  ...[...VENDOR_RULES.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp),
].join('|');
const KEYWORD_ANCHOR = 'pass|pw|secret|token|key|auth|bearer|sig';
const USER_FLAG = '(?:^|[ \\t])(?:-u|--user|--proxy-user)(?:[ \\t]+|=)';

interface TokenRule {
  readonly kind: RedactionKind;
  /** Characters that may not precede the anchor. */
  readonly before: Uint8Array | null;
  /** Length of the fixed prefix: the rest is checked for placeholder filler. */
  readonly prefix: number;
}

const GITHUB: TokenRule = { kind: 'token', before: WORD, prefix: 4 };
const GITHUB_PAT: TokenRule = { kind: 'token', before: WORD, prefix: 11 };
const OPENAI: TokenRule = { kind: 'api-key', before: TOKEN, prefix: 3 };
const STRIPE: TokenRule = { kind: 'api-key', before: WORD, prefix: 8 };
const STRIPE_WEBHOOK: TokenRule = { kind: 'api-key', before: WORD, prefix: 6 };
const SLACK_APP: TokenRule = { kind: 'token', before: TOKEN, prefix: 5 };
const SLACK: TokenRule = { kind: 'token', before: TOKEN, prefix: 5 };
const GOOGLE: TokenRule = { kind: 'api-key', before: TOKEN, prefix: 4 };
const AWS_ID: TokenRule = { kind: 'aws-key', before: ALNUM, prefix: 4 };
const JWT: TokenRule = { kind: 'jwt', before: TOKEN, prefix: 3 };
const GITLAB: TokenRule = { kind: 'token', before: TOKEN, prefix: 6 };
const NPM: TokenRule = { kind: 'token', before: WORD, prefix: 4 };
const HUGGING_FACE: TokenRule = { kind: 'token', before: WORD, prefix: 3 };
const SENDGRID: TokenRule = { kind: 'api-key', before: TOKEN, prefix: 3 };
const SLACK_WEBHOOK: TokenRule = { kind: 'token', before: null, prefix: 16 };

function ruleFor(anchor: string): TokenRule | null {
  const vendor = VENDOR_RULES.get(anchor);
  if (vendor) return vendor;
  switch (anchor) {
    case 'ghp_':
    case 'gho_':
    case 'ghu_':
    case 'ghs_':
    case 'ghr_':
      return GITHUB;
    case 'github_pat_':
      return GITHUB_PAT;
    case 'sk-':
      return OPENAI;
    case 'sk_':
    case 'rk_':
    case 'pk_':
      return STRIPE;
    case 'whsec_':
      return STRIPE_WEBHOOK;
    case 'xapp-':
      return SLACK_APP;
    case 'AIza':
      return GOOGLE;
    case 'AKIA':
    case 'ASIA':
    case 'ABIA':
    case 'ACCA':
      return AWS_ID;
    case 'eyJ':
      return JWT;
    case 'glpat-':
      return GITLAB;
    case 'npm_':
      return NPM;
    case 'hf_':
      return HUGGING_FACE;
    case 'SG.':
      return SENDGRID;
    case 'hooks.slack.com/':
      return SLACK_WEBHOOK;
    default:
      return anchor.startsWith('xox') ? SLACK : null;
  }
}

const OPENAI_SCOPES = ['ant-', 'proj-', 'svcacct-', 'admin-'];
const STRIPE_MODES = ['live_', 'test_'];
const SLACK_HOOKS = ['services/', 'workflows/', 'triggers/'];

const PEM_BEGIN = /-----BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?-----/y;
const PEM_END = /-----END (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?-----/y;
/** Longest private-key block we look for an END line in; beyond it the key counts as truncated. */
const PEM_MAX = 64 * 1024;
const PEM_HEADER_LINE = /[A-Za-z][A-Za-z-]{0,40}: [^\r\n\\]{0,200}/y;

class Scanner {
  private readonly n: number;
  private readonly protectedRanges: Array<[number, number]> = [];
  private readonly finders = new Map<string, Finder>();
  private readonly valueEnd: Finder;

  constructor(private readonly text: string) {
    this.n = text.length;
    if (text.includes('[REDACTED')) {
      const re = new RegExp(MARKER.source, 'g');
      for (let m = re.exec(text); m !== null; m = re.exec(text)) this.protectedRanges.push([m.index, m.index + m[0].length]);
    }
    // An unquoted value ends at a space, a quote, `,;)]}<>\`, or at an `&` that starts the next query parameter.
    this.valueEnd = new Finder((from) => {
      for (let i = from; i < this.n; i++) {
        const c = this.text.charCodeAt(i);
        if (inTable(VALUE_STOP, c)) return i;
        if (c === 38 && this.isParameterStart(i + 1)) return i;
      }
      return this.n;
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

  /** Runs every detector; stops early when `emit` returns true. */
  scan(emit: Emit): void {
    if (this.scanPrefixed(emit)) return;
    if (this.scanLabels(emit)) return;
    if (this.scanUrls(emit)) return;
    if (this.scanUserFlags(emit)) return;
    if (this.scanCommandSecrets(emit)) return;
    if (this.scanEmails(emit)) return;
    this.scanPersonalNumbers(emit);
  }

  // -- Secrets that only their context reveals ---------------------------------

  /**
   * Passwords given to commands and credential files whose shape alone says
   * nothing: `mysql -pPASS`, `docker login -p PASS`, `sshpass -p PASS`,
   * `.netrc` and `.pgpass` lines, and the secret key that follows an AWS key
   * id in a credentials CSV. Each pattern starts at a literal keyword found
   * first, and its quantifiers are bounded.
   */
  private scanCommandSecrets(emit: Emit): boolean {
    const t = this.text;
    for (const rule of CONTEXT_RULES) {
      if (rule.prefilter ? !rule.prefilter.test(t) : !rule.keywords.some((k) => t.includes(k))) continue;
      const re = new RegExp(rule.pattern.source, rule.pattern.flags);
      for (let m = re.exec(t); m !== null; m = re.exec(t)) {
        if (m[0].length === 0) re.lastIndex++;
        const value = m[rule.group];
        if (value === undefined || value.length < 2 || isPlaceholder(value)) continue;
        const start = m.index + m[0].lastIndexOf(value);
        if (emit(start, start + value.length, rule.kind, P_LABEL)) return true;
      }
    }
    return false;
  }

  // -- Personal numbers: cards (Luhn), IBANs (mod 97), US SSNs, phone numbers ---

  private scanPersonalNumbers(emit: Emit): boolean {
    const t = this.text;
    if (!HAS_DIGIT_RUN.test(t)) return false;
    for (const rule of PII_RULES) {
      const re = new RegExp(rule.pattern.source, rule.pattern.flags);
      for (let m = re.exec(t); m !== null; m = re.exec(t)) {
        if (!rule.valid(m[0], t, m.index)) continue;
        if (emit(m.index, m.index + m[0].length, rule.kind, P_PII)) return true;
      }
    }
    return false;
  }

  /** `name=` at `i` (at most 64 name characters): the next query parameter after an `&`. */
  private isParameterStart(i: number): boolean {
    const max = Math.min(this.n, i + 64);
    let j = i;
    while (j < max && inTable(IDENT, this.code(j))) j++;
    return j > i && j < max && this.code(j) === 61 && (isAlpha(this.code(i)) || this.code(i) === 95);
  }

  /** First index at or after `from` whose character is not in `table`. */
  private run(table: Uint8Array, from: number): number {
    let i = from;
    while (i < this.n && inTable(table, this.text.charCodeAt(i))) i++;
    return i;
  }

  /** End of a run of `table` characters from `from` if it is at least `min` long, else -1. */
  private atLeast(table: Uint8Array, from: number, min: number): number {
    const e = this.run(table, from);
    return e - from >= min ? e : -1;
  }

  /** Length of the first of `options` found at `at`, else -1. */
  private literalAt(at: number, options: readonly string[]): number {
    for (const o of options) if (this.text.startsWith(o, at)) return o.length;
    return -1;
  }

  private nextOf(needle: string, from: number): number {
    let f = this.finders.get(needle);
    if (f === undefined) {
      f = new Finder((p) => {
        const i = this.text.indexOf(needle, p);
        return i === -1 ? this.n : i;
      });
      this.finders.set(needle, f);
    }
    return f.next(from);
  }

  private code(i: number): number {
    return this.text.charCodeAt(i);
  }

  // -- Prefixed tokens and private keys ------------------------------------

  private scanPrefixed(emit: Emit): boolean {
    const t = this.text;
    const anchor = new RegExp(PREFIX_ANCHOR, 'g');
    for (let m = anchor.exec(t); m !== null; m = anchor.exec(t)) {
      const at = m.index;
      if (m[0] === '-----BEGIN ') {
        const end = this.privateKeyEnd(at);
        if (end > at) {
          if (emit(at, end, 'private-key', P_PRIVATE_KEY)) return true;
          anchor.lastIndex = end;
        }
        continue;
      }
      const rule = ruleFor(m[0]);
      if (rule === null) continue;
      if (at > 0 && rule.before !== null && inTable(rule.before, this.code(at - 1)) && !this.escapeEndsAt(at)) continue;
      const end = this.tokenEnd(rule, at + m[0].length);
      if (end === -1 || isFiller(t.slice(at + rule.prefix, end))) continue;
      if (emit(at, end, rule.kind, P_PREFIX)) return true;
      anchor.lastIndex = end;
    }
    return false;
  }

  /**
   * True when the character before `at` ends a JSON or shell escape (`\n`,
   * `\t`, `\r`…): inside a tool call's input rendered as JSON, a token on a
   * new line follows the two characters `\n`, which are a boundary.
   */
  private escapeEndsAt(at: number): boolean {
    const c = this.code(at - 1);
    if (c !== 110 && c !== 116 && c !== 114 && c !== 98 && c !== 102) return false;
    let k = at - 2;
    while (k >= 0 && this.code(k) === 92) k--;
    return (at - 2 - k) % 2 === 1;
  }

  /** End of the token of `rule` whose anchor ends at `a`, or -1. */
  private tokenEnd(rule: TokenRule, a: number): number {
    switch (rule) {
      case GITHUB:
        return this.atLeast(ALNUM, a, 36);
      case GITHUB_PAT:
        return this.atLeast(WORD, a, 30);
      case OPENAI: {
        const scope = this.literalAt(a, OPENAI_SCOPES);
        if (scope !== -1) return this.atLeast(TOKEN, a + scope, 20);
        const e = this.atLeast(ALNUM, a, 20);
        return e === -1 ? -1 : this.run(TOKEN, e);
      }
      case STRIPE: {
        const mode = this.literalAt(a, STRIPE_MODES);
        return mode === -1 ? -1 : this.atLeast(ALNUM, a + mode, 10);
      }
      case STRIPE_WEBHOOK:
        return this.atLeast(BASE64, a, 20);
      case SLACK_APP: {
        const d = this.code(a);
        return d >= 48 && d <= 57 && this.code(a + 1) === 45 ? this.atLeast(ALNUM_DASH, a + 2, 10) : -1;
      }
      case SLACK:
        return this.atLeast(ALNUM_DASH, a, 10);
      case GOOGLE:
        return this.atLeast(TOKEN, a, 35);
      case AWS_ID: {
        const e = this.run(UPPER_ALNUM, a);
        return e - a === 16 && !inTable(ALNUM, this.code(e)) ? e : -1;
      }
      case JWT: {
        const header = this.atLeast(TOKEN, a, 7);
        if (header === -1 || this.code(header) !== 46) return -1;
        const payload = this.atLeast(TOKEN, header + 1, 8);
        if (payload === -1 || this.code(payload) !== 46) return -1;
        const signature = this.atLeast(TOKEN, payload + 1, 8);
        return signature === -1 ? payload + 1 : signature;
      }
      case GITLAB:
        return this.atLeast(TOKEN, a, 20);
      case NPM:
        return this.atLeast(ALNUM, a, 36);
      case HUGGING_FACE:
        return this.atLeast(ALNUM, a, 30);
      case SENDGRID: {
        const first = this.atLeast(TOKEN, a, 16);
        return first === -1 || this.code(first) !== 46 ? -1 : this.atLeast(TOKEN, first + 1, 16);
      }
      case SLACK_WEBHOOK: {
        const hook = this.literalAt(a, SLACK_HOOKS);
        return hook === -1 ? -1 : this.atLeast(SLACK_PATH, a + hook, 16);
      }
      default: {
        const body = (rule as VendorRule).body;
        if (!body) return -1;
        body.lastIndex = a;
        const m = body.exec(this.text);
        if (m === null) return -1;
        const e = a + m[0].length;
        // The token must end where its alphabet ends: a longer run is something else.
        return e < this.n && inTable(TOKEN, this.code(e)) && (rule as VendorRule).exact ? -1 : e;
      }
    }
  }

  /** End of the private key that starts at `at` (a `-----BEGIN `), or -1. */
  private privateKeyEnd(at: number): number {
    PEM_BEGIN.lastIndex = at;
    const begin = PEM_BEGIN.exec(this.text);
    if (begin === null) return -1;
    const bodyStart = at + begin[0].length;
    const endAt = this.nextOf('-----END ', bodyStart);
    if (endAt < this.n && endAt - at <= PEM_MAX && this.nextOf('-----BEGIN ', bodyStart) > endAt) {
      PEM_END.lastIndex = endAt;
      const end = PEM_END.exec(this.text);
      if (end !== null) return endAt + end[0].length;
    }
    return this.truncatedKeyEnd(bodyStart);
  }

  /**
   * A key without its END line (truncated output): the BEGIN line plus every
   * following line that looks like key material (base64, or a `Name: value`
   * header such as `Proc-Type`). Lines may be separated by real newlines or
   * by the two characters `\n` (a key inside a JSON string).
   */
  private truncatedKeyEnd(from: number): number {
    const t = this.text;
    let end = from;
    let i = from;
    let afterHeader = false;
    for (;;) {
      const sep = this.lineBreak(i);
      if (sep === 0) break;
      i += sep;
      const blank = this.lineBreak(i);
      if (blank > 0 && afterHeader) i += blank;
      // A base64 line, ending at a line break, a quote or the end of the text.
      const after = this.run(BASE64, i);
      if (after > i && (after === this.n || this.lineBreak(after) > 0 || isQuote(this.code(after)))) {
        i = after;
        end = i;
        afterHeader = false;
        continue;
      }
      // Or a `Name: value` header line (Proc-Type, DEK-Info, Comment).
      PEM_HEADER_LINE.lastIndex = i;
      const header = PEM_HEADER_LINE.exec(t);
      if (header === null) break;
      i += header[0].length;
      end = i;
      afterHeader = true;
    }
    return end;
  }

  /** Length of a line break at `i` (`\n`, `\r\n`, or the escapes `\n` / `\r\n`), else 0. */
  private lineBreak(i: number): number {
    const c = this.code(i);
    if (c === 10) return 1;
    if (c === 13) return this.code(i + 1) === 10 ? 2 : 1;
    if (c === 92) {
      const d = this.code(i + 1);
      if (d === 110) return 2;
      if (d === 114 && this.code(i + 2) === 92 && this.code(i + 3) === 110) return 4;
    }
    return 0;
  }

  // -- Labelled values: password=…, "api_key": "…", --password …, Bearer … ---

  private scanLabels(emit: Emit): boolean {
    const t = this.text;
    const n = this.n;
    const anchor = new RegExp(KEYWORD_ANCHOR, 'gi');
    for (let m = anchor.exec(t); m !== null; m = anchor.exec(t)) {
      const hit = m.index;
      // The identifier around the keyword: [A-Za-z0-9_.-], at most 100 chars.
      let s = hit;
      const minS = Math.max(0, hit - 100);
      while (s > minS && inTable(IDENT, this.code(s - 1))) s--;
      const tooLong = s === minS && s > 0 && inTable(IDENT, this.code(s - 1));
      let e = hit + m[0].length;
      while (e < n && inTable(IDENT, this.code(e))) e++;
      anchor.lastIndex = e;
      if (tooLong || e - s > 100) continue;
      // Trim punctuation at the ends: `--password`, `password.` in prose.
      let is = s;
      while (is < e && (this.code(is) === 45 || this.code(is) === 46)) is++;
      const isFlag = is > s && this.code(s) === 45;
      let ie = e;
      while (ie > is && (this.code(ie - 1) === 45 || this.code(ie - 1) === 46)) ie--;
      if (ie <= is) continue;
      const end = this.labelledValue(s, is, ie, isFlag, emit);
      if (end === STOP) return true;
      if (end > anchor.lastIndex) anchor.lastIndex = end;
    }
    return false;
  }

  /**
   * Checks the identifier [is, ie) and, if it labels a secret, the value that
   * follows. Emits the value; returns the end of what was consumed, or STOP.
   */
  private labelledValue(s: number, is: number, ie: number, isFlag: boolean, emit: Emit): number {
    const t = this.text;
    const n = this.n;
    // Bearer <token> without an Authorization label.
    if (ie - is === 6 && s === is && t.slice(is, ie).toLowerCase() === 'bearer') return this.bareBearer(ie, emit);

    // Separator: optional closing quote of the key, spaces, then `=`, `:`, `:=`, `=>`, or (for a flag) spaces.
    let p = ie;
    if (this.code(p) === 92 && isQuote(this.code(p + 1))) p += 2;
    else if (isQuote(this.code(p))) p++;
    const keyEnd = p;
    while (p < n && p - keyEnd < 8 && (this.code(p) === 32 || this.code(p) === 9)) p++;
    if (this.code(p) === 63 && this.code(p + 1) === 58) p++; // `password?: string`
    const c = this.code(p);
    let sep = false;
    if (c === 61) {
      const d = this.code(p + 1);
      if (d !== 61 && d !== 126) {
        p++;
        if (d === 62) p++; // `=>`
        sep = true;
      }
    } else if (c === 58) {
      const d = this.code(p + 1);
      if (d === 61) {
        p += 2;
        sep = true;
      } else if (d !== 58) {
        p++;
        sep = true;
      }
    }
    let spaced = false;
    if (!sep) {
      if (!isFlag || p === keyEnd || keyEnd !== ie) return -1;
      spaced = true; // `--password hunter2`
    }
    // `arn:aws:secretsmanager:…:secret:prod/db` names a secret, it does not hold one.
    if (s > 0 && this.code(s - 1) === 58) {
      const before = t.slice(Math.max(0, s - 120), s);
      if (/arn:[a-z-]{2,20}:/.test(before) && !/\s/.test(before.slice(before.lastIndexOf('arn:')))) return -1;
    }
    const ident = t.slice(is, ie);
    // A URL's `sig=` (an Azure SAS, a signed URL) is the signature itself.
    const rule = (ident === 'sig' || ident === 'signature') && s > 0 && (this.code(s - 1) === 38 || this.code(s - 1) === 63) ? API_KEY_RULE : classifyLabel(ident, isFlag);
    if (rule === null) return -1;
    const valueFrom = p;
    while (p < n && p - valueFrom < 16 && (this.code(p) === 32 || this.code(p) === 9)) p++;
    if (p >= n) return -1;

    // The value: quoted (possibly as an escaped quote inside a JSON string) or bare.
    let vs: number;
    let ve: number;
    let quoted = false;
    let q = this.code(p);
    let escaped = false;
    if (q === 92 && isQuote(this.code(p + 1))) {
      escaped = true;
      q = this.code(p + 1);
      p++;
    }
    if (isQuote(q)) {
      quoted = true;
      vs = p + 1;
      const quoteChar = String.fromCharCode(q);
      let close = this.nextOf(quoteChar, vs);
      // An escaped quote inside a normally quoted value does not close it (bounded).
      if (!escaped) {
        const limit = Math.min(n, vs + 1025);
        while (close < limit && this.code(close - 1) === 92) {
          close++;
          while (close < limit && this.code(close) !== q) close++;
        }
      }
      if (close >= n || close - vs > 1024 || this.nextOf('\n', vs) < close) return -1;
      ve = escaped && this.code(close - 1) === 92 ? close - 1 : close;
    } else {
      if (escaped) return -1;
      vs = p;
      ve = this.valueEnd.next(vs);
      if (ve - vs > 256) return -1;
      while (ve > vs && (this.code(ve - 1) === 46 || this.code(ve - 1) === 58)) ve--; // sentence end
    }
    if (ve <= vs) return -1;
    // `"Password: "` is a prompt, not a key: the quote that follows closes the prompt's string.
    if (quoted && keyEnd === ie && s > 0 && isQuote(this.code(s - 1))) return -1;

    if (rule.auth) return this.authorizationValue(vs, quoted ? ve : n, emit);
    // `Password: click the reset link`, `allPass: Takes a list…`: a word followed by more words is prose.
    if (!quoted && /^[A-Za-z][a-z]+$/.test(t.slice(vs, ve)) && this.code(ve) === 32 && this.code(ve + 1) >= 97 && this.code(ve + 1) <= 122) return -1;

    const value = t.slice(vs, ve);
    if (!acceptValue(value, rule, quoted, spaced)) return -1;
    return emit(vs, ve, rule.kind, P_LABEL) ? STOP : ve;
  }

  /** `Authorization: Bearer <token>` / `Basic <b64>` / `<token>`: the token after the scheme. */
  private authorizationValue(from: number, limit: number, emit: Emit): number {
    // An optional scheme word followed by blanks, then a token68.
    // A word followed by blanks and something else is a scheme, even when what follows is no token.
    let start = from;
    let scheme = false;
    const word = this.run(LETTER_DASH, from);
    if (word > from && word - from <= 31 && isAlpha(this.code(from))) {
      const blank = this.run(BLANK, word);
      if (blank > word && blank < limit && !inTable(SPACE, this.code(blank))) {
        start = blank;
        scheme = true;
      }
    }
    const end = this.tokenEnd68(start);
    const token = this.text.slice(start, end);
    if (end > limit || token.length < 8 || isPlaceholder(token)) return -1;
    if (!scheme && /^[A-Za-z]+$/.test(token) && token.length < 16) return -1;
    return emit(start, end, 'token', P_AUTH) ? STOP : end;
  }

  /** End of a token68 (`[A-Za-z0-9._~+/-]+=*`) starting at `from`. */
  private tokenEnd68(from: number): number {
    let e = this.run(TOKEN68, from);
    if (e === from) return from;
    while (e < this.n && this.code(e) === 61) e++;
    return e;
  }

  /** `Bearer <token>` in running text: only a token that looks random. */
  private bareBearer(from: number, emit: Emit): number {
    const p = this.run(BLANK, from);
    if (p === from || p - from > 4) return -1;
    const end = this.tokenEnd68(p);
    if (end - p < 16) return -1;
    const token = this.text.slice(p, end);
    if (isPlaceholder(token)) return -1;
    const random = /[0-9]/.test(token) || (token.length >= 20 && /[a-z]/.test(token) && /[A-Z]/.test(token));
    if (!random) return -1;
    return emit(p, end, 'token', P_AUTH) ? STOP : end;
  }

  // -- Credentials in URLs: scheme://user:pass@host ---------------------------

  private scanUrls(emit: Emit): boolean {
    const t = this.text;
    const n = this.n;
    for (let u = t.indexOf('://'); u !== -1; u = t.indexOf('://', u + 3)) {
      let s = u;
      const minS = Math.max(0, u - 32);
      while (s > minS && inTable(SCHEME, this.code(s - 1))) s--;
      while (s < u && !isAlpha(this.code(s))) s++;
      if (s >= u) continue;
      const from = u + 3;
      const max = Math.min(n, from + 1024);
      let e = from;
      let lastAt = -1;
      let colon = -1;
      for (; e < max; e++) {
        const c = this.code(e);
        if (inTable(AUTHORITY_STOP, c)) break;
        if (c === 64) lastAt = e;
        else if (c === 58 && colon === -1) colon = e;
      }
      if (lastAt === -1 || colon === -1 || colon > lastAt || (e === max && max < n)) continue;
      const password = t.slice(colon + 1, lastAt);
      if (password.length === 0 || isPlaceholder(password)) continue;
      const scheme = t.slice(s, u).toLowerCase();
      const kind: RedactionKind = DB_SCHEMES.has(scheme) ? 'connection-string' : 'password';
      if (emit(colon + 1, lastAt, kind, P_URL)) return true;
    }
    return false;
  }

  // -- `curl -u user:password`, `--user user:password` ------------------------

  private scanUserFlags(emit: Emit): boolean {
    const t = this.text;
    if (!t.includes('-u') && !t.includes('--user') && !t.includes('--proxy-user')) return false;
    const anchor = new RegExp(USER_FLAG, 'gm');
    // Only for HTTP clients: `docker run -u 1000:1000` and `-u node:staff` are a user and a group.
    // `client` walks forward to the last `curl`/`wget`/`http` before each flag.
    const client = /curl|wget|http/gi;
    let lastClient = -1;
    let nextClient = -1;
    for (let m = anchor.exec(t); m !== null; m = anchor.exec(t)) {
      while (nextClient !== Infinity && nextClient < m.index) {
        if (nextClient >= 0) lastClient = nextClient;
        const c = client.exec(t);
        nextClient = c === null ? Infinity : c.index;
      }
      if (lastClient === -1 || m.index - lastClient > 200 || this.nextOf('\n', lastClient) < m.index) continue;
      let p = anchor.lastIndex;
      const q = this.code(p);
      let end: number;
      if (q === 34 || q === 39) {
        p++;
        end = this.nextOf(String.fromCharCode(q), p);
        if (end >= this.n || end - p > 512 || this.nextOf('\n', p) < end) continue;
      } else {
        end = this.valueEnd.next(p);
        if (end - p > 512) continue;
      }
      let colon = p;
      while (colon < end && this.code(colon) !== 58) colon++;
      if (colon >= end) continue;
      const user = t.slice(p, colon);
      const password = t.slice(colon + 1, end);
      if (password.length === 0 || isPlaceholder(password) || isPlaceholder(user) || /^[0-9]+$/.test(password)) continue;
      if (emit(colon + 1, end, 'password', P_LABEL)) return true;
      anchor.lastIndex = end;
    }
    return false;
  }

  // -- E-mail addresses ------------------------------------------------------

  private scanEmails(emit: Emit): boolean {
    const t = this.text;
    const n = this.n;
    let at = t.indexOf('@');
    while (at !== -1) {
      let next = at + 1;
      // The domain first: most `@`s (decorators, npm scopes, versions) fail here cheaply.
      let e = at + 1;
      const maxE = Math.min(n, at + 1 + 255);
      let dot = false;
      for (; e < maxE; e++) {
        const c = this.code(e);
        if (!inTable(DOMAIN, c)) break;
        if (c === 46) dot = true;
      }
      if (!dot || e === at + 1) {
        at = t.indexOf('@', next);
        continue;
      }
      let s = at;
      const minS = Math.max(0, at - 64);
      while (s > minS && inTable(LOCAL, this.code(s - 1))) s--;
      const localTooLong = s === minS && s > 0 && inTable(LOCAL, this.code(s - 1));
      while (s < at && this.code(s) === 46) s++;
      const domainTooLong = e === maxE && e < n && inTable(DOMAIN, this.code(e));
      while (e > at + 1 && (this.code(e - 1) === 46 || this.code(e - 1) === 45)) e--;
      // `alice@example.com.json` in a path: the address is what comes before the file extension.
      const domain = t.slice(at + 1, e);
      const extension = fileExtensionAt(domain);
      if (extension > 0 && validDomain(domain.slice(0, -extension - 1))) e -= extension + 1;
      if (!localTooLong && !domainTooLong && s < at && this.code(at - 1) !== 46 && validDomain(t.slice(at + 1, e)) && !this.isUrlUserinfo(s) && t.slice(s, at) !== 'git' && !this.isLogin(s)) {
        if (emit(s, e, 'email', P_EMAIL)) return true;
        next = e;
      }
      at = t.indexOf('@', next);
    }
    return false;
  }

  /** True when `user@host` at `s` is a login given to ssh, scp, rsync and the like, not an e-mail address. */
  private isLogin(s: number): boolean {
    const lineStart = Math.max(0, this.text.lastIndexOf('\n', s) + 1, s - 200);
    return LOGIN_COMMAND.test(this.text.slice(lineStart, s));
  }

  /** True when the local part starting at `s` is the user of a URL (`https://user@host`). */
  private isUrlUserinfo(s: number): boolean {
    const c = this.code(s - 1);
    if (c !== 58 && c !== 47) return false;
    const min = Math.max(0, s - 300);
    for (let i = s - 1; i >= min + 2; i--) {
      const d = this.code(i);
      if (inTable(SPACE, d)) return false;
      if (d === 47 && this.code(i - 1) === 47 && this.code(i - 2) === 58) return true;
    }
    return false;
  }
}

const STOP = -2;

function isQuote(code: number): boolean {
  return code === 34 || code === 39 || code === 96;
}

const DB_SCHEMES = new Set([
  'postgres', 'postgresql', 'mysql', 'mariadb', 'mongodb', 'mongodb+srv', 'redis', 'rediss', 'amqp', 'amqps', 'mssql', 'sqlserver',
  'oracle', 'cockroachdb', 'clickhouse', 'cassandra', 'couchdb', 'neo4j', 'neo4j+s', 'bolt', 'memcached', 'db2', 'snowflake', 'nats',
]);

/** File extensions that look like a top-level domain after an `@` (`icon@2x.png`). */
const FILE_EXTENSIONS = new Set([
  'png', 'jpg', 'jpeg', 'gif', 'svg', 'webp', 'ico', 'bmp', 'tif', 'tiff', 'avif', 'woff', 'woff2', 'ttf', 'otf', 'eot', 'js', 'mjs', 'cjs',
  'ts', 'tsx', 'jsx', 'json', 'map', 'css', 'scss', 'less', 'html', 'htm', 'txt', 'yml', 'yaml', 'toml', 'lock', 'xml', 'py', 'rb', 'java',
  'kt', 'cpp', 'hpp', 'cs', 'swift', 'php', 'sh', 'mp3', 'mp4', 'wav', 'pdf', 'zip', 'gz', 'tgz', 'wasm', 'vue', 'svelte', 'log',
]);

/** Length of a trailing file extension of `domain` (`example.com.json` → 4), else 0. */
function fileExtensionAt(domain: string): number {
  const dot = domain.lastIndexOf('.');
  if (dot <= 0) return 0;
  const ext = domain.slice(dot + 1);
  return FILE_EXTENSIONS.has(ext.toLowerCase()) ? ext.length : 0;
}

/** Commands whose `user@host` argument is a login. */
const LOGIN_COMMAND = /(?:^|[\s;&|(`'"])(?:ssh|scp|sftp|rsync|mosh|ssh-copy-id|autossh|sshfs)\s[^\n]*$/;

function validDomain(domain: string): boolean {
  const labels = domain.split('.');
  if (labels.length < 2) return false;
  for (const label of labels) {
    if (label.length === 0 || label.length > 63 || label.startsWith('-') || label.endsWith('-')) return false;
  }
  const tld = labels[labels.length - 1]!;
  return /^[A-Za-z]{2,24}$/.test(tld) && !FILE_EXTENSIONS.has(tld.toLowerCase());
}

// ---------------------------------------------------------------------------
// Secrets revealed by their context, and personal numbers

interface ContextRule {
  readonly kind: RedactionKind;
  /** Literal keywords, one of which must occur for the pattern to be tried at all. */
  readonly keywords: readonly string[];
  /** Or a cheap test the text must pass first (when no keyword is rare enough). */
  readonly prefilter?: RegExp;
  readonly pattern: RegExp;
  /** The capture group of the secret. */
  readonly group: number;
}

/** A word boundary, or the end of an escape (`\n` in a JSON string): a command on a new line of a tool input. */
const CONTEXT_RULES: readonly ContextRule[] = [
  // mysql -pPASSWORD (no space: with a space, -p asks for the password).
  { kind: 'password', keywords: ['mysql', 'mariadb'], pattern: /(?:\b|(?<=\\[ntr]))(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)\b[^\n\\]{0,300}?\s-p(['"]?)([^\s'"\\]{2,200})\1/g, group: 2 },
  // docker / podman / helm registry login -p PASSWORD.
  { kind: 'password', keywords: ['login'], pattern: /(?:\b|(?<=\\[ntr]))(?:docker|podman|nerdctl|buildah|skopeo|oras|crane|helm(?:\s+registry)?)\s+login\b[^\n\\]{0,300}?\s(?:-p|--password)(?:\s+|=)(['"]?)([^\s'"\\]{2,200})\1/g, group: 2 },
  { kind: 'password', keywords: ['sshpass'], pattern: /(?:\b|(?<=\\[ntr]))sshpass\s+(?:-[a-oq-zA-Z]\s*[^\s\\]*\s+){0,4}-p\s*(['"]?)([^\s'"\\]{2,200})\1/g, group: 2 },
  // .netrc: machine HOST login USER password PASS
  { kind: 'password', keywords: ['password'], pattern: /(?:\b|(?<=\\[ntr]))(?:machine|default)\s+[^\s\\]{1,255}(?:\s+login\s+[^\s\\]{1,255})?\s+password\s+([^\s'"\\]{2,200})/g, group: 1 },
  // .pgpass: host:port:database:user:password (also as a line of a numbered file read)
  { kind: 'password', keywords: [], prefilter: /:(?:\d{1,5}|\*):[^\s:\\]/, pattern: /(?:^|(?<=\\n))(?:[ \t]{0,12}\d{1,9}(?:\t|→|\|) ?)?(?=[^:\s]{0,255}[A-Za-z*])[A-Za-z0-9_.*-]{1,255}:(?:\d{1,5}|\*):[^\s:\\]{1,255}:[^\s:\\]{1,255}:([^\s'"\\]{1,200})(?=$|\\[nr]|["'])/gm, group: 1 },
  // An AWS secret access key after its key id (a credentials CSV, a pasted table).
  { kind: 'aws-key', keywords: ['AKIA', 'ASIA'], pattern: /A(?:KIA|SIA)[A-Z0-9]{16}[\s,;:|="']{1,6}([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/g, group: 1 },
];

const HAS_DIGIT_RUN = /\d[ .()-]?\d[ .()-]?\d/;

interface PiiRule {
  readonly kind: RedactionKind;
  readonly pattern: RegExp;
  readonly valid: (match: string, text: string, at: number) => boolean;
}

/** The Luhn checksum of a card number. */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Issuer prefixes of the card networks (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay). */
const CARD_PREFIX = /^(?:4|5[1-5]|2(?:2[2-9]|[3-6]\d|7[01]|720)|3[47]|6(?:011|5|4[4-9]|2)|35(?:2[89]|[3-8])|3(?:0[0-5]|[68]))/;

function validCard(match: string): boolean {
  const separators = match.replace(/\d/g, '');
  if (separators.length > 0 && !/^(?: +|-+)$/.test(separators)) return false;
  const digits = match.replace(/\D/g, '');
  if (digits.length < 13 || digits.length > 19) return false;
  if (separators.length === 0 && digits.length !== 15 && digits.length !== 16) return false;
  if (/^(\d)\1+$/.test(digits)) return false;
  return CARD_PREFIX.test(digits) && luhn(digits);
}

/** IBAN lengths by country (ISO 13616). */
const IBAN_LENGTH: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, CH: 21, CR: 22, CY: 28, CZ: 24, DE: 22, DK: 18, DO: 28,
  EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23,
  IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LI: 21, LT: 20, LU: 20, LV: 21, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27, MT: 31, MU: 30,
  NL: 18, NO: 15, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, SA: 24, SE: 24, SI: 19, SK: 24, SM: 27, TN: 24, TR: 26, UA: 29,
  VG: 24, XK: 20,
};

/** The ISO 7064 mod-97 check of an IBAN. */
export function ibanValid(iban: string): boolean {
  const compact = iban.replace(/ /g, '').toUpperCase();
  if (IBAN_LENGTH[compact.slice(0, 2)] !== compact.length) return false;
  const moved = compact.slice(4) + compact.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const c = ch.charCodeAt(0);
    const value = c >= 65 ? String(c - 55) : ch;
    for (const d of value) rest = (rest * 10 + (d.charCodeAt(0) - 48)) % 97;
  }
  return rest === 1;
}

/** A US SSN: area 001–899 except 666, group 01–99, serial 0001–9999. */
function validSsn(match: string): boolean {
  const [area, group, serial] = match.split('-') as [string, string, string];
  const a = Number(area);
  return a > 0 && a !== 666 && a < 900 && group !== '00' && serial !== '0000';
}

/** A NANP number (+1 optional): area and exchange codes start with 2–9, and the exchange is not N11. */
function validNanp(match: string): boolean {
  const digits = match.replace(/\D/g, '').replace(/^1(?=\d{10}$)/, '');
  if (digits.length !== 10) return false;
  const exchange = digits.slice(3, 6);
  return /^[2-9]\d\d[2-9]\d\d\d{4}$/.test(digits) && !/^[2-9]11$/.test(exchange);
}

/** An international number written with its `+` country code: 8 to 15 digits (E.164). */
function validE164(match: string): boolean {
  const digits = match.replace(/\D/g, '');
  return digits.length >= 8 && digits.length <= 15 && !/^(\d)\1+$/.test(digits);
}

const PII_RULES: readonly PiiRule[] = [
  { kind: 'card', pattern: /(?<![\w.,/:-])\d(?:[ -]?\d){12,18}(?![\w.-]?\d)/g, valid: validCard },
  { kind: 'iban', pattern: /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])/g, valid: ibanValid },
  { kind: 'ssn', pattern: /(?<![\w.-])\d{3}-\d{2}-\d{4}(?![\w-])/g, valid: validSsn },
  { kind: 'phone', pattern: /(?<![\w+.])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?![\w.-]?\d)/g, valid: validE164 },
  { kind: 'phone', pattern: /(?<![\w.+-])(?:1[ .-])?(?:\(\d{3}\) ?|\d{3}[-. ])\d{3}[-. ]\d{4}(?![\w-]|\.\d)/g, valid: validNanp },
];

// ---------------------------------------------------------------------------
// Labels and their values

interface LabelRule {
  readonly kind: RedactionKind;
  /** Minimum value length. */
  readonly min: number;
  /** Whether a quoted value may contain spaces (a passphrase may; an API key may not). */
  readonly spaces: boolean;
  readonly auth?: boolean;
}

const PASSWORD_RULE: LabelRule = { kind: 'password', min: 4, spaces: true };
const AUTH_RULE: LabelRule = { kind: 'token', min: 8, spaces: false, auth: true };
const AWS_RULE: LabelRule = { kind: 'aws-key', min: 16, spaces: false };
const PRIVATE_KEY_RULE: LabelRule = { kind: 'private-key', min: 16, spaces: false };
const TOKEN_RULE: LabelRule = { kind: 'token', min: 8, spaces: false };
const API_KEY_RULE: LabelRule = { kind: 'api-key', min: 8, spaces: false };

const PASSWORD_SUFFIX = /(?:password|passwd|passphrase|passwort|passcode)$/;
const API_KEY_SUFFIX = /(?:apikey|apisecret|secret|secretkey|secretkeybase|signingkey|encryptionkey|masterkey|accountkey|authkey|accesskeysecret|sharedaccesskey|sharedaccesssignature|amzsignature|amzsecuritytoken)$/;

/** Identifiers repeat (`password`, `token`, `API_KEY`): their classification is cached. */
const LABEL_CACHE = new Map<string, LabelRule | null>();

function classifyLabel(ident: string, isFlag: boolean): LabelRule | null {
  const key = isFlag ? '-' + ident : ident;
  let rule = LABEL_CACHE.get(key);
  if (rule === undefined) {
    if (LABEL_CACHE.size >= 4096) LABEL_CACHE.clear();
    rule = classifyIdentifier(ident, isFlag);
    LABEL_CACHE.set(key, rule);
  }
  return rule;
}

/** What an identifier labels, judged by how it ends (`DB_PASSWORD`, `clientSecret`, `x-api-key`). */
function classifyIdentifier(ident: string, isFlag: boolean): LabelRule | null {
  const norm = ident.toLowerCase().replace(/[-_.]/g, '');
  if (norm.length < 2) return null;
  if (norm.endsWith('authorization')) return AUTH_RULE;
  if (PASSWORD_SUFFIX.test(norm)) return PASSWORD_RULE;
  if (norm.endsWith('pwd') || norm.endsWith('pass') || norm.endsWith('pw')) {
    // Short forms only as a whole word part: `pwd=`, `DB_PASS`, `smtpPass`, `--pass`; not `bypass`, `compass`.
    const segments = ident.replace(/([a-z0-9])([A-Z])/g, '$1_$2').split(/[-_.]+/).filter((x) => x.length > 0);
    const last = (segments[segments.length - 1] ?? '').toLowerCase();
    if (last === 'pwd' || ((last === 'pass' || last === 'pw') && (segments.length > 1 || isFlag))) return PASSWORD_RULE;
    return null;
  }
  if (norm.includes('secretaccesskey') || norm.endsWith('awssecretkey') || norm.endsWith('awssecret')) return AWS_RULE;
  if (norm.endsWith('privatekey')) return PRIVATE_KEY_RULE;
  // `.npmrc`'s `_auth=` (base64 of user:password) and `//registry/:_auth=`.
  if (norm === 'auth' && ident.startsWith('_')) return TOKEN_RULE;
  if (norm.endsWith('token')) return TOKEN_RULE;
  if (API_KEY_SUFFIX.test(norm)) return API_KEY_RULE;
  return null;
}

/** Type names, literals and keywords that are never a secret value. */
const KEYWORDS = new Set([
  'string', 'str', 'number', 'int', 'integer', 'float', 'bool', 'boolean', 'any', 'unknown', 'object', 'undefined', 'null', 'nil',
  'none', 'true', 'false', 'yes', 'no', 'on', 'off', 'required', 'optional', 'void', 'never', 'text', 'password', 'secret', 'token',
  'redacted', 'hidden', 'masked', 'empty', 'default', 'env', 'bytes', 'buffer', 'char', 'varchar', 'uuid', 'type', 'value', 'self',
  'this', 'nullptr', 'nothing', 'notset', 'unset', 'changeme', 'example', 'sample', 'dummy', 'placeholder', 'secretstr',
]);

/** Prose words that follow `Password:` in running text. */
const STOPWORDS = new Set([
  'is', 'are', 'was', 'be', 'to', 'the', 'a', 'an', 'and', 'or', 'of', 'for', 'in', 'at', 'with', 'must', 'should', 'will', 'can',
  'may', 'not', 'if', 'then', 'as', 'by', 'from', 'that', 'which', 'when', 'field', 'flag', 'option', 'argument', 'parameter',
  'invalid', 'incorrect', 'missing', 'wrong', 'changed', 'reset', 'updated', 'new', 'old', 'see', 'use', 'set', 'await', 'new',
  'return', 'await', 'typeof', 'const', 'let', 'var', 'function', 'async', 'lambda', 'def', 'fn', 'func', 'please', 'enter', 'your',
]);

function acceptValue(value: string, rule: LabelRule, quoted: boolean, spaced: boolean): boolean {
  if (value.length < rule.min || isPlaceholder(value)) return false;
  const lower = value.toLowerCase();
  if (KEYWORDS.has(lower) || /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return false;
  if (quoted) {
    // Leading or trailing blanks: the quotes belong to two different strings (`echo "Password: "; read pw`).
    if (/^\s|\s$/.test(value) || (!rule.spaces && /\s/.test(value))) return false;
    return true;
  }
  if (STOPWORDS.has(lower) || looksLikeCode(value) || looksLikePath(value)) return false;
  // `client_secret: disabled`: a key or a token has digits or mixed case; a plain word is a setting.
  if (!rule.spaces && /^[a-z]+$/.test(value) && value.length <= 16) return false;
  // `--password flag` in prose: a spaced flag value must not be a plain lowercase word.
  if (spaced && (/^[a-z]+$/.test(value) || value.startsWith('-'))) return false;
  return true;
}

/**
 * Placeholders, references and filler: `<your-key>`, `xxx`, `***`, `${API_KEY}`,
 * `$API_KEY`, `%API_KEY%`, `{{ secret }}`, `[REDACTED…]`, `YOUR_API_KEY`, `…`.
 */
function isPlaceholder(value: string): boolean {
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
function isFiller(value: string): boolean {
  return /^[xX*.\-_#0•·?]*$/.test(value);
}

/**
 * An unquoted value that is code rather than a literal: `process.env.API_KEY`,
 * `os.environ[`, `getToken(`, `config.db.password`, `hashedPassword`.
 */
function looksLikeCode(value: string): boolean {
  if (/^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+[(\[]?/.test(value) && /^[\w$.?]+[(\[]?$/.test(value)) return true;
  if (/^[A-Za-z_$][\w$.]*[(\[]/.test(value)) return true;
  // An identifier naming the secret rather than holding it: `accessToken`, `user_password`, `Password`.
  if (/^[A-Za-z_$][\w$]*[A-Za-z_$]$/.test(value) && /pass|pwd|secret|token|key|auth|cred/i.test(value) && /[a-z][A-Z]|_|^[A-Z][a-z]+$/.test(value)) return true;
  return false;
}

function looksLikePath(value: string): boolean {
  return /^(?:~?\/|\.\.?\/|[A-Za-z]:[\\/])/.test(value);
}
