import { strict as assert } from 'node:assert';
import { DelayedRunner, immediateRunner, type BackgroundRunner } from '../../src/core/background';
import { computeBudget, type Budget } from '../../src/core/budget';
import { FoldPlanner, foldLimit } from '../../src/core/foldPlanner';
import { SessionRecord } from '../../src/core/parts';
import { InMemorySnapshotStore, PLAN_PREFIX, PREFLOOR_PREFIX } from '../../src/core/store';
import type { FoldInput, Summarizer } from '../../src/core/summarizer';
import { emptySummary, SummaryLineCounter } from '../../src/core/summary';
import { CachedTokenCounter, CharRatioTokenCounter } from '../../src/core/tokens';
import { View } from '../../src/core/view';
import { RecordBuilder } from './engineHarness';

class CountingSummarizer implements Summarizer {
  readonly name = 'counting';
  calls = 0;
  constructor(private readonly fails = false) {}
  async fold(input: FoldInput) {
    this.calls++;
    if (this.fails) throw new Error('model unavailable');
    return { ...emptySummary(), coverageEnd: input.coverageEnd, folds: 1 };
  }
}

/**
 * A session of 30 reads whose view stands at `share` of a window's trigger
 * (1 is at the trigger), with a planner over it.
 */
function setup(share: number, runner?: BackgroundRunner, summarizer = new CountingSummarizer(), protectRecentSteps = 3) {
  const b = new RecordBuilder().user('read every file');
  for (let i = 0; i < 30; i++) b.read(`src/f${i}.ts`, 60, `Reading ${i}.`);
  const record = new SessionRecord();
  for (const r of b.records) record.append(r);
  const counter = new CharRatioTokenCounter();
  const viewFor = (budget: Budget): View => {
    const view = new View({ record, counter: new CachedTokenCounter(counter), summaryCounter: new SummaryLineCounter(counter), budget, cap: 3000, protectRecentSteps });
    view.derive(0, undefined, () => undefined);
    return view;
  };
  const size = viewFor(computeBudget({ window: 1_000_000, reserve: 0 })).estimate;
  const budget = computeBudget({ window: Math.round(size / (0.65 * share)), reserve: 0 });
  const view = viewFor(budget);
  const snapshots = new InMemorySnapshotStore();
  const fallback = new CountingSummarizer();
  const inputs: number[] = [];
  const planner = new FoldPlanner({
    record,
    snapshots,
    view,
    budget,
    cap: 3000,
    summarizer,
    fallback,
    ...(runner ? { runner } : {}),
    foldInput: (toUnit) => {
      inputs.push(toUnit);
      return { previous: undefined, units: record.units.slice(view.coverageUnit, toUnit), coverageEnd: view.coverageEndAt(toUnit), cap: 3000 };
    },
  });
  return { record, view, budget, snapshots, planner, summarizer, fallback, inputs };
}

/**
 * A planner over the records of `b` (three protected steps), at the window `windowFor` picks from the view as it is
 * at a very wide one.
 */
function plannerOver(b: RecordBuilder, windowFor: (wide: View) => number, runner?: BackgroundRunner) {
  const record = new SessionRecord();
  for (const r of b.records) record.append(r);
  const counter = new CharRatioTokenCounter();
  const viewFor = (budget: Budget): View => {
    const v = new View({ record, counter: new CachedTokenCounter(counter), summaryCounter: new SummaryLineCounter(counter), budget, cap: 3000, protectRecentSteps: 3 });
    v.derive(0, undefined, () => undefined);
    return v;
  };
  const budget = computeBudget({ window: Math.round(windowFor(viewFor(computeBudget({ window: 1_000_000, reserve: 0 })))), reserve: 0 });
  const view = viewFor(budget);
  const snapshots = new InMemorySnapshotStore();
  const summarizer = new CountingSummarizer();
  const planner = new FoldPlanner({
    record, snapshots, view, budget, cap: 3000, summarizer, fallback: new CountingSummarizer(), ...(runner ? { runner } : {}),
    foldInput: (toUnit) => ({ previous: undefined, units: record.units.slice(view.coverageUnit, toUnit), coverageEnd: view.coverageEndAt(toUnit), cap: 3000 }),
  });
  return { view, budget, snapshots, planner, summarizer };
}

describe('foldPlanner: the background floor', () => {
  it('plans nothing while the view is far below the trigger', () => {
    const { planner, view, snapshots } = setup(0.5, immediateRunner);
    planner.prepare(view.predicted());
    assert.deepEqual(snapshots.keys(PLAN_PREFIX), []);
    assert.equal(planner.plannedBoundary(view.nearWindowStart()), undefined);
    assert.deepEqual(planner.state, { kind: 'idle' });
  });

  it('near the trigger it stores a plan, summarizes its span ahead, and the fold finds it precomputed', async () => {
    const { planner, view, snapshots, summarizer, inputs } = setup(0.97, immediateRunner);
    planner.prepare(view.predicted());
    const plans = snapshots.keys(PLAN_PREFIX);
    assert.equal(plans.length, 1);
    const toUnit = planner.plannedBoundary(view.nearWindowStart());
    assert.ok(toUnit !== undefined && toUnit > 0 && toUnit <= view.nearWindowStart(), `planned ${toUnit}`);
    assert.deepEqual(inputs, [toUnit]);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(snapshots.keys(PREFLOOR_PREFIX).length, 1);
    const made = await planner.summaryFor(toUnit!, { previous: undefined, units: [], coverageEnd: view.coverageEndAt(toUnit!) });
    assert.equal(made.source, 'precomputed');
    assert.equal(summarizer.calls, 1, 'summarized once, ahead of the fold');
    // The plan stands: asked again, it neither plans nor summarizes anew.
    planner.prepare(view.predicted());
    assert.equal(snapshots.keys(PLAN_PREFIX).length, 1);
    assert.equal(summarizer.calls, 1);
  });

  it('the planned span is offered to a fold whether or not its summary is made yet, and only within the limit', () => {
    for (const runner of [immediateRunner, undefined]) {
      const { planner, view } = setup(0.97, runner);
      assert.equal(planner.plannedSpan(view.nearWindowStart()), undefined, 'no plan yet');
      planner.prepare(view.predicted());
      const toUnit = planner.plannedBoundary(view.nearWindowStart())!;
      assert.equal(planner.plannedSpan(view.nearWindowStart()), toUnit);
      assert.equal(planner.plannedSpan(toUnit - 1), undefined, 'a span past the limit is not offered');
    }
  });

  it('a summary still being computed is awaited, one for another span is dropped', async () => {
    const runner = new DelayedRunner(5);
    const { planner, view } = setup(0.97, runner);
    planner.prepare(view.predicted());
    const toUnit = planner.plannedBoundary(view.nearWindowStart())!;
    assert.equal(planner.state.kind, 'running');
    const input = { previous: undefined, units: [], coverageEnd: view.coverageEndAt(toUnit) };
    assert.equal((await planner.summaryFor(toUnit, input)).source, 'awaited');
    assert.equal((await planner.summaryFor(toUnit - 1, { ...input, coverageEnd: view.coverageEndAt(toUnit - 1) })).source, 'synchronous');
  });

  it('without a runner the same span is planned, and summarized at the fold; a failing summarizer falls back', async () => {
    const { planner, view, snapshots, fallback } = setup(0.97, undefined, new CountingSummarizer(true));
    planner.prepare(view.predicted());
    assert.equal(snapshots.keys(PLAN_PREFIX).length, 1);
    assert.deepEqual(planner.state, { kind: 'idle' });
    const toUnit = planner.plannedBoundary(view.nearWindowStart())!;
    const made = await planner.summaryFor(toUnit, { previous: undefined, units: [], coverageEnd: view.coverageEndAt(toUnit) });
    assert.equal(made.source, 'synchronous');
    assert.equal(fallback.calls, 1);
    assert.match(String(planner.fallbackError), /model unavailable/);
  });

  it('when the near window holds every unfolded unit, it plans the breakthrough floor: up to the last unit, which stays raw', async () => {
    assert.equal(foldLimit(12, 4, 20), 12, 'outside the near window: up to it');
    assert.equal(foldLimit(4, 4, 20), 19, 'the near window holds everything: up to the last unit');
    assert.equal(foldLimit(0, 0, 1), undefined, 'one unit: nothing to fold');
    const { planner, view, record, snapshots } = setup(0.97, immediateRunner, new CountingSummarizer(), 100);
    assert.equal(view.nearWindowStart(), view.coverageUnit, 'the near window starts where the summary ends');
    planner.prepare(view.predicted());
    assert.equal(snapshots.keys(PLAN_PREFIX).length, 1);
    const last = record.units.length - 1;
    const toUnit = planner.plannedBoundary(last);
    assert.ok(toUnit !== undefined && toUnit > view.coverageUnit && toUnit <= last, `planned ${toUnit}`);
    assert.equal(planner.plannedBoundary(view.nearWindowStart()), undefined, 'not a fold outside the near window');
    await new Promise((resolve) => setImmediate(resolve));
    const made = await planner.summaryFor(toUnit!, { previous: undefined, units: [], coverageEnd: view.coverageEndAt(toUnit!) });
    assert.equal(made.source, 'precomputed');
  });

  it('over the trigger with no plan, the fold waits one call for its summary, once the plan serves it does not', () => {
    const { planner, view, snapshots } = setup(1.1, immediateRunner);
    assert.equal(planner.defer(view.predicted()), true);
    assert.equal(snapshots.keys(PLAN_PREFIX).length, 1);
    assert.notEqual(planner.plannedBoundary(view.nearWindowStart()), undefined);
    assert.equal(planner.defer(view.predicted()), false, 'the next call folds along the plan');
    planner.cancel();
    assert.deepEqual(planner.state, { kind: 'idle' });
  });
});

describe('foldPlanner: provisional plans', () => {
  /** Six small reads and then `last`: a planner over a view `below` calls of recent growth under its trigger. */
  function nearTrigger(last: number, below = 0.5) {
    const b = new RecordBuilder().user('read every file');
    for (let i = 0; i < 6; i++) b.read(`src/small${i}.ts`, 8, `Reading ${i}.`);
    b.read('src/last.ts', last, 'Reading the last one.');
    return plannerOver(b, (wide) => (wide.estimate + below * wide.recentGrowth()) / 0.65, immediateRunner);
  }

  it('a span too short to buy the runway is planned ahead only when a step as large as a recent one would carry the view past where the fold may wait', () => {
    // The last read is large: a step like it would jump past wEff, where the fold can no longer wait for its summary.
    const risky = nearTrigger(200);
    assert.ok(risky.view.predicted() < risky.budget.trigger && risky.view.predicted() + risky.view.recentPeak() > risky.budget.effective);
    risky.planner.prepare(risky.view.predicted());
    const plans = risky.snapshots.keys(PLAN_PREFIX).map((k) => risky.snapshots.get(k));
    assert.equal(plans.length, 1);
    assert.ok(plans[0]?.type === 'plan' && plans[0].plan.provisional === true, JSON.stringify(plans));
    assert.equal(risky.summarizer.calls, 1, 'its summary is made ahead');
    const next = risky.view.nextNearWindowStart();
    assert.ok(risky.planner.plannedBoundary(next) !== undefined, 'a fold it is enough for takes it');
    assert.equal(risky.planner.plannedSpan(next), undefined, 'a fold it is not enough for chooses its own span');
    // Every step small: no jump to fear, so no plan until a span can buy the runway.
    const steady = nearTrigger(8);
    steady.planner.prepare(steady.view.predicted());
    assert.deepEqual(steady.snapshots.keys(PLAN_PREFIX), []);
    assert.equal(steady.summarizer.calls, 0);
  });

  it('a step as large as a recent one that would jump past where the fold may wait brings the watermark forward', () => {
    const early = nearTrigger(200, 3);
    assert.ok(early.view.predicted() + 2 * early.view.recentGrowth() < early.budget.trigger, 'below the usual watermark');
    early.planner.prepare(early.view.predicted());
    assert.equal(early.snapshots.keys(PLAN_PREFIX).length, 1);
    assert.equal(early.summarizer.calls, 1);
    const steady = nearTrigger(8, 3);
    steady.planner.prepare(steady.view.predicted());
    assert.deepEqual(steady.snapshots.keys(PLAN_PREFIX), [], 'small steps: the watermark stays where it was');
  });
});

describe('foldPlanner: the span a plan covers', () => {
  it('ahead of the trigger, plans what the fold a call later may fold: the oldest protected step leaves the near window by then', () => {
    // Small reads, a big one, two small ones: the big read is the oldest of the three protected steps, and the fold
    // the view needs is bound by the near window, not by its target.
    const b = new RecordBuilder().user('read every file');
    for (let i = 0; i < 6; i++) b.read(`src/small${i}.ts`, 8, `Reading ${i}.`);
    b.read('src/big.ts', 400, 'Reading the big one.');
    for (let i = 0; i < 2; i++) b.read(`src/last${i}.ts`, 8, `Reading ${i} again.`);
    const { view, planner } = plannerOver(b, (wide) => wide.estimate / (0.65 * 0.98));
    planner.prepare(view.predicted());
    const next = view.nextNearWindowStart();
    assert.ok(next > view.nearWindowStart(), `the near window moves a step (${view.nearWindowStart()} → ${next})`);
    assert.equal(planner.plannedSpan(next), next, 'the plan takes the step that leaves the near window');
    assert.equal(planner.plannedSpan(view.nearWindowStart()), undefined, 'a fold now, before the step has left, cannot use it');
  });
});
