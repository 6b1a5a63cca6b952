/**
 * The extension's session store in its storage folder: one database per task
 * (with its own journal and payloads) beside a small index.
 *
 *   <storage>/index.json               the tasks: id, title, records, bytes, last use, schema version
 *   <storage>/tasks/<task>/task.db     one SessionStore per task (task.db.journal, task.db.payloads/, …)
 *   <storage>/tasks/<task>/task.json   the task's id and title, so a lost index is rebuilt from the folders
 *
 * Opening the workspace reads the index only; a task's database is opened
 * when the task is used, so memory is bounded by the tasks in use, a
 * checkpoint costs that task's size, and deleting a task removes its folder.
 * A single-file store of an earlier version (`sessions.db`) is migrated on
 * first open, task by task, and removed only once every task reads back the
 * same. Every notice (a damaged file rebuilt, another window writing, a full
 * disk) is shown to the user once.
 */
import { existsSync, mkdirSync, promises as fsp, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { contentHash } from '../core/hash';
import { nextTurn } from '../core/turns';
import { asyncTempWriter, unlinkQuiet, writeFileAtomic, writeFileAtomicAsync } from './durableFiles';
import { pidAlive } from './lock';
import { SessionStore, type SessionSummary, type StoreOptions } from './sessionStore';
import { SCHEMA_VERSION } from './tables';

export type Notify = (severity: 'warning' | 'error', message: string) => void;

/** The single-file store of versions before the per-task layout. */
export const LEGACY_STORE_FILE_NAME = 'sessions.db';
/** Beside a legacy store kept after its migration (it had to be repaired to open): it is not migrated again. */
const KEPT_SUFFIX = '.kept';
export const INDEX_FILE_NAME = 'index.json';
const TASKS_DIR = 'tasks';
/** Where a deleted task's folder waits while it is removed on the thread pool; what a crash left there goes at the next open. */
const DELETING_DIR = 'deleting';
const TASK_DB = 'task.db';
const TASK_META = 'task.json';

export interface TaskIndexEntry {
  readonly id: string;
  readonly title: string;
  readonly records: number;
  /** Bytes of the task's folder when it was last closed. */
  readonly bytes: number;
  /** When the task was last opened (ms since the epoch). */
  readonly lastUsed: number;
}

interface IndexFile {
  readonly version: 1;
  readonly schema: number;
  readonly tasks: TaskIndexEntry[];
}

/** A folder name for a task id: readable, safe on every file system, and distinct for distinct ids. */
export function taskFolderName(id: string): string {
  const readable = id.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 60);
  return `${readable}-${contentHash(id).slice(0, 8)}`;
}

function folderBytes(dir: string): number {
  let total = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    try {
      const stat = statSync(file);
      total += stat.isDirectory() ? folderBytes(file) : stat.size;
    } catch {
      /* removed meanwhile */
    }
  }
  return total;
}

export class WorkspaceStore {
  private readonly entries = new Map<string, TaskIndexEntry>();
  private readonly open = new Map<string, Promise<SessionStore>>();
  private readonly stores = new Map<string, SessionStore>();
  /** When each open task was last asked for (`task`), for closing the idle ones. */
  private readonly touched = new Map<string, number>();
  /** Tasks deleted in this window: an index another window wrote does not bring them back. */
  private readonly deleted = new Set<string>();
  private closed = false;

  private constructor(
    readonly dir: string,
    private readonly notify: Notify,
    private readonly options: StoreOptions,
  ) {}

  get indexFile(): string {
    return path.join(this.dir, INDEX_FILE_NAME);
  }

  /** The folder that holds everything of a task. */
  folderOf(id: string): string {
    return path.join(this.dir, TASKS_DIR, taskFolderName(id));
  }

  /** Opens the workspace: reads the index (rebuilt from the task folders if it is missing or unreadable), migrates a legacy store. */
  static async open(dir: string, notify: Notify, options: StoreOptions): Promise<WorkspaceStore> {
    try {
      mkdirSync(path.join(dir, TASKS_DIR), { recursive: true });
    } catch {
      /* each task's store reports an unwritable folder itself, and runs in memory */
    }
    const ws = new WorkspaceStore(dir, notify, options);
    if (!options.readOnly) {
      ws.removeIndexTemps();
      await ws.removeInterruptedDeletions();
    }
    ws.readIndex();
    try {
      await ws.migrateLegacy();
    } catch (error) {
      notify('error', `Context Keeper could not move its earlier session store to one database per task (${(error as Error).message}); the old file is kept as it was.`);
    }
    return ws;
  }

  /** The index as it is on disk now; undefined when there is none, throws when it cannot be read. */
  private parseIndexFile(): IndexFile | undefined {
    if (!existsSync(this.indexFile)) return undefined;
    const value = JSON.parse(readFileSync(this.indexFile, 'utf8')) as Partial<IndexFile>;
    if (value.version !== 1 || !Array.isArray(value.tasks)) throw new Error('not an index of this extension');
    return value as IndexFile;
  }

  /** The index on disk, or undefined when there is none or it cannot be read. */
  private readIndexFile(): IndexFile | undefined {
    try {
      return this.parseIndexFile();
    } catch {
      return undefined;
    }
  }

  private readIndex(): void {
    let parsed: IndexFile | undefined;
    try {
      parsed = this.parseIndexFile();
    } catch (error) {
      this.notify('warning', `Context Keeper's task index ${this.indexFile} could not be read (${(error as Error).message}); it was rebuilt from the task folders.`);
    }
    if (parsed) {
      for (const t of parsed.tasks) if (typeof t?.id === 'string') this.entries.set(t.id, t);
      return;
    }
    for (const name of this.taskFolders()) {
      try {
        const meta = JSON.parse(readFileSync(path.join(this.dir, TASKS_DIR, name, TASK_META), 'utf8')) as { id?: unknown; title?: unknown };
        if (typeof meta.id !== 'string') continue;
        this.entries.set(meta.id, { id: meta.id, title: typeof meta.title === 'string' ? meta.title : '', records: 0, bytes: folderBytes(path.join(this.dir, TASKS_DIR, name)), lastUsed: 0 });
      } catch {
        /* a folder without its task.json is not a task */
      }
    }
    if (this.entries.size > 0 || existsSync(this.indexFile)) void this.writeIndex();
  }

  private taskFolders(): string[] {
    try {
      return readdirSync(path.join(this.dir, TASKS_DIR));
    } catch {
      return [];
    }
  }

  /** Temp files of index writes whose process is gone (a window closed mid-write); a live window's are its own. */
  private removeIndexTemps(): void {
    for (const file of leftBehind(this.dir, (name) => asyncTempWriter(name, this.indexFile))) unlinkQuiet(file);
  }

  /** The index as it stands now, with what another window added since this one read it. */
  private indexNow(): string {
    // Another window may have added a task since this one read the index: its entry is kept
    // (a task this window deleted is not brought back; one whose folder is gone is not kept).
    for (const t of this.readIndexFile()?.tasks ?? []) {
      if (typeof t?.id !== 'string' || this.entries.has(t.id) || this.deleted.has(t.id) || !existsSync(this.folderOf(t.id))) continue;
      this.entries.set(t.id, t);
    }
    const index: IndexFile = { version: 1, schema: SCHEMA_VERSION, tasks: this.byId() };
    return JSON.stringify(index);
  }

  private indexWriteFailed(error: unknown): void {
    this.notify('warning', `Context Keeper could not write its task index ${this.indexFile} (${(error as Error).message}); the tasks are safe in their folders.`);
  }

  /** Each index write takes the next number; a write still syncing when a later one began leaves the file to it. */
  private indexWrites = 0;

  /**
   * Writes the index as it stands now, its fsyncs on the thread pool (a first turn wrote it twice, each with two
   * fsyncs on the extension host's event loop). The latest write wins; resolves once it is durable (or superseded).
   */
  private writeIndex(): Promise<void> {
    if (this.options.readOnly) return Promise.resolve();
    const write = ++this.indexWrites;
    return writeFileAtomicAsync(this.indexFile, this.indexNow(), () => write === this.indexWrites).then(
      () => undefined,
      (error: unknown) => this.indexWriteFailed(error),
    );
  }

  /** The last index write of a closing store, synchronous (nothing after it would wait for one in flight). */
  private writeIndexNow(): void {
    if (this.options.readOnly) return;
    this.indexWrites++;
    try {
      writeFileAtomic(this.indexFile, this.indexNow());
    } catch (error) {
      this.indexWriteFailed(error);
    }
  }

  /** The index entries, in id order. */
  private byId(): TaskIndexEntry[] {
    return [...this.entries.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Takes the live counts and titles of the tasks open in this window into the index; whether any changed. */
  private refreshOpen(): boolean {
    let changed = false;
    for (const [id, store] of this.stores) {
      const live = store.sessions().find((s) => s.id === id);
      const known = this.entries.get(id);
      if (live && known && (live.records !== known.records || live.title !== known.title)) {
        this.entries.set(id, { ...known, records: live.records, title: live.title });
        changed = true;
      }
    }
    return changed;
  }

  /** The stored tasks, from the index (and, for a task open in this window, its live counts); no database is opened. */
  sessions(): SessionSummary[] {
    if (this.refreshOpen()) void this.writeIndex();
    return this.byId().map((t) => ({ id: t.id, title: t.title, records: t.records, lastUsed: t.lastUsed }));
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  /** The task opened last in this workspace (by any window), if any. */
  lastUsedTask(): string | undefined {
    let last: TaskIndexEntry | undefined;
    for (const entry of this.entries.values()) if (!last || entry.lastUsed > last.lastUsed) last = entry;
    return last?.id;
  }

  /** The task's own store, opened on first use (and created with `title` if it does not exist yet). */
  task(id: string, title = ''): Promise<SessionStore> {
    if (this.closed) return Promise.reject(new Error(`the session store of ${this.dir} is closed`));
    this.touched.set(id, Date.now());
    let opening = this.open.get(id);
    if (!opening) {
      opening = this.openTask(id, title);
      this.open.set(id, opening);
      opening.catch(() => this.open.delete(id));
    }
    return opening;
  }

  private async openTask(id: string, title: string): Promise<SessionStore> {
    const folder = this.folderOf(id);
    mkdirSync(folder, { recursive: true });
    const meta = path.join(folder, TASK_META);
    if (!existsSync(meta) && !this.options.readOnly) await writeFileAtomicAsync(meta, JSON.stringify({ id, title }));
    const store = await SessionStore.open(path.join(folder, TASK_DB), this.options);
    // Opening, registering the session and writing the index are each a slice of synchronous work (their fsyncs run on
    // the thread pool): a turn of the event loop between them.
    await nextTurn();
    const label = `task ${id}`;
    for (const message of store.notices) this.notify(severityOf(store, message), `${message} (${label})`);
    store.onNotice((message) => this.notify(severityOf(store, message), `${message} (${label})`));
    if (store.mode !== 'reader') store.createSession(id, title);
    this.stores.set(id, store);
    const live = store.sessions().find((s) => s.id === id);
    this.entries.set(id, { id, title: live?.title || title, records: live?.records ?? 0, bytes: folderBytes(folder), lastUsed: Date.now() });
    await nextTurn();
    await this.writeIndex();
    if (this.closed) store.close();
    return store;
  }

  /** Deletes a task everywhere: its database, journal, payloads, previous checkpoint, damaged copies and temp files go with its folder. */
  async deleteSession(id: string): Promise<boolean> {
    if (this.options.readOnly) throw new Error(`cannot delete task ${id}: the store of ${this.dir} is open read-only`);
    const folder = this.folderOf(id);
    const known = this.entries.has(id) || existsSync(folder);
    if (!known) return false;
    const opening = this.open.get(id);
    this.open.delete(id);
    if (opening) {
      const store = await opening.catch(() => undefined);
      if (store?.mode === 'reader') throw new Error(`cannot delete task ${id}: another window is writing it; nothing was deleted`);
      // Closed without a checkpoint: everything is about to be removed.
      store?.abandon();
    }
    this.stores.delete(id);
    this.touched.delete(id);
    await this.removeFolder(folder);
    this.entries.delete(id);
    this.deleted.add(id);
    await this.deleteFromLegacy(id);
    await this.writeIndex();
    return true;
  }

  /**
   * Removes a task's folder: moved aside at once (a rename), so its name is free for any later call, then removed on
   * the thread pool. Removing a task of 2,000 stored outputs in place held the event loop 268 ms (rmSync, measured).
   * A folder that cannot be moved (another process holds a file of it open) is removed where it is.
   */
  private async removeFolder(folder: string): Promise<void> {
    if (!existsSync(folder)) return;
    const aside = path.join(this.dir, DELETING_DIR, asideName(folder));
    try {
      mkdirSync(path.dirname(aside), { recursive: true });
      renameSync(folder, aside);
    } catch {
      await fsp.rm(folder, { recursive: true, force: true });
      return;
    }
    await fsp.rm(aside, { recursive: true, force: true });
  }

  /** Folders of deletions a crash or a closed window interrupted: removed on the thread pool (a failure is retried at the next open). */
  private async removeInterruptedDeletions(): Promise<void> {
    // Another window's deletion in flight is its own: only folders of processes that are gone.
    const left = leftBehind(path.join(this.dir, DELETING_DIR), asideWriter);
    await Promise.all(left.map((folder) => fsp.rm(folder, { recursive: true, force: true }).catch(() => undefined)));
  }

  /**
   * A legacy single-file store kept after a migration that did not verify still
   * holds the task: it is deleted there too (every table, payload, journal line
   * and damaged copy), or the next open would migrate it back.
   */
  private async deleteFromLegacy(id: string): Promise<void> {
    const legacy = path.join(this.dir, LEGACY_STORE_FILE_NAME);
    if (!legacyFiles(legacy).length) return;
    const old = await SessionStore.open(legacy, { ...this.options, checkpointDelayMs: 0 });
    try {
      if (old.mode !== 'writer') throw new Error(`cannot delete task ${id} from the earlier store ${legacy}: ${old.notices[old.notices.length - 1] ?? 'it is not writable'}`);
      if (old.sessions().some((s) => s.id === id)) await old.deleteSession(id);
    } finally {
      old.close();
    }
  }

  /**
   * Closes (checkpoints) the open tasks not asked for in the last `idleMs` and
   * not in `keep` (the ones a live session still holds), so memory stays
   * bounded by the tasks in use; the next `task` opens one again. Returns the
   * ids closed.
   */
  closeIdle(idleMs: number, keep: ReadonlySet<string>, now = Date.now()): string[] {
    if (this.closed) return [];
    this.refreshOpen();
    const closed: string[] = [];
    for (const [id, store] of [...this.stores]) {
      if (keep.has(id) || now - (this.touched.get(id) ?? 0) < idleMs) continue;
      this.closeTask(id, store);
      closed.push(id);
    }
    if (closed.length) void this.writeIndex();
    return closed;
  }

  /** Closes one open task's store (a checkpoint) and takes its size into the index. */
  private closeTask(id: string, store: SessionStore): void {
    try {
      store.close();
    } catch (error) {
      this.notify('error', `Context Keeper could not close the store of task ${id}: ${(error as Error).message}`);
    }
    this.stores.delete(id);
    this.open.delete(id);
    this.touched.delete(id);
    const known = this.entries.get(id);
    if (known) this.entries.set(id, { ...known, bytes: folderBytes(this.folderOf(id)) });
  }

  /** Closes (checkpoints) every open task and writes the index. */
  close(): void {
    if (this.closed) return;
    this.refreshOpen();
    this.closed = true;
    for (const [id, store] of [...this.stores]) this.closeTask(id, store);
    this.open.clear();
    this.writeIndexNow();
  }

  // --------------------------------------------------------------- migration

  /**
   * Moves every session of a legacy single-file store into its own task
   * store, yielding to the event loop between records, and going on from where
   * an interrupted earlier attempt stopped; the legacy files are
   * removed only when every migrated task reads back the same records,
   * summaries and tool forms, and kept (with a message) otherwise.
   */
  private async migrateLegacy(): Promise<void> {
    const legacy = path.join(this.dir, LEGACY_STORE_FILE_NAME);
    // A store kept on purpose (see below) is not migrated again at every open.
    if (this.options.readOnly || !legacyFiles(legacy).length || existsSync(`${legacy}${KEPT_SUFFIX}`)) return;
    const old = await SessionStore.open(legacy, { ...this.options, checkpointDelayMs: 0 });
    let moved: number;
    try {
      for (const message of old.notices) this.notify(severityOf(old, message), message);
      if (old.mode !== 'writer') return;
      // A store that had to be repaired to open (a damaged database moved aside, journal lines lost) may hold
      // more than what could be read back: it is migrated, but its files are kept, damaged copies included.
      const repaired = old.notices.length > 0 || old.sessions().some((s) => old.lostRecords(s.id).length > 0);
      const sessions = old.sessions();
      const failed: string[] = [];
      for (const session of sessions) {
        const exported = old.exportSession(session.id);
        const store = await this.task(session.id, session.title);
        // An earlier open may have stopped part-way through this task: what it copied is kept when it
        // is the start of the legacy record, and the copy goes on from there.
        const held = store.recordCount(session.id);
        if (JSON.stringify(store.records(session.id, { loadPayloads: true })) === JSON.stringify(exported.records.slice(0, held))) {
          for (const record of exported.records.slice(held)) {
            await store.appendRecord(session.id, record);
            if (record.index % 200 === 199) await nextTurn();
          }
          store.importState(session.id, exported);
          store.checkpoint();
        }
        if (JSON.stringify(store.exportSession(session.id)) !== JSON.stringify(exported)) failed.push(session.id);
        await nextTurn();
      }
      if (this.refreshOpen()) await this.writeIndex();
      if (failed.length) {
        this.notify('error', `Context Keeper kept its earlier session store ${legacy}: ${failed.length} task(s) did not read back the same after moving them to one database per task (${failed.slice(0, 3).join(', ')}).`);
        return;
      }
      if (repaired) {
        writeFileAtomic(`${legacy}${KEPT_SUFFIX}`, 'kept after migration: the store had to be repaired to open\n');
        this.notify('error', `Context Keeper moved ${sessions.length} task(s) from ${legacy} to one database per task, and kept the earlier store and its damaged copies as they are: it had to be repaired to open, so it may hold more than could be read. Deleting a task deletes it there too.`);
        return;
      }
      moved = sessions.length;
    } finally {
      old.close();
    }
    for (const file of legacyFiles(legacy)) rmSync(file, { recursive: true, force: true });
    this.notify('warning', `Context Keeper moved ${moved} task(s) from ${legacy} to one database per task in ${path.join(this.dir, TASKS_DIR)}; the old file was removed after every task read back the same.`);
  }
}

/** The name a task folder is moved aside under while it is removed: its own, the process removing it and when. */
function asideName(folder: string): string {
  return `${path.basename(folder)}-${process.pid}-${Date.now().toString(36)}`;
}

/** The process that moved a folder aside under `name` (asideName); NaN, no live process, for a name asideName did not make. */
function asideWriter(name: string): number {
  return Number(/-(\d+)-[0-9a-z]+$/.exec(name)?.[1]);
}

/**
 * The entries of `dir` a process left behind that is gone: `writer` reads the process from a name (undefined: no
 * such leftover).
 */
function leftBehind(dir: string, writer: (name: string) => number | undefined): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((name) => {
      const pid = writer(name);
      return pid !== undefined && !pidAlive(pid);
    })
    .map((name) => path.join(dir, name));
}

/** The files of a legacy single-file store that exist. */
function legacyFiles(file: string): string[] {
  const dir = path.dirname(file);
  const base = path.basename(file);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n === base || n.startsWith(`${base}.`)).map((n) => path.join(dir, n));
}

/**
 * The store as the extension holds it: opened in the background at
 * activation (the index only), closed (every open task checkpointed) on dispose.
 */
export class WorkspaceStoreHost {
  private opening: Promise<WorkspaceStore> | undefined;
  private disposed = false;

  constructor(readonly dir: string, private readonly notify: Notify, private readonly options: StoreOptions) {}

  /** The store, opened on first use; a task that cannot persist runs in memory and says so. */
  store(): Promise<WorkspaceStore> {
    this.opening ??= WorkspaceStore.open(this.dir, this.notify, this.options).then((ws) => {
      if (this.disposed) ws.close();
      return ws;
    });
    return this.opening;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    void this.opening?.then((ws) => ws.close()).catch(() => undefined);
  }
}

function severityOf(store: SessionStore, message: string): 'warning' | 'error' {
  return store.mode === 'memory' || /damaged|could not be recovered|lost/.test(message) ? 'error' : 'warning';
}
