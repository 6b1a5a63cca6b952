/**
 * Labelled values: `password=…`, `"api_key": "…"`, `--password …`,
 * `Authorization: Bearer …`, and a bare `Bearer <token>` that looks random.
 * The label is found by a keyword anchor and judged by how it ends
 * (`DB_PASSWORD`, `clientSecret`, `x-api-key`); the value must look like a
 * literal, not a type, a word of prose, code or a path.
 */
import type { RedactionKind } from './redact';
import { BLANK, IDENT, LETTER_DASH, P_AUTH, P_LABEL, SPACE, TOKEN68, inTable, isAlpha, isPlaceholder, isQuote, type Emit, type Scanner } from './secretScanner';

const KEYWORD_ANCHOR = 'pass|pw|secret|token|key|auth|bearer|sig';

const STOP = -2;

export function scanLabels(scanner: Scanner, emit: Emit): boolean {
  const t = scanner.text;
  const n = scanner.length;
  const anchor = new RegExp(KEYWORD_ANCHOR, 'gi');
  for (let m = anchor.exec(t); m !== null; m = anchor.exec(t)) {
    const hit = m.index;
    // The identifier around the keyword: [A-Za-z0-9_.-], at most 100 chars.
    let s = hit;
    const minS = Math.max(0, hit - 100);
    while (s > minS && inTable(IDENT, scanner.code(s - 1))) s--;
    const tooLong = s === minS && s > 0 && inTable(IDENT, scanner.code(s - 1));
    let e = hit + m[0].length;
    while (e < n && inTable(IDENT, scanner.code(e))) e++;
    anchor.lastIndex = e;
    if (tooLong || e - s > 100) continue;
    // Trim punctuation at the ends: `--password`, `password.` in prose.
    let is = s;
    while (is < e && (scanner.code(is) === 45 || scanner.code(is) === 46)) is++;
    const isFlag = is > s && scanner.code(s) === 45;
    let ie = e;
    while (ie > is && (scanner.code(ie - 1) === 45 || scanner.code(ie - 1) === 46)) ie--;
    if (ie <= is) continue;
    const end = labelledValue(scanner, s, is, ie, isFlag, emit);
    if (end === STOP) return true;
    if (end > anchor.lastIndex) anchor.lastIndex = end;
  }
  return false;
}

/**
 * Checks the identifier [is, ie) and, if it labels a secret, the value that
 * follows. Emits the value; returns the end of what was consumed, or STOP.
 */
function labelledValue(scanner: Scanner, s: number, is: number, ie: number, isFlag: boolean, emit: Emit): number {
  const t = scanner.text;
  const n = scanner.length;
  // Bearer <token> without an Authorization label.
  if (ie - is === 6 && s === is && t.slice(is, ie).toLowerCase() === 'bearer') return bareBearer(scanner, ie, emit);

  // Separator: optional closing quote of the key, spaces, then `=`, `:`, `:=`, `=>`, or (for a flag) spaces.
  let p = ie;
  if (scanner.code(p) === 92 && isQuote(scanner.code(p + 1))) p += 2;
  else if (isQuote(scanner.code(p))) p++;
  const keyEnd = p;
  while (p < n && p - keyEnd < 8 && (scanner.code(p) === 32 || scanner.code(p) === 9)) p++;
  if (scanner.code(p) === 63 && scanner.code(p + 1) === 58) p++; // `password?: string`
  const c = scanner.code(p);
  let sep = false;
  if (c === 61) {
    const d = scanner.code(p + 1);
    if (d !== 61 && d !== 126) {
      p++;
      if (d === 62) p++; // `=>`
      sep = true;
    }
  } else if (c === 58) {
    const d = scanner.code(p + 1);
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
  if (s > 0 && scanner.code(s - 1) === 58) {
    const before = t.slice(Math.max(0, s - 120), s);
    if (/arn:[a-z-]{2,20}:/.test(before) && !/\s/.test(before.slice(before.lastIndexOf('arn:')))) return -1;
  }
  const ident = t.slice(is, ie);
  // A URL's `sig=` (an Azure SAS, a signed URL) is the signature itself.
  const rule = (ident === 'sig' || ident === 'signature') && s > 0 && (scanner.code(s - 1) === 38 || scanner.code(s - 1) === 63) ? API_KEY_RULE : classifyLabel(ident, isFlag);
  if (rule === null) return -1;
  const valueFrom = p;
  while (p < n && p - valueFrom < 16 && (scanner.code(p) === 32 || scanner.code(p) === 9)) p++;
  if (p >= n) return -1;

  // The value: quoted (possibly as an escaped quote inside a JSON string) or bare.
  let vs: number;
  let ve: number;
  let quoted = false;
  let q = scanner.code(p);
  let escaped = false;
  if (q === 92 && isQuote(scanner.code(p + 1))) {
    escaped = true;
    q = scanner.code(p + 1);
    p++;
  }
  if (isQuote(q)) {
    quoted = true;
    vs = p + 1;
    const quoteChar = String.fromCharCode(q);
    let close = scanner.nextOf(quoteChar, vs);
    // An escaped quote inside a normally quoted value does not close it (bounded).
    if (!escaped) {
      const limit = Math.min(n, vs + 1025);
      while (close < limit && scanner.code(close - 1) === 92) {
        close++;
        while (close < limit && scanner.code(close) !== q) close++;
      }
    }
    if (close >= n || close - vs > 1024 || scanner.nextOf('\n', vs) < close) return -1;
    ve = escaped && scanner.code(close - 1) === 92 ? close - 1 : close;
  } else {
    if (escaped) return -1;
    vs = p;
    ve = scanner.valueEndAt(vs);
    if (ve - vs > 256) return -1;
    while (ve > vs && (scanner.code(ve - 1) === 46 || scanner.code(ve - 1) === 58)) ve--; // sentence end
  }
  if (ve <= vs) return -1;
  // `"Password: "` is a prompt, not a key: the quote that follows closes the prompt's string.
  if (quoted && keyEnd === ie && s > 0 && isQuote(scanner.code(s - 1))) return -1;

  if (rule.auth) return authorizationValue(scanner, vs, quoted ? ve : n, emit);
  // `Password: click the reset link`, `allPass: Takes a list…`: a word followed by more words is prose.
  if (!quoted && /^[A-Za-z][a-z]+$/.test(t.slice(vs, ve)) && scanner.code(ve) === 32 && scanner.code(ve + 1) >= 97 && scanner.code(ve + 1) <= 122) return -1;

  const value = t.slice(vs, ve);
  if (!acceptValue(value, rule, quoted, spaced)) return -1;
  return emit(vs, ve, rule.kind, P_LABEL) ? STOP : ve;
}

/** `Authorization: Bearer <token>` / `Basic <b64>` / `<token>`: the token after the scheme. */
function authorizationValue(scanner: Scanner, from: number, limit: number, emit: Emit): number {
  // An optional scheme word followed by blanks, then a token68.
  // A word followed by blanks and something else is a scheme, even when what follows is no token.
  let start = from;
  let scheme = false;
  const word = scanner.run(LETTER_DASH, from);
  if (word > from && word - from <= 31 && isAlpha(scanner.code(from))) {
    const blank = scanner.run(BLANK, word);
    if (blank > word && blank < limit && !inTable(SPACE, scanner.code(blank))) {
      start = blank;
      scheme = true;
    }
  }
  const end = tokenEnd68(scanner, start);
  const token = scanner.text.slice(start, end);
  if (end > limit || token.length < 8 || isPlaceholder(token)) return -1;
  if (!scheme && /^[A-Za-z]+$/.test(token) && token.length < 16) return -1;
  return emit(start, end, 'token', P_AUTH) ? STOP : end;
}

/** End of a token68 (`[A-Za-z0-9._~+/-]+=*`) starting at `from`. */
function tokenEnd68(scanner: Scanner, from: number): number {
  let e = scanner.run(TOKEN68, from);
  if (e === from) return from;
  while (e < scanner.length && scanner.code(e) === 61) e++;
  return e;
}

/** `Bearer <token>` in running text: only a token that looks random. */
function bareBearer(scanner: Scanner, from: number, emit: Emit): number {
  const p = scanner.run(BLANK, from);
  if (p === from || p - from > 4) return -1;
  const end = tokenEnd68(scanner, p);
  if (end - p < 16) return -1;
  const token = scanner.text.slice(p, end);
  if (isPlaceholder(token)) return -1;
  const random = /[0-9]/.test(token) || (token.length >= 20 && /[a-z]/.test(token) && /[A-Z]/.test(token));
  if (!random) return -1;
  return emit(p, end, 'token', P_AUTH) ? STOP : end;
}

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
