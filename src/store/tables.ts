/**
 * The session database's tables: the schema and its migrations, the row a
 * record is stored as (with its checksum), and the meta rows the store keeps
 * (the journal position applied, a session's lost records).
 */
import type { RawRecord } from '../core/types';
import { crc32 } from './checksum';
import { queryAll, type SqlDatabase, type SqlValue } from './sqljs';

/** Schema migrations; index i brings a database from user_version i to i + 1. */
export const MIGRATIONS: readonly string[] = [
  // 1: the tables of the design
  `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE task (task_id TEXT PRIMARY KEY, title TEXT);
   CREATE TABLE task_message (
     task_id TEXT NOT NULL, idx INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL,
     tool_name TEXT, tool_call_id TEXT, tool_input TEXT, tool_output TEXT,
     payload_hash TEXT, payload_bytes INTEGER, extra TEXT,
     PRIMARY KEY (task_id, idx));
   CREATE TABLE task_compaction_snapshot (task_id TEXT NOT NULL, key TEXT NOT NULL, entry TEXT NOT NULL, PRIMARY KEY (task_id, key));
   CREATE TABLE task_tool_compaction (task_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, form TEXT NOT NULL, offload_hash TEXT, PRIMARY KEY (task_id, tool_call_id));
   CREATE TABLE artifact (task_id TEXT NOT NULL, path TEXT NOT NULL, reads INTEGER NOT NULL, modifications INTEGER NOT NULL,
     creations INTEGER NOT NULL, steps TEXT NOT NULL, tool_calls TEXT NOT NULL, first_record INTEGER NOT NULL, PRIMARY KEY (task_id, path));`,
  // 2: view_tool_call looks tool calls up by id
  `CREATE INDEX task_message_tool ON task_message (task_id, tool_call_id);`,
  // 3: a checksum per record row, verified on read (NULL for rows written before it)
  `ALTER TABLE task_message ADD COLUMN sum TEXT;`,
];
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * What a task's database runs when the first turn creates it, on a throwaway
 * database, one statement a turn (see `warmSqlJs`): SQLite's WebAssembly is
 * compiled a function at a time when first called, and creating the schema and
 * the first record's row compiled the paths they take in the turn's block
 * (migrating 15-26 ms, the first insert 21-28 ms in a CPU profile of the host).
 */
export const SQLITE_WARM_UP: readonly string[] = [
  // A read, an expression, then the first write (the pager's write path, the heaviest step) on its own.
  'PRAGMA user_version',
  'SELECT 1',
  'PRAGMA user_version = 0',
  'BEGIN',
  ...MIGRATIONS.flatMap((migration) => migration.split(';').map((statement) => statement.trim()).filter((statement) => statement.length > 0)),
  `PRAGMA user_version = ${MIGRATIONS.length}`,
  'COMMIT',
  'PRAGMA user_version',
  'PRAGMA quick_check',
  "INSERT OR IGNORE INTO task (task_id, title) VALUES ('t', '')",
  "INSERT OR IGNORE INTO task_message (task_id, idx, role, content, tool_name, tool_call_id, tool_input, tool_output, payload_hash, payload_bytes, extra, sum) VALUES ('t', 0, 'user', 'hello', NULL, NULL, NULL, NULL, NULL, NULL, NULL, '00000000')",
  "SELECT COALESCE(MAX(idx) + 1, 0) AS n FROM task_message WHERE task_id = 't'",
  "INSERT OR REPLACE INTO artifact (task_id, path, reads, modifications, creations, steps, tool_calls, first_record) VALUES ('t', 'a.ts', 1, 0, 0, '[]', '[]', 0)",
  "INSERT OR REPLACE INTO meta (key, value) VALUES ('lastSeq', '1')",
  "SELECT * FROM task_message WHERE task_id = 't' ORDER BY idx",
];

/** The checksum of a record row: what it stores of the record, so a byte changed on disk is seen on read. */
export function rowSum(role: string, content: string, toolInput: string | null, toolOutput: string | null, payloadHash: string | null, extra: string | null): string {
  return crc32(JSON.stringify([role, content, toolInput, toolOutput, payloadHash, extra])).toString(16).padStart(8, '0');
}

/** Brings a database from user_version `from` to SCHEMA_VERSION, each migration in its own transaction. */
export function migrate(db: SqlDatabase, from: number): void {
  for (let v = from; v < MIGRATIONS.length; v++) {
    db.exec('BEGIN');
    try {
      db.exec(MIGRATIONS[v]!);
      db.exec(`PRAGMA user_version = ${v + 1}`);
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw new Error(`schema migration ${v} → ${v + 1} failed: ${(error as Error).message}`);
    }
  }
}

/** The schema version a database is at (PRAGMA user_version). */
export function userVersion(db: SqlDatabase): number {
  const rows = db.exec('PRAGMA user_version');
  return Number(rows[0]?.values[0]?.[0] ?? 0);
}

/**
 * SQLite text stops at a NUL character (sql.js binds text as C strings): a
 * text with one (a binary tool output, a pasted file) is kept in `extra`,
 * whose JSON escapes it, and read back from there exactly.
 */
function hasNul(text: string | undefined): text is string {
  return text !== undefined && text.includes('\u0000');
}

function recordExtra(r: RawRecord, payload: boolean): string | null {
  const extra: Record<string, unknown> = {};
  if (hasNul(r.content)) extra.content = r.content;
  if (!payload && hasNul(r.toolOutput)) extra.toolOutput = r.toolOutput;
  if (r.isError) extra.isError = true;
  if (r.thinking) extra.thinking = true;
  if (r.messageId !== undefined) extra.messageId = r.messageId;
  if (r.timestamp !== undefined) extra.timestamp = r.timestamp;
  if (r.compactSummary) extra.compactSummary = true;
  if (r.sessionStart) extra.sessionStart = true;
  if (r.harness) extra.harness = r.harness;
  return Object.keys(extra).length ? JSON.stringify(extra) : null;
}

/** A record as journaled: the full record, or the record with its output replaced by a payload hash. */
export interface RecordData {
  readonly record: RawRecord;
  readonly payload?: { hash: string; bytes: number };
}

/** The `task_message` row of a journaled record, its checksum included. */
export function rowOf(task: string, { record, payload }: RecordData): Record<string, SqlValue> {
  const content = hasNul(record.content) ? '' : record.content;
  const toolInput = record.toolInput === undefined ? null : JSON.stringify(record.toolInput);
  const toolOutput = payload ? null : hasNul(record.toolOutput) ? '' : (record.toolOutput ?? null);
  const extra = recordExtra(record, payload !== undefined);
  return {
    task_id: task,
    idx: record.index,
    role: record.role,
    content,
    tool_name: record.toolName ?? null,
    tool_call_id: record.toolCallId ?? null,
    tool_input: toolInput,
    tool_output: toolOutput,
    payload_hash: payload?.hash ?? null,
    payload_bytes: payload?.bytes ?? null,
    extra,
    sum: rowSum(record.role, content, toolInput, toolOutput, payload?.hash ?? null, extra),
  };
}

/** The meta key of a session's lost records (see `lostRecords`). */
export function lostKey(task: string): string {
  return `lost:${task}`;
}

/** The journal position applied to the database so far. */
export function appliedSeq(db: SqlDatabase): number {
  return Number(queryAll(db, `SELECT value FROM meta WHERE key = 'lastSeq'`)[0]?.value ?? 0);
}
