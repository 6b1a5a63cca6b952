/**
 * The background floor: the state machine on its own, then the engine with it —
 * the same view whether or not the summary was computed ahead, folds that buy
 * runway and never grow the context, and a head whose sent prefix survives a fold.
 */
import { strict as assert } from 'node:assert';
import { BackgroundTask, DelayedRunner, startLater, type BackgroundJob, type BackgroundRunner } from '../../src/core/background';
import { defaultBudget } from '../../src/core/budget';
import { replay } from '../../src/core/replay';
import { InMemorySnapshotStore } from '../../src/core/store';
import { CharRatioTokenCounter } from '../../src/core/tokens';
import type { RawRecord } from '../../src/core/types';
import { RecordBuilder } from './engineHarness';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

/** A runner whose jobs run only when the test says so. */
class ManualRunner implements BackgroundRunner {
  readonly pending: (() => void)[] = [];
  run<T>(work: () => Promise<T>): BackgroundJob<T> {
    const { done, start } = startLater(work);
    const go = (): void => void start();
    this.pending.push(go);
    return { done, expedite: go };
  }
  flush(): void {
    for (const go of this.pending.splice(0)) go();
  }
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('background task: the state machine', () => {
  it('idle → running → ready, and take returns the result once, back to idle', async () => {
    const runner = new ManualRunner();
    const task = new BackgroundTask<string>(runner);
    assert.equal(task.state.kind, 'idle');
    task.start('a', async () => 'summary of a');
    assert.deepEqual(task.state, { kind: 'running', key: 'a' });
    runner.flush();
    await tick();
    assert.deepEqual(task.state, { kind: 'ready', key: 'a' });
    assert.equal(await task.take('a'), 'summary of a');
    assert.equal(task.state.kind, 'idle');
    assert.equal(await task.take('a'), undefined, 'a result is taken once');
  });

  it('running → failed, and a failed take is a miss that resets to idle', async () => {
    const runner = new ManualRunner();
    const task = new BackgroundTask<string>(runner);
    task.start('a', async () => {
      throw new Error('model down');
    });
    runner.flush();
    await tick();
    assert.equal(task.state.kind, 'failed');
    assert.equal(await task.take('a'), undefined);
    assert.equal(task.state.kind, 'idle');
  });

  it('take while running expedites the work and waits for it', async () => {
    const runner = new ManualRunner();
    const task = new BackgroundTask<string>(runner);
    let ran = 0;
    task.start('a', async () => {
      ran++;
      return 'late';
    });
    assert.equal(ran, 0, 'the runner holds the work back');
    assert.equal(await task.take('a'), 'late');
    assert.equal(ran, 1);
  });

  it('a take for another key is a miss and leaves the job alone', async () => {
    const runner = new ManualRunner();
    const task = new BackgroundTask<string>(runner);
    task.start('a', async () => 'A');
    assert.equal(await task.take('b'), undefined);
    assert.deepEqual(task.state, { kind: 'running', key: 'a' });
  });

  it('starting the same key again is a no-op; another key makes the first stale (aborted, its result ignored)', async () => {
    const runner = new ManualRunner();
    const task = new BackgroundTask<string>(runner);
    let firstSignal: AbortSignal | undefined;
    let starts = 0;
    task.start('a', async (signal) => {
      starts++;
      firstSignal = signal;
      return 'A';
    });
    task.start('a', async () => 'A again');
    assert.equal(runner.pending.length, 1, 'no second job for the same key');
    runner.flush();
    await tick();
    assert.equal(starts, 1);
    task.start('b', async () => 'B');
    assert.equal(firstSignal?.aborted, false, 'a ready job has nothing to abort');
    assert.deepEqual(task.state, { kind: 'running', key: 'b' });
    assert.equal(await task.take('a'), undefined, "the old key's result is gone");
    assert.equal(await task.take('b'), 'B');
  });

  it('cancel aborts a running job; its late result never becomes ready', async () => {
    const runner = new ManualRunner();
    const task = new BackgroundTask<string>(runner);
    let signal: AbortSignal | undefined;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    task.start('a', async (s) => {
      signal = s;
      await gate;
      return 'too late';
    });
    runner.flush();
    task.cancel();
    assert.equal(signal?.aborted, true);
    assert.equal(task.state.kind, 'idle');
    release();
    await tick();
    await tick();
    assert.equal(task.state.kind, 'idle', 'the stale settlement is ignored');
    assert.equal(await task.take('a'), undefined);
  });

  it('a job cancelled before its runner started it never runs', async () => {
    const runner = new ManualRunner();
    const task = new BackgroundTask<string>(runner);
    let ran = false;
    task.start('a', async () => {
      ran = true;
      return 'A';
    });
    task.cancel();
    runner.flush();
    await tick();
    assert.equal(ran, false);
  });

  it('the delayed runner starts work after that many ticks', async () => {
    const runner = new DelayedRunner(2);
    let ran = 0;
    const job = runner.run(async () => ++ran);
    await runner.tick();
    assert.equal(ran, 0);
    await runner.tick();
    assert.equal(ran, 1);
    assert.equal(await job.done, 1);
    assert.throws(() => new DelayedRunner(-1), /whole number/);
  });
});

/** A long synthetic task: reads, greps and prose, with a rule at the start. */
function longTask(): RawRecord[] {
  const b = new RecordBuilder().user('Port the parser to the new AST. Never edit generated files under gen/.');
  for (let i = 0; i < 60; i++) {
    if (i % 3 === 0) b.read(`src/parser/part${i}.ts`, 30 + (i % 5) * 10, `The cause of failure ${i} is the missing visitor for node kind ${i}.`);
    else b.step(`Decided to keep visitor ${i} as a class because the old API expects one.`, [{ name: 'Bash', input: { command: `npm test -- part${i}` }, output: `FAIL part${i}\n${'  expected node but got undefined\n'.repeat(6 + (i % 4))}exit code 1` }]);
    if (i % 15 === 14) b.user(`Next, part ${i + 1}. Keep the old tests passing.`);
  }
  return b.records;
}

describe('background floor through the engine', () => {
  const budget = defaultBudget({ window: 8_000, reserve: 1_000 });

  async function run(records: readonly RawRecord[], backgroundDelay?: number, snapshots = new InMemorySnapshotStore()) {
    return replay(records, { budget, counter: new CharRatioTokenCounter(), snapshots, ...(backgroundDelay !== undefined ? { backgroundDelay } : {}), redactor });
  }

  it('the projection is byte-identical with and without the background, and folds restore precomputed summaries', async () => {
    const records = longTask();
    const sync = await run(records);
    const background = await run(records, 1);
    assert.ok(sync.totals.floorSummaries >= 2, `the task folds several times (${sync.totals.floorSummaries})`);
    assert.deepEqual(
      background.messages.map((m) => m.content),
      sync.messages.map((m) => m.content),
    );
    assert.deepEqual(background.lines.map((l) => l.tokens), sync.lines.map((l) => l.tokens), 'every step sent the same');
    assert.equal(sync.totals.floorSources.precomputed, 0, 'without a runner nothing is computed ahead');
    assert.ok(background.totals.floorSources.precomputed > 0, `some folds restored a summary computed ahead: ${JSON.stringify(background.totals.floorSources)}`);
  });

  it('a fold never makes the context bigger and buys runway below the trigger', async () => {
    const { session } = await run(longTask(), 1);
    const folds = session.engine.compactions.filter((c) => c.tier === 2);
    assert.ok(folds.length >= 2);
    for (const c of folds) {
      assert.ok(c.after < c.before, `a fold at record ${c.atRecord} went ${c.before} → ${c.after}`);
      assert.ok(c.before - c.after >= 0.05 * budget.effective, `a fold at record ${c.atRecord} saved at least the minimum share (${c.before} → ${c.after})`);
      assert.ok(c.after <= budget.trigger, `a fold at record ${c.atRecord} left the view under the trigger (${c.after} > ${budget.trigger})`);
    }
  });

  it('runway is sized from the measured growth: bigger steps, a deeper fold', async () => {
    // Prose steps (nothing to shrink) of two sizes: where each call adds more, the fold leaves more room under the trigger.
    const big = defaultBudget({ window: 64_000, reserve: 4_000 });
    const headroom = async (sentences: number): Promise<number> => {
      const b = new RecordBuilder().user('Summarize every module. Never touch vendor/.');
      for (let i = 0; i < 3_000 / sentences; i++) b.step(Array.from({ length: sentences }, (_, k) => `Module ${i} part ${k} keeps its own cache of parsed nodes.`).join(' '));
      const { session } = await replay(b.records, { budget: big, counter: new CharRatioTokenCounter(), snapshots: new InMemorySnapshotStore(), redactor });
      const fold = session.engine.compactions.find((c) => c.tier === 2);
      assert.ok(fold, `steps of ${sentences} sentences fold`);
      return big.trigger - fold.after;
    };
    const small = await headroom(10); // about 135 tokens a call: the stop ratio is deeper than 8 calls of runway
    const large = await headroom(100); // about 1,350 tokens a call: 8 calls of runway is deeper than the stop ratio
    assert.ok(small >= big.trigger - big.stop, `small steps fold to the stop ratio (${small})`);
    assert.ok(large >= 8 * 1_300 && large > big.trigger - big.stop, `large steps fold past the stop ratio, leaving 8 calls of room (${large} vs ${small})`);
  });

  it('a fold appends to the head already sent: the summary lines sent before keep their bytes', async () => {
    const records = longTask();
    const { lines, totals } = await run(records, 1);
    assert.ok(totals.headLayouts.appended > 0, `some folds appended (${JSON.stringify(totals.headLayouts)})`);
    const afterFolds = lines.filter((l, i) => i > 0 && l.tier === 2);
    assert.ok(afterFolds.some((l) => l.prefixReused > 0), 'a folding call still reuses a prefix of what was sent before');
  });

  it('a resumed session with its plans and summaries stored derives the same view with no new summary', async () => {
    const records = longTask();
    const snapshots = new InMemorySnapshotStore();
    const full = await run(records, 1, snapshots);
    const resumed = await replay(records, { budget, counter: new CharRatioTokenCounter(), snapshots, resumeFrom: records.length, redactor });
    assert.deepEqual(
      resumed.messages.map((m) => m.content),
      full.messages.map((m) => m.content),
    );
  });
});
