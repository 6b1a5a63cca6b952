/**
 * Append-only, fsync-per-append journal: the durability layer under the session store.
 *
 * Files (everything lives in FILE.* beside the store's base path):
 *   `${base}.journal`          current segment: entries not yet covered by a database checkpoint
 *   `${base}.journal.archive`  older segments, moved there by `rotate()` (kept for a rebuild)
 *   `${base}.journal.tmp`, `${base}.journal.archive.tmp`   transient, during `purgeTask()`
 *
 * Line format: see journalFormat.ts (one checksummed JSON object per line, and a high-water
 * mark at the top of the archive after `purgeTask()`, never returned as an entry).
 *
 * Crash windows and how readers handle them:
 *   - append: one write() of one line, then fsync. A crash before the fsync returns leaves either
 *     nothing, the whole line, or a torn prefix of it; the entry was never acknowledged in any case.
 *     A torn tail (bytes after the last newline) is truncated on the next writable open (`repairs`).
 *     A complete line whose checksum fails was written whole, so it may have been acknowledged: it
 *     is damage, not a torn write, wherever it is. It is kept, skipped and named on every open (the
 *     next checkpoint compacts it away), never silently truncated.
 *   - rotate: lines are appended to the archive and fsync'd, then the current segment is truncated
 *     and fsync'd. A crash in between leaves the same entries in both files; readers dedupe by seq.
 *     A crash while appending to the archive leaves a torn archive tail, repaired on open (the lines
 *     are still in the current segment).
 *   - purgeTask: each file is rewritten to a temp file, fsync'd, renamed over the original and the
 *     directory fsync'd. A crash leaves each file either old or new; rerunning the purge finishes it.
 */
import { describeFsError, errorCode } from './fsErrors';
import { fsyncDirectory, fsyncDirectoryAsync, unlinkQuiet } from './durableFiles';
import { dedupe, encodeHighWater, encodeJournalLine, maxSeq, parseJournal, type ParsedFile } from './journalFormat';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface JournalEntry {
  readonly seq: number;
  readonly task: string;
  readonly op: string;
  readonly data: unknown;
}

export interface JournalRepair {
  readonly file: string;
  readonly truncatedBytes: number;
  readonly reason: string;
}

/** The few file operations a journal writes through; replaceable in tests to simulate failures. */
export interface JournalIo {
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number): number;
  fsyncSync(fd: number): void;
  /** fsync on libuv's thread pool: the event loop goes on meanwhile. */
  fsync(fd: number): Promise<void>;
  ftruncateSync(fd: number, len: number): void;
}

export interface JournalOpenOptions {
  /** Never writes, never repairs; a torn tail is ignored. Missing files read as empty. */
  readonly readOnly?: boolean;
  /** Test hook: override the write/fsync/truncate calls (e.g. to simulate ENOSPC). */
  readonly io?: Partial<JournalIo>;
}

/** A journal write that failed; nothing of the failed operation is acknowledged. */
export class JournalWriteError extends Error {
  readonly code: string | undefined;
  readonly file: string;
  override readonly cause: unknown;
  constructor(file: string, action: string, cause: unknown) {
    const code = errorCode(cause);
    const why = describeFsError(code, cause);
    super(
      `Context Keeper could not ${action} its session journal ${file}: ${why}${code ? ` (${code})` : ''}. ` +
        'The operation was not recorded; everything recorded before it is intact.',
    );
    this.name = 'JournalWriteError';
    this.code = code;
    this.file = file;
    this.cause = cause;
  }
}

// ---------------------------------------------------------------------------------------------
// Small fs helpers

/** Reads exactly the bytes fstat reports (never loops on a device such as /dev/full). */
function readFd(fd: number, length?: number): Buffer {
  const size = length ?? fs.fstatSync(fd).size;
  const buf = Buffer.alloc(size);
  let off = 0;
  while (off < size) {
    const n = fs.readSync(fd, buf, off, size - off, off);
    if (n === 0) break;
    off += n;
  }
  return off === size ? buf : buf.subarray(0, off);
}

function readIfExists(file: string): Buffer | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (e) {
    if (errorCode(e) === 'ENOENT') return undefined;
    throw e;
  }
  try {
    return readFd(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Opens for appending, creating if needed; reports whether the file was created (its directory then needs an fsync). */
function openAppend(file: string): { fd: number; created: boolean } {
  try {
    return { fd: fs.openSync(file, 'ax+'), created: true };
  } catch (e) {
    if (errorCode(e) !== 'EEXIST') throw e;
  }
  return { fd: fs.openSync(file, 'a+'), created: false };
}

const defaultIo: JournalIo = {
  writeSync: (fd, buffer, offset, length) => fs.writeSync(fd, buffer, offset, length),
  fsyncSync: (fd) => fs.fsyncSync(fd),
  fsync: (fd) => new Promise((resolve, reject) => fs.fsync(fd, (error) => (error ? reject(error) : resolve()))),
  ftruncateSync: (fd, len) => fs.ftruncateSync(fd, len),
};

// ---------------------------------------------------------------------------------------------

export class Journal {
  readonly base: string;
  readonly currentPath: string;
  readonly archivePath: string;
  readonly readOnly: boolean;
  readonly repairs: readonly JournalRepair[];
  readonly skipped: readonly { file: string; line: number; reason: string }[];

  private readonly io: JournalIo;
  private fd: number | undefined;
  /** Known-good length of the current segment (writer). */
  private length = 0;
  /** Known-good length of the archive (writer). */
  private archiveLength = 0;
  /** A failed append/rotate could not truncate its partial write away: retry before the next write. */
  private dirty = false;
  private seq = 0;
  private closed = false;
  /** Counts the closings of `fd`: an fsync in flight when its descriptor was closed is no failure (see appendDeferred). */
  private fdGeneration = 0;

  /**
   * A segment this open created has its name made durable by its directory's fsync on the thread pool (an fsync on
   * the event loop held the extension host at every new task): a line is acknowledged durable only after it.
   */
  private named: Promise<void> = Promise.resolve();
  /** Whether that fsync has not ended yet (a synchronous append then syncs the directory itself). */
  private namePending = false;

  private syncNewName(): void {
    this.namePending = true;
    this.named = fsyncDirectoryAsync(path.dirname(this.currentPath)).then(
      () => {
        this.namePending = false;
      },
      (e: unknown) => {
        this.namePending = false;
        throw new JournalWriteError(this.currentPath, 'open', e);
      },
    );
    // Whoever waits for a line's durability sees a failure; no one waiting is no unhandled rejection.
    this.named.catch(() => undefined);
  }

  /** Highest seq seen in either file (0 if empty); for a writer, the seq of the last append. */
  get lastSeq(): number {
    return this.seq;
  }

  private constructor(base: string, options: JournalOpenOptions) {
    this.base = base;
    this.currentPath = `${base}.journal`;
    this.archivePath = `${base}.journal.archive`;
    this.readOnly = options.readOnly === true;
    const io = options.io;
    // A test that makes fsyncSync fail means every fsync: the thread-pool one too.
    this.io = { ...defaultIo, ...(io?.fsyncSync && !io.fsync ? { fsync: async (fd: number) => io.fsyncSync!(fd) } : {}), ...io };
    const repairs: JournalRepair[] = [];
    const skipped: { file: string; line: number; reason: string }[] = [];
    this.repairs = repairs;
    this.skipped = skipped;

    if (this.readOnly) {
      for (const file of [this.archivePath, this.currentPath]) {
        const buf = readIfExists(file);
        if (!buf) continue;
        const p = parseJournal(buf);
        for (const m of p.damaged) skipped.push({ file, ...m });
        this.seq = Math.max(this.seq, maxSeq(p));
      }
      return;
    }

    try {
      fs.mkdirSync(path.dirname(this.currentPath), { recursive: true });
      unlinkQuiet(`${this.currentPath}.tmp`);
      unlinkQuiet(`${this.archivePath}.tmp`);
      const { fd, created } = openAppend(this.currentPath);
      this.fd = fd;
      if (created) this.syncNewName();
    } catch (e) {
      throw new JournalWriteError(this.currentPath, 'open', e);
    }
    try {
      const cur = parseJournal(readFd(this.fd));
      this.length = this.repairFile(this.currentPath, this.fd, cur, repairs, skipped);
      this.seq = Math.max(this.seq, maxSeq(cur));

      let afd: number | undefined;
      try {
        afd = fs.openSync(this.archivePath, 'r+');
      } catch (e) {
        if (errorCode(e) !== 'ENOENT') throw e;
      }
      if (afd !== undefined) {
        try {
          const arch = parseJournal(readFd(afd));
          this.archiveLength = this.repairFile(this.archivePath, afd, arch, repairs, skipped);
          this.seq = Math.max(this.seq, maxSeq(arch));
        } finally {
          fs.closeSync(afd);
        }
      }
    } catch (e) {
      this.close();
      throw e instanceof JournalWriteError ? e : new JournalWriteError(this.currentPath, 'open', e);
    }
  }

  /** Opens (creating if needed) the current segment and reads the archive; repairs torn tails unless read-only. */
  static open(base: string, options: JournalOpenOptions = {}): Journal {
    return new Journal(base, options);
  }

  /** Truncates a torn tail away (reporting it), names the damaged lines, and returns the file's good length. */
  private repairFile(
    file: string,
    fd: number,
    p: ParsedFile,
    repairs: JournalRepair[],
    skipped: { file: string; line: number; reason: string }[],
  ): number {
    for (const m of p.damaged) skipped.push({ file, ...m });
    if (p.validEnd === p.size) return p.size;
    const reasons = [`torn last line (${p.tornBytes} bytes without a newline)`];
    try {
      this.io.ftruncateSync(fd, p.validEnd);
      this.io.fsyncSync(fd);
    } catch (e) {
      throw new JournalWriteError(file, 'repair', e);
    }
    repairs.push({ file, truncatedBytes: p.size - p.validEnd, reason: reasons.join('; ') });
    return p.validEnd;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error(`Journal ${this.currentPath} is closed`);
  }

  private writable(): number {
    this.assertOpen();
    if (this.readOnly || this.fd === undefined) throw new Error(`Journal ${this.currentPath} is open read-only`);
    if (this.dirty) {
      // A previous failure left bytes we could not remove; they must go before anything is appended after them.
      try {
        if (fs.fstatSync(this.fd).size !== this.length) {
          this.io.ftruncateSync(this.fd, this.length);
          this.io.fsyncSync(this.fd);
        }
        this.dirty = false;
      } catch (e) {
        throw new JournalWriteError(this.currentPath, 'clean up after a failed write to', e);
      }
    }
    return this.fd;
  }

  private writeAll(fd: number, buf: Uint8Array): void {
    let off = 0;
    while (off < buf.length) {
      const n = this.io.writeSync(fd, buf, off, buf.length - off);
      if (n <= 0) throw Object.assign(new Error('write made no progress'), { code: 'EIO' });
      off += n;
    }
  }

  /** After a failed write, cut `fd` back to `length`; returns false if that was impossible. */
  private rollBack(fd: number, length: number): boolean {
    try {
      if (fs.fstatSync(fd).size === length) return true;
      this.io.ftruncateSync(fd, length);
      this.io.fsyncSync(fd);
      return true;
    } catch {
      return false;
    }
  }

  /** Appends one entry (one write of one line, then fsync) and returns its seq. */
  append(task: string, op: string, data: unknown): number {
    return this.writeLine(task, op, data, true).seq;
  }

  /**
   * Appends one entry: the line is written now (its seq is returned and later
   * appends follow it), and `durable` resolves once it is fsync'd, on the
   * thread pool: an fsync (5-10 ms on a laptop disk, far more on a network
   * drive) no longer holds the extension host's event loop. A write that fails
   * throws at once, as `append` does; a failed fsync rejects `durable` with a
   * JournalWriteError. A descriptor closed while its fsync was in flight (the
   * store closed, the file replaced) is no failure: closing came after a
   * checkpoint or a sync of its own that covers the line.
   */
  appendDeferred(task: string, op: string, data: unknown): { readonly seq: number; readonly durable: Promise<void> } {
    const { fd, seq } = this.writeLine(task, op, data, false);
    const generation = this.fdGeneration;
    const synced = this.io.fsync(fd).catch((e: unknown) => {
      if (this.fdGeneration !== generation) return;
      throw new JournalWriteError(this.currentPath, 'append to', e);
    });
    const durable = Promise.all([synced, this.named]).then(() => undefined);
    return { seq, durable };
  }

  /** Writes one line (and fsyncs it when `syncNow`); a failed write is rolled back and thrown. */
  private writeLine(task: string, op: string, data: unknown, syncNow: boolean): { readonly fd: number; readonly seq: number } {
    const fd = this.writable();
    const seq = this.seq + 1;
    const buf = Buffer.from(encodeJournalLine(seq, task, op, data), 'utf8');
    try {
      this.writeAll(fd, buf);
      if (syncNow) this.io.fsyncSync(fd);
      if (syncNow && this.namePending) fsyncDirectory(path.dirname(this.currentPath));
    } catch (e) {
      if (!this.rollBack(fd, this.length)) this.dirty = true;
      throw new JournalWriteError(this.currentPath, 'append to', e);
    }
    this.length += buf.length;
    this.seq = seq;
    return { fd, seq };
  }

  private readCurrentBuffer(): Buffer {
    if (this.fd !== undefined) return readFd(this.fd, this.length);
    return readIfExists(this.currentPath) ?? Buffer.alloc(0);
  }

  private readArchiveBuffer(): Buffer {
    const buf = readIfExists(this.archivePath) ?? Buffer.alloc(0);
    return this.readOnly ? buf : buf.subarray(0, Math.min(buf.length, this.archiveLength));
  }

  private note(p: ParsedFile): ParsedFile {
    if (this.readOnly) this.seq = Math.max(this.seq, maxSeq(p));
    return p;
  }

  /**
   * Makes the next append use a seq above `seq` (e.g. the database's checkpoint seq, in case the
   * journal files were lost while the database survived). In memory only: the next append persists it.
   */
  ensureSeqAtLeast(seq: number): void {
    this.assertOpen();
    if (Number.isSafeInteger(seq) && seq > this.seq) this.seq = seq;
  }

  /** Entries of the current segment with seq > afterSeq, in seq order (re-read from disk). */
  readCurrent(afterSeq: number): JournalEntry[] {
    this.assertOpen();
    return dedupe(this.note(parseJournal(this.readCurrentBuffer())).lines.filter((l) => l.entry.seq > afterSeq));
  }

  /** Archive + current, deduplicated by seq, in seq order. */
  readAll(): JournalEntry[] {
    this.assertOpen();
    const arch = this.note(parseJournal(this.readArchiveBuffer()));
    const cur = this.note(parseJournal(this.readCurrentBuffer()));
    return dedupe([...arch.lines, ...cur.lines]);
  }

  /** Moves the current segment's lines to the archive (fsync), then empties the current segment (fsync). */
  rotate(): void {
    const fd = this.writable();
    if (this.length === 0) return;
    const lines = readFd(fd, this.length);
    let afd: number;
    let created: boolean;
    try {
      ({ fd: afd, created } = openAppend(this.archivePath));
    } catch (e) {
      throw new JournalWriteError(this.archivePath, 'open', e);
    }
    try {
      try {
        // Anything past the known-good length is a leftover of a failed earlier rotate.
        if (fs.fstatSync(afd).size !== this.archiveLength) {
          this.io.ftruncateSync(afd, this.archiveLength);
        }
        this.writeAll(afd, lines);
        this.io.fsyncSync(afd);
        if (created) fsyncDirectory(path.dirname(this.archivePath));
      } catch (e) {
        this.rollBack(afd, this.archiveLength);
        throw new JournalWriteError(this.archivePath, 'archive entries in', e);
      }
    } finally {
      fs.closeSync(afd);
    }
    this.archiveLength += lines.length;
    // The entries are now durable in the archive; from here on a failure only leaves duplicates.
    try {
      this.io.ftruncateSync(fd, 0);
      this.length = 0;
      this.io.fsyncSync(fd);
    } catch (e) {
      this.length = fs.fstatSync(fd).size;
      throw new JournalWriteError(this.currentPath, 'truncate', e);
    }
  }

  /**
   * Drops the archived entries with seq ≤ `seq` (a checkpoint that holds them is
   * durable), so the archive keeps only what the next recovery needs. The file is
   * rewritten (temp file + fsync + rename), headed by the high-water mark so seq
   * never goes backwards; nothing is done when no archived entry is that old.
   */
  dropArchivedThrough(seq: number): void {
    this.writable();
    if (seq <= 0 || this.archiveLength === 0) return;
    const buf = this.readArchiveBuffer();
    const parsed = parseJournal(buf);
    if (!parsed.lines.some((l) => l.entry.seq <= seq)) return;
    const kept = parsed.lines.filter((l) => l.entry.seq > seq).map((l) => buf.subarray(l.start, l.end));
    this.archiveLength = this.replaceFile(this.archivePath, [Buffer.from(encodeHighWater(this.seq), 'utf8'), ...kept]);
  }

  /** Rewrites both files without any entry of `task` (temp file + fsync + rename + directory fsync). */
  purgeTask(task: string): void {
    const fd = this.writable();
    const archBuf = this.readArchiveBuffer();
    const curBuf = readFd(fd, this.length);
    const arch = parseJournal(archBuf);
    const cur = parseJournal(curBuf);
    if (!arch.lines.some((l) => l.entry.task === task) && !cur.lines.some((l) => l.entry.task === task)) return;

    const keep = (buf: Buffer, p: ParsedFile): Buffer[] =>
      p.lines.filter((l) => l.entry.task !== task).map((l) => buf.subarray(l.start, l.end));

    // The archive first, headed by the high-water mark so seq never goes backwards after a reopen.
    const archParts = [Buffer.from(encodeHighWater(this.seq), 'utf8'), ...keep(archBuf, arch)];
    this.archiveLength = this.replaceFile(this.archivePath, archParts);

    const curParts = keep(curBuf, cur);
    // Close before the rename: Windows cannot rename over an open file, and the fd would keep the old inode.
    fs.closeSync(fd);
    this.fd = undefined;
    this.fdGeneration++;
    let replaced: Error | undefined;
    try {
      this.replaceFile(this.currentPath, curParts);
    } catch (e) {
      replaced = e as Error;
    }
    try {
      this.fd = fs.openSync(this.currentPath, 'a+');
      this.length = fs.fstatSync(this.fd).size;
    } catch (e) {
      this.closed = true;
      throw new JournalWriteError(this.currentPath, 'reopen', e);
    }
    if (replaced) throw replaced;
  }

  private replaceFile(file: string, parts: Buffer[]): number {
    const tmp = `${file}.tmp`;
    let total = 0;
    try {
      const tfd = fs.openSync(tmp, 'w');
      try {
        for (const p of parts) {
          this.writeAll(tfd, p);
          total += p.length;
        }
        this.io.fsyncSync(tfd);
      } finally {
        fs.closeSync(tfd);
      }
      fs.renameSync(tmp, file);
      fsyncDirectory(path.dirname(file));
    } catch (e) {
      unlinkQuiet(tmp);
      throw new JournalWriteError(file, 'rewrite', e);
    }
    return total;
  }

  /** Bytes of both files. */
  size(): { current: number; archive: number } {
    this.assertOpen();
    const statSize = (f: string): number => {
      try {
        return fs.statSync(f).size;
      } catch {
        return 0;
      }
    };
    return {
      current: this.fd !== undefined ? fs.fstatSync(this.fd).size : statSize(this.currentPath),
      archive: statSize(this.archivePath),
    };
  }

  close(): void {
    if (this.fd !== undefined) {
      const fd = this.fd;
      this.fd = undefined;
      this.fdGeneration++;
      fs.closeSync(fd);
    }
    this.closed = true;
  }
}

