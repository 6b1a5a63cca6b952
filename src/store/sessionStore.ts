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
 * Everything lives in FILE and FILE.* beside it. The parts: tables.ts (the
 * schema, the row of a record), taskDatabase.ts (entries applied to the tables,
 * records read back verified), checkpoints.ts (loading and writing FILE and
 * FILE.prev), journal.ts, payloads.ts and lock.ts.
 */
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import * as path from 'node:path';
import type { ArtifactEntry } from '../core/artifacts';
import type { Redactor } from '../core/redact';
import {
  shouldReplace,
  type ReducedForm,
  type SnapshotEntry,
  type SnapshotStore,
  type ToolCompactionStore,
} from '../core/store';
import type { RawRecord } from '../core/types';
import { CHECKPOINT_DELAY_MS, Checkpoints, DATABASE_LIMIT_BYTES, damagedCopies, loadDatabase } from './checkpoints';
import { writeFileAtomic } from './durableFiles';
import { Journal, JournalWriteError, type JournalIo } from './journal';
import { PAYLOAD_THRESHOLD_BYTES, PayloadStore } from './payloads';
import { StoreLock, type LockHolder } from './lock';
import { loadSqlJs, queryAll, type SqlDatabase } from './sqljs';
import type { RecordData } from './tables';
import { TaskDatabase } from './taskDatabase';

const HEARTBEAT_MS = 10_000;

export type StoreMode = 'writer' | 'reader' | 'memory';

export interface StoreOptions {
  /** Hides a secret in a path before the artifact index keeps it (the composition root's redactor). */
  readonly redactor: Redactor;
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

export class SessionStore {
  /** What happened (repairs, a damaged file moved aside, read-only or in-memory mode), one message each. */
  readonly notices: string[] = [];
  private readonly listeners = new Set<(message: string) => void>();
  private heartbeatTimer: NodeJS.Timeout | undefined;
  /** The tables in memory: every entry is applied there once it is journaled. */
  private readonly tables: TaskDatabase;

  private constructor(
    readonly file: string,
    private db: SqlDatabase,
    private journal: Journal | undefined,
    readonly payloads: PayloadStore,
    private lock: StoreLock | undefined,
    private modeValue: StoreMode,
    private readonly checkpoints: Checkpoints,
    redactor: Redactor,
  ) {
    this.tables = new TaskDatabase(db, journal, payloads, (message) => this.notice(message), redactor);
  }

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
  static async open(file: string, options: StoreOptions): Promise<SessionStore> {
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

    const { db, lastSeq, migrated, problem, loadedFrom, loadedBytes } = loadDatabase(sql, file, mode, journal, lock);
    const prev = `${file}.prev`;
    db.exec('PRAGMA secure_delete = ON');
    // The limit holds from the first append, not only after this process's first checkpoint.
    const checkpoints = new Checkpoints(file, options.checkpointDelayMs ?? CHECKPOINT_DELAY_MS, {
      exportedBytes: loadedBytes,
      durableSeq: loadedFrom === file ? lastSeq : 0,
      prevSeq: loadedFrom === prev ? lastSeq : 0,
    });
    const store = new SessionStore(file, db, journal, new PayloadStore(`${file}.payloads`), lock, mode, checkpoints, options.redactor);
    // The journal holds only what the last two checkpoints do not (a checkpoint drops what FILE.prev
    // holds), so reading all of it is bounded; a reader may also load the database just before the
    // writer checkpoints. A writer continues the sequence past the checkpoint even if the journal was lost.
    const entries = journal ? journal.readAll().filter((e) => e.seq > lastSeq) : [];
    if (journal && mode === 'writer') journal.ensureSeqAtLeast(lastSeq);
    const skipped: string[] = [];
    for (const entry of entries) {
      try {
        store.tables.apply(entry);
      } catch (error) {
        skipped.push(`entry ${entry.seq} (${entry.op} of ${entry.task}: ${(error as Error).message})`);
      }
    }
    for (const bad of journal?.skipped ?? []) notices.push(`The journal ${bad.file} has a damaged line ${bad.line} (${bad.reason}); it was skipped, and the lines after it whose checksums hold were applied.`);
    if (skipped.length) notices.push(`${skipped.length} journal entr${skipped.length === 1 ? 'y' : 'ies'} could not be applied and were skipped: ${skipped.slice(0, 3).join('; ')}${skipped.length > 3 ? '; …' : ''}.`);
    for (const gap of store.tables.gaps) {
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
          store.checkpoints.markDirty();
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
    return this.tables.sessions();
  }

  /** Records of a session: they are contiguous from 0 (appends are in order, a lost one is a marker), so the last index + 1, found on the primary key rather than by counting rows. */
  recordCount(taskId: string): number {
    return this.tables.recordCount(taskId);
  }

  /** The raw record of a session; large outputs are read from the payload folder only when `loadPayloads`. */
  records(taskId: string, options: { loadPayloads?: boolean } = {}): RawRecord[] {
    return this.tables.records(taskId, options);
  }

  artifacts(taskId: string): ArtifactEntry[] {
    return this.tables.artifacts(taskId);
  }

  // ----------------------------------------------------------------- writing

  private requireWritable(): void {
    if (this.modeValue === 'reader') throw new StoreReadOnlyError(`${this.file} is open read-only (another window is writing it)`);
  }

  /**
   * Journals one mutation, then applies it: the line is written and applied at
   * once (so the order of lines and of the database stays one) and fsync'd on
   * the thread pool (an fsync each held the extension host for 5-18 ms in a
   * first turn, measured with the store under write-back). The promise resolves
   * once the line is durable; a failed write or fsync falls back to memory.
   * Records are waited for; a session's title or a derived form (a reduced
   * output, a summary) is not: a crash of the machine before its fsync ends
   * loses what is made again from the record.
   */
  private write(task: string, op: string, data: unknown): Promise<void> {
    this.requireWritable();
    this.checkLock();
    let seq = 0;
    let durable: Promise<void> | undefined;
    if (this.journal && this.modeValue === 'writer') {
      try {
        ({ seq, durable } = this.journal.appendDeferred(task, op, data));
      } catch (error) {
        this.lostJournal(error);
      }
    }
    this.tables.apply({ seq, task, op, data });
    this.scheduleCheckpoint();
    return durable?.catch((error: unknown) => this.lostJournal(error)) ?? Promise.resolve();
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
    void this.write(taskId, 'task', { title });
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
    await this.write(taskId, 'record', await this.dataOf(record));
  }

  /** The records of a session lost from a damaged journal line, each one's place held by a marker until `restoreRecord`. */
  lostRecords(taskId: string): number[] {
    return this.tables.lostRecords(taskId);
  }

  /**
   * Puts a lost record back in its place (journaled like an append). Only a
   * lost record's marker is ever replaced: an acknowledged record is never
   * rewritten.
   */
  async restoreRecord(taskId: string, record: RawRecord): Promise<void> {
    this.requireWritable();
    if (!this.lostRecords(taskId).includes(record.index)) throw new Error(`record ${record.index} of ${taskId} was not lost: a stored record is never rewritten`);
    await this.write(taskId, 'restore', await this.dataOf(record));
  }

  /** A record as it is journaled: a large tool output goes to the payload store, under the size limit. */
  private async dataOf(record: RawRecord): Promise<RecordData> {
    const grown = this.checkpoints.exportedBytes + (this.journal?.size().current ?? 0);
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
        void this.write(taskId, 'snapshot', { key, entry });
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
    for (const [key, entry] of exported.snapshots) void this.write(taskId, 'snapshot', { key, entry });
    for (const [toolCallId, form] of exported.tools) void this.write(taskId, 'tool', { toolCallId, form });
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
        void this.write(taskId, 'tool', { toolCallId, form });
      },
    };
  }

  // -------------------------------------------------------------- checkpoint

  private scheduleCheckpoint(): void {
    this.checkpoints.schedule(this.modeValue === 'writer', () => {
      try {
        this.checkpoint();
      } catch (error) {
        this.notice(`Context Keeper could not save a checkpoint of ${this.file} (${(error as Error).message}); the journal still holds every change.`);
      }
    });
  }

  /** Exports the database atomically over FILE, then rotates the journal. */
  checkpoint(): void {
    this.checkLock();
    if (this.modeValue !== 'writer') return;
    this.checkpoints.write(this.db, this.journal);
  }

  /** Bytes of the database file, the journal and the payloads (for reports and benchmarks). */
  sizes(): { database: number; journal: number; payloads: number } {
    const database = existsSync(this.file) ? statSync(this.file).size : 0;
    const j = this.journal?.size() ?? { current: 0, archive: 0 };
    let payloads = 0;
    for (const hash of this.payloads.list()) payloads += statSync(path.join(this.payloads.dir, hash)).size;
    return { database, journal: j.current + j.archive, payloads };
  }

  // ---------------------------------------------------------------- deletion

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
    this.tables.deleteRows(taskId);
    this.db.exec('VACUUM');
    if (this.modeValue === 'writer') {
      // Both checkpoints are written without the session, then the journal: no copy of it is left to recover.
      const prevSeq = this.checkpoints.writeBoth(this.db);
      this.journal?.purgeTask(taskId);
      this.journal?.rotate();
      this.journal?.dropArchivedThrough(prevSeq);
      // Copies moved aside as damaged hold the session's bytes too (they were rebuilt from the journal
      // when moved), and so may the temp file of a payload write killed mid-way.
      for (const aside of damagedCopies(this.file)) rmSync(aside, { force: true });
      this.payloads.removeTempFiles();
    }
    for (const h of hashes) this.payloads.delete(h);
    rmSync(`${this.file}.deleting`, { force: true });
    this.checkpoints.markClean();
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
    this.checkpoints.cancel();
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.journal?.close();
    this.lock?.release();
    this.lock = undefined;
    this.db.close();
  }

  /** Checkpoints (when writing), stops the timers and releases the lock. */
  close(): void {
    this.checkpoints.cancel();
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    try {
      if (this.modeValue === 'writer' && this.checkpoints.dirty) this.checkpoint();
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
