/** Durable file operations shared by the store's writers: a directory's fsync, a file written atomically. */
import { closeSync, fsyncSync, openSync, renameSync, writeFileSync } from 'node:fs';
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
