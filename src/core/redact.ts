/**
 * Secret and personal-data redaction. Everything that leaves the raw record (a
 * summary, a state fact, a retrieval index, the panel, the projected context)
 * passes through the redactor first; the raw record keeps the original. The
 * core sees the port `Redactor`; `SecretRedactor` is the implementation over
 * the rule tables, built once at each composition root (the extension, the
 * CLI, the evaluation, the benchmarks) and passed in, as the token counter is.
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
 *
 * This file is the entry: `SecretRedactor` (`redact`, `containsSecret`) and
 * how overlapping candidates are settled. The detectors run over one shared scanner
 * (secretScanner.ts): prefixed tokens and private keys (secretTokens.ts),
 * labelled values (secretLabels.ts), credentials in URLs and command lines
 * (secretCredentials.ts), personal data (personalData.ts).
 */
import { scanEmails, scanPersonalNumbers } from './personalData';
import { scanCommandSecrets, scanUrls, scanUserFlags } from './secretCredentials';
import { scanLabels } from './secretLabels';
import { Scanner, type Emit } from './secretScanner';
import { scanArmorBodies, scanPrefixed } from './secretTokens';

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

/** Hides secrets and personal data in text: the port the core and its callers are given. */
export interface Redactor {
  redact(text: string): RedactionResult;
  containsSecret(text: string): boolean;
}

/**
 * The redactor of the rule tables: anchors, detectors and placeholders as this
 * file and its detectors describe them. Pure and stateless; built once at each
 * composition root and passed to everything that hides secrets.
 */
export class SecretRedactor implements Redactor {
  /**
   * Replaces every secret with a placeholder like `[REDACTED:api-key:3f9a1c]`
   * (the id is a short hash of the value so equal secrets match and the
   * placeholder reveals nothing). Linear time; safe on 50 MB inputs. Returns the
   * input unchanged (the same string) when nothing matched.
   */
  redact(text: string): RedactionResult {
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

  /** Fast check without building the output: true exactly when `redact` would change the text. */
  containsSecret(text: string): boolean {
    if (text.length === 0) return false;
    const scanner = new Scanner(text);
    let found = false;
    scanSecrets(scanner, (start, end) => {
      if (scanner.isProtected(start, end)) return false;
      found = true;
      return true;
    });
    return found;
  }
}

/** The chosen (non-overlapping, sorted) candidates in `text`, outside existing markers. */
function detect(text: string): Candidate[] {
  if (text.length === 0) return [];
  const scanner = new Scanner(text);
  const candidates: Candidate[] = [];
  scanSecrets(scanner, (start, end, kind, priority) => {
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
// The detectors, in order

/** Runs every detector; stops early when `emit` returns true. */
function scanSecrets(scanner: Scanner, emit: Emit): void {
  if (scanPrefixed(scanner, emit)) return;
  if (scanArmorBodies(scanner, emit)) return;
  if (scanLabels(scanner, emit)) return;
  if (scanUrls(scanner, emit)) return;
  if (scanUserFlags(scanner, emit)) return;
  if (scanCommandSecrets(scanner, emit)) return;
  if (scanEmails(scanner, emit)) return;
  scanPersonalNumbers(scanner, emit);
}
