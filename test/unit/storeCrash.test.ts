/**
 * kill -9 at random instants while `context-keeper replay --db` runs: every
 * rerun resumes, and the final projection equals the one of an uninterrupted
 * run. Uses the built CLI (npm test builds before it runs the specs).
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'dist', 'cli.js');
const sample = path.join(root, 'test', 'fixtures', 'sample-session.jsonl');
const budget = ['--window', '16000', '--reserve', '2000'];
// The store's own code, compiled beside this spec: the test reads the killed store as the CLI would.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { SessionStore } = require(path.join(root, 'out', 'src', 'store', 'sessionStore.js')) as typeof import('../../src/store/sessionStore');

function run(args: string[]): { code: number | null; out: string; err: string; ms: number } {
  const t = Date.now();
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status, out: r.stdout, err: r.stderr, ms: Date.now() - t };
}

/**
 * Runs the CLI and kills it with SIGKILL once it has streamed `lines` step lines
 * (plus a few random milliseconds, to land anywhere inside the next step), or
 * lets it finish if it ends first.
 */
function killAfterLines(args: string[], lines: number, extraMs: number): Promise<{ signal: NodeJS.Signals | null; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    let seen = 0;
    let armed = false;
    child.stdout.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8').split('\n').length - 1;
      if (seen >= lines && !armed) {
        armed = true;
        setTimeout(() => child.kill('SIGKILL'), extraMs);
      }
    });
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
}

/** A small deterministic generator, so a failure can be replayed. */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

function projection(json: string): unknown {
  const p = JSON.parse(json) as Record<string, unknown>;
  return { tokens: p.tokens, messages: p.messages, summary: p.summary, notLoaded: p.notLoaded, artifacts: p.artifacts };
}

describe('session store: kill -9 during replay --db', function () {
  this.timeout(240_000);

  before(function () {
    if (!existsSync(cli)) this.skip();
  });

  it('resumes after 20 kills at random instants and ends with the uninterrupted projection', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-kill-'));
    const reference = run(['project', sample, ...budget, '--json']);
    assert.equal(reference.code, 0, reference.err);

    const cleanDb = path.join(dir, 'clean.db');
    const clean = run(['replay', sample, ...budget, '--db', cleanDb]);
    assert.equal(clean.code, 0, clean.err);
    const cleanProjection = run(['project', sample, ...budget, '--db', cleanDb, '--json']);
    assert.equal(cleanProjection.code, 0, cleanProjection.err);
    assert.deepEqual(projection(cleanProjection.out), projection(reference.out), 'a store changes nothing');

    const db = path.join(dir, 'killed.db');
    const random = lcg(20261129);
    let killed = 0;
    let progress: number[] = [];
    for (let k = 0; k < 20; k++) {
      const result = await killAfterLines(['replay', sample, ...budget, '--db', db], 1 + Math.floor(random() * 6), Math.floor(random() * 15));
      if (result.signal === 'SIGKILL') killed++;
      const sessions = run(['sessions', '--db', db, '--json']);
      const list = sessions.code === 0 && sessions.out.trim() ? (JSON.parse(sessions.out) as { records: number }[]) : [];
      progress.push(list[0]?.records ?? 0);
    }
    console.log(`      ${killed} of 20 runs killed; records stored after each: ${progress.join(",")}`);
    assert.ok(killed >= 15, `only ${killed} of 20 runs were killed before finishing (progress ${progress.join(',')})`);
    const finish = run(['replay', sample, ...budget, '--db', db]);
    assert.equal(finish.code, 0, finish.err);
    const final = run(['project', sample, ...budget, '--db', db, '--json']);
    assert.equal(final.code, 0, final.err);
    assert.deepEqual(projection(final.out), projection(reference.out));
    progress = progress.filter((p, i) => i === 0 || p !== progress[i - 1]);
    assert.ok(progress.length >= 3, `the kills should land at different points: ${progress.join(',')}`);
  });

  it('after 20 kills and one corrupted journal line: every record before it is back, the line is named, the resumed replay ends with the uninterrupted projection', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-kill-corrupt-'));
    const reference = run(['project', sample, ...budget, '--json']);
    assert.equal(reference.code, 0, reference.err);
    const cleanDb = path.join(dir, 'clean.db');
    assert.equal(run(['replay', sample, ...budget, '--db', cleanDb]).code, 0);
    const db = path.join(dir, 'killed.db');
    const random = lcg(20261201);
    for (let k = 0; k < 20; k++) await killAfterLines(['replay', sample, ...budget, '--db', db], 1 + Math.floor(random() * 6), Math.floor(random() * 15));

    // One record line of the journal (its current segment, else its archive) changed on disk: its checksum no longer holds.
    const recordLinesOf = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n') : []).map((l, i) => [l, i] as const).filter(([l]) => l.includes('"o":"record"'));
    const journal = recordLinesOf(`${db}.journal`).length > 0 ? `${db}.journal` : `${db}.journal.archive`;
    const lines = readFileSync(journal, 'utf8').split('\n');
    const recordLines = recordLinesOf(journal);
    assert.ok(recordLines.length >= 1, 'the journal holds a record line');
    const [line, at] = recordLines[Math.floor(recordLines.length / 2)]!;
    const index = (JSON.parse(line) as { d: { record: { index: number } } }).d.record.index;
    lines[at] = line.replace('"content":"', '"content":"#');
    writeFileSync(journal, lines.join('\n'));

    const clean = await SessionStore.open(cleanDb, { readOnly: true, redactor });
    const id = clean.sessions()[0]!.id;
    const expected = clean.records(id, { loadPayloads: true });
    clean.close();
    const damaged = await SessionStore.open(db, { checkpointDelayMs: 0, redactor });
    try {
      assert.ok(damaged.notices.some((n) => n.includes(`${journal} has a damaged line ${at + 1}`)), `the line is named: ${JSON.stringify(damaged.notices)}`);
      const got = damaged.records(id, { loadPayloads: true });
      assert.deepEqual(got.slice(0, index), expected.slice(0, index), 'every record before the damaged line is back');
      if (got.length > index && damaged.lostRecords(id).includes(index)) assert.match(got[index]!.content, new RegExp(`record ${index} was lost`));
    } finally {
      damaged.close();
    }

    const resumed = run(['replay', sample, ...budget, '--db', db]);
    assert.equal(resumed.code, 0, resumed.err);
    const final = run(['project', sample, ...budget, '--db', db, '--json']);
    assert.equal(final.code, 0, final.err);
    assert.deepEqual(projection(final.out), projection(reference.out));
    console.log(`      corrupted the journal line of record ${index}; the resumed replay said: ${resumed.err.trim().split('\n').filter(Boolean).join(' | ') || '(nothing)'}`);

    // A line in the middle of the journal (records after it hold): a marker stands in, and the resumed replay puts the record back.
    const early = path.join(dir, 'early.db');
    await killAfterLines(['replay', sample, ...budget, '--db', early], 4, 0);
    const earlyLines = readFileSync(`${early}.journal`, 'utf8').split('\n');
    const middle = earlyLines.map((l, i) => [l, i] as const).filter(([l]) => l.includes('"o":"record"'));
    assert.ok(middle.length >= 3, `a killed run leaves its records in the journal (${middle.length})`);
    const [victim, victimAt] = middle[1]!;
    const lostIndex = (JSON.parse(victim) as { d: { record: { index: number } } }).d.record.index;
    earlyLines[victimAt] = victim.replace('"content":"', '"content":"#');
    writeFileSync(`${early}.journal`, earlyLines.join('\n'));
    const again = run(['replay', sample, ...budget, '--db', early]);
    assert.equal(again.code, 0, again.err);
    assert.match(again.err, new RegExp(`put back 1 record\\(s\\) the store had lost \\(r${lostIndex}\\) from the transcript`));
    const earlyFinal = run(['project', sample, ...budget, '--db', early, '--json']);
    assert.deepEqual(projection(earlyFinal.out), projection(reference.out));
  });
});
