/**
 * Tokens found by their literal prefix (`ghp_`, `sk-`, `AKIA`, `eyJ`, the
 * provider rules of secretRules.ts…) and PEM private keys, with or without
 * their END line. Token anchors must sit at the start of a run, so the runs
 * inspected from different anchors do not overlap and the work stays linear.
 */
import type { RedactionKind } from './redact';
import { VENDOR_TOKEN_RULES } from './secretRules';
import { ALNUM, ALNUM_DASH, BASE64, P_PREFIX, P_PRIVATE_KEY, SLACK_PATH, TOKEN, UPPER_ALNUM, WORD, inTable, isFiller, isQuote, type Emit, type Scanner } from './secretScanner';

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

export function scanPrefixed(scanner: Scanner, emit: Emit): boolean {
  const t = scanner.text;
  const anchor = new RegExp(PREFIX_ANCHOR, 'g');
  for (let m = anchor.exec(t); m !== null; m = anchor.exec(t)) {
    const at = m.index;
    if (m[0] === '-----BEGIN ') {
      const end = privateKeyEnd(scanner, at);
      if (end > at) {
        if (emit(at, end, 'private-key', P_PRIVATE_KEY)) return true;
        anchor.lastIndex = end;
      }
      continue;
    }
    const rule = ruleFor(m[0]);
    if (rule === null) continue;
    if (at > 0 && rule.before !== null && inTable(rule.before, scanner.code(at - 1)) && !escapeEndsAt(scanner, at)) continue;
    const end = tokenEnd(scanner, rule, at + m[0].length);
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
function escapeEndsAt(scanner: Scanner, at: number): boolean {
  const c = scanner.code(at - 1);
  if (c !== 110 && c !== 116 && c !== 114 && c !== 98 && c !== 102) return false;
  let k = at - 2;
  while (k >= 0 && scanner.code(k) === 92) k--;
  return (at - 2 - k) % 2 === 1;
}

/** End of the token of `rule` whose anchor ends at `a`, or -1. */
function tokenEnd(scanner: Scanner, rule: TokenRule, a: number): number {
  switch (rule) {
    case GITHUB:
      return scanner.atLeast(ALNUM, a, 36);
    case GITHUB_PAT:
      return scanner.atLeast(WORD, a, 30);
    case OPENAI: {
      const scope = scanner.literalAt(a, OPENAI_SCOPES);
      if (scope !== -1) return scanner.atLeast(TOKEN, a + scope, 20);
      const e = scanner.atLeast(ALNUM, a, 20);
      return e === -1 ? -1 : scanner.run(TOKEN, e);
    }
    case STRIPE: {
      const mode = scanner.literalAt(a, STRIPE_MODES);
      return mode === -1 ? -1 : scanner.atLeast(ALNUM, a + mode, 10);
    }
    case STRIPE_WEBHOOK:
      return scanner.atLeast(BASE64, a, 20);
    case SLACK_APP: {
      const d = scanner.code(a);
      return d >= 48 && d <= 57 && scanner.code(a + 1) === 45 ? scanner.atLeast(ALNUM_DASH, a + 2, 10) : -1;
    }
    case SLACK:
      return scanner.atLeast(ALNUM_DASH, a, 10);
    case GOOGLE:
      return scanner.atLeast(TOKEN, a, 35);
    case AWS_ID: {
      const e = scanner.run(UPPER_ALNUM, a);
      return e - a === 16 && !inTable(ALNUM, scanner.code(e)) ? e : -1;
    }
    case JWT: {
      const header = scanner.atLeast(TOKEN, a, 7);
      if (header === -1 || scanner.code(header) !== 46) return -1;
      const payload = scanner.atLeast(TOKEN, header + 1, 8);
      if (payload === -1 || scanner.code(payload) !== 46) return -1;
      const signature = scanner.atLeast(TOKEN, payload + 1, 8);
      return signature === -1 ? payload + 1 : signature;
    }
    case GITLAB:
      return scanner.atLeast(TOKEN, a, 20);
    case NPM:
      return scanner.atLeast(ALNUM, a, 36);
    case HUGGING_FACE:
      return scanner.atLeast(ALNUM, a, 30);
    case SENDGRID: {
      const first = scanner.atLeast(TOKEN, a, 16);
      return first === -1 || scanner.code(first) !== 46 ? -1 : scanner.atLeast(TOKEN, first + 1, 16);
    }
    case SLACK_WEBHOOK: {
      const hook = scanner.literalAt(a, SLACK_HOOKS);
      return hook === -1 ? -1 : scanner.atLeast(SLACK_PATH, a + hook, 16);
    }
    default: {
      const body = (rule as VendorRule).body;
      if (!body) return -1;
      body.lastIndex = a;
      const m = body.exec(scanner.text);
      if (m === null) return -1;
      const e = a + m[0].length;
      // The token must end where its alphabet ends: a longer run is something else.
      return e < scanner.length && inTable(TOKEN, scanner.code(e)) && (rule as VendorRule).exact ? -1 : e;
    }
  }
}

/** End of the private key that starts at `at` (a `-----BEGIN `), or -1. */
function privateKeyEnd(scanner: Scanner, at: number): number {
  PEM_BEGIN.lastIndex = at;
  const begin = PEM_BEGIN.exec(scanner.text);
  if (begin === null) return -1;
  const bodyStart = at + begin[0].length;
  const endAt = scanner.nextOf('-----END ', bodyStart);
  if (endAt < scanner.length && endAt - at <= PEM_MAX && scanner.nextOf('-----BEGIN ', bodyStart) > endAt) {
    PEM_END.lastIndex = endAt;
    const end = PEM_END.exec(scanner.text);
    if (end !== null) return endAt + end[0].length;
  }
  return truncatedKeyEnd(scanner, bodyStart);
}

/**
 * A key without its END line (truncated output): the BEGIN line plus every
 * following line that looks like key material (base64, or a `Name: value`
 * header such as `Proc-Type`). Lines may be separated by real newlines or
 * by the two characters `\n` (a key inside a JSON string).
 */
function truncatedKeyEnd(scanner: Scanner, from: number): number {
  const t = scanner.text;
  let end = from;
  let i = from;
  let afterHeader = false;
  for (;;) {
    const sep = lineBreak(scanner, i);
    if (sep === 0) break;
    i += sep;
    const blank = lineBreak(scanner, i);
    if (blank > 0 && afterHeader) i += blank;
    // A base64 line, ending at a line break, a quote or the end of the text.
    const after = scanner.run(BASE64, i);
    if (after > i && (after === scanner.length || lineBreak(scanner, after) > 0 || isQuote(scanner.code(after)))) {
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
function lineBreak(scanner: Scanner, i: number): number {
  const c = scanner.code(i);
  if (c === 10) return 1;
  if (c === 13) return scanner.code(i + 1) === 10 ? 2 : 1;
  if (c === 92) {
    const d = scanner.code(i + 1);
    if (d === 110) return 2;
    if (d === 114 && scanner.code(i + 2) === 92 && scanner.code(i + 3) === 110) return 4;
  }
  return 0;
}

/**
 * The body of an armored key or certificate without its BEGIN line: lines of
 * exactly ARMOR_LINE_CHARS base64 characters (PEM and OpenPGP armor both wrap
 * there), one after another, however an export joined them (line breaks,
 * spaces, the escapes `\n`). gpg quotes it in "invalid armor header: lQcY…",
 * an export that flattened a key prints it after its BEGIN line with spaces
 * for line breaks: either way the key would reach the model. ARMOR_MIN_LINES
 * full lines or more, each with upper- and lower-case letters and a digit or
 * `+` / `/` (a hex digest has no capitals: two SHA-256 sums side by side are
 * no key), and the short last line after them, are hidden as key material,
 * unless a public BEGIN line (a public key, a certificate) stands right before.
 */
const ARMOR_LINE_CHARS = 64;
const ARMOR_MIN_LINES = 2;
/**
 * Where a candidate line starts: the start of the text or a character that can stand before a line (a space, a
 * break, a quote, a colon, the backslash of an escaped break), then a full line's worth of base64 characters.
 * Trying only there keeps the search from starting at every letter of prose; the lookahead is bounded, so a run
 * of megabytes costs one scan (scanner.run), never the regular expression's stack.
 */
const ARMOR_START = /(?:^|[\s"'`:>\\])(?=[A-Za-z0-9+/]{64})/g;
/** The BEGIN line of what is public (a public key, a certificate, a signature) right before a body: no secret. */
const PUBLIC_ARMOR = /-----BEGIN [A-Z0-9 ]*(?:PUBLIC KEY|CERTIFICATE|SIGNATURE)[A-Z ]*-----(?:[ \t\r\n]|\\[nr])*$/;
/** What may stand between two lines of a flattened or escaped body: at most a few spaces, tabs and line breaks. */
const ARMOR_GAP = /^(?:[ \t\r\n]|\\[nr]){1,4}/;

function isArmorLine(line: string): boolean {
  return line.length === ARMOR_LINE_CHARS && /[A-Z]/.test(line) && /[a-z]/.test(line) && /[0-9+/]/.test(line);
}

export function scanArmorBodies(scanner: Scanner, emit: Emit): boolean {
  const t = scanner.text;
  if (t.length < ARMOR_LINE_CHARS * ARMOR_MIN_LINES) return false;
  const starts = new RegExp(ARMOR_START.source, 'g');
  /** The length of the gap between two lines at `i` (an escaped break is two characters), 0 when there is none. */
  const gapAt = (i: number): number => ARMOR_GAP.exec(t.slice(i, i + 8))?.[0].length ?? 0;
  let chain: { start: number; end: number; lines: number } | undefined;
  const close = (): boolean => {
    const c = chain;
    chain = undefined;
    if (c === undefined || c.lines < ARMOR_MIN_LINES || PUBLIC_ARMOR.test(t.slice(Math.max(0, c.start - 80), c.start))) return false;
    // The short last line (and its padding) after the full ones belongs to the body.
    const gap = gapAt(c.end);
    const lastLine = gap > 0 ? scanner.run(BASE64, c.end + gap) - (c.end + gap) : 0;
    const end = lastLine >= 4 && lastLine < ARMOR_LINE_CHARS ? c.end + gap + lastLine : c.end;
    return emit(c.start, end, 'private-key', P_PRIVATE_KEY);
  };
  for (let m = starts.exec(t); m !== null; m = starts.exec(t)) {
    let start = m.index + m[0].length;
    const end = scanner.run(BASE64, start);
    starts.lastIndex = end;
    // A line after an escaped line break (`…XsJK\nOvVS…`) starts after the escape's letter.
    if (start > 0 && t.charCodeAt(start - 1) === 92) {
      if (t[start] !== 'n' && t[start] !== 'r') continue;
      start++;
    }
    const line = t.slice(start, end);
    if (!isArmorLine(line)) {
      if (close()) return true;
      continue;
    }
    if (chain !== undefined && start > chain.end && gapAt(chain.end) === start - chain.end) {
      chain.end = end;
      chain.lines++;
    } else {
      if (close()) return true;
      chain = { start, end, lines: 1 };
    }
  }
  return close();
}
