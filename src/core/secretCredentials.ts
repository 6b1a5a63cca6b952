/**
 * Credentials given where their shape alone says nothing: the password of a
 * URL (`scheme://user:pass@host`), of `curl -u user:pass`, and the passwords
 * commands and credential files carry (`mysql -pPASS`, `.netrc`, `.pgpass`,
 * an AWS secret key after its key id).
 */
import type { RedactionKind } from './redact';
import { AUTHORITY_STOP, P_LABEL, P_URL, SCHEME, inTable, isAlpha, isPlaceholder, type Emit, type Scanner } from './secretScanner';

// -- Credentials in URLs: scheme://user:pass@host ---------------------------

const DB_SCHEMES = new Set([
  'postgres', 'postgresql', 'mysql', 'mariadb', 'mongodb', 'mongodb+srv', 'redis', 'rediss', 'amqp', 'amqps', 'mssql', 'sqlserver',
  'oracle', 'cockroachdb', 'clickhouse', 'cassandra', 'couchdb', 'neo4j', 'neo4j+s', 'bolt', 'memcached', 'db2', 'snowflake', 'nats',
]);

export function scanUrls(scanner: Scanner, emit: Emit): boolean {
  const t = scanner.text;
  const n = scanner.length;
  for (let u = t.indexOf('://'); u !== -1; u = t.indexOf('://', u + 3)) {
    let s = u;
    const minS = Math.max(0, u - 32);
    while (s > minS && inTable(SCHEME, scanner.code(s - 1))) s--;
    while (s < u && !isAlpha(scanner.code(s))) s++;
    if (s >= u) continue;
    const from = u + 3;
    const max = Math.min(n, from + 1024);
    let e = from;
    let lastAt = -1;
    let colon = -1;
    for (; e < max; e++) {
      const c = scanner.code(e);
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

const USER_FLAG = '(?:^|[ \\t])(?:-u|--user|--proxy-user)(?:[ \\t]+|=)';

export function scanUserFlags(scanner: Scanner, emit: Emit): boolean {
  const t = scanner.text;
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
    if (lastClient === -1 || m.index - lastClient > 200 || scanner.nextOf('\n', lastClient) < m.index) continue;
    let p = anchor.lastIndex;
    const q = scanner.code(p);
    let end: number;
    if (q === 34 || q === 39) {
      p++;
      end = scanner.nextOf(String.fromCharCode(q), p);
      if (end >= scanner.length || end - p > 512 || scanner.nextOf('\n', p) < end) continue;
    } else {
      end = scanner.valueEndAt(p);
      if (end - p > 512) continue;
    }
    let colon = p;
    while (colon < end && scanner.code(colon) !== 58) colon++;
    if (colon >= end) continue;
    const user = t.slice(p, colon);
    const password = t.slice(colon + 1, end);
    if (password.length === 0 || isPlaceholder(password) || isPlaceholder(user) || /^[0-9]+$/.test(password)) continue;
    if (emit(colon + 1, end, 'password', P_LABEL)) return true;
    anchor.lastIndex = end;
  }
  return false;
}

// -- Secrets that only their context reveals ---------------------------------

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

/**
 * Passwords given to commands and credential files whose shape alone says
 * nothing: `mysql -pPASS`, `docker login -p PASS`, `sshpass -p PASS`,
 * `.netrc` and `.pgpass` lines, and the secret key that follows an AWS key
 * id in a credentials CSV. Each pattern starts at a literal keyword found
 * first, and its quantifiers are bounded.
 */
export function scanCommandSecrets(scanner: Scanner, emit: Emit): boolean {
  const t = scanner.text;
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
