import { strict as assert } from 'node:assert';
import { fork, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import * as path from 'node:path';
import { StoreLock, type LockHolder } from '../../src/store/lock';

const HOLDER = path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'store', 'lockHolder.js');

interface ChildMessage {
  type: string;
  ok?: boolean;
  holder?: LockHolder;
  pid?: number;
  held?: boolean;
  message?: string;
}

class Holder {
  readonly child: ChildProcess;
  private readonly inbox: ChildMessage[] = [];
  private waiter: (() => void) | undefined;
  readonly exited: Promise<void>;

  constructor(base: string, waitMs = 0, staleMs?: number) {
    const args = [base, String(waitMs), ...(staleMs === undefined ? [] : [String(staleMs)])];
    this.child = fork(HOLDER, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (m: ChildMessage) => {
      this.inbox.push(m);
      this.waiter?.();
    });
    this.exited = new Promise((resolve) => this.child.on('exit', () => resolve()));
  }

  async next(type: string, timeoutMs = 5000): Promise<ChildMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.inbox.findIndex((m) => m.type === type || m.type === 'error');
      if (i >= 0) {
        const m = this.inbox.splice(i, 1)[0]!;
        if (m.type === 'error') throw new Error(`holder failed: ${m.message}`);
        return m;
      }
      if (Date.now() > deadline) throw new Error(`no '${type}' message from the holder`);
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        setTimeout(resolve, 50);
      });
    }
  }

  get received(): number {
    return this.inbox.length;
  }

  send(msg: string): void {
    this.child.send(msg);
  }

  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    // Wait until the process is reaped: a zombie still answers kill(pid, 0).
    await this.exited;
  }
}

describe('store lock', function () {
  this.timeout(20_000);
  let root: string;
  let n = 0;
  const fresh = (): string => {
    const dir = path.join(root, `s${++n}`);
    fs.mkdirSync(dir);
    return path.join(dir, 'session.db');
  };
  const children: Holder[] = [];
  const holder = (base: string, waitMs = 0, staleMs?: number): Holder => {
    const h = new Holder(base, waitMs, staleMs);
    children.push(h);
    return h;
  };
  const lockFile = (base: string): { pid: number; token: string; heartbeat: number } =>
    JSON.parse(fs.readFileSync(`${base}.lock`, 'utf8')) as { pid: number; token: string; heartbeat: number };

  before(() => {
    root = fs.mkdtempSync(path.join(tmpdir(), 'ck-lock-'));
  });
  afterEach(async () => {
    for (const h of children.splice(0)) {
      if (h.child.exitCode === null && h.child.signalCode === null) await h.kill();
    }
  });
  after(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('takes a free lock, writes the holder, and releases it (twice is safe)', async () => {
    const base = fresh();
    const { lock, holder: other } = await StoreLock.acquire(base);
    assert.ok(lock);
    assert.equal(other, undefined);
    assert.equal(lock.base, base);
    const rec = lockFile(base);
    assert.equal(rec.pid, process.pid);
    assert.equal(lock.holder.pid, process.pid);
    assert.equal(lock.holder.host, hostname());
    assert.ok(lock.isHeld());
    lock.release();
    assert.ok(!fs.existsSync(`${base}.lock`));
    lock.release();
    assert.equal(lock.held, false);
    assert.deepEqual(
      fs.readdirSync(path.dirname(base)),
      [],
      'no temp or mutex files left',
    );
  });

  it('a second acquire in the same live process is refused with the holder', async () => {
    const base = fresh();
    const first = await StoreLock.acquire(base);
    assert.ok(first.lock);
    const second = await StoreLock.acquire(base);
    assert.equal(second.lock, undefined);
    assert.equal(second.holder?.pid, process.pid);
    first.lock.release();
  });

  it('a live holder in another process blocks; its heartbeat moves forward', async () => {
    const base = fresh();
    const h = holder(base);
    const got = await h.next('acquired');
    assert.equal(got.ok, true);
    const before = lockFile(base);
    assert.equal(before.pid, h.child.pid);

    const t0 = Date.now();
    const attempt = await StoreLock.acquire(base, { waitMs: 300 });
    assert.equal(attempt.lock, undefined);
    assert.ok(Date.now() - t0 >= 280, 'waited before giving up');
    assert.equal(attempt.holder?.pid, h.child.pid);
    assert.equal(attempt.holder?.host, hostname());
    assert.equal(lockFile(base).token, before.token, 'the live lock was not touched');

    await new Promise((r) => setTimeout(r, 20));
    h.send('heartbeat');
    assert.equal((await h.next('heartbeat')).held, true);
    assert.ok(lockFile(base).heartbeat > before.heartbeat);
  });

  it('a holder killed with SIGKILL is detected as stale and the lock is recovered', async () => {
    const base = fresh();
    const h = holder(base);
    assert.equal((await h.next('acquired')).ok, true);
    const deadPid = h.child.pid!;
    assert.equal(lockFile(base).pid, deadPid);
    await h.kill();
    assert.ok(fs.existsSync(`${base}.lock`), 'the killed holder left its lock behind');

    const { lock, holder: other } = await StoreLock.acquire(base); // default staleMs: recovered by pid, not age
    assert.ok(lock, `not recovered; holder ${JSON.stringify(other)}`);
    assert.equal(lockFile(base).pid, process.pid);
    lock.release();
  });

  it('waitMs succeeds once the holder releases', async () => {
    const base = fresh();
    const h = holder(base);
    assert.equal((await h.next('acquired')).ok, true);
    const t0 = Date.now();
    const pending = StoreLock.acquire(base, { waitMs: 5000 });
    setTimeout(() => h.send('release'), 400);
    const { lock } = await pending;
    const waited = Date.now() - t0;
    assert.ok(lock, 'acquired after the release');
    assert.ok(waited >= 380 && waited < 5000, `waited ${waited} ms`);
    await h.next('released');
    assert.equal(lockFile(base).pid, process.pid);
    lock.release();
  });

  it('a waiting process gets the lock when the holder releases it', async () => {
    const base = fresh();
    const { lock } = await StoreLock.acquire(base);
    assert.ok(lock);
    const h = holder(base, 5000);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(h.received, 0, 'still waiting while we hold it');
    lock.release();
    const got = await h.next('acquired');
    assert.equal(got.ok, true);
    assert.equal(lockFile(base).pid, h.child.pid);
  });

  it('a live holder on this host is never stale, however old its heartbeat', async () => {
    const base = fresh();
    const h = holder(base);
    assert.equal((await h.next('acquired')).ok, true);
    await new Promise((r) => setTimeout(r, 300));
    const { lock, holder: current } = await StoreLock.acquire(base, { staleMs: 150 });
    assert.equal(lock, undefined, 'a suspended or slow writer keeps its lock');
    assert.equal(current?.pid, h.child.pid);
    h.send('release');
    await h.next('released');
  });

  it('a holder on another host whose heartbeat is older than staleMs is taken over; its release leaves our lock alone', async () => {
    const base = fresh();
    const h = holder(base);
    assert.equal((await h.next('acquired')).ok, true);
    // the same lock, as a process on another machine sharing the folder would have written it
    const record = JSON.parse(fs.readFileSync(`${base}.lock`, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(`${base}.lock`, JSON.stringify({ ...record, host: 'another-host' }));
    await new Promise((r) => setTimeout(r, 300));
    const { lock } = await StoreLock.acquire(base, { staleMs: 150 });
    assert.ok(lock, 'stale heartbeat taken over');
    const mine = lockFile(base).token;

    h.send('heartbeat');
    assert.equal((await h.next('heartbeat')).held, false, 'the old holder learns it lost the lock');
    h.send('release');
    await h.next('released');
    assert.equal(lockFile(base).token, mine, 'the old holder did not remove our lock');
    assert.ok(lock.heartbeat());
    lock.release();
    assert.ok(!fs.existsSync(`${base}.lock`));
  });

  it('of many processes racing for one stale lock, exactly one wins', async function () {
    const base = fresh();
    // A lock left by a process that is gone.
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.on('exit', r));
    const now = Date.now();
    fs.writeFileSync(
      `${base}.lock`,
      JSON.stringify({ pid: dead.pid, host: hostname(), since: now, heartbeat: now, token: 'dead' }),
    );
    const racers = Array.from({ length: 6 }, () => holder(base));
    const results = await Promise.all(racers.map((r) => r.next('acquired', 10_000)));
    const winners = results.filter((r) => r.ok);
    assert.equal(winners.length, 1, JSON.stringify(results));
    assert.equal(lockFile(base).pid, winners[0]!.pid);
    for (const r of results.filter((x) => !x.ok)) assert.equal(r.holder?.pid, winners[0]!.pid);
  });

  it('an unreadable lock file is only treated as stale once it is old', async () => {
    const base = fresh();
    fs.writeFileSync(`${base}.lock`, '');
    const young = await StoreLock.acquire(base);
    assert.equal(young.lock, undefined);
    const old = new Date(Date.now() - 10_000);
    fs.utimesSync(`${base}.lock`, old, old);
    const { lock } = await StoreLock.acquire(base);
    assert.ok(lock);
    lock.release();
  });
});
