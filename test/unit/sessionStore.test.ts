import { strict as assert } from 'node:assert';
import { existsSync, fsync, mkdtempSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ANCHOR_KEY } from '../../src/core/store';
import { loadSqlJs, queryAll, warmSqlJs } from '../../src/store/sqljs';
import { SessionStore } from '../../src/store/sessionStore';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/store/tables';
import { RecordBuilder } from './engineHarness';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

function tempBase(): string {
  return path.join(mkdtempSync(path.join(tmpdir(), 'ck-store-')), 'sessions.db');
}

const form = { how: 'shrunk' as const, input: '{}', output: 'head … tail', recover: 'view_tool_call("call_1")' };

async function fill(store: SessionStore, id: string, b: RecordBuilder): Promise<void> {
  store.createSession(id, `title of ${id}`);
  for (const r of b.records) await store.appendRecord(id, r);
}

describe('session store (sql.js + journal)', function () {
  this.timeout(30_000);

  it('keeps records, snapshots, tool forms and the artifact index across a reopen', async () => {
    const file = tempBase();
    const b = new RecordBuilder().user('Fix it').step('Reading.', [{ name: 'Read', input: { file_path: 'src/a.ts' }, output: 'x'.repeat(100) }]);
    b.step('', [{ name: 'Edit', input: { file_path: 'src/a.ts', old_string: 'a', new_string: 'b' }, output: 'ok' }]);
    const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.equal(store.mode, 'writer');
    await fill(store, 's1', b);
    store.snapshotStore('s1').put('tool:call_1', { type: 'form', form });
    store.snapshotStore('s1').put(ANCHOR_KEY, { type: 'anchor', anchor: { real: 100, estimate: 90 } });
    store.toolStore('s1').put('call_1', form);
    store.close();
    const again = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.deepEqual(again.sessions(), [{ id: 's1', title: 'title of s1', records: b.records.length }]);
    assert.deepEqual(again.records('s1'), b.records);
    assert.deepEqual(again.snapshotStore('s1').get('tool:call_1'), { type: 'form', form });
    assert.deepEqual(again.snapshotStore('s1').keys('meta:'), [ANCHOR_KEY]);
    assert.deepEqual(again.toolStore('s1').get('call_1'), form);
    assert.deepEqual(
      again.artifacts('s1').map((a) => [a.path, a.reads, a.modifications]),
      [['src/a.ts', 1, 1]],
    );
    again.close();
  });

  it('loses nothing acknowledged when the process dies before any checkpoint (journal replay)', async () => {
    const file = tempBase();
    const b = new RecordBuilder().user('hello').step('hi there');
    const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    await fill(store, 's', b);
    store.toolStore('s').put('call_9', form);
    store.abandon();
    assert.equal(existsSync(file), false, 'no checkpoint was written');
    const again = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.deepEqual(again.records('s'), b.records);
    assert.deepEqual(again.toolStore('s').get('call_9'), form);
    again.close();
  });

  it('keeps snapshot writes monotonic (a drop is never replaced by a shrink)', async () => {
    const store = await SessionStore.open(tempBase(), { checkpointDelayMs: 0, redactor });
    const snap = store.snapshotStore('s');
    snap.put('tool:a', { type: 'form', form: { ...form, how: 'dropped', recover: undefined } });
    snap.put('tool:a', { type: 'form', form });
    assert.equal((snap.get('tool:a') as { form: { how: string } }).form.how, 'dropped');
    store.close();
  });

  it('stores large outputs outside the database, content-addressed, and reads them back', async () => {
    const file = tempBase();
    const big = 'line of a big tool output\n'.repeat(16000);
    const b = new RecordBuilder().user('go').step('', [{ name: 'Bash', input: { command: 'cat big.log' }, output: big }]);
    const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    await fill(store, 's', b);
    store.close();
    assert.ok(statSync(file).size < big.length / 2, 'the export does not carry the payload');
    assert.equal(readdirSync(`${file}.payloads`).length, 1);
    const again = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.equal(again.records('s', { loadPayloads: true })[2]!.toolOutput, big);
    assert.match(again.records('s')[2]!.toolOutput!, /^\[payload [0-9a-f]{64}, \d+ bytes\]$/);
    again.close();
  });

  it('migrates a database from every earlier schema version', async () => {
    const SQL = await loadSqlJs();
    for (let version = 0; version < SCHEMA_VERSION; version++) {
      const file = tempBase();
      const db = new SQL.Database();
      for (let v = 0; v < version; v++) db.exec(MIGRATIONS[v]!);
      db.exec(`PRAGMA user_version = ${version}`);
      if (version >= 1) {
        db.run(`INSERT INTO task (task_id, title) VALUES ('old', 'from v${version}')`);
        db.run(`INSERT INTO task_message (task_id, idx, role, content) VALUES ('old', 0, 'user', 'kept across the migration')`);
      }
      writeFileSync(file, db.export());
      db.close();
      const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
      if (version >= 1) assert.equal(store.records('old')[0]!.content, 'kept across the migration');
      store.close();
      const check = new SQL.Database(readFileSync(file));
      assert.equal(Number(check.exec('PRAGMA user_version')[0]!.values[0]![0]), SCHEMA_VERSION, `from v${version}`);
      assert.equal(queryAll(check, `SELECT name FROM sqlite_master WHERE name = 'task_message_tool'`).length, 1);
      check.close();
    }
  });

  for (const damage of ['garbage', 'truncated'] as const) {
    it(`moves a ${damage} database file aside and rebuilds the sessions from the journal`, async () => {
      const file = tempBase();
      const b = new RecordBuilder().user('remember me').step('sure');
      const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
      await fill(store, 's', b);
      store.checkpoint();
      await store.appendRecord('s', { index: b.records.length, role: 'user', content: 'after the checkpoint' });
      store.close();
      const original = readFileSync(file);
      if (damage === 'garbage') writeFileSync(file, Buffer.from('this is not a database at all'.repeat(100)));
      else truncateSync(file, Math.floor(original.length / 2));
      const damaged = readFileSync(file);
      const again = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
      const notice = again.notices.find((n) => /damaged/.test(n));
      assert.ok(notice, again.notices.join('\n'));
      assert.match(notice, /moved to .*sessions\.db\.damaged-1/);
      assert.match(notice, /3 records in 1 session/);
      assert.deepEqual(readFileSync(`${file}.damaged-1`), damaged, 'the bad file is kept as it was');
      assert.equal(again.records('s').length, 3);
      assert.equal(again.records('s')[2]!.content, 'after the checkpoint');
      again.close();
    });
  }

  it('repairs a journal whose last line was torn by a crash', async () => {
    const file = tempBase();
    const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    await fill(store, 's', new RecordBuilder().user('one').step('two'));
    store.abandon();
    appendFileSync(`${file}.journal`, '{"s":99,"t":"s","o":"record","d":{"record":{"ind');
    const again = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.ok(again.notices.some((n) => /torn write/.test(n)), again.notices.join('\n'));
    assert.equal(again.records('s').length, 2);
    again.close();
  });

  it('lets one writer at a time: a second opener reads', async () => {
    const file = tempBase();
    const writer = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    await fill(writer, 's', new RecordBuilder().user('one'));
    const reader = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.equal(reader.mode, 'reader');
    assert.ok(reader.notices.some((n) => /read-only/.test(n)));
    assert.equal(reader.records('s').length, 1);
    await assert.rejects(reader.appendRecord('s', { index: 1, role: 'user', content: 'x' }), /read-only/);
    reader.close();
    writer.close();
    const next = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.equal(next.mode, 'writer');
    next.close();
  });

  it('deletes a session everywhere: no trace of its canary in the database, the journal or the payloads', async () => {
    const file = tempBase();
    const canary = 'CANARY-7f3a9c1e-do-not-keep';
    const doomed = new RecordBuilder().user(`Please remember ${canary}`).step(`Noted ${canary}.`, [
      { name: 'Bash', input: { command: `echo ${canary}` }, output: `${canary}\n`.repeat(3000) },
      { name: 'Read', input: { file_path: `notes/${canary}.md` }, output: canary },
    ]);
    const kept = new RecordBuilder().user('an unrelated session').step('fine');
    const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    await fill(store, 'doomed', doomed);
    await fill(store, 'kept', kept);
    store.snapshotStore('doomed').put('tool:call_1', { type: 'form', form: { ...form, output: canary } });
    store.toolStore('doomed').put('call_1', { ...form, output: canary });
    store.checkpoint();
    await store.appendRecord('doomed', { index: doomed.records.length, role: 'user', content: `again ${canary}` });
    assert.equal(await store.deleteSession('doomed'), true);
    assert.equal(await store.deleteSession('doomed'), false);
    store.close();
    const dir = path.dirname(file);
    const files = readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => path.join(d.parentPath ?? (d as unknown as { path: string }).path, d.name));
    assert.ok(files.length >= 2, files.join(','));
    for (const f of files) assert.equal(readFileSync(f).includes(canary), false, `${f} still holds the canary`);
    const again = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.deepEqual(again.sessions().map((s) => s.id), ['kept']);
    assert.equal(again.records('kept').length, kept.records.length);
    again.close();
  });
});

describe('SQLite warm-up', function () {
  it('runs its statements one turn of the event loop at a time, once, and leaves sql.js ready', async () => {
    const sql = await loadSqlJs();
    let turn = 0;
    let done = false;
    const count = (): void => {
      turn++;
      if (!done) setImmediate(count);
    };
    setImmediate(count);
    // The turn each statement of the warm-up is compiled in, and the turn it first runs in.
    const compiledIn: number[] = [];
    const ranIn: number[] = [];
    const prototype = sql.Database.prototype as { prepare: (...args: unknown[]) => { step: () => boolean } };
    const prepare = prototype.prepare;
    prototype.prepare = function (this: unknown, ...args: unknown[]) {
      compiledIn.push(turn);
      const statement = prepare.apply(this, args);
      const step = statement.step.bind(statement);
      let first = true;
      statement.step = () => {
        if (first) ranIn.push(turn);
        first = false;
        return step();
      };
      return statement;
    };
    try {
      // A first statement, a table made, written and read.
      const warm = warmSqlJs(['SELECT 1', 'CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT)', "INSERT INTO t VALUES ('k', 'v')", "SELECT v FROM t WHERE k = 'k'"]);
      assert.equal(warmSqlJs([]), warm, 'one warm-up per process');
      await warm;
    } finally {
      prototype.prepare = prepare;
      done = true;
    }
    assert.deepEqual([compiledIn.length, ranIn.length], [4, 4], 'four statements, each compiled and run');
    const turns = compiledIn.flatMap((t, i) => [t, ranIn[i]!]);
    assert.equal(new Set(turns).size, 8, `each compiled and run in a turn of its own (turns ${turns.join(', ')})`);
    assert.ok(turns.every((t, i) => i === 0 || t > turns[i - 1]!), `in order: ${turns.join(', ')}`);
    const db = new sql.Database();
    for (const migration of MIGRATIONS) db.exec(migration);
    assert.deepEqual(queryAll(db, 'PRAGMA user_version'), [{ user_version: 0 }]);
    db.close();
  });
});

describe('session store: appends do not wait on the event loop for their fsync', function () {
  this.timeout(30_000);

  it('resolves an append once its line is fsync\'d, with the event loop running meanwhile', async () => {
    const file = tempBase();
    const held: (() => void)[] = [];
    const store = await SessionStore.open(file, {
      checkpointDelayMs: 0,
      journalIo: { fsync: (fd: number) => new Promise<void>((resolve, reject) => held.push(() => fsync(fd, (error) => (error ? reject(error) : resolve())))) },
      redactor,
    });
    store.createSession('s', 'title');
    // A session's line is written at once too, and fsync'd on the thread pool.
    assert.equal(held.length, 1, "the session line's fsync is in flight");
    assert.equal(store.sessions().length, 1);
    held.shift()!();
    let acknowledged = false;
    const append = store.appendRecord('s', { index: 0, role: 'user', content: 'hello' }).then(() => (acknowledged = true));
    // The line is written and applied at once; the acknowledgement waits for the fsync.
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(held.length, 1, 'one fsync in flight');
    assert.equal(acknowledged, false, 'not acknowledged before its fsync');
    assert.equal(store.records('s').length, 1, 'the record is in the view already');
    held.shift()!();
    await append;
    assert.equal(acknowledged, true);
    // A later record follows it in the journal; closing with its fsync in flight (its descriptor gone: EBADF) is no
    // failure, and loses nothing.
    const second = store.appendRecord('s', { index: 1, role: 'assistant', content: 'hi' });
    await new Promise((resolve) => setImmediate(resolve));
    store.close();
    held.shift()?.();
    await second;
    assert.deepEqual(store.notices.filter((n) => /continues in memory/.test(n)), [], 'no failure reported');
    const again = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.deepEqual(again.records('s').map((r) => r.content), ['hello', 'hi']);
    assert.equal(again.mode, 'writer');
    again.close();
  });

  it('goes on in memory, and says so, when an fsync fails', async () => {
    const file = tempBase();
    const store = await SessionStore.open(file, {
      checkpointDelayMs: 0,
      journalIo: { fsync: () => Promise.reject(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' })) },
      redactor,
    });
    store.createSession('s', 'title');
    await store.appendRecord('s', { index: 0, role: 'user', content: 'hello' });
    assert.equal(store.mode, 'memory');
    assert.ok(store.notices.some((n) => /continues in memory/.test(n) && /EIO/.test(n)), store.notices.join('\n'));
    assert.equal(store.records('s').length, 1, 'kept in memory');
    await store.appendRecord('s', { index: 1, role: 'assistant', content: 'still here' });
    assert.equal(store.records('s').length, 2);
    store.close();
  });
});

describe('session store: a full disk', function () {
  this.timeout(30_000);

  it('keeps the session going in memory, says so, and loses nothing already saved', async function () {
    if (!existsSync('/dev/full')) this.skip();
    const file = tempBase();
    const saved = new RecordBuilder().user('saved before the disk filled up');
    const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    await fill(store, 's', saved);
    store.close();
    // from now on every journal write fails with ENOSPC
    const { rmSync, symlinkSync } = await import('node:fs');
    rmSync(`${file}.journal`, { force: true });
    symlinkSync('/dev/full', `${file}.journal`);
    const full = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.equal(full.records('s').length, 1);
    await full.appendRecord('s', { index: 1, role: 'assistant', content: 'written while the disk is full' });
    assert.equal(full.mode, 'memory');
    const notice = full.notices.find((n) => /continues in memory/.test(n));
    assert.ok(notice, full.notices.join('\n'));
    assert.match(notice, /ENOSPC|disk is full/);
    assert.equal(full.records('s').length, 2, 'the new record is kept in memory');
    full.toolStore('s').put('c', form);
    assert.deepEqual(full.toolStore('s').get('c'), form);
    full.close();
    rmSync(`${file}.journal`, { force: true });
    const after = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.deepEqual(after.records('s').map((r) => r.content), ['saved before the disk filled up']);
    after.close();
  });
});

describe('session store: defects found in review', function () {
  this.timeout(30_000);

  it('a writer whose lock was taken over stops writing the files and says so', async () => {
    const file = tempBase();
    const a = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    await a.appendRecord('s', { index: 0, role: 'user', content: 'first' });
    const lock = JSON.parse(readFileSync(`${file}.lock`, 'utf8')) as Record<string, unknown>;
    writeFileSync(`${file}.lock`, JSON.stringify({ ...lock, token: 'someone-else' }));
    const journalBefore = readFileSync(`${file}.journal`);
    await a.appendRecord('s', { index: 1, role: 'user', content: 'second' });
    assert.equal(a.mode, 'memory');
    assert.ok(a.notices.some((n) => /lost the lock/.test(n)));
    assert.deepEqual(readFileSync(`${file}.journal`), journalBefore, 'nothing written after the loss');
    assert.equal(a.records('s').length, 2);
    a.abandon();
  });

  it('continues the journal sequence past the checkpoint when the journal files were lost', async () => {
    const file = tempBase();
    const { rmSync } = await import('node:fs');
    const one = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    for (let i = 0; i < 5; i++) await one.appendRecord('s', { index: i, role: 'user', content: `r${i}` });
    one.close();
    for (const f of [`${file}.journal`, `${file}.journal.archive`]) rmSync(f, { force: true });
    const two = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    for (let i = 5; i < 8; i++) await two.appendRecord('s', { index: i, role: 'user', content: `r${i}` });
    two.abandon();
    const three = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.equal(three.recordCount('s'), 8);
    three.close();
  });

  it('refuses to delete while it cannot write, and deletes nothing', async function () {
    if (!existsSync('/dev/full')) this.skip();
    const file = tempBase();
    const { rmSync, symlinkSync } = await import('node:fs');
    const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    await fill(store, 'victim', new RecordBuilder().user('x'.repeat(40_000)));
    store.close();
    rmSync(`${file}.journal`, { force: true });
    symlinkSync('/dev/full', `${file}.journal`);
    const full = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    await full.appendRecord('victim', { index: 1, role: 'user', content: 'forces the fallback' });
    assert.equal(full.mode, 'memory');
    await assert.rejects(full.deleteSession('victim'), /not writable now .* nothing was deleted/);
    full.close();
    rmSync(`${file}.journal`, { force: true });
    const after = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.equal(after.records('victim', { loadPayloads: true })[0]!.content.length, 40_000);
    after.close();
  });
});
