/**
 * One writer per store: `${base}.lock` holds the writer's {pid, host, since, heartbeat, token}.
 *
 * Taking a free lock is atomic: the holder JSON is written to a temp file and hard-linked to
 * `${base}.lock` (link() fails with EEXIST like an O_EXCL create, but the lock never exists
 * empty or half-written). Where hard links are unsupported it falls back to an O_EXCL create.
 *
 * A lock is stale when its pid is not alive on this host (process.kill(pid, 0) → ESRCH) or its
 * heartbeat is older than staleMs. Taking over a stale lock is "check, then replace", which two
 * contenders could interleave (both see the same stale lock, both replace it, both read back their
 * own content in turn and believe they won). So the check-and-replace runs under a short-lived
 * mutex, `${base}.lock.takeover` (O_EXCL), which is held for microseconds; inside it the lock is
 * re-read, re-judged, replaced by temp file + rename, and re-read to confirm. Heartbeat and release
 * use the same mutex, so a holder never rewrites or removes a lock that was taken over from it.
 *
 * Limits: a reused pid looks alive until the heartbeat goes stale; a process killed inside the
 * microsecond mutex window leaves a mutex that is treated as stale when its pid is dead or it is
 * older than 10 s.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { unlinkQuiet } from './durableFiles';

export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  readonly since: number;
  readonly heartbeat: number;
}

interface LockRecord extends LockHolder {
  readonly token: string;
}

export interface LockAcquireOptions {
  /** A lock whose heartbeat is older than this is stale (default 30 000 ms). */
  readonly staleMs?: number;
  /** Poll every 100 ms for up to this long before giving up (default 0: one attempt). */
  readonly waitMs?: number;
}

const DEFAULT_STALE_MS = 30_000;
const POLL_MS = 100;
const MUTEX_STALE_MS = 10_000;
/** An unparseable lock file (the O_EXCL fallback mid-write, or a lock a machine crash left unwritten) is stale after this. */
const UNREADABLE_STALE_MS = 2_000;

function errorCode(e: unknown): string | undefined {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}

const sleepBuffer = new Int32Array(new SharedArrayBuffer(4));
function sleepSync(ms: number): void {
  Atomics.wait(sleepBuffer, 0, 0, ms);
}

/** Whether `pid` is a live process on this machine (EPERM: alive, but not ours). */
export function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errorCode(e) !== 'ESRCH';
  }
}

function parseRecord(text: string): LockRecord | undefined {
  try {
    const v = JSON.parse(text) as Partial<LockRecord> | null;
    if (
      v &&
      typeof v.pid === 'number' &&
      typeof v.host === 'string' &&
      typeof v.since === 'number' &&
      typeof v.heartbeat === 'number' &&
      typeof v.token === 'string'
    ) {
      return { pid: v.pid, host: v.host, since: v.since, heartbeat: v.heartbeat, token: v.token };
    }
  } catch {
    /* unparseable */
  }
  return undefined;
}

interface LockFileState {
  readonly record: LockRecord | undefined;
  readonly mtimeMs: number;
}

function readLockFile(file: string): LockFileState | undefined {
  try {
    const text = fs.readFileSync(file, 'utf8');
    const mtimeMs = fs.statSync(file).mtimeMs;
    return { record: parseRecord(text), mtimeMs };
  } catch (e) {
    if (errorCode(e) === 'ENOENT') return undefined;
    throw e;
  }
}

/**
 * On this host the process table is the truth: a live holder is never stale, however
 * old its heartbeat (a suspended laptop, a long pause), and a dead one always is.
 * The heartbeat only decides for a holder on another host (a shared folder).
 */
function isStale(state: LockFileState, staleMs: number, now = Date.now()): boolean {
  const r = state.record;
  if (!r) return now - state.mtimeMs > Math.min(staleMs, UNREADABLE_STALE_MS);
  if (r.host === os.hostname()) return !pidAlive(r.pid);
  return now - r.heartbeat > staleMs;
}

function publicHolder(r: LockRecord | undefined): LockHolder | undefined {
  return r && { pid: r.pid, host: r.host, since: r.since, heartbeat: r.heartbeat };
}

/**
 * A lock is no data, so its writes are not fsync'd (each fsync held the extension host's event loop, at every open and
 * heartbeat): a machine that crashed left no live holder, and a lock it left unreadable or half-written is stale after
 * UNREADABLE_STALE_MS by its mtime, as a readable one is by its dead pid.
 */
function writeTemp(file: string, text: string): void {
  const fd = fs.openSync(file, 'wx');
  try {
    fs.writeSync(fd, text);
  } finally {
    fs.closeSync(fd);
  }
}

/** Creates `file` with `text` only if it does not exist; false if it does. */
function createExclusive(file: string, text: string, token: string): boolean {
  const tmp = `${file}.${token}.tmp`;
  writeTemp(tmp, text);
  try {
    fs.linkSync(tmp, file);
    return true;
  } catch (e) {
    const code = errorCode(e);
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EXDEV') throw e;
  } finally {
    unlinkQuiet(tmp);
  }
  // No hard links on this file system: a plain O_EXCL create.
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx');
  } catch (e) {
    if (errorCode(e) === 'EEXIST') return false;
    throw e;
  }
  try {
    fs.writeSync(fd, text);
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

/** Replaces `file` atomically with `text` (temp file + rename). */
function replaceAtomically(file: string, text: string, token: string): void {
  const tmp = `${file}.${token}.tmp`;
  unlinkQuiet(tmp);
  try {
    writeTemp(tmp, text);
    fs.renameSync(tmp, file);
  } catch (e) {
    unlinkQuiet(tmp);
    throw e;
  }
}

/**
 * Runs `fn` holding `${base}.lock.takeover`; returns undefined (without running it) if another
 * process keeps the mutex for longer than `waitMs`.
 */
function withMutex<T>(base: string, waitMs: number, fn: () => T): { value: T } | undefined {
  const mutex = `${base}.lock.takeover`;
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const fd = fs.openSync(mutex, 'wx');
      try {
        fs.writeSync(fd, JSON.stringify({ pid: process.pid, host: os.hostname(), at: Date.now() }));
      } finally {
        fs.closeSync(fd);
      }
      break;
    } catch (e) {
      if (errorCode(e) !== 'EEXIST') throw e;
    }
    // Someone holds it: stale if its process is gone or it is old.
    try {
      const text = fs.readFileSync(mutex, 'utf8');
      const mtimeMs = fs.statSync(mutex).mtimeMs;
      let dead = false;
      try {
        const m = JSON.parse(text) as { pid?: unknown; host?: unknown };
        dead = m.host === os.hostname() && typeof m.pid === 'number' && !pidAlive(m.pid);
      } catch {
        /* being written: judge by age only */
      }
      if (dead || Date.now() - mtimeMs > MUTEX_STALE_MS) {
        unlinkQuiet(mutex);
        continue;
      }
    } catch (e) {
      if (errorCode(e) === 'ENOENT') continue;
      throw e;
    }
    if (Date.now() >= deadline) return undefined;
    sleepSync(2);
  }
  try {
    return { value: fn() };
  } finally {
    unlinkQuiet(mutex);
  }
}

/** The locks this process holds, released at exit. */
const heldLocks = new Set<StoreLock>();
let exitHooked = false;

export class StoreLock {
  readonly base: string;
  readonly path: string;
  /** Last heartbeat failure (I/O errors are not thrown from heartbeat()). */
  lastHeartbeatError: unknown;

  private record: LockRecord;
  private released = false;
  private lost = false;

  private constructor(base: string, record: LockRecord) {
    this.base = base;
    this.path = `${base}.lock`;
    this.record = record;
    heldLocks.add(this);
    if (!exitHooked) {
      exitHooked = true;
      // One listener for every lock of the process (a workspace holds one per open task).
      process.on('exit', () => {
        for (const lock of [...heldLocks]) lock.release();
      });
    }
  }

  /** What this lock's file says about us. */
  get holder(): LockHolder {
    return publicHolder(this.record)!;
  }

  /** False once released, or once another process took the lock over (seen by heartbeat/isHeld). */
  get held(): boolean {
    return !this.released && !this.lost;
  }

  /**
   * Tries to take `${base}.lock`. A stale lock is replaced; a live one is reported as `holder`
   * with `lock: undefined`, so the caller can open read-only or wait. With `waitMs` > 0 it polls
   * every 100 ms for that long before giving up.
   */
  static async acquire(
    base: string,
    options: LockAcquireOptions = {},
  ): Promise<{ lock: StoreLock | undefined; holder: LockHolder | undefined }> {
    const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
    const deadline = Date.now() + Math.max(0, options.waitMs ?? 0);
    for (;;) {
      const attempt = StoreLock.tryAcquire(base, staleMs);
      const left = deadline - Date.now();
      if (attempt.lock || left <= 0) return attempt;
      await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, left)));
    }
  }

  /** One synchronous attempt (see acquire). */
  static tryAcquire(base: string, staleMs = DEFAULT_STALE_MS): { lock: StoreLock | undefined; holder: LockHolder | undefined } {
    const file = `${base}.lock`;
    const now = Date.now();
    const record: LockRecord = {
      pid: process.pid,
      host: os.hostname(),
      since: now,
      heartbeat: now,
      token: randomBytes(8).toString('hex'),
    };
    const text = JSON.stringify(record);
    for (let attempt = 0; attempt < 3; attempt++) {
      if (createExclusive(file, text, record.token)) return { lock: new StoreLock(base, record), holder: undefined };
      const state = readLockFile(file);
      if (!state) continue; // released meanwhile: try to create again
      if (!isStale(state, staleMs)) return { lock: undefined, holder: publicHolder(state.record) };
      // Stale: re-judge and replace under the takeover mutex, then confirm by reading back.
      const outcome = withMutex(base, 200, (): { won: boolean; holder: LockHolder | undefined } => {
        const again = readLockFile(file);
        if (!again) return { won: createExclusive(file, text, record.token), holder: undefined };
        if (!isStale(again, staleMs)) return { won: false, holder: publicHolder(again.record) };
        replaceAtomically(file, text, record.token);
        const check = readLockFile(file);
        return { won: check?.record?.token === record.token, holder: publicHolder(check?.record) };
      });
      if (!outcome) return { lock: undefined, holder: publicHolder(state.record) };
      if (outcome.value.won) return { lock: new StoreLock(base, record), holder: undefined };
      return { lock: undefined, holder: outcome.value.holder ?? publicHolder(state.record) };
    }
    const state = readLockFile(file);
    return { lock: undefined, holder: publicHolder(state?.record) };
  }

  /** Whether the lock file still names this lock (reads the file). */
  isHeld(): boolean {
    if (this.released || this.lost) return false;
    const state = readLockFile(this.path);
    if (state?.record?.token !== this.record.token) this.lost = true;
    return !this.lost;
  }

  /**
   * Rewrites the heartbeat. Returns false if the lock is no longer ours (released, or taken over
   * by another process after this one looked stale). I/O errors are not thrown: the beat is
   * skipped (see lastHeartbeatError) and the next call tries again.
   */
  heartbeat(): boolean {
    if (this.released || this.lost) return false;
    try {
      const result = withMutex(this.base, 50, () => {
        const state = readLockFile(this.path);
        if (state?.record?.token !== this.record.token) return false;
        const next: LockRecord = { ...this.record, heartbeat: Date.now() };
        replaceAtomically(this.path, JSON.stringify(next), this.record.token);
        this.record = next;
        return true;
      });
      if (result && !result.value) this.lost = true;
      this.lastHeartbeatError = undefined;
    } catch (e) {
      this.lastHeartbeatError = e;
    }
    return !this.lost;
  }

  /** Removes the lock file if it is still ours. Safe to call twice. */
  release(): void {
    if (this.released) return;
    this.released = true;
    heldLocks.delete(this);
    const removeIfOurs = (): void => {
      const state = readLockFile(this.path);
      if (state?.record?.token === this.record.token) fs.unlinkSync(this.path);
    };
    try {
      // The mutex keeps us from removing a lock another process took over between read and unlink.
      if (!withMutex(this.base, 500, removeIfOurs)) removeIfOurs();
    } catch {
      /* read-only or vanished storage: the lock goes stale once this process exits */
    }
  }
}
