/**
 * Content-addressed storage for large payloads (tool outputs over PAYLOAD_THRESHOLD_BYTES), kept
 * outside the database file in `${base}.payloads/<sha256 hex>`.
 *
 * A payload file appears under its final name only complete and fsync'd: it is written to
 * `.tmp-<pid>-<random>` in the same directory, fsync'd, renamed into place, and the directory is
 * fsync'd. A crash leaves at worst a temp file (removed by `removeTempFiles`), never a partial payload.
 */
import { describeFsError } from './fsErrors';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { nextTurn } from '../core/turns';
import { fsyncDirectory, fsyncDirectoryAsync, unlinkQuiet } from './durableFiles';

export const PAYLOAD_THRESHOLD_BYTES = 32 * 1024;

/** Characters per slice for the chunked `put` (about 1 MB of ASCII). */
const CHUNK_CHARS = 1 << 20;
const HASH_RE = /^[0-9a-f]{64}$/;
const TEMP_PREFIX = '.tmp-';

export class PayloadMissingError extends Error {
  readonly hash: string;
  readonly path: string;
  constructor(hash: string, file: string) {
    super(`Context Keeper payload ${hash} is missing (expected at ${file})`);
    this.name = 'PayloadMissingError';
    this.hash = hash;
    this.path = file;
  }
}


/** Storing a payload failed; nothing was stored under its hash (no partial file is left behind). */
export class PayloadWriteError extends Error {
  readonly code: string | undefined;
  readonly path: string;
  override readonly cause: unknown;
  constructor(file: string, cause: unknown) {
    const code = errorCode(cause);
    const why = describeFsError(code, cause);
    super(`Context Keeper could not store a large payload in ${file}: ${why}${code ? ` (${code})` : ''}. Nothing was stored.`);
    this.name = 'PayloadWriteError';
    this.code = code;
    this.path = file;
    this.cause = cause;
  }
}

function errorCode(e: unknown): string | undefined {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}



/** End of the slice starting at `i`: about `size` UTF-16 units, never splitting a surrogate pair. */
function sliceEnd(text: string, i: number, size: number): number {
  let end = Math.min(text.length, i + size);
  if (end < text.length) {
    const c = text.charCodeAt(end - 1);
    const next = text.charCodeAt(end);
    if (c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) end = end - 1 > i ? end - 1 : end + 1;
  }
  return end;
}

/** The name a payload is stored under: the SHA-256 of its UTF-8 bytes. */
export function payloadHash(content: string | Buffer): string {
  return createHash('sha256').update(typeof content === 'string' ? Buffer.from(content, 'utf8') : content).digest('hex');
}

export class PayloadStore {
  readonly dir: string;
  private readonly chunkChars: number;
  private dirReady = false;

  /** `dir` is `${base}.payloads`; it is created on the first put. `chunkChars` is a test hook. */
  constructor(dir: string, options: { chunkChars?: number } = {}) {
    this.dir = dir;
    this.chunkChars = Math.max(1, options.chunkChars ?? CHUNK_CHARS);
  }

  /** The file a hash is stored in. Throws RangeError for anything but 64 lowercase hex digits. */
  pathOf(hash: string): string {
    if (!HASH_RE.test(hash)) throw new RangeError(`Not a payload hash: ${JSON.stringify(hash)}`);
    return path.join(this.dir, hash);
  }

  private tempPath(): string {
    return path.join(this.dir, `${TEMP_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`);
  }

  private ensureDirSync(): void {
    if (this.dirReady) return;
    let created: string | undefined;
    try {
      created = fs.mkdirSync(this.dir, { recursive: true });
      if (created !== undefined) fsyncDirectory(path.dirname(this.dir));
    } catch (e) {
      throw new PayloadWriteError(this.dir, e);
    }
    this.dirReady = true;
  }

  private async ensureDir(): Promise<void> {
    if (this.dirReady) return;
    try {
      const created = await fsp.mkdir(this.dir, { recursive: true });
      if (created !== undefined) await fsyncDirectoryAsync(path.dirname(this.dir));
    } catch (e) {
      throw new PayloadWriteError(this.dir, e);
    }
    this.dirReady = true;
  }

  /**
   * Stores `text` under the SHA-256 of its UTF-8 bytes. Encoding, hashing and writing go in
   * slices of about 1 MB with a setImmediate yield between them, and the fsync runs on the
   * thread pool, so a 50 MB payload never holds the event loop for more than a few ms.
   * Idempotent: a complete existing file with the same hash is kept.
   */
  async put(text: string): Promise<{ hash: string; bytes: number }> {
    await this.ensureDir();
    const tmp = this.tempPath();
    const hasher = createHash('sha256');
    let bytes = 0;
    let fh: fsp.FileHandle | undefined;
    try {
      fh = await fsp.open(tmp, 'wx');
      for (let i = 0; i < text.length; ) {
        const end = sliceEnd(text, i, this.chunkChars);
        const buf = Buffer.from(text.slice(i, end), 'utf8');
        i = end;
        hasher.update(buf);
        bytes += buf.length;
        let off = 0;
        while (off < buf.length) off += (await fh.write(buf, off, buf.length - off)).bytesWritten;
        await nextTurn();
      }
      await fh.sync();
      await fh.close();
      fh = undefined;
    } catch (e) {
      await fh?.close().catch(() => undefined);
      await fsp.unlink(tmp).catch(() => undefined);
      throw new PayloadWriteError(tmp, e);
    }
    const hash = hasher.digest('hex');
    const file = path.join(this.dir, hash);
    try {
      const existing = await fsp.stat(file).catch((e: unknown) => {
        if (errorCode(e) === 'ENOENT') return undefined;
        throw e;
      });
      if (existing?.isFile() && existing.size === bytes) {
        await fsp.unlink(tmp);
      } else {
        await fsp.rename(tmp, file);
        await fsyncDirectoryAsync(this.dir);
      }
    } catch (e) {
      await fsp.unlink(tmp).catch(() => undefined);
      throw new PayloadWriteError(file, e);
    }
    return { hash, bytes };
  }

  /** Synchronous variant for small payloads and for tests. */
  putSync(text: string): { hash: string; bytes: number } {
    this.ensureDirSync();
    const buf = Buffer.from(text, 'utf8');
    const hash = payloadHash(buf);
    const file = path.join(this.dir, hash);
    try {
      const st = fs.statSync(file);
      if (st.isFile() && st.size === buf.length) return { hash, bytes: buf.length };
    } catch (e) {
      if (errorCode(e) !== 'ENOENT') throw new PayloadWriteError(file, e);
    }
    const tmp = this.tempPath();
    try {
      const fd = fs.openSync(tmp, 'wx');
      try {
        let off = 0;
        while (off < buf.length) off += fs.writeSync(fd, buf, off, buf.length - off);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, file);
      fsyncDirectory(this.dir);
    } catch (e) {
      unlinkQuiet(tmp);
      throw new PayloadWriteError(file, e);
    }
    return { hash, bytes: buf.length };
  }

  /** The payload's text; throws PayloadMissingError if it is not stored. */
  get(hash: string): string {
    const file = this.pathOf(hash);
    try {
      return fs.readFileSync(file, 'utf8');
    } catch (e) {
      if (errorCode(e) === 'ENOENT') throw new PayloadMissingError(hash, file);
      throw e;
    }
  }

  /**
   * Like `get`, but reads and decodes in 1 MB slices with yields in between; the result is built
   * by concatenation (a rope), so no single step copies the whole payload.
   */
  async getAsync(hash: string): Promise<string> {
    const file = this.pathOf(hash);
    let fh: fsp.FileHandle;
    try {
      fh = await fsp.open(file, 'r');
    } catch (e) {
      if (errorCode(e) === 'ENOENT') throw new PayloadMissingError(hash, file);
      throw e;
    }
    try {
      const decoder = new StringDecoder('utf8');
      const buf = Buffer.alloc(1 << 20);
      let text = '';
      for (;;) {
        const { bytesRead } = await fh.read(buf, 0, buf.length, null);
        if (bytesRead === 0) break;
        text += decoder.write(buf.subarray(0, bytesRead));
      }
      return text + decoder.end();
    } finally {
      await fh.close();
    }
  }

  /** Re-hashes a stored payload; false if missing or its content no longer matches its name. */
  verify(hash: string): boolean {
    let data: Buffer;
    try {
      data = fs.readFileSync(this.pathOf(hash));
    } catch {
      return false;
    }
    return payloadHash(data) === hash;
  }

  has(hash: string): boolean {
    if (!HASH_RE.test(hash)) return false;
    try {
      return fs.statSync(path.join(this.dir, hash)).isFile();
    } catch {
      return false;
    }
  }

  /** Removes a payload; true if a file was removed. */
  delete(hash: string): boolean {
    const file = this.pathOf(hash);
    try {
      fs.unlinkSync(file);
    } catch (e) {
      if (errorCode(e) === 'ENOENT') return false;
      throw e;
    }
    fsyncDirectory(this.dir);
    return true;
  }

  /** Hashes present (temp files excluded), sorted. */
  list(): string[] {
    try {
      return fs
        .readdirSync(this.dir)
        .filter((n) => HASH_RE.test(n))
        .sort();
    } catch (e) {
      if (errorCode(e) === 'ENOENT' || errorCode(e) === 'ENOTDIR') return [];
      throw e;
    }
  }

  /**
   * Removes temp files left by interrupted puts that are older than `olderThanMs`. Call it while
   * holding the store lock (only the lock holder writes payloads). Returns how many were removed.
   */
  removeTempFiles(olderThanMs = 0): number {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir).filter((n) => n.startsWith(TEMP_PREFIX));
    } catch {
      return 0;
    }
    const cutoff = Date.now() - olderThanMs;
    let removed = 0;
    for (const n of names) {
      const file = path.join(this.dir, n);
      try {
        // With no age given every leftover goes: a file written within this millisecond has an mtime (with its
        // fraction of a millisecond) past Date.now(), which is whole milliseconds.
        if (olderThanMs <= 0 || fs.statSync(file).mtimeMs <= cutoff) {
          fs.unlinkSync(file);
          removed++;
        }
      } catch {
        /* gone meanwhile */
      }
    }
    return removed;
  }
}
