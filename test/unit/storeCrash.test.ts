/**
 * kill -9 at random instants while `context-keeper replay --db` runs: every
 * rerun resumes, and the final projection equals the one of an uninterrupted
 * run. Uses the built CLI (npm test builds before it runs the specs).
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'dist', 'cli.js');
const sample = path.join(root, 'test', 'fixtures', 'sample-session.jsonl');
const budget = ['--window', '16000', '--reserve', '2000'];

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
});
