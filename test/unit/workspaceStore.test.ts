/**
 * The extension's store: one database per task beside an index. Opening reads
 * the index only; a task opens when used; deleting a task removes its folder;
 * a single-file store of an earlier version is migrated task by task.
 */
import { strict as assert } from 'node:assert';
// The module object itself (not a namespace copy of it): the test counts the fsyncs the store makes through it.
import fs = require('node:fs');
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { defaultBudget } from '../../src/core/budget';
import { replay } from '../../src/core/replay';
import { CharRatioTokenCounter } from '../../src/core/tokens';
import { DATABASE_READ_LIMIT_BYTES, StoreTooLargeError } from '../../src/store/checkpoints';
import { writeFileAtomicAsync } from '../../src/store/durableFiles';
import { SessionStore } from '../../src/store/sessionStore';
import { loadSqlJs } from '../../src/store/sqljs';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/store/tables';
import { LEGACY_STORE_FILE_NAME, WorkspaceStore, WorkspaceStoreHost } from '../../src/store/workspaceStore';
import { RecordBuilder } from './engineHarness';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

function collect(): { messages: [string, string][]; notify: (s: 'warning' | 'error', m: string) => void } {
  const messages: [string, string][] = [];
  return { messages, notify: (s, m) => messages.push([s, m]) };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

describe("the extension's workspace session store", function () {
  this.timeout(30_000);

  it('keeps each task in its own folder and lists them from the index without opening a database', async () => {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), 'ck-ws-')), 'storage');
    const seen = collect();
    const ws = await WorkspaceStore.open(dir, seen.notify, { checkpointDelayMs: 0, redactor });
    const a = await ws.task('task-a', 'Fix the parser');
    await a.appendRecord('task-a', { index: 0, role: 'user', content: 'Fix the parser' });
    const b = await ws.task('task/b', 'Rename things');
    await b.appendRecord('task/b', { index: 0, role: 'user', content: 'Rename things' });
    assert.notEqual(ws.folderOf('task-a'), ws.folderOf('task/b'));
    assert.ok(existsSync(path.join(ws.folderOf('task-a'), 'task.db.journal')));
    ws.close();
    assert.deepEqual(seen.messages, []);

    const reopened = await WorkspaceStore.open(dir, seen.notify, { checkpointDelayMs: 0, redactor });
    assert.deepEqual(reopened.sessions().map(({ id, title, records }) => ({ id, title, records })), [
      { id: 'task-a', title: 'Fix the parser', records: 1 },
      { id: 'task/b', title: 'Rename things', records: 1 },
    ]);
    assert.equal((reopened as unknown as { stores: Map<string, unknown> }).stores.size, 0, 'listing opened no task database');
    assert.equal((await reopened.task('task/b')).records('task/b')[0]!.content, 'Rename things');
    reopened.close();
  });

  it('a new task and its first records make no fsync on the event loop: every one runs on the thread pool', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    const seen = collect();
    const ws = await WorkspaceStore.open(dir, seen.notify, { checkpointDelayMs: 60_000, redactor });
    const mutable = fs;
    const [sync, pooled] = [mutable.fsyncSync, mutable.fsync];
    let onLoop = 0;
    let onPool = 0;
    mutable.fsyncSync = (fd) => {
      onLoop++;
      sync(fd);
    };
    mutable.fsync = ((fd: number, callback: (e: NodeJS.ErrnoException | null) => void) => {
      onPool++;
      pooled(fd, callback);
    }) as typeof fs.fsync;
    try {
      const store = await ws.task('task-new', 'Say hello');
      await store.appendRecord('task-new', { index: 0, role: 'user', content: 'say hello' });
      await store.appendRecord('task-new', { index: 1, role: 'assistant', content: 'Hello.' });
    } finally {
      mutable.fsyncSync = sync;
      mutable.fsync = pooled;
    }
    assert.equal(onLoop, 0, 'fsyncs on the event loop');
    assert.ok(onPool >= 4, `fsyncs on the thread pool: ${onPool}`);
    // Durable before task() resolved: the task's own file and its entry in the index.
    assert.deepEqual(JSON.parse(readFileSync(path.join(ws.folderOf('task-new'), 'task.json'), 'utf8')), { id: 'task-new', title: 'Say hello' });
    assert.deepEqual((JSON.parse(readFileSync(ws.indexFile, 'utf8')) as { tasks: { id: string }[] }).tasks.map((t) => t.id), ['task-new']);
    ws.close();
    assert.deepEqual(seen.messages, []);
  });

  it('deleting a task moves its folder aside and removes it on the thread pool; what a closed window left aside goes at the next open', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    const seen = collect();
    const ws = await WorkspaceStore.open(dir, seen.notify, { checkpointDelayMs: 0, redactor });
    const store = await ws.task('big', 'Many outputs');
    // Outputs over the payload threshold are files of their own: a folder of many files.
    for (let i = 0; i < 12; i++) await store.appendRecord('big', { index: i, role: 'tool', content: '', toolName: 'Bash', toolCallId: `c${i}`, toolOutput: `line ${i}\n`.repeat(8_000) });
    const folder = ws.folderOf('big');
    assert.ok(filesUnder(folder).length > 12, 'the task has its payload files');
    const rmSync = fs.rmSync;
    let onLoop = 0;
    fs.rmSync = (...args: Parameters<typeof fs.rmSync>) => {
      onLoop++;
      rmSync(...args);
    };
    try {
      assert.equal(await ws.deleteSession('big'), true);
    } finally {
      fs.rmSync = rmSync;
    }
    assert.equal(onLoop, 0, 'removals on the event loop');
    assert.ok(!existsSync(folder));
    assert.deepEqual(readdirSync(path.join(dir, 'deleting')), [], 'nothing left aside');
    assert.deepEqual(ws.sessions(), []);
    ws.close();
    // A deletion a closed window did not finish (its process is gone) is finished when the store opens; a live one's is its own.
    mkdirSync(path.join(dir, 'deleting', 'old-task-1234abcd-999999999-k2'), { recursive: true });
    writeFileSync(path.join(dir, 'deleting', 'old-task-1234abcd-999999999-k2', 'task.db'), 'secret bytes');
    mkdirSync(path.join(dir, 'deleting', `live-task-1234abcd-${process.pid}-k3`), { recursive: true });
    const reopened = await WorkspaceStore.open(dir, seen.notify, { checkpointDelayMs: 0, redactor });
    assert.deepEqual(readdirSync(path.join(dir, 'deleting')), [`live-task-1234abcd-${process.pid}-k3`]);
    reopened.close();
    assert.deepEqual(seen.messages, []);
  });

  it('of two durable writes of one file in flight, the later one stays, whichever fsync ends first; no temp file is left', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    const file = path.join(dir, 'index.json');
    let writes = 0;
    const first = ++writes;
    const a = writeFileAtomicAsync(file, 'first', () => first === writes);
    const second = ++writes;
    const b = writeFileAtomicAsync(file, 'second', () => second === writes);
    assert.deepEqual(await Promise.all([a, b]), [false, true]);
    assert.equal(readFileSync(file, 'utf8'), 'second');
    assert.deepEqual(readdirSync(dir), ['index.json']);
    // A temp file a closed window left behind (its process is gone) is removed when the store opens; a live one's is not.
    const storage = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    writeFileSync(path.join(storage, 'index.json.999999999-3.tmp'), 'left');
    writeFileSync(path.join(storage, `index.json.${process.pid}-7.tmp`), 'live');
    const ws = await WorkspaceStore.open(storage, collect().notify, { checkpointDelayMs: 0, redactor });
    assert.deepEqual(readdirSync(storage).filter((n) => n.endsWith('.tmp')), [`index.json.${process.pid}-7.tmp`]);
    ws.close();
  });

  it('closes the tasks not used for a while (a checkpoint each), keeps the ones in use, and opens a closed one again', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    const seen = collect();
    const ws = await WorkspaceStore.open(dir, seen.notify, { checkpointDelayMs: 60_000, redactor });
    const a = await ws.task('idle-a', 'first');
    await a.appendRecord('idle-a', { index: 0, role: 'user', content: 'first task' });
    const b = await ws.task('idle-b', 'second');
    await b.appendRecord('idle-b', { index: 0, role: 'user', content: 'second task' });
    const open = (ws as unknown as { stores: Map<string, unknown> }).stores;
    const now = Date.now();
    assert.deepEqual(ws.closeIdle(60_000, new Set(), now), [], 'nothing is idle yet');
    assert.deepEqual(ws.closeIdle(60_000, new Set(['idle-b']), now + 120_000), ['idle-a']);
    assert.deepEqual([...open.keys()], ['idle-b'], 'the task in use stays open');
    // Closed with a checkpoint: its database holds the record without the journal.
    assert.ok(existsSync(path.join(ws.folderOf('idle-a'), 'task.db')));
    const idle = ws.sessions().find((t) => t.id === 'idle-a');
    assert.deepEqual(idle && { id: idle.id, title: idle.title, records: idle.records }, { id: 'idle-a', title: 'first', records: 1 });
    const again = await ws.task('idle-a');
    assert.notEqual(again, a);
    assert.equal(again.records('idle-a')[0]!.content, 'first task');
    await again.appendRecord('idle-a', { index: 1, role: 'assistant', content: 'on it' });
    assert.equal(again.recordCount('idle-a'), 2);
    ws.close();
    assert.deepEqual(seen.messages, []);
  });

  it('rebuilds a lost or unreadable index from the task folders, and says so', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    const ws = await WorkspaceStore.open(dir, () => undefined, { checkpointDelayMs: 0, redactor });
    await (await ws.task('t1', 'first')).appendRecord('t1', { index: 0, role: 'user', content: 'hello' });
    ws.close();
    writeFileSync(ws.indexFile, '{"broken');
    const seen = collect();
    const again = await WorkspaceStore.open(dir, seen.notify, { checkpointDelayMs: 0, redactor });
    assert.deepEqual(again.sessions().map((s) => [s.id, s.title]), [['t1', 'first']]);
    assert.equal(seen.messages.length, 1);
    assert.match(seen.messages[0]![1], /task index .* could not be read .* rebuilt from the task folders/);
    again.close();
  });

  it('deletes a task by removing its folder: no canary byte is left in any file of the store', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    const canary = 'CANARY-ws-51d2e0';
    const ws = await WorkspaceStore.open(dir, () => undefined, { checkpointDelayMs: 0, redactor });
    const gone = await ws.task('gone', `title ${canary}`);
    await gone.appendRecord('gone', { index: 0, role: 'user', content: `remember ${canary}` });
    await gone.appendRecord('gone', { index: 1, role: 'tool', content: '', toolName: 'Read', toolCallId: 'r1', toolOutput: `${canary}\n`.repeat(5000) });
    gone.checkpoint();
    await (await ws.task('kept', 'kept')).appendRecord('kept', { index: 0, role: 'user', content: 'other work' });
    assert.equal(await ws.deleteSession('gone'), true);
    assert.equal(await ws.deleteSession('gone'), false);
    ws.close();
    for (const f of filesUnder(dir)) assert.ok(!readFileSync(f).includes(canary), `${path.relative(dir, f)} still holds the canary`);
    const again = await WorkspaceStore.open(dir, () => undefined, { checkpointDelayMs: 0, redactor });
    assert.deepEqual(again.sessions().map((s) => s.id), ['kept']);
    again.close();
  });

  it('migrates a single-file store of an earlier version: every task projects byte-identically, then the old file goes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    const legacy = await SessionStore.open(path.join(dir, LEGACY_STORE_FILE_NAME), { checkpointDelayMs: 0, redactor });
    const budget = defaultBudget({ window: 4_000, reserve: 500 });
    const before = new Map<string, string>();
    for (const id of ['chat-1', 'import-2']) {
      const b = new RecordBuilder();
      for (let i = 0; i < 12; i++) b.user(`Step ${i} of ${id}: check module ${i}.`).step(`Checked module ${i}.`, [{ name: 'Read', input: { file_path: `src/m${i}.ts` }, output: `export const m${i} = ${i};\n`.repeat(30 + (i === 3 ? 2000 : 0)) }]);
      legacy.createSession(id, `title of ${id}`);
      const run = await replay(b.records, { budget, counter: new CharRatioTokenCounter(), snapshots: legacy.snapshotStore(id), tools: legacy.toolStore(id), persist: (r) => legacy.appendRecord(id, r), redactor });
      before.set(id, JSON.stringify(run.messages));
    }
    legacy.close();
    const seen = collect();
    const ws = await WorkspaceStore.open(dir, seen.notify, { checkpointDelayMs: 0, redactor });
    assert.equal(seen.messages.length, 1, JSON.stringify(seen.messages));
    assert.match(seen.messages[0]![1], /moved 2 task\(s\) .* to one database per task/);
    assert.ok(!readdirSync(dir).some((n) => n.startsWith(LEGACY_STORE_FILE_NAME)), 'the legacy files are gone');
    for (const id of ['chat-1', 'import-2']) {
      const store = await ws.task(id);
      const records = store.records(id, { loadPayloads: true });
      const run = await replay(records, { budget, counter: new CharRatioTokenCounter(), snapshots: store.snapshotStore(id), tools: store.toolStore(id), resumeFrom: records.length, redactor });
      assert.equal(JSON.stringify(run.messages), before.get(id), `${id} projects as before`);
    }
    assert.deepEqual(ws.sessions().map((s) => s.title), ['title of chat-1', 'title of import-2']);
    ws.close();
  });

  it('migrates a single-file store written at every earlier schema version', async () => {
    const SQL = await loadSqlJs();
    for (let version = 1; version < SCHEMA_VERSION; version++) {
      const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
      const db = new SQL.Database();
      for (let v = 0; v < version; v++) db.exec(MIGRATIONS[v]!);
      db.exec(`PRAGMA user_version = ${version}`);
      db.run(`INSERT INTO task (task_id, title) VALUES ('old', 'from v${version}')`);
      db.run(`INSERT INTO task_message (task_id, idx, role, content) VALUES ('old', 0, 'user', 'kept across the migration')`);
      db.run(`INSERT INTO task_message (task_id, idx, role, content, tool_name, tool_call_id, tool_output) VALUES ('old', 1, 'tool', '', 'Read', 'r1', 'file text')`);
      writeFileSync(path.join(dir, LEGACY_STORE_FILE_NAME), db.export());
      db.close();
      const seen = collect();
      const ws = await WorkspaceStore.open(dir, seen.notify, { checkpointDelayMs: 0, redactor });
      assert.match(seen.messages.map(([, m]) => m).join('\n'), /moved 1 task\(s\)/, `from v${version}`);
      const records = (await ws.task('old')).records('old');
      assert.deepEqual(records.map((r) => r.content), ['kept across the migration', ''], `from v${version}`);
      assert.equal(records[1]!.toolOutput, 'file text');
      assert.deepEqual(ws.sessions().map(({ id, title, records }) => ({ id, title, records })), [{ id: 'old', title: `from v${version}`, records: 2 }]);
      ws.close();
    }
  });

  it('finishes a migration that was interrupted part-way through a task', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    const legacy = await SessionStore.open(path.join(dir, LEGACY_STORE_FILE_NAME), { checkpointDelayMs: 0, redactor });
    legacy.createSession('t', 'half moved');
    for (let i = 0; i < 6; i++) await legacy.appendRecord('t', { index: i, role: i % 2 ? 'assistant' : 'user', content: `record ${i}` });
    legacy.snapshotStore('t').put('meta:anchor', { type: 'anchor', anchor: { real: 10, estimate: 9 } });
    legacy.close();
    // The first open was killed after copying three records of the task.
    const first = await WorkspaceStore.open(mkdtempSync(path.join(tmpdir(), 'ck-ws-')), () => undefined, { checkpointDelayMs: 0, redactor });
    const folder = path.join(dir, 'tasks', path.basename(first.folderOf('t')));
    first.close();
    mkdirSync(folder, { recursive: true });
    const partial = await SessionStore.open(path.join(folder, 'task.db'), { checkpointDelayMs: 0, redactor });
    partial.createSession('t', 'half moved');
    for (let i = 0; i < 3; i++) await partial.appendRecord('t', { index: i, role: i % 2 ? 'assistant' : 'user', content: `record ${i}` });
    partial.abandon();
    const seen = collect();
    const ws = await WorkspaceStore.open(dir, seen.notify, { checkpointDelayMs: 0, redactor });
    assert.match(seen.messages.map(([, m]) => m).join('\n'), /moved 1 task\(s\)/);
    const store = await ws.task('t');
    assert.deepEqual(store.records('t').map((r) => r.content), [0, 1, 2, 3, 4, 5].map((i) => `record ${i}`));
    assert.deepEqual(store.snapshotStore('t').get('meta:anchor'), { type: 'anchor', anchor: { real: 10, estimate: 9 } });
    assert.ok(!existsSync(path.join(dir, LEGACY_STORE_FILE_NAME)));
    ws.close();
  });

  it('keeps the legacy store when a migrated task does not read back the same', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    const legacy = await SessionStore.open(path.join(dir, LEGACY_STORE_FILE_NAME), { checkpointDelayMs: 0, redactor });
    legacy.createSession('t', 'x');
    await legacy.appendRecord('t', { index: 0, role: 'user', content: 'hello' });
    legacy.close();
    // A task folder already holding something else under the same id: the copy cannot match.
    const pre = await WorkspaceStore.open(mkdtempSync(path.join(tmpdir(), 'ck-ws-')), () => undefined, { checkpointDelayMs: 0, redactor });
    const folder = pre.folderOf('t');
    pre.close();
    mkdirSync(path.join(dir, 'tasks', path.basename(folder)), { recursive: true });
    const clash = await SessionStore.open(path.join(dir, 'tasks', path.basename(folder), 'task.db'), { checkpointDelayMs: 0, redactor });
    clash.createSession('t', 'x');
    await clash.appendRecord('t', { index: 0, role: 'user', content: 'something else' });
    clash.close();
    const seen = collect();
    const ws = await WorkspaceStore.open(dir, seen.notify, { checkpointDelayMs: 0, redactor });
    assert.ok(seen.messages.some(([, m]) => /kept its earlier session store .* did not read back the same/.test(m)), JSON.stringify(seen.messages));
    assert.ok(existsSync(path.join(dir, LEGACY_STORE_FILE_NAME)));
    ws.close();
  });

  it('deleting a task also deletes it from a legacy store kept after a migration that did not verify', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    const canary = 'CANARY-legacy-7a1f';
    const legacy = await SessionStore.open(path.join(dir, LEGACY_STORE_FILE_NAME), { checkpointDelayMs: 0, redactor });
    legacy.createSession('gone', 'x');
    await legacy.appendRecord('gone', { index: 0, role: 'user', content: `hello ${canary}` });
    legacy.createSession('clash', 'x');
    await legacy.appendRecord('clash', { index: 0, role: 'user', content: 'hello' });
    legacy.close();
    // A task folder already holding something else under one id: that task cannot match, so the legacy store is kept.
    const folder = path.join(dir, 'tasks', path.basename((await WorkspaceStore.open(mkdtempSync(path.join(tmpdir(), 'ck-ws-')), () => undefined, { redactor })).folderOf('clash')));
    mkdirSync(folder, { recursive: true });
    const clash = await SessionStore.open(path.join(folder, 'task.db'), { checkpointDelayMs: 0, redactor });
    clash.createSession('clash', 'x');
    await clash.appendRecord('clash', { index: 0, role: 'user', content: 'something else' });
    clash.close();
    const ws = await WorkspaceStore.open(dir, () => undefined, { checkpointDelayMs: 0, redactor });
    assert.ok(existsSync(path.join(dir, LEGACY_STORE_FILE_NAME)), 'the legacy store is kept');
    assert.equal(await ws.deleteSession('gone'), true);
    ws.close();
    for (const f of filesUnder(dir)) assert.ok(!readFileSync(f).includes(canary), `${path.relative(dir, f)} still holds the canary`);
    const again = await WorkspaceStore.open(dir, () => undefined, { checkpointDelayMs: 0, redactor });
    assert.ok(!again.sessions().some((t) => t.id === 'gone'), 'the next open does not migrate the deleted task back');
    again.close();
  });

  it('keeps a legacy store that had to be repaired to open, damaged copy included, and does not migrate it again', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    const file = path.join(dir, LEGACY_STORE_FILE_NAME);
    const legacy = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    legacy.createSession('t', 'x');
    for (let i = 0; i < 5; i++) await legacy.appendRecord('t', { index: i, role: i % 2 ? 'assistant' : 'user', content: `line ${i}` });
    legacy.close();
    writeFileSync(file, 'not a database');
    rmSync(`${file}.prev`, { force: true });
    const seen = collect();
    const ws = await WorkspaceStore.open(dir, seen.notify, { checkpointDelayMs: 0, redactor });
    assert.deepEqual((await ws.task('t')).records('t').map((r) => r.content), ['line 0', 'line 1', 'line 2', 'line 3', 'line 4']);
    ws.close();
    assert.ok(seen.messages.some(([, m]) => /kept the earlier store and its damaged copies/.test(m)), JSON.stringify(seen.messages));
    assert.ok(existsSync(`${file}.damaged-1`), 'the damaged original is not deleted');
    assert.equal(readFileSync(`${file}.damaged-1`, 'utf8'), 'not a database');
    const again = collect();
    (await WorkspaceStore.open(dir, again.notify, { checkpointDelayMs: 0, redactor })).close();
    assert.deepEqual(again.messages, [], 'a kept store is not migrated (and reported) again');
  });

  it('a task another window created stays in the index when this window writes it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    const a = await WorkspaceStore.open(dir, () => undefined, { checkpointDelayMs: 0, redactor });
    const b = await WorkspaceStore.open(dir, () => undefined, { checkpointDelayMs: 0, redactor });
    await (await b.task('made-in-b', 'B')).appendRecord('made-in-b', { index: 0, role: 'user', content: 'from b' });
    b.close();
    await (await a.task('made-in-a', 'A')).appendRecord('made-in-a', { index: 0, role: 'user', content: 'from a' });
    await a.deleteSession('made-in-a');
    a.close();
    const fresh = await WorkspaceStore.open(dir, () => undefined, { checkpointDelayMs: 0, redactor });
    assert.deepEqual(fresh.sessions().map((t) => t.id), ['made-in-b']);
    fresh.close();
  });

  it('a task database too large to read is refused with its reason and left where it is', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-store-'));
    const file = path.join(dir, 'task.db');
    writeFileSync(file, '');
    truncateSync(file, DATABASE_READ_LIMIT_BYTES + 1); // sparse: nothing is written
    await assert.rejects(SessionStore.open(file, { checkpointDelayMs: 0, redactor }), (error: Error) => error instanceof StoreTooLargeError && /more than the \d+ MB this version reads .* left as it is/.test(error.message));
    assert.equal(statSync(file).size, DATABASE_READ_LIMIT_BYTES + 1);
    assert.deepEqual(readdirSync(dir).filter((n) => /damaged/.test(n)), [], 'nothing is moved aside');
    // The lock was given back: the next open of a smaller file works.
    truncateSync(file, 0);
    (await SessionStore.open(file, { checkpointDelayMs: 0, redactor })).close();
  });

  it('a damaged task database is rebuilt and reported once, naming the task', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    const host = new WorkspaceStoreHost(dir, () => undefined, { redactor });
    const ws = await host.store();
    await (await ws.task('s', 't')).appendRecord('s', { index: 0, role: 'user', content: 'keep me' });
    host.dispose();
    await new Promise((resolve) => setImmediate(resolve));
    const file = path.join(ws.folderOf('s'), 'task.db');
    writeFileSync(file, 'not a database');
    rmSync(`${file}.prev`, { force: true });
    const seen = collect();
    const again = new WorkspaceStoreHost(dir, seen.notify, { redactor });
    const store = await (await again.store()).task('s');
    assert.equal(seen.messages.length, 1, JSON.stringify(seen.messages));
    assert.equal(seen.messages[0]![0], 'error');
    assert.match(seen.messages[0]![1], /damaged .* moved to .*task\.db\.damaged-1 .* rebuilt from the journal: 1 records in 1 session.* \(task s\)/);
    assert.equal(store.records('s')[0]!.content, 'keep me');
    again.dispose();
  });

  it('a second window gets a warning and reads a task the first one writes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    const one = new WorkspaceStoreHost(dir, () => undefined, { redactor });
    await (await one.store()).task('s', 't');
    const seen = collect();
    const two = new WorkspaceStoreHost(dir, seen.notify, { redactor });
    assert.equal((await (await two.store()).task('s')).mode, 'reader');
    assert.equal(seen.messages.length, 1, JSON.stringify(seen.messages));
    assert.equal(seen.messages[0]![0], 'warning');
    assert.match(seen.messages[0]![1], /read-only/);
    two.dispose();
    one.dispose();
  });
});
