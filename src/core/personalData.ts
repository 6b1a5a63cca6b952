/**
 * Personal data: e-mail addresses (not a `user@host` login, a URL's user, or
 * `icon@2x.png`), and numbers that validate — card numbers (Luhn), IBANs
 * (mod 97), US SSNs, phone numbers.
 */
import type { RedactionKind } from './redact';
import { DOMAIN, LOCAL, P_EMAIL, P_PII, SPACE, inTable, type Emit, type Scanner } from './secretScanner';

// -- E-mail addresses ------------------------------------------------------

export function scanEmails(scanner: Scanner, emit: Emit): boolean {
  const t = scanner.text;
  const n = scanner.length;
  let at = t.indexOf('@');
  while (at !== -1) {
    let next = at + 1;
    // The domain first: most `@`s (decorators, npm scopes, versions) fail here cheaply.
    let e = at + 1;
    const maxE = Math.min(n, at + 1 + 255);
    let dot = false;
    for (; e < maxE; e++) {
      const c = scanner.code(e);
      if (!inTable(DOMAIN, c)) break;
      if (c === 46) dot = true;
    }
    if (!dot || e === at + 1) {
      at = t.indexOf('@', next);
      continue;
    }
    let s = at;
    const minS = Math.max(0, at - 64);
    while (s > minS && inTable(LOCAL, scanner.code(s - 1))) s--;
    const localTooLong = s === minS && s > 0 && inTable(LOCAL, scanner.code(s - 1));
    while (s < at && scanner.code(s) === 46) s++;
    const domainTooLong = e === maxE && e < n && inTable(DOMAIN, scanner.code(e));
    while (e > at + 1 && (scanner.code(e - 1) === 46 || scanner.code(e - 1) === 45)) e--;
    // `alice@example.com.json` in a path: the address is what comes before the file extension.
    const domain = t.slice(at + 1, e);
    const extension = fileExtensionAt(domain);
    if (extension > 0 && validDomain(domain.slice(0, -extension - 1))) e -= extension + 1;
    if (!localTooLong && !domainTooLong && s < at && scanner.code(at - 1) !== 46 && validDomain(t.slice(at + 1, e)) && !isUrlUserinfo(scanner, s) && t.slice(s, at) !== 'git' && !isLogin(scanner, s)) {
      if (emit(s, e, 'email', P_EMAIL)) return true;
      next = e;
    }
    at = t.indexOf('@', next);
  }
  return false;
}

/** True when `user@host` at `s` is a login given to ssh, scp, rsync and the like, not an e-mail address. */
function isLogin(scanner: Scanner, s: number): boolean {
  const lineStart = Math.max(0, scanner.text.lastIndexOf('\n', s) + 1, s - 200);
  return LOGIN_COMMAND.test(scanner.text.slice(lineStart, s));
}

/** True when the local part starting at `s` is the user of a URL (`https://user@host`). */
function isUrlUserinfo(scanner: Scanner, s: number): boolean {
  const c = scanner.code(s - 1);
  if (c !== 58 && c !== 47) return false;
  const min = Math.max(0, s - 300);
  for (let i = s - 1; i >= min + 2; i--) {
    const d = scanner.code(i);
    if (inTable(SPACE, d)) return false;
    if (d === 47 && scanner.code(i - 1) === 47 && scanner.code(i - 2) === 58) return true;
  }
  return false;
}

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

// -- Personal numbers: cards (Luhn), IBANs (mod 97), US SSNs, phone numbers ---

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

export function scanPersonalNumbers(scanner: Scanner, emit: Emit): boolean {
  const t = scanner.text;
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
