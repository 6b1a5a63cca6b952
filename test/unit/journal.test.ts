import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { crc32 } from '../../src/store/checksum';
import { Journal, JournalWriteError, type JournalIo } from '../../src/store/journal';
import { encodeJournalLine } from '../../src/store/journalFormat';

const APPENDER = path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'store', 'journalAppender.js');

describe('store journal', function () {
  let root: string;
  let n = 0;
  const fresh = (): string => path.join(root, `s${++n}`, 'session.db');

  before(() => {
    root = fs.mkdtempSync(path.join(tmpdir(), 'ck-journal-'));
  });
  after(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('computes the standard CRC-32 with the native and the table implementation', () => {
    assert.equal(crc32('123456789').toString(16), 'cbf43926');
    assert.equal(crc32('123456789', true).toString(16), 'cbf43926');
    const s = 'ünïcödé ✓ 😀 {"a":[1,2]}';
    assert.equal(crc32(s, true), crc32(s));
  });

  it('appends, reads back, and keeps seq across reopen', () => {
    const base = fresh();
    const j = Journal.open(base);
    assert.equal(j.lastSeq, 0);
    assert.deepEqual(j.readCurrent(0), []);
    assert.equal(j.append('t1', 'add', { x: 1 }), 1);
    assert.equal(j.append('t2', 'add', 'two'), 2);
    assert.equal(j.append('t1', 'del', undefined), 3);
    assert.deepEqual(j.readCurrent(0), [
      { seq: 1, task: 't1', op: 'add', data: { x: 1 } },
      { seq: 2, task: 't2', op: 'add', data: 'two' },
      { seq: 3, task: 't1', op: 'del', data: null },
    ]);
    assert.deepEqual(
      j.readCurrent(1).map((e) => e.seq),
      [2, 3],
    );
    j.close();

    const text = fs.readFileSync(`${base}.journal`, 'utf8');
    const lines = text.split('\n');
    assert.equal(lines.length, 4);
    assert.equal(lines[3], '');
    const first = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.deepEqual(Object.keys(first), ['s', 't', 'o', 'd', 'c']);
    assert.equal(first.c, crc32(JSON.stringify([1, 't1', 'add', { x: 1 }])).toString(16).padStart(8, '0'));
    assert.equal(lines[0] + '\n', encodeJournalLine(1, 't1', 'add', { x: 1 }));

    const k = Journal.open(base);
    assert.equal(k.lastSeq, 3);
    assert.deepEqual(k.repairs, []);
    assert.deepEqual(k.skipped, []);
    assert.equal(k.append('t3', 'add', [1, 'ü', '😀', '\n\u2028']), 4);
    assert.deepEqual(k.readCurrent(3)[0]?.data, [1, 'ü', '😀', '\n\u2028']);
    k.close();
  });

  it('rotates into the archive; readAll covers both; seq continues after rotation and reopen', () => {
    const base = fresh();
    const j = Journal.open(base);
    for (let i = 1; i <= 5; i++) j.append('t', 'op', i);
    j.rotate();
    assert.deepEqual(j.readCurrent(0), []);
    assert.equal(j.size().current, 0);
    assert.ok(j.size().archive > 0);
    j.append('t', 'op', 6);
    assert.deepEqual(
      j.readAll().map((e) => e.data),
      [1, 2, 3, 4, 5, 6],
    );
    j.rotate();
    j.append('t', 'op', 7);
    j.close();

    const k = Journal.open(base);
    assert.equal(k.lastSeq, 7);
    assert.deepEqual(
      k.readCurrent(0).map((e) => e.seq),
      [7],
    );
    assert.deepEqual(
      k.readAll().map((e) => e.seq),
      [1, 2, 3, 4, 5, 6, 7],
    );
    assert.equal(k.append('t', 'op', 8), 8);
    k.close();
  });

  it('tolerates a crash between the two steps of rotate (duplicates deduped by seq)', () => {
    const base = fresh();
    const j = Journal.open(base);
    for (let i = 1; i <= 3; i++) j.append('t', 'op', i);
    j.close();
    // Step 1 done, step 2 not: the archive holds the same lines as the current segment.
    fs.copyFileSync(`${base}.journal`, `${base}.journal.archive`);
    const k = Journal.open(base);
    assert.equal(k.lastSeq, 3);
    assert.deepEqual(
      k.readAll().map((e) => e.seq),
      [1, 2, 3],
    );
    k.rotate(); // appends the duplicates once more; readers still see each seq once
    k.append('t', 'op', 4);
    assert.deepEqual(
      k.readAll().map((e) => e.seq),
      [1, 2, 3, 4],
    );
    k.close();
  });

  it('purgeTask removes a task from both files and seq never goes backwards', () => {
    const base = fresh();
    const j = Journal.open(base);
    j.append('keep', 'a', 1);
    j.append('gone', 'a', 2);
    j.rotate();
    j.append('keep', 'b', 3);
    j.append('gone', 'b', 4); // the highest seq belongs to the purged task
    j.purgeTask('gone');
    assert.deepEqual(
      j.readAll().map((e) => [e.seq, e.task]),
      [
        [1, 'keep'],
        [3, 'keep'],
      ],
    );
    assert.deepEqual(
      j.readCurrent(0).map((e) => e.seq),
      [3],
    );
    assert.ok(!fs.readFileSync(`${base}.journal`, 'utf8').includes('"gone"'));
    assert.ok(!fs.readFileSync(`${base}.journal.archive`, 'utf8').includes('"gone"'));
    assert.ok(!fs.existsSync(`${base}.journal.tmp`) && !fs.existsSync(`${base}.journal.archive.tmp`));
    assert.equal(j.append('keep', 'c', 5), 5); // the fd was reopened on the new file
    j.close();

    const k = Journal.open(base);
    assert.deepEqual(k.skipped, []);
    assert.deepEqual(
      k.readAll().map((e) => e.seq),
      [1, 3, 5],
    );
    k.purgeTask('keep');
    k.close();
    const m = Journal.open(base);
    assert.deepEqual(m.readAll(), []);
    assert.equal(m.lastSeq, 5, 'the high-water mark survives a purge of every entry');
    assert.equal(m.append('x', 'y', null), 6);
    m.close();
  });

  it('ensureSeqAtLeast keeps seq above a checkpoint that outlived the journal files', () => {
    const base = fresh();
    const j = Journal.open(base);
    j.ensureSeqAtLeast(41);
    j.ensureSeqAtLeast(7); // never lowers
    assert.equal(j.append('t', 'op', 'x'), 42);
    j.close();
    const k = Journal.open(base);
    assert.equal(k.lastSeq, 42);
    assert.deepEqual(
      k.readCurrent(41).map((e) => e.seq),
      [42],
    );
    k.close();
  });

  it('repairs a torn last line by truncating it, and reports it', () => {
    const base = fresh();
    const j = Journal.open(base);
    j.append('t', 'op', 'one');
    j.append('t', 'op', 'two');
    j.close();
    const good = fs.statSync(`${base}.journal`).size;
    const line = encodeJournalLine(3, 't', 'op', 'three');
    fs.appendFileSync(`${base}.journal`, line.slice(0, Math.floor(line.length / 2)));

    const k = Journal.open(base);
    assert.equal(k.repairs.length, 1);
    assert.equal(k.repairs[0]!.file, `${base}.journal`);
    assert.equal(k.repairs[0]!.truncatedBytes, Math.floor(line.length / 2));
    assert.match(k.repairs[0]!.reason, /torn/);
    assert.equal(fs.statSync(`${base}.journal`).size, good);
    assert.equal(k.lastSeq, 2);
    assert.equal(k.append('t', 'op', 'three again'), 3);
    k.close();
    const m = Journal.open(base);
    assert.deepEqual(m.repairs, []);
    assert.deepEqual(
      m.readCurrent(0).map((e) => e.data),
      ['one', 'two', 'three again'],
    );
    m.close();
  });

  it('keeps a complete but corrupt last line of the archive, and names it: written whole, it may have been acknowledged', () => {
    const base = fresh();
    const j = Journal.open(base);
    j.append('t', 'op', 1);
    j.append('t', 'op', 2);
    j.rotate();
    j.close();
    const arch = `${base}.journal.archive`;
    const before = fs.statSync(arch).size;
    const damaged = encodeJournalLine(3, 't', 'op', 3).replace('"d":3', '"d":4');
    fs.appendFileSync(arch, damaged);
    const k = Journal.open(base);
    assert.deepEqual(k.repairs, [], 'nothing is truncated');
    assert.equal(k.skipped.length, 1);
    assert.equal(k.skipped[0]!.file, arch);
    assert.match(k.skipped[0]!.reason, /CRC mismatch/);
    assert.equal(fs.statSync(arch).size, before + Buffer.byteLength(damaged));
    assert.equal(k.lastSeq, 2);
    assert.deepEqual(k.readAll().map((e) => e.data), [1, 2]);
    k.close();
  });

  it('skips and reports a line with a wrong CRC in the middle, keeping the lines after it', () => {
    const base = fresh();
    const j = Journal.open(base);
    for (let i = 1; i <= 3; i++) j.append('t', 'op', `v${i}`);
    j.close();
    const file = `${base}.journal`;
    const size = fs.statSync(file).size;
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"v2"', '"v9"'));

    const k = Journal.open(base);
    assert.deepEqual(k.skipped, [{ file, line: 2, reason: 'CRC mismatch' }]);
    assert.deepEqual(k.repairs, []);
    assert.equal(fs.statSync(file).size, size, 'a middle line is not truncated away');
    assert.deepEqual(
      k.readCurrent(0).map((e) => e.data),
      ['v1', 'v3'],
    );
    assert.equal(k.lastSeq, 3);
    k.close();
  });

  it('a read-only open never modifies the files and ignores a torn tail', () => {
    const base = fresh();
    const j = Journal.open(base);
    j.append('t', 'op', 1);
    j.append('t', 'op', 2);
    j.close();
    const file = `${base}.journal`;
    fs.appendFileSync(file, '{"s":3,"t":"t","o":"op","d":');
    const bytes = fs.readFileSync(file);
    const mtime = fs.statSync(file).mtimeMs;

    const r = Journal.open(base, { readOnly: true });
    assert.deepEqual(r.repairs, []);
    assert.equal(r.lastSeq, 2);
    assert.deepEqual(
      r.readCurrent(0).map((e) => e.seq),
      [1, 2],
    );
    assert.throws(() => r.append('t', 'op', 3), /read-only/);
    assert.throws(() => r.rotate(), /read-only/);
    assert.throws(() => r.purgeTask('t'), /read-only/);
    r.close();
    assert.deepEqual(fs.readFileSync(file), bytes);
    assert.equal(fs.statSync(file).mtimeMs, mtime);
    assert.ok(!fs.existsSync(`${base}.journal.archive`));

    const missing = fresh();
    const e = Journal.open(missing, { readOnly: true });
    assert.deepEqual(e.readAll(), []);
    e.close();
    assert.ok(!fs.existsSync(path.dirname(missing)), 'read-only open creates nothing');
  });

  it('a read-only reader sees entries appended later by the writer', () => {
    const base = fresh();
    const w = Journal.open(base);
    w.append('t', 'op', 1);
    const r = Journal.open(base, { readOnly: true });
    w.append('t', 'op', 2);
    assert.deepEqual(
      r.readCurrent(0).map((e) => e.seq),
      [1, 2],
    );
    assert.equal(r.lastSeq, 2);
    w.close();
    r.close();
  });

  it('a full disk (ENOSPC from /dev/full) throws a JournalWriteError naming the file', function () {
    if (!fs.existsSync('/dev/full')) this.skip();
    const base = fresh();
    fs.mkdirSync(path.dirname(base), { recursive: true });
    fs.symlinkSync('/dev/full', `${base}.journal`);
    const j = Journal.open(base);
    assert.throws(
      () => j.append('t', 'op', 'x'),
      (e: unknown) =>
        e instanceof JournalWriteError &&
        e.code === 'ENOSPC' &&
        e.file === `${base}.journal` &&
        e.message.includes(`${base}.journal`) &&
        e.message.includes('disk is full'),
    );
    assert.equal(j.lastSeq, 0, 'a failed append does not consume a seq');
    j.close();
  });

  it('a failed write is truncated back so no partial line stays, and later appends work', () => {
    const base = fresh();
    let failWrites = 0;
    let failTruncates = 0;
    const io: Partial<JournalIo> = {
      writeSync(fd, buffer, offset, length) {
        if (failWrites > 0) {
          failWrites--;
          // Half the line reaches the file, then the disk is full.
          fs.writeSync(fd, buffer, offset, Math.floor(length / 2));
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        }
        return fs.writeSync(fd, buffer, offset, length);
      },
      ftruncateSync(fd, len) {
        if (failTruncates > 0) {
          failTruncates--;
          throw Object.assign(new Error('EIO'), { code: 'EIO' });
        }
        fs.ftruncateSync(fd, len);
      },
    };
    const j = Journal.open(base, { io });
    j.append('t', 'op', 1);
    const good = fs.statSync(`${base}.journal`).size;

    failWrites = 1;
    assert.throws(
      () => j.append('t', 'op', 'lost'),
      (e: unknown) => e instanceof JournalWriteError && e.code === 'ENOSPC' && /disk is full/.test(e.message),
    );
    assert.equal(fs.statSync(`${base}.journal`).size, good, 'partial line truncated away');

    // Write fails and the truncate back fails too: the next append must clean up first.
    failWrites = 1;
    failTruncates = 1;
    assert.throws(() => j.append('t', 'op', 'lost'), JournalWriteError);
    assert.ok(fs.statSync(`${base}.journal`).size > good, 'the partial line is still there');
    assert.equal(j.append('t', 'op', 2), 2);
    j.close();

    const k = Journal.open(base);
    assert.deepEqual(k.repairs, []);
    assert.deepEqual(k.skipped, []);
    assert.deepEqual(
      k.readAll().map((e) => e.data),
      [1, 2],
    );
    k.close();
  });

  it('a failed archive write during rotate keeps the entries in the current segment', () => {
    const base = fresh();
    let fail = false;
    const io: Partial<JournalIo> = {
      writeSync(fd, buffer, offset, length) {
        if (fail) {
          fs.writeSync(fd, buffer, offset, 5);
          throw Object.assign(new Error('EROFS'), { code: 'EROFS' });
        }
        return fs.writeSync(fd, buffer, offset, length);
      },
    };
    const j = Journal.open(base, { io });
    j.append('t', 'op', 1);
    j.append('t', 'op', 2);
    fail = true;
    assert.throws(
      () => j.rotate(),
      (e: unknown) => e instanceof JournalWriteError && e.code === 'EROFS' && e.file === `${base}.journal.archive`,
    );
    fail = false;
    assert.equal(fs.statSync(`${base}.journal.archive`).size, 0);
    assert.deepEqual(
      j.readCurrent(0).map((e) => e.seq),
      [1, 2],
    );
    j.close();
  });

  it('loses no acknowledged entry when the writer is killed with SIGKILL at random instants', async function () {
    this.timeout(30_000);
    const runs = 6;
    let repaired = 0;
    let totalAcked = 0;
    for (let run = 0; run < runs; run++) {
      const base = fresh();
      fs.mkdirSync(path.dirname(base), { recursive: true });
      const child = spawn(process.execPath, [APPENDER, base, '23'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
      // Wait for the first acknowledgement, then kill after a random delay.
      const started = Date.now();
      while (!out.includes('\n') && Date.now() - started < 5000 && child.exitCode === null) {
        await new Promise((r) => setTimeout(r, 5));
      }
      assert.ok(out.includes('\n'), `appender did not start: ${err}`);
      await new Promise((r) => setTimeout(r, 50 + Math.floor(Math.random() * 400)));
      child.kill('SIGKILL');
      assert.equal(await exited, 'SIGKILL', err);

      const acked = out
        .split('\n')
        .slice(0, -1) // the last piece may be a partial number
        .map(Number);
      assert.ok(acked.length > 0);
      totalAcked += acked.length;
      const j = Journal.open(base);
      repaired += j.repairs.length;
      const all = j.readAll();
      const seqs = new Set(all.map((e) => e.seq));
      for (const s of acked) assert.ok(seqs.has(s), `acknowledged seq ${s} lost (run ${run})`);
      // Nothing was purged: the journal is exactly 1..lastSeq, each entry intact.
      assert.equal(j.lastSeq, all.length);
      all.forEach((e, i) => {
        assert.equal(e.seq, i + 1);
        assert.equal((e.data as { n: number }).n, e.seq);
      });
      assert.ok(j.lastSeq >= acked[acked.length - 1]!);
      assert.deepEqual(j.skipped, []);
      j.close();
    }
    console.log(`      kill -9: ${runs} runs, ${totalAcked} acknowledged appends checked, ${repaired} torn tails repaired`);
  });
});
