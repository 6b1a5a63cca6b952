/**
 * The store's checkpoints: FILE, the database exported whole, and FILE.prev,
 * the one before it. Opening loads the newest usable one (a damaged one is
 * moved aside, never deleted); a write keeps the last one as FILE.prev, puts the
 * new one in place atomically and rotates the journal; `Checkpoints` knows when
 * the next one is due (debounced) and which journal position each one holds.
 */
import { existsSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from './durableFiles';
import type { Journal } from './journal';
import type { StoreLock } from './lock';
import type { StoreMode } from './sessionStore';
import { queryAll, type SqlDatabase, type SqlJs } from './sqljs';
import { appliedSeq, migrate, SCHEMA_VERSION, userVersion } from './tables';

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

/** Debounce of the background checkpoint, and its ceiling under continuous writes. */
export const CHECKPOINT_DELAY_MS = 2_000;
const CHECKPOINT_MAX_DELAY_MS = 30_000;

/** What `loadDatabase` found: the database, and which checkpoint it came from. */
export interface LoadedDatabase {
  readonly db: SqlDatabase;
  /** The journal position the loaded checkpoint holds (0: none was loaded). */
  readonly lastSeq: number;
  /** The loaded checkpoint was of an older schema, and migrated. */
  readonly migrated: boolean;
  /** Why FILE could not be used as it is (missing with a journal, empty, damaged), if it could not. */
  readonly problem: string | undefined;
  /** FILE or FILE.prev; undefined: a new, empty database. */
  readonly loadedFrom: string | undefined;
  readonly loadedBytes: number;
}

/**
 * Loads the newest usable checkpoint: FILE, else FILE.prev when FILE is damaged
 * (a writer moves it aside), empty, or missing once a checkpoint was made; a new
 * database when neither can be used. A FILE too large to read is refused: the
 * journal is closed, the lock released, and StoreTooLargeError thrown.
 */
export function loadDatabase(sql: SqlJs, file: string, mode: StoreMode, journal: Journal | undefined, lock: StoreLock | undefined): LoadedDatabase {
  let db: SqlDatabase | undefined;
  let lastSeq = 0;
  let migrated = false;
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
  return { db, lastSeq, migrated, problem, loadedFrom, loadedBytes };
}

/**
 * When the next checkpoint is due, and what the ones on disk hold: a write is
 * debounced by the delay, and made at the latest CHECKPOINT_MAX_DELAY_MS after
 * the first change it covers.
 */
export class Checkpoints {
  private timer: NodeJS.Timeout | undefined;
  private firstDirty = 0;
  /** The database holds changes FILE does not. */
  private changed = false;
  /** The journal position FILE holds (its `lastSeq`), and the one FILE.prev holds. */
  private durableSeq: number;
  private prevSeq: number;
  /** The size of the last export: appends stop with a message before the database reaches DATABASE_LIMIT_BYTES. */
  private exportedSize: number;

  constructor(
    readonly file: string,
    /** 0 disables the background checkpoint. */
    private readonly delayMs: number,
    loaded: { readonly durableSeq: number; readonly prevSeq: number; readonly exportedBytes: number },
  ) {
    this.durableSeq = loaded.durableSeq;
    this.prevSeq = loaded.prevSeq;
    this.exportedSize = loaded.exportedBytes;
  }

  /** The database holds changes FILE does not. */
  get dirty(): boolean {
    return this.changed;
  }

  /** The size of the last export (the database file loaded, before the first). */
  get exportedBytes(): number {
    return this.exportedSize;
  }

  /** A change to save: `run` is called when the checkpoint is due (never for a store that is not `writing`, nor with no delay). */
  schedule(writing: boolean, run: () => void): void {
    if (!writing || this.delayMs <= 0) {
      this.changed = true;
      return;
    }
    const now = Date.now();
    if (!this.changed) this.firstDirty = now;
    this.changed = true;
    if (this.timer) clearTimeout(this.timer);
    const wait = Math.max(0, Math.min(this.delayMs, this.firstDirty + CHECKPOINT_MAX_DELAY_MS - now));
    this.timer = setTimeout(run, wait);
    this.timer.unref();
  }

  /** The database holds changes FILE does not (a checkpoint failed): closing tries again. */
  markDirty(): void {
    this.changed = true;
  }

  /** FILE holds everything (it was just written). */
  markClean(): void {
    this.changed = false;
  }

  /** Exports the database atomically over FILE (the one there becomes FILE.prev), then rotates the journal. */
  write(db: SqlDatabase, journal: Journal | undefined): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const data = db.export();
    this.exportedSize = data.length;
    // The checkpoint on disk becomes FILE.prev: a crash between the rename and the write leaves
    // FILE missing and FILE.prev whole, and the next open recovers from it and the journal.
    if (existsSync(this.file)) {
      renameSync(this.file, `${this.file}.prev`);
      this.prevSeq = this.durableSeq;
    }
    writeFileAtomic(this.file, data);
    this.durableSeq = appliedSeq(db);
    journal?.rotate();
    // What FILE.prev holds is no longer needed by any recovery.
    journal?.dropArchivedThrough(this.prevSeq);
    this.changed = false;
  }

  /** Writes the database as both FILE.prev and FILE, so no older copy is left (a deletion); the journal position they hold. */
  writeBoth(db: SqlDatabase): number {
    const data = db.export();
    writeFileAtomic(`${this.file}.prev`, data);
    writeFileAtomic(this.file, data);
    this.durableSeq = this.prevSeq = appliedSeq(db);
    return this.prevSeq;
  }

  /** Stops the timer of a checkpoint that is due. */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}

/** The copies of `file` moved aside as damaged (`FILE.damaged-N`). */
export function damagedCopies(file: string): string[] {
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
