/**
 * The durable session store: every session's raw record, snapshot store, tool
 * compactions and artifact index in one sql.js database, with an fsync'd
 * journal in front of it.
 *
 * Why this design. sql.js holds the database in memory and persists only by
 * exporting it whole: saving after every append would cost O(database) per
 * step, and a crash between saves would lose data. So:
 * - every mutation is first appended to the journal (one line, fsync) — that is
 *   the acknowledgement: O(1) whatever the database size, and durable;
 * - the in-memory database applies it at once (reads never touch the disk);
 * - a checkpoint keeps the last one as FILE.prev, exports the database to
 *   FILE.tmp, fsyncs it and renames it over FILE, then rotates the journal and
 *   drops the archived lines FILE.prev already holds: the journal stays bounded
 *   by two checkpoints' worth of writes. Debounced in the background, and on
 *   close. Opening replays the journal entries newer than the checkpoint; a
 *   database missing, empty, truncated or damaged is rebuilt from FILE.prev and
 *   the journal, and the open says so once;
 * - every record row carries a checksum, verified on read: a row changed on
 *   disk is reported and served from the journal's copy while it holds one;
 * - tool outputs over 32 KB live content-addressed in FILE.payloads/, so
 *   exports stay small; the row keeps the hash.
 * Everything lives in FILE and FILE.* beside it.
 */
import { existsSync, fsyncSync, openSync, closeSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ArtifactIndex, type ArtifactEntry } from '../core/artifacts';
import { SessionRecord } from '../core/parts';
import {
  shouldReplace,
  type ReducedForm,
  type SnapshotEntry,
  type SnapshotStore,
  type ToolCompactionStore,
} from '../core/store';
import type { RawRecord } from '../core/types';
import { crc32, fsyncDirectory, Journal, JournalWriteError, type JournalEntry, type JournalIo } from './journal';
import { PAYLOAD_THRESHOLD_BYTES, PayloadMissingError, PayloadStore, payloadHash as contentHashOf } from './payloads';
import { StoreLock, type LockHolder } from './lock';
import { loadSqlJs, queryAll, type SqlDatabase, type SqlValue } from './sqljs';

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
 * The largest database a task may grow to. sql.js reads and exports a database
 * as one buffer, and Node cannot read a file over 2 GiB in one call: past this
 * size appends are refused with a message, long before that cliff.
 */
export const DATABASE_LIMIT_BYTES = 1024 * 1024 * 1024;
/** A database file larger than this is not read at all (it can only come from a store written before the limit). */
export const DATABASE_READ_LIMIT_BYTES = DATABASE_LIMIT_BYTES * 1.5;

/** A database file too large to read: refused, and left where it is (it is not damaged). */
export class StoreTooLargeError extends Error {
  constructor(readonly file: string, readonly bytes: number) {
    super(
      `the session database ${file} holds ${Math.round(bytes / 1048576)} MB, more than the ${DATABASE_READ_LIMIT_BYTES / 1048576} MB this version reads (a task database is kept under ${DATABASE_LIMIT_BYTES / 1048576} MB); it was left as it is: export its sessions with an earlier version, or start a new task`,
    );
    this.name = 'StoreTooLargeError';
  }
}

/** The checksum of a record row: what it stores of the record, so a byte changed on disk is seen on read. */
function rowSum(role: string, content: string, toolInput: string | null, toolOutput: string | null, payloadHash: string | null, extra: string | null): string {
  return crc32(JSON.stringify([role, content, toolInput, toolOutput, payloadHash, extra])).toString(16).padStart(8, '0');
}

/** Debounce of the background checkpoint, and its ceiling under continuous writes. */
const CHECKPOINT_DELAY_MS = 2_000;
const CHECKPOINT_MAX_DELAY_MS = 30_000;
const HEARTBEAT_MS = 10_000;

export type StoreMode = 'writer' | 'reader' | 'memory';

export interface StoreOptions {
  /** Open read-only even if the lock is free. */
  readonly readOnly?: boolean;
  /** Wait this long for another writer to release the lock before opening read-only. */
  readonly waitMs?: number;
  /** 0 disables the background checkpoint (tests, the CLI checkpoints on close). */
  readonly checkpointDelayMs?: number;
  /** Test hook: the journal's file operations (to hold or fail an fsync). */
  readonly journalIo?: Partial<JournalIo>;
}

export interface SessionSummary {
  readonly id: string;
  readonly records: number;
  readonly title: string;
  /** When the task was last opened (ms since the epoch), where the workspace index keeps it. */
  readonly lastUsed?: number;
}

export class StoreReadOnlyError extends Error {}

/** A session as `exportSession` gives it. */
export interface SessionExport {
  readonly title: string;
  readonly records: RawRecord[];
  readonly snapshots: readonly (readonly [string, SnapshotEntry])[];
  readonly tools: readonly (readonly [string, ReducedForm])[];
}

function migrate(db: SqlDatabase, from: number): void {
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

function userVersion(db: SqlDatabase): number {
  const rows = db.exec('PRAGMA user_version');
  return Number(rows[0]?.values[0]?.[0] ?? 0);
}

/** Writes a file durably: temp file, fsync, rename, fsync of the directory. */
export function writeFileAtomic(file: string, data: Uint8Array | string): void {
  const tmp = `${file}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeFileSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  fsyncDirectory(path.dirname(file));
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
interface RecordData {
  readonly record: RawRecord;
  readonly payload?: { hash: string; bytes: number };
}

/** The `task_message` row of a journaled record, its checksum included. */
function rowOf(task: string, { record, payload }: RecordData): Record<string, SqlValue> {
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
function lostKey(task: string): string {
  return `lost:${task}`;
}

export class SessionStore {
  /** What happened (repairs, a damaged file moved aside, read-only or in-memory mode), one message each. */
  readonly notices: string[] = [];
  private readonly listeners = new Set<(message: string) => void>();
  private checkpointTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private firstDirty = 0;
  private dirty = false;
  private readonly artifactCache = new Map<string, ArtifactIndex>();
  private readonly sessionRecords = new Map<string, SessionRecord>();
  /** The journal position FILE holds (its `lastSeq`), and the one FILE.prev holds. */
  private durableSeq = 0;
  private prevSeq = 0;
  /** Records lost from the journal (a damaged line), filled with a marker so the records after them stay addressable. */
  /** Records found missing while the journal was applied (said at open if they are still lost then). */
  private readonly gaps: { readonly task: string; readonly indices: readonly number[] }[] = [];
  /** Rows whose checksum failed on read, reported once each. */
  private readonly reportedRows = new Set<string>();

  private constructor(
    readonly file: string,
    private db: SqlDatabase,
    private journal: Journal | undefined,
    readonly payloads: PayloadStore,
    private lock: StoreLock | undefined,
    private modeValue: StoreMode,
    private readonly checkpointDelayMs: number,
  ) {}

  get mode(): StoreMode {
    return this.modeValue;
  }

  /** Calls `listener` with every notice raised from now on (the ones of the opening are in `notices`). */
  onNotice(listener: (message: string) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private notice(message: string): void {
    this.notices.push(message);
    for (const listener of this.listeners) listener(message);
  }

  /** Opens (creating if needed) the store at `file`. Never throws for a damaged file: it is moved aside and rebuilt. */
  static async open(file: string, options: StoreOptions = {}): Promise<SessionStore> {
    const sql = await loadSqlJs();
    const notices: string[] = [];
    let lock: StoreLock | undefined;
    let mode: StoreMode = 'writer';
    if (options.readOnly) mode = 'reader';
    else {
      try {
        const taken = await StoreLock.acquire(file, options.waitMs !== undefined ? { waitMs: options.waitMs } : {});
        lock = taken.lock;
        if (!lock) {
          mode = 'reader';
          notices.push(`${describeHolder(taken.holder)} is writing ${file}; this window opened it read-only.`);
        }
      } catch (error) {
        mode = 'memory';
        notices.push(`Context Keeper cannot write beside ${file} (${(error as Error).message}): this session is kept in memory only and will not survive a restart.`);
      }
    }
    let journal: Journal | undefined;
    try {
      journal = mode === 'memory' ? undefined : Journal.open(file, { readOnly: mode === 'reader', ...(options.journalIo ? { io: options.journalIo } : {}) });
    } catch (error) {
      mode = 'memory';
      notices.push(`Context Keeper cannot open the journal of ${file} (${(error as Error).message}): this session is kept in memory only.`);
    }
    for (const r of journal?.repairs ?? []) notices.push(`The journal ${r.file} ended in a torn write (${r.reason}); ${r.truncatedBytes} bytes of an unacknowledged append were removed.`);

    let db: SqlDatabase | undefined;
    let lastSeq = 0;
    let migrated = false;
    /** Why FILE could not be used as it is (missing with a journal, empty, damaged), if it could not. */
    let problem: string | undefined;
    let loadedFrom: string | undefined;
    let loadedBytes = 0;
    const load = (candidate: string): SqlDatabase => {
      const size = statSync(candidate).size;
      if (size > DATABASE_READ_LIMIT_BYTES) throw new StoreTooLargeError(candidate, size);
      const opened = new sql.Database(readFileSync(candidate));
      loadedBytes = size;
      try {
        const check = opened.exec('PRAGMA quick_check');
        const verdict = String(check[0]?.values[0]?.[0] ?? '');
        if (verdict !== 'ok') throw new Error(`integrity check: ${verdict}`);
        const version = userVersion(opened);
        if (version > SCHEMA_VERSION) throw new Error(`schema version ${version} is newer than this extension's ${SCHEMA_VERSION}`);
        migrate(opened, version);
        migrated = version !== SCHEMA_VERSION;
        return opened;
      } catch (error) {
        opened.close();
        throw error;
      }
    };
    const journalSize = journal?.size() ?? { current: 0, archive: 0 };
    const prev = `${file}.prev`;
    if (existsSync(file) && statSync(file).size > 0) {
      try {
        db = load(file);
        loadedFrom = file;
      } catch (error) {
        if (error instanceof StoreTooLargeError) {
          // Not damaged: refused with its reason, and nothing is moved or rebuilt.
          journal?.close();
          lock?.release();
          throw error;
        }
        problem = `is damaged (${(error as Error).message.split('\n')[0]})`;
        const aside = mode === 'writer' ? moveAside(file) : undefined;
        if (aside) problem += `; it was moved to ${aside} (nothing was deleted)`;
      }
    } else if (existsSync(file)) problem = 'is empty';
    // Missing is a fault only once a checkpoint was made (it leaves FILE.prev or an archived journal):
    // before the first one, the journal alone is the store.
    else if (existsSync(prev) || journalSize.archive > 0) problem = 'is missing';
    if (!db && problem && existsSync(prev)) {
      try {
        db = load(prev);
        loadedFrom = prev;
      } catch (error) {
        problem += `, and its previous checkpoint ${prev} is damaged too (${(error as Error).message.split('\n')[0]})`;
      }
    }
    if (db) lastSeq = Number(queryAll(db, `SELECT value FROM meta WHERE key = 'lastSeq'`)[0]?.value ?? 0);
    else {
      db = new sql.Database();
      migrate(db, 0);
    }
    db.exec('PRAGMA secure_delete = ON');
    const store = new SessionStore(file, db, journal, new PayloadStore(`${file}.payloads`), lock, mode, options.checkpointDelayMs ?? CHECKPOINT_DELAY_MS);
    // The limit holds from the first append, not only after this process's first checkpoint.
    store.exportedBytes = loadedBytes;
    store.durableSeq = loadedFrom === file ? lastSeq : 0;
    store.prevSeq = loadedFrom === prev ? lastSeq : 0;
    // The journal holds only what the last two checkpoints do not (a checkpoint drops what FILE.prev
    // holds), so reading all of it is bounded; a reader may also load the database just before the
    // writer checkpoints. A writer continues the sequence past the checkpoint even if the journal was lost.
    const entries = journal ? journal.readAll().filter((e) => e.seq > lastSeq) : [];
    if (journal && mode === 'writer') journal.ensureSeqAtLeast(lastSeq);
    const skipped: string[] = [];
    for (const entry of entries) {
      try {
        store.apply(entry);
      } catch (error) {
        skipped.push(`entry ${entry.seq} (${entry.op} of ${entry.task}: ${(error as Error).message})`);
      }
    }
    for (const bad of journal?.skipped ?? []) notices.push(`The journal ${bad.file} has a damaged line ${bad.line} (${bad.reason}); it was skipped, and the lines after it whose checksums hold were applied.`);
    if (skipped.length) notices.push(`${skipped.length} journal entr${skipped.length === 1 ? 'y' : 'ies'} could not be applied and were skipped: ${skipped.slice(0, 3).join('; ')}${skipped.length > 3 ? '; …' : ''}.`);
    for (const gap of store.gaps) {
      const lost = new Set(store.lostRecords(gap.task));
      const still = gap.indices.filter((i) => lost.has(i));
      if (still.length === 0) continue;
      const one = still.length === 1;
      notices.push(`Record${one ? ` ${still[0]}` : `s ${still[0]}–${still[still.length - 1]}`} of session ${gap.task} could not be recovered (the journal line was damaged); a marker stands in ${one ? 'its' : 'their'} place.`);
    }
    if (problem) {
      const sessions = store.sessions();
      const restored = `${sessions.reduce((a, s) => a + s.records, 0)} records in ${sessions.length} session(s)`;
      const first = entries[0]?.seq;
      const lost = !loadedFrom && first !== undefined && first > 1 ? ` The journal starts at entry ${first}: what the lost checkpoints held before it could not be recovered.` : '';
      notices.push(
        `The session database ${file} ${problem}${mode === 'writer' ? '' : ' (left as it is: this window is read-only)'}; ` +
          `the sessions were rebuilt from ${loadedFrom === prev ? 'its previous checkpoint and ' : ''}the journal: ${restored}.${lost}`,
      );
    }
    store.notices.push(...notices);
    if (mode === 'writer') {
      if (entries.length || problem || migrated) {
        // The journal already holds everything: a checkpoint that fails here (a full disk) is retried later, never fatal.
        try {
          store.checkpoint();
        } catch (error) {
          store.notices.push(`Context Keeper could not write a checkpoint of ${file} (${(error as Error).message}); everything is kept in its journal and the checkpoint is tried again later.`);
          store.dirty = true;
        }
      }
      store.finishPendingDeletion();
      store.heartbeatTimer = setInterval(() => store.lock?.heartbeat(), HEARTBEAT_MS);
      store.heartbeatTimer.unref();
    }
    return store;
  }

  // ----------------------------------------------------------------- reading

  sessions(): SessionSummary[] {
    return queryAll(
      this.db,
      `SELECT t.task_id AS id, t.title AS title, (SELECT COUNT(*) FROM task_message m WHERE m.task_id = t.task_id) AS records FROM task t ORDER BY t.task_id`,
    ).map((r) => ({ id: String(r.id), title: String(r.title ?? ''), records: Number(r.records) }));
  }

  /** Records of a session: they are contiguous from 0 (appends are in order, a lost one is a marker), so the last index + 1, found on the primary key rather than by counting rows. */
  recordCount(taskId: string): number {
    return Number(queryAll(this.db, 'SELECT COALESCE(MAX(idx) + 1, 0) AS n FROM task_message WHERE task_id = ?', [taskId])[0]?.n ?? 0);
  }

  /**
   * A large tool output, checked against the content hash it is stored under
   * (the journal holds only the hash, so there is no second copy): an output
   * changed on disk is served as found behind a warning line, a missing one as
   * a marker, and either is reported once.
   */
  private payloadText(taskId: string, index: number, hash: string): string {
    let text: string;
    try {
      text = this.payloads.get(hash);
    } catch (error) {
      if (!(error instanceof PayloadMissingError)) throw error;
      this.payloadProblem(hash, `The stored output of record ${index} of session ${taskId} is missing (${error.path}); a marker stands in its place.`);
      return `[tool output lost: its stored copy ${hash} is missing from ${this.payloads.dir}]`;
    }
    if (contentHashOf(text) === hash) return text;
    this.payloadProblem(hash, `The stored output of record ${index} of session ${taskId} was changed on disk (it no longer matches its content hash ${hash}); it is shown as found, behind a warning.`);
    return `[warning: this output was changed on disk after it was recorded (content hash ${hash} no longer matches); shown as found]\n${text}`;
  }

  private readonly payloadProblems = new Set<string>();
  private payloadProblem(hash: string, message: string): void {
    if (this.payloadProblems.has(hash)) return;
    this.payloadProblems.add(hash);
    this.notice(message);
  }

  /** The raw record of a session; large outputs are read from the payload folder only when `loadPayloads`. */
  records(taskId: string, options: { loadPayloads?: boolean } = {}): RawRecord[] {
    return queryAll(this.db, 'SELECT * FROM task_message WHERE task_id = ? ORDER BY idx', [taskId]).map((stored) => {
      const row = this.verifiedRow(taskId, stored);
      const extra = row.extra ? (JSON.parse(String(row.extra)) as Record<string, unknown>) : {};
      let toolOutput = row.tool_output === null ? undefined : String(row.tool_output);
      if (row.payload_hash !== null) {
        toolOutput = options.loadPayloads ? this.payloadText(taskId, Number(row.idx), String(row.payload_hash)) : `[payload ${String(row.payload_hash)}, ${String(row.payload_bytes)} bytes]`;
      }
      const r: Record<string, unknown> = { index: Number(row.idx), role: String(row.role), content: String(row.content) };
      if (row.tool_name !== null) r.toolName = String(row.tool_name);
      if (row.tool_call_id !== null) r.toolCallId = String(row.tool_call_id);
      if (row.tool_input !== null) r.toolInput = JSON.parse(String(row.tool_input));
      if (toolOutput !== undefined) r.toolOutput = toolOutput;
      return { ...r, ...extra } as unknown as RawRecord;
    });
  }

  /**
   * A record row as written: its checksum is checked, and a row changed on
   * disk is reported once and served from the journal's copy of the record
   * when the journal still holds it.
   */
  private verifiedRow(taskId: string, row: Record<string, SqlValue>): Record<string, SqlValue> {
    if (row.sum === null || row.sum === undefined) return row;
    const text = (v: SqlValue | undefined): string | null => (v === null || v === undefined ? null : String(v));
    if (rowSum(String(row.role), String(row.content), text(row.tool_input), text(row.tool_output), text(row.payload_hash), text(row.extra)) === row.sum) return row;
    const where = `record ${String(row.idx)} of session ${taskId}`;
    const copy = this.journalCopy(taskId, Number(row.idx));
    if (!this.reportedRows.has(where)) {
      this.reportedRows.add(where);
      this.notice(`The stored ${where} does not match its checksum (changed on disk); ${copy ? "the journal's copy is used" : 'no intact copy is left, and it is shown as stored'}.`);
    }
    return copy ?? row;
  }

  /** The row a record had when it was journaled, if the journal still holds it. */
  private journalCopy(taskId: string, index: number): Record<string, SqlValue> | undefined {
    // The last line that wrote it: a lost record restored later is a `restore` line.
    const entry = this.journal
      ?.readAll()
      .filter((e) => e.task === taskId && (e.op === 'record' || e.op === 'restore') && (e.data as RecordData).record.index === index)
      .pop();
    return entry ? rowOf(taskId, entry.data as RecordData) : undefined;
  }

  artifacts(taskId: string): ArtifactEntry[] {
    return queryAll(this.db, 'SELECT * FROM artifact WHERE task_id = ? ORDER BY first_record, path', [taskId]).map((r) => ({
      path: String(r.path),
      reads: Number(r.reads),
      modifications: Number(r.modifications),
      creations: Number(r.creations),
      steps: JSON.parse(String(r.steps)) as number[],
      toolCalls: JSON.parse(String(r.tool_calls)) as string[],
      firstRecord: Number(r.first_record),
    }));
  }

  // ----------------------------------------------------------------- writing

  private requireWritable(): void {
    if (this.modeValue === 'reader') throw new StoreReadOnlyError(`${this.file} is open read-only (another window is writing it)`);
  }

  /** Journals one mutation (durable when it returns), then applies it. Falls back to memory on a write failure. */
  private write(task: string, op: string, data: unknown): void {
    this.journalled(task, op, data, (journal) => ({ seq: journal.append(task, op, data) }));
  }

  /**
   * `write`, with the journal's fsync on the thread pool: the line is written
   * and applied at once (so the order of lines and of the database stays one),
   * and the promise resolves once the line is durable. For the appends of a
   * turn, which would otherwise hold the extension host for an fsync each.
   */
  private async writeDurably(task: string, op: string, data: unknown): Promise<void> {
    const durable = this.journalled(task, op, data, (journal) => journal.appendDeferred(task, op, data));
    if (durable) await durable.catch((error: unknown) => this.lostJournal(error));
  }

  /** Journals one mutation with `append` (unless in memory), then applies it; the journal's promise of durability, if any. */
  private journalled(task: string, op: string, data: unknown, append: (journal: Journal) => { seq: number; durable?: Promise<void> }): Promise<void> | undefined {
    this.requireWritable();
    this.checkLock();
    let seq = 0;
    let durable: Promise<void> | undefined;
    if (this.journal && this.modeValue === 'writer') {
      try {
        ({ seq, durable } = append(this.journal));
      } catch (error) {
        this.lostJournal(error);
      }
    }
    this.apply({ seq, task, op, data });
    this.scheduleCheckpoint();
    return durable;
  }

  /** A journal write failed: the session goes on in memory, and the user is told once. */
  private lostJournal(error: unknown): void {
    if (!(error instanceof JournalWriteError)) throw error;
    if (this.modeValue !== 'writer') return;
    this.modeValue = 'memory';
    this.notice(
      `Context Keeper could not write to ${this.file} (${error.code ?? error.message}): the session continues in memory; nothing already saved was lost, but new records will not survive a restart.`,
    );
  }

  /**
   * A writer that lost its lock (another process took it over) must stop
   * writing the shared files at once: it goes on in memory and says so.
   */
  private checkLock(): void {
    if (this.modeValue !== 'writer' || !this.lock || this.lock.isHeld()) return;
    this.modeValue = 'memory';
    this.notice(`Context Keeper lost the lock on ${this.file} to another process: this window stops writing it and keeps its session in memory.`);
  }

  /** Registers a session (idempotent). */
  createSession(taskId: string, title: string): void {
    if (queryAll(this.db, 'SELECT 1 AS x FROM task WHERE task_id = ?', [taskId]).length) return;
    this.write(taskId, 'task', { title });
  }

  /**
   * Appends one record. Durable when the promise resolves: a large output is
   * first stored (chunked, off the event loop's critical path) and fsync'd in the
   * payload folder, then the journal line naming its hash is fsync'd.
   */
  async appendRecord(taskId: string, record: RawRecord): Promise<void> {
    this.requireWritable();
    const expected = this.recordCount(taskId);
    if (record.index !== expected) throw new Error(`record ${record.index} of ${taskId} is out of order: the store holds ${expected}`);
    await this.writeDurably(taskId, 'record', await this.dataOf(record));
  }

  /**
   * The records of a session lost from a damaged journal line: a marker
   * stands in each one's place until `restoreRecord` puts the record back
   * from its source (a resumed `replay --db` does, from the transcript).
   */
  lostRecords(taskId: string): number[] {
    const row = queryAll(this.db, 'SELECT value FROM meta WHERE key = ?', [lostKey(taskId)])[0];
    return row ? (JSON.parse(String(row.value)) as number[]) : [];
  }

  /**
   * Puts a lost record back in its place (journaled like an append). Only a
   * lost record's marker is ever replaced: an acknowledged record is never
   * rewritten.
   */
  async restoreRecord(taskId: string, record: RawRecord): Promise<void> {
    this.requireWritable();
    if (!this.lostRecords(taskId).includes(record.index)) throw new Error(`record ${record.index} of ${taskId} was not lost: a stored record is never rewritten`);
    this.write(taskId, 'restore', await this.dataOf(record));
  }

  /** A record as it is journaled: a large tool output goes to the payload store, under the size limit. */
  private async dataOf(record: RawRecord): Promise<RecordData> {
    const grown = this.exportedBytes + (this.journal?.size().current ?? 0);
    if (grown > DATABASE_LIMIT_BYTES) {
      throw new Error(`the task database ${this.file} holds about ${Math.round(grown / 1048576)} MB, at its limit of ${DATABASE_LIMIT_BYTES / 1048576} MB: nothing more is recorded in this task; start a new task (everything recorded so far is kept)`);
    }
    const output = record.toolOutput;
    // Over the threshold in characters means over it in bytes: measure bytes only for short strings.
    const large = output !== undefined && (output.length > PAYLOAD_THRESHOLD_BYTES || (output.length * 3 > PAYLOAD_THRESHOLD_BYTES && Buffer.byteLength(output, 'utf8') > PAYLOAD_THRESHOLD_BYTES));
    if (output !== undefined && large && this.modeValue === 'writer') {
      try {
        const payload = await this.payloads.put(output);
        const { toolOutput: _dropped, ...rest } = record;
        return { record: rest as RawRecord, payload };
      } catch (error) {
        this.modeValue = 'memory';
        this.notice(`Context Keeper could not store a large tool output beside ${this.file} (${(error as Error).message}): the session continues in memory.`);
      }
    }
    return { record };
  }

  /** The snapshot store of one session (task_compaction_snapshot), monotonic upsert. */
  snapshotStore(taskId: string): SnapshotStore {
    return {
      get: (key) => {
        const row = queryAll(this.db, 'SELECT entry FROM task_compaction_snapshot WHERE task_id = ? AND key = ?', [taskId, key])[0];
        return row ? (JSON.parse(String(row.entry)) as SnapshotEntry) : undefined;
      },
      put: (key, entry) => {
        const existing = this.snapshotStore(taskId).get(key);
        if (!shouldReplace(existing, entry)) return;
        if (existing && JSON.stringify(existing) === JSON.stringify(entry)) return;
        this.write(taskId, 'snapshot', { key, entry });
      },
      keys: (prefix) =>
        queryAll(this.db, 'SELECT key FROM task_compaction_snapshot WHERE task_id = ? AND substr(key, 1, ?) = ?', [taskId, prefix.length, prefix]).map((r) => String(r.key)),
    };
  }

  /** Everything stored of a session, in a stable order: to move it to another store and check it arrived whole. */
  exportSession(taskId: string): SessionExport {
    const title = String(queryAll(this.db, 'SELECT title FROM task WHERE task_id = ?', [taskId])[0]?.title ?? '');
    const snapshots = queryAll(this.db, 'SELECT key, entry FROM task_compaction_snapshot WHERE task_id = ? ORDER BY key', [taskId]).map((r) => [String(r.key), JSON.parse(String(r.entry)) as SnapshotEntry] as const);
    const tools = queryAll(this.db, 'SELECT tool_call_id AS id, form FROM task_tool_compaction WHERE task_id = ? ORDER BY tool_call_id', [taskId]).map((r) => [String(r.id), JSON.parse(String(r.form)) as ReducedForm] as const);
    return { title, records: this.records(taskId, { loadPayloads: true }), snapshots, tools };
  }

  /** Writes an exported session's summaries, facts and tool forms (its records are appended one by one beforehand). */
  importState(taskId: string, exported: SessionExport): void {
    for (const [key, entry] of exported.snapshots) this.write(taskId, 'snapshot', { key, entry });
    for (const [toolCallId, form] of exported.tools) this.write(taskId, 'tool', { toolCallId, form });
  }

  /** The eager tool store of one session (task_tool_compaction). */
  toolStore(taskId: string): ToolCompactionStore {
    return {
      get: (toolCallId) => {
        const row = queryAll(this.db, 'SELECT form FROM task_tool_compaction WHERE task_id = ? AND tool_call_id = ?', [taskId, toolCallId])[0];
        return row ? (JSON.parse(String(row.form)) as ReducedForm) : undefined;
      },
      put: (toolCallId, form) => {
        const row = queryAll(this.db, 'SELECT form FROM task_tool_compaction WHERE task_id = ? AND tool_call_id = ?', [taskId, toolCallId])[0];
        if (row && String(row.form) === JSON.stringify(form)) return;
        this.write(taskId, 'tool', { toolCallId, form });
      },
    };
  }

  // ---------------------------------------------------------------- applying

  /** Applies one journal entry to the in-memory database (idempotent). */
  private apply(entry: JournalEntry): void {
    const { task, op } = entry;
    const data = entry.data as Record<string, unknown>;
    switch (op) {
      case 'task':
        this.db.run('INSERT OR IGNORE INTO task (task_id, title) VALUES (?, ?)', [task, String(data.title ?? '')]);
        break;
      case 'record': {
        const recordData = data as unknown as RecordData;
        const { record } = recordData;
        if (!Number.isSafeInteger(record?.index) || record.index < 0) throw new Error('a record without a valid index');
        this.db.run('INSERT OR IGNORE INTO task (task_id, title) VALUES (?, ?)', [task, '']);
        // A record whose journal line was lost leaves a gap: each missing one is filled with a marker
        // (said once at open), so the records after it stay where they were acknowledged.
        const held = this.recordCount(task);
        for (let missing = held; missing < record.index; missing++) {
          const marker: RawRecord = { index: missing, role: 'assistant', content: `[record ${missing} was lost: its journal line was damaged]` };
          this.insertRecord(task, { record: marker });
          this.updateArtifacts(task, marker);
        }
        if (record.index > held) this.setLost(task, [...this.lostRecords(task), ...Array.from({ length: record.index - held }, (_, k) => held + k)]);
        if (record.index > held) this.gaps.push({ task, indices: Array.from({ length: record.index - held }, (_, k) => held + k) });
        if (this.insertRecord(task, recordData)) this.updateArtifacts(task, record);
        break;
      }
      case 'restore': {
        const recordData = data as unknown as RecordData;
        const lost = this.lostRecords(task);
        const index = recordData.record?.index;
        if (!lost.includes(index)) break;
        const row = rowOf(task, recordData);
        const columns = Object.keys(row);
        this.db.run(`INSERT OR REPLACE INTO task_message (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`, columns.map((c) => row[c]!));
        this.setLost(task, lost.filter((i) => i !== index));
        // The files it touched: the task's artifact rows are derived again from its records.
        this.sessionRecords.delete(task);
        this.artifactCache.delete(task);
        this.db.run('DELETE FROM artifact WHERE task_id = ?', [task]);
        const records = this.records(task);
        for (const r of records) this.updateArtifacts(task, r);
        break;
      }
      case 'snapshot': {
        const { key, entry: value } = data as { key: string; entry: SnapshotEntry };
        this.db.run('INSERT OR REPLACE INTO task_compaction_snapshot (task_id, key, entry) VALUES (?, ?, ?)', [task, key, JSON.stringify(value)]);
        break;
      }
      case 'tool': {
        const { toolCallId, form } = data as { toolCallId: string; form: ReducedForm };
        this.db.run('INSERT OR REPLACE INTO task_tool_compaction (task_id, tool_call_id, form, offload_hash) VALUES (?, ?, ?, ?)', [
          task,
          toolCallId,
          JSON.stringify(form),
          null,
        ]);
        break;
      }
      case 'delete':
        this.deleteRows(task);
        break;
    }
    if (entry.seq > 0) this.db.run(`INSERT OR REPLACE INTO meta (key, value) VALUES ('lastSeq', ?)`, [String(entry.seq)]);
  }

  private setLost(task: string, indices: readonly number[]): void {
    if (indices.length === 0) this.db.run('DELETE FROM meta WHERE key = ?', [lostKey(task)]);
    else this.db.run('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)', [lostKey(task), JSON.stringify([...new Set(indices)].sort((a, b) => a - b))]);
  }

  /** Inserts a record row with its checksum; false if the row was already there. */
  private insertRecord(task: string, data: RecordData): boolean {
    const row = rowOf(task, data);
    const columns = Object.keys(row);
    this.db.run(`INSERT OR IGNORE INTO task_message (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`, columns.map((c) => row[c]!));
    return this.db.getRowsModified() > 0;
  }

  /** The artifact rows follow the record: a session's index is rebuilt from its records in memory and written through. */
  private updateArtifacts(task: string, record: RawRecord): void {
    let rec = this.sessionRecords.get(task);
    let index = this.artifactCache.get(task);
    /** Appends one record to the in-memory reconstruction; returns the paths its tool calls touched. */
    const feed = (r: RawRecord): string[] =>
      rec!.append(r).flatMap((e) => (e.type === 'part' && e.part.tool ? index!.observe(e.part.tool, rec!.units[e.unitIndex]?.step) : []));
    if (!rec || !index || rec.records.length !== record.index) {
      rec = new SessionRecord();
      index = new ArtifactIndex();
      for (const r of this.records(task)) {
        if (r.index >= record.index) break;
        feed(r);
      }
      this.sessionRecords.set(task, rec);
      this.artifactCache.set(task, index);
    }
    // Only the rows of the files this record touched change.
    for (const path of new Set(feed(record))) {
      const a = index.get(path)!;
      this.db.run(
        'INSERT OR REPLACE INTO artifact (task_id, path, reads, modifications, creations, steps, tool_calls, first_record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [task, a.path, a.reads, a.modifications, a.creations, JSON.stringify(a.steps), JSON.stringify(a.toolCalls), a.firstRecord],
      );
    }
  }


  // -------------------------------------------------------------- checkpoint

  private scheduleCheckpoint(): void {
    if (this.modeValue !== 'writer' || this.checkpointDelayMs <= 0) {
      this.dirty = true;
      return;
    }
    const now = Date.now();
    if (!this.dirty) this.firstDirty = now;
    this.dirty = true;
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    const wait = Math.max(0, Math.min(this.checkpointDelayMs, this.firstDirty + CHECKPOINT_MAX_DELAY_MS - now));
    this.checkpointTimer = setTimeout(() => {
      try {
        this.checkpoint();
      } catch (error) {
        this.notice(`Context Keeper could not save a checkpoint of ${this.file} (${(error as Error).message}); the journal still holds every change.`);
      }
    }, wait);
    this.checkpointTimer.unref();
  }

  /** Exports the database atomically over FILE, then rotates the journal. */
  checkpoint(): void {
    this.checkLock();
    if (this.modeValue !== 'writer') return;
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    this.checkpointTimer = undefined;
    const data = this.db.export();
    this.exportedBytes = data.length;
    // The checkpoint on disk becomes FILE.prev: a crash between the rename and the write leaves
    // FILE missing and FILE.prev whole, and the next open recovers from it and the journal.
    if (existsSync(this.file)) {
      renameSync(this.file, `${this.file}.prev`);
      this.prevSeq = this.durableSeq;
    }
    writeFileAtomic(this.file, data);
    this.durableSeq = this.appliedSeq;
    this.journal?.rotate();
    // What FILE.prev holds is no longer needed by any recovery.
    this.journal?.dropArchivedThrough(this.prevSeq);
    this.dirty = false;
  }

  /** The journal position applied to the database so far. */
  private get appliedSeq(): number {
    return Number(queryAll(this.db, `SELECT value FROM meta WHERE key = 'lastSeq'`)[0]?.value ?? 0);
  }

  /** The size of the last export: appends stop with a message before the database reaches DATABASE_LIMIT_BYTES. */
  private exportedBytes = 0;

  /** Bytes of the database file, the journal and the payloads (for reports and benchmarks). */
  sizes(): { database: number; journal: number; payloads: number } {
    const database = existsSync(this.file) ? statSync(this.file).size : 0;
    const j = this.journal?.size() ?? { current: 0, archive: 0 };
    let payloads = 0;
    for (const hash of this.payloads.list()) payloads += statSync(path.join(this.payloads.dir, hash)).size;
    return { database, journal: j.current + j.archive, payloads };
  }

  // ---------------------------------------------------------------- deletion

  private deleteRows(task: string): void {
    for (const table of ['task_message', 'task_compaction_snapshot', 'task_tool_compaction', 'artifact', 'task']) {
      this.db.run(`DELETE FROM ${table} WHERE task_id = ?`, [task]);
    }
    this.db.run('DELETE FROM meta WHERE key = ?', [lostKey(task)]);
    this.sessionRecords.delete(task);
    this.artifactCache.delete(task);
  }

  /**
   * Deletes a session everywhere: rows of every table, its payloads (those no
   * other session shares), its journal entries, and the free pages that held it
   * (VACUUM before the checkpoint). A marker file makes an interrupted deletion
   * finish on the next open.
   */
  async deleteSession(taskId: string): Promise<boolean> {
    this.requireWritable();
    this.checkLock();
    if (this.modeValue !== 'writer') {
      throw new StoreReadOnlyError(`cannot delete session ${taskId}: ${this.file} is not writable now (the session continues in memory); nothing was deleted`);
    }
    const exists = queryAll(this.db, 'SELECT 1 AS x FROM task WHERE task_id = ?', [taskId]).length > 0;
    if (!exists) return false;
    writeFileAtomic(`${this.file}.deleting`, JSON.stringify({ task: taskId }));
    this.completeDeletion(taskId);
    return true;
  }

  private completeDeletion(taskId: string): void {
    const hashes = queryAll(
      this.db,
      `SELECT DISTINCT payload_hash AS h FROM task_message WHERE task_id = ? AND payload_hash IS NOT NULL
         AND payload_hash NOT IN (SELECT payload_hash FROM task_message WHERE task_id != ? AND payload_hash IS NOT NULL)`,
      [taskId, taskId],
    ).map((r) => String(r.h));
    this.deleteRows(taskId);
    this.db.exec('VACUUM');
    if (this.modeValue === 'writer') {
      // Both checkpoints are written without the session, then the journal: no copy of it is left to recover.
      const data = this.db.export();
      writeFileAtomic(`${this.file}.prev`, data);
      writeFileAtomic(this.file, data);
      this.durableSeq = this.prevSeq = this.appliedSeq;
      this.journal?.purgeTask(taskId);
      this.journal?.rotate();
      this.journal?.dropArchivedThrough(this.prevSeq);
      // Copies moved aside as damaged hold the session's bytes too (they were rebuilt from the journal
      // when moved), and so may the temp file of a payload write killed mid-way.
      for (const aside of damagedCopies(this.file)) rmSync(aside, { force: true });
      this.payloads.removeTempFiles();
    }
    for (const h of hashes) this.payloads.delete(h);
    rmSync(`${this.file}.deleting`, { force: true });
    this.dirty = false;
  }

  private finishPendingDeletion(): void {
    const marker = `${this.file}.deleting`;
    if (!existsSync(marker)) return;
    try {
      const { task } = JSON.parse(readFileSync(marker, 'utf8')) as { task: string };
      this.completeDeletion(task);
      this.notices.push(`An interrupted deletion of session ${task} was completed.`);
    } catch (error) {
      this.notices.push(`An interrupted deletion could not be completed: ${(error as Error).message}`);
    }
  }

  /**
   * Drops the store without a checkpoint, as a crash would (the lock is
   * released so the same process can reopen it). For crash tests.
   */
  abandon(): void {
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.journal?.close();
    this.lock?.release();
    this.lock = undefined;
    this.db.close();
  }

  /** Checkpoints (when writing), stops the timers and releases the lock. */
  close(): void {
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    try {
      if (this.modeValue === 'writer' && this.dirty) this.checkpoint();
    } finally {
      this.journal?.close();
      this.lock?.release();
      this.lock = undefined;
      this.db.close();
    }
  }
}

function describeHolder(holder: LockHolder | undefined): string {
  return holder ? `Another window (process ${holder.pid} on ${holder.host})` : 'Another window';
}

/** The copies of `file` moved aside as damaged (`FILE.damaged-N`). */
function damagedCopies(file: string): string[] {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.damaged-`;
  try {
    return readdirSync(dir).filter((n) => n.startsWith(prefix) && /^\d+$/.test(n.slice(prefix.length))).map((n) => path.join(dir, n));
  } catch {
    return [];
  }
}

/** Moves a damaged file aside under a name that does not exist yet; never deletes it. */
function moveAside(file: string): string {
  for (let n = 1; ; n++) {
    const aside = `${file}.damaged-${n}`;
    if (!existsSync(aside)) {
      renameSync(file, aside);
      return aside;
    }
  }
}
