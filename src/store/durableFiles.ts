/**
 * Durable file operations shared by the store's writers: a directory's fsync, a file written atomically, a leftover
 * removed. The `…Async` forms fsync on the thread pool: an fsync (under a millisecond on an idle disk, tens of
 * milliseconds on a busy one or a network drive) then never holds the extension host's event loop.
 */
import { closeSync, fsync, fsyncSync, openSync, promises as fsp, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { errorCode } from './fsErrors';

/** What a directory's fsync may answer where directories cannot be synced (Windows, some file systems): no error. */
function unsyncableDirectory(e: unknown): boolean {
  const code = errorCode(e);
  return code === 'EISDIR' || code === 'EPERM' || code === 'EINVAL' || code === 'ENOTSUP' || code === 'EBADF';
}

/** fsync a directory so a create/rename/unlink in it is durable. Not supported on Windows: ignored there. */
export function fsyncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch (e) {
    if (!unsyncableDirectory(e)) throw e;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** fsyncDirectory on the thread pool. */
export async function fsyncDirectoryAsync(dir: string): Promise<void> {
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(dir, 'r');
    await fh.sync();
  } catch (e) {
    if (!unsyncableDirectory(e)) throw e;
  } finally {
    await fh?.close();
  }
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

let asyncWrites = 0;

/** The process that wrote `name`, when it is a temp file writeFileAtomicAsync wrote beside `file` (each write has its own). */
export function asyncTempWriter(name: string, file: string): number | undefined {
  const base = path.basename(file);
  const m = name.startsWith(`${base}.`) ? /^\.(\d+)-\d+\.tmp$/.exec(name.slice(base.length)) : null;
  return m ? Number(m[1]) : undefined;
}

/**
 * writeFileAtomic with its fsyncs on the thread pool. The small write and the rename stay synchronous (they reach the
 * page cache, not the disk). `stillWanted`, asked once the data is durable, lets a later write of the same file win over
 * one that is still syncing: when it says no, the temp file goes and the file is left as the later write made it.
 * Resolves whether the file was replaced.
 */
export async function writeFileAtomicAsync(file: string, data: Uint8Array | string, stillWanted: () => boolean = () => true): Promise<boolean> {
  const tmp = `${file}.${process.pid}-${++asyncWrites}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeFileSync(fd, data);
    await new Promise<void>((resolve, reject) => fsync(fd, (e) => (e ? reject(e) : resolve())));
  } catch (e) {
    closeSync(fd);
    unlinkQuiet(tmp);
    throw e;
  }
  closeSync(fd);
  if (!stillWanted()) {
    unlinkQuiet(tmp);
    return false;
  }
  renameSync(tmp, file);
  await fsyncDirectoryAsync(path.dirname(file));
  return true;
}

/** Removes a leftover file (a temporary, a stale lock) if it is there; one that is absent or cannot be removed is no error. */
export function unlinkQuiet(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    /* absent or not removable: nothing to clean */
  }
}
