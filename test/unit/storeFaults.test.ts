/**
 * A store under a faulty disk (issue 14): the journal is the truth and it is
 * bounded; a database missing, empty, truncated or damaged comes back from the
 * previous checkpoint and the journal; a damaged journal line is skipped and
 * named; a row changed on disk is served from an intact copy; deletion leaves
 * no byte of the session in any file beside the store.
 */
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { RawRecord } from '../../src/core/types';
import { SessionStore } from '../../src/store/sessionStore';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

function tempBase(): string {
  return path.join(mkdtempSync(path.join(tmpdir(), 'ck-faults-')), 'task.db');
}

function records(n: number, text = 'line'): RawRecord[] {
  return Array.from({ length: n }, (_, i) => ({ index: i, role: i % 2 ? 'assistant' : 'user', content: `${text} ${i}` }) as RawRecord);
}

async function written(file: string, n: number, checkpointEvery = 0): Promise<RawRecord[]> {
  const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
  store.createSession('s', 'faults');
  const all = records(n);
  for (const r of all) {
    await store.appendRecord('s', r);
    if (checkpointEvery && r.index % checkpointEvery === checkpointEvery - 1) store.checkpoint();
  }
  store.close();
  return all;
}

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

describe('store faults', function () {
  this.timeout(30_000);

  for (const [fault, harm] of [
    ['truncated to 0 bytes', (f: string) => truncateSync(f, 0)],
    ['deleted', (f: string) => rmSync(f)],
    ['truncated mid-way', (f: string) => truncateSync(f, Math.floor(statSync(f).size / 2))],
    ['overwritten with garbage', (f: string) => writeFileSync(f, 'not a database at all')],
  ] as const) {
    it(`brings back every acknowledged record when the database is ${fault}, and says so once`, async () => {
      const file = tempBase();
      const all = await written(file, 120, 25);
      harm(file);
      const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
      assert.deepEqual(store.records('s'), all);
      const said = store.notices.filter((n) => /rebuilt from/.test(n));
      assert.equal(said.length, 1, JSON.stringify(store.notices));
      assert.match(said[0]!, /120 records in 1 session/);
      store.close();
      const again = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
      assert.deepEqual(again.notices, [], 'the next open is quiet');
      assert.deepEqual(again.records('s'), all);
      again.close();
    });
  }

  it('keeps the journal bounded: what the previous checkpoint holds is dropped from the archive', async () => {
    const file = tempBase();
    await written(file, 400, 50);
    const archive = readFileSync(`${file}.journal.archive`, 'utf8').split('\n').filter((l) => l.includes('"s":'));
    assert.ok(archive.length <= 100, `the archive holds ${archive.length} entries after 8 checkpoints of 50`);
    const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.equal(store.records('s').length, 400);
    store.close();
  });

  it('skips a damaged journal line, names it, applies the lines after it, and marks the lost record', async () => {
    const file = tempBase();
    const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    store.createSession('s', 'faults');
    const all = records(10);
    for (const r of all) await store.appendRecord('s', r);
    store.abandon(); // a kill: nothing checkpointed
    const journal = `${file}.journal`;
    const lines = readFileSync(journal, 'utf8').split('\n');
    const at = lines.findIndex((l) => l.includes('"line 4"'));
    lines[at] = lines[at]!.replace('line 4', 'line X');
    writeFileSync(journal, lines.join('\n'));
    const reopened = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    const got = reopened.records('s');
    assert.equal(got.length, 10);
    assert.deepEqual(got.slice(0, 4), all.slice(0, 4), 'every record before the damaged line is back');
    assert.deepEqual(got.slice(5), all.slice(5), 'the lines after it whose checksums hold are applied');
    assert.match(got[4]!.content, /record 4 was lost/);
    assert.ok(reopened.notices.some((n) => new RegExp(`${journal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} has a damaged line ${at + 1} \\(CRC mismatch\\)`).test(n)), JSON.stringify(reopened.notices));
    assert.ok(reopened.notices.some((n) => /Record 4 of session s could not be recovered/.test(n)));
    await reopened.appendRecord('s', { index: 10, role: 'user', content: 'still writable' });
    reopened.close();
  });

  it('puts a lost record back in its marker\'s place, durably, and never rewrites a record that was not lost', async () => {
    const file = tempBase();
    const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    store.createSession('s', 'faults');
    const all = records(6);
    for (const r of all) await store.appendRecord('s', r);
    store.abandon();
    const journal = `${file}.journal`;
    writeFileSync(journal, readFileSync(journal, 'utf8').replace('line 2', 'line Z'));
    const damaged = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.deepEqual(damaged.lostRecords('s'), [2]);
    await assert.rejects(damaged.restoreRecord('s', all[3]!), /record 3 of s was not lost: a stored record is never rewritten/);
    await damaged.restoreRecord('s', all[2]!);
    assert.deepEqual(damaged.lostRecords('s'), []);
    assert.deepEqual(damaged.records('s'), all);
    await assert.rejects(damaged.restoreRecord('s', all[2]!), /was not lost/);
    damaged.abandon(); // a kill again: the restore is in the journal
    const again = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.deepEqual(again.records('s'), all);
    assert.deepEqual(again.lostRecords('s'), []);
    again.checkpoint();
    again.close();
    const checkpointed = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.deepEqual([checkpointed.records('s'), checkpointed.lostRecords('s')], [all, []]);
    checkpointed.close();
  });

  it('serves a record changed on disk from the journal, and says so', async () => {
    const file = tempBase();
    const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    store.createSession('s', 'faults');
    await store.appendRecord('s', { index: 0, role: 'user', content: 'run the suite' });
    await store.appendRecord('s', { index: 1, role: 'tool', content: '', toolName: 'Bash', toolCallId: 't1', toolOutput: 'ALL 42 TESTS PASSED' });
    store.checkpoint();
    store.abandon();
    // One byte changed inside the stored output: SQLite's own check does not see it.
    const bytes = readFileSync(file);
    const at = bytes.indexOf(Buffer.from('ALL 42 TESTS'));
    assert.ok(at > 0);
    bytes[at + 4] = '7'.charCodeAt(0);
    writeFileSync(file, bytes);
    const reopened = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.equal(reopened.records('s')[1]!.toolOutput, 'ALL 42 TESTS PASSED');
    assert.ok(reopened.notices.some((n) => /record 1 of session s does not match its checksum/.test(n)), JSON.stringify(reopened.notices));
    reopened.close();
  });

  it('a stored tool output changed on disk is served behind a warning, a missing one as a marker; each is reported once', async () => {
    const file = tempBase();
    const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    store.createSession('s', 'payloads');
    const big = (tag: string): string => `${tag} output line\n`.repeat(4000);
    await store.appendRecord('s', { index: 0, role: 'tool', content: '', toolName: 'Read', toolCallId: 'a', toolOutput: big('first') });
    await store.appendRecord('s', { index: 1, role: 'tool', content: '', toolName: 'Read', toolCallId: 'b', toolOutput: big('second') });
    store.close();
    const dir = `${file}.payloads`;
    const [one, two] = readdirSync(dir).filter((n) => /^[0-9a-f]{64}$/.test(n)).map((n) => path.join(dir, n));
    const changed = readFileSync(one!, 'utf8').includes('first') ? one! : two!;
    const missing = changed === one ? two! : one!;
    writeFileSync(changed, readFileSync(changed, 'utf8').replace('first output line', 'FORGED output line'));
    rmSync(missing);
    const again = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    const notices: string[] = [];
    again.onNotice((m) => notices.push(m));
    const out = again.records('s', { loadPayloads: true }).map((r) => r.toolOutput ?? '');
    assert.match(out[0]!, /^\[warning: this output was changed on disk after it was recorded/);
    assert.match(out[0]!, /FORGED output line/);
    assert.match(out[1]!, /^\[tool output lost: its stored copy [0-9a-f]{64} is missing/);
    again.records('s', { loadPayloads: true });
    assert.equal(notices.length, 2, JSON.stringify(notices));
    assert.match(notices.join('\n'), /record 0 of session s was changed on disk/);
    assert.match(notices.join('\n'), /record 1 of session s is missing/);
    again.close();
  });

  it('deleting a session leaves no byte of it in any file: damaged copies, the previous checkpoint and temp files included', async () => {
    const file = tempBase();
    const canary = 'CANARY-7f3a9c-do-not-keep';
    const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    store.createSession('gone', 'to delete');
    store.createSession('kept', 'to keep');
    await store.appendRecord('gone', { index: 0, role: 'user', content: `remember ${canary}` });
    await store.appendRecord('kept', { index: 0, role: 'user', content: 'an unrelated task' });
    store.checkpoint();
    store.abandon();
    // A database moved aside as damaged earlier, and a payload write killed mid-way.
    writeFileSync(`${file}.damaged-1`, readFileSync(file));
    writeFileSync(file, 'garbage');
    const payloads = `${file}.payloads`;
    mkdirSync(payloads, { recursive: true });
    writeFileSync(path.join(payloads, `.tmp-1-abc`), `partial ${canary}`);
    const reopened = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.equal(await reopened.deleteSession('gone'), true);
    reopened.close();
    const dir = path.dirname(file);
    for (const f of filesUnder(dir)) assert.ok(!readFileSync(f).includes(canary), `${path.basename(f)} still holds the canary`);
    const again = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    assert.deepEqual(again.sessions().map((s) => s.id), ['kept']);
    again.close();
  });

  it('refuses to grow a task past its limit with a message, before the 2 GiB cliff', async () => {
    const { DATABASE_LIMIT_BYTES } = await import('../../src/store/checkpoints');
    assert.ok(DATABASE_LIMIT_BYTES < 2 ** 31 / 1.5, 'the limit leaves room below what one read can take');
    const file = tempBase();
    const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    store.createSession('s', 'big');
    (store as unknown as { checkpoints: { exportedSize: number } }).checkpoints.exportedSize = DATABASE_LIMIT_BYTES + 1;
    await assert.rejects(store.appendRecord('s', { index: 0, role: 'user', content: 'one more' }), /at its limit of 1024 MB: nothing more is recorded in this task; start a new task/);
    store.close();
  });
});
