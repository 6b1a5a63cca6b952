/** Durable file operations shared by the store's writers: a directory's fsync, a file written atomically, a leftover removed. */
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { errorCode } from './fsErrors';

/** fsync a directory so a create/rename/unlink in it is durable. Not supported on Windows: ignored there. */
export function fsyncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch (e) {
    const code = errorCode(e);
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'ENOTSUP' && code !== 'EBADF') throw e;
  } finally {
    if (fd !== undefined) closeSync(fd);
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

/** Removes a leftover file (a temporary, a stale lock) if it is there; one that is absent or cannot be removed is no error. */
export function unlinkQuiet(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    /* absent or not removable: nothing to clean */
  }
}
