/**
 * The background floor: the next fold planned ahead of the trigger, and its
 * summary asked for before the fold needs it. A plan is stored by coverage,
 * so a view derived again plans (and folds) the same span; with a background
 * runner the summary is computed meanwhile, without one it is asked for at
 * the fold. Either way the view is the same: what runs in the background
 * decides only when the summarizer is called, never what is folded.
 */
import type { BackgroundRunner } from './background';
import { BackgroundTask } from './background';
import type { Budget } from './budget';
import { MIN_FOLD_SAVING_RATIO } from './ladder';
import type { SessionRecord } from './parts';
import { planKey, prefloorKey, type FoldPlan, type SnapshotStore } from './store';
import type { FoldInput, Summarizer } from './summarizer';
import type { SummaryState } from './summary';
import type { View } from './view';

/** Where the summary of a fold came from. */
export type FloorSource = 'precomputed' | 'awaited' | 'synchronous';

/**
 * The background watermark: this many calls of recent growth below the trigger
 * the view plans its next fold and starts summarizing it (as late as possible,
 * so that the span outside the near window is as long as it will get).
 */
const WATERMARK_CALLS = 2;
/** A plan made ahead of the trigger waits until its span buys the fold this many calls of runway. */
const PLAN_MIN_RUNWAY_CALLS = 2;
/**
 * Over the trigger, a fold with no plan it can use waits a call for its
 * summary while the view is under this share of the way to wEff (it still
 * fits the window), at most MAX_PLANS times per coverage.
 */
const DEFER_LIMIT_SHARE = 1;
const MAX_PLANS = 3;

export interface FoldPlannerOptions {
  readonly record: SessionRecord;
  readonly snapshots: SnapshotStore;
  readonly view: View;
  readonly budget: Budget;
  /** Cap of the Task Context. */
  readonly cap: number;
  readonly summarizer: Summarizer;
  /** Used when `summarizer` fails; must not fail itself. */
  readonly fallback: Summarizer;
  /** Decides when background work happens (none: the summary is asked for at the fold). */
  readonly runner?: BackgroundRunner;
  /** What the summarizer is asked to fold for a fold up to `toUnit`. */
  readonly foldInput: (toUnit: number) => FoldInput;
}

/**
 * How far the next fold may reach: to the near window, or — when the near window
 * holds every unit the summary does not (the fold to come is the breakthrough
 * floor, ladder tier ④) — to the last unit, which stays raw. Undefined when
 * there is nothing to fold.
 */
export function foldLimit(near: number, coverageUnit: number, unitCount: number): number | undefined {
  const limit = near > coverageUnit ? near : unitCount - 1;
  return limit > coverageUnit ? limit : undefined;
}

export class FoldPlanner {
  private background: BackgroundTask<SummaryState> | undefined;
  private lastFallbackError: unknown;

  constructor(private readonly options: FoldPlannerOptions) {}

  /**
   * After a model call's step: when the view is within WATERMARK_CALLS of
   * recent growth of the trigger, or a step as large as the largest of late
   * would carry it past where a fold may wait, plan the span the next fold
   * will cover (once per coverage, stored) and, with a background runner,
   * start summarizing it. The plan is made whether or not anything runs in
   * the background, so both paths fold the same span.
   */
  prepare(predicted: number): void {
    const { median: growth, peak } = this.options.view.recentSteps();
    if (predicted + WATERMARK_CALLS * growth < this.options.budget.trigger && predicted + peak <= this.deferLimit()) return;
    const plan = this.plan(predicted, growth, false);
    if (plan) this.startBackground(plan.toUnit);
  }

  /**
   * Over the trigger with no plan yet (the view jumped past the watermark in
   * one step): while it stays under DEFER_LIMIT the fold waits one call —
   * planned now, summarized in the background meanwhile, made at the next
   * call — rather than asking the summarizer on the hot path. Whether it
   * waits depends only on the record and the store, never on how far the
   * background work got. `unplannedOnly`: only when there is no plan yet (a
   * view that was past the limit and got under it by tier ① alone folds a plan
   * it has now, whatever its span, rather than plan again).
   */
  defer(predicted: number, unplannedOnly = false): boolean {
    if (predicted > this.deferLimit()) return false;
    const current = this.currentPlan();
    if (current && unplannedOnly) return false;
    const limit = this.foldLimit();
    // A provisional plan that would only just get the view under the trigger is not worth folding while the fold
    // may still wait: a plan made now buys the fold its runway.
    const serves = (toUnit: number | undefined): boolean => toUnit !== undefined && (!current?.provisional || this.buysRunway(toUnit));
    if (current && ((limit !== undefined && serves(this.plannedBoundary(limit))) || current.n + 1 >= MAX_PLANS)) return false;
    const plan = this.plan(predicted, this.options.view.recentGrowth(), true);
    if (!plan) return false;
    this.startBackground(plan.toUnit);
    return true;
  }

  /**
   * The planned span's end for a fold now, if there is a plan for this
   * coverage and folding it brings the view under the trigger; otherwise (no
   * plan, or the view grew past what it was planned for) undefined, and the
   * fold chooses afresh.
   */
  plannedBoundary(limit: number): number | undefined {
    const view = this.options.view;
    const toUnit = this.planEnd(limit, true);
    if (toUnit === undefined) return undefined;
    const removed = view.spanTokens(toUnit);
    return view.predicted() - removed + view.summaryGrowth(removed) <= this.options.budget.trigger ? toUnit : undefined;
  }

  /**
   * The end of the planned span for a fold now, even when folding it alone no
   * longer brings the view under the trigger (the view jumped past what it was
   * planned for): in the background its summary is made already, so the fold
   * costs no summarizer call and the rungs after it take the rest. Without a
   * background the same span is folded (summarized at the fold), so both paths
   * give the same view.
   */
  plannedSpan(limit: number): number | undefined {
    // A provisional plan serves only a fold it is enough for (plannedBoundary): short of that, the fold chooses a span that is.
    return this.planEnd(limit, false);
  }

  /** Whether folding up to `toUnit` now leaves the view PLAN_MIN_RUNWAY_CALLS of recent growth under the trigger. */
  private buysRunway(toUnit: number): boolean {
    const view = this.options.view;
    const removed = view.spanTokens(toUnit);
    return view.predicted() - removed + view.summaryGrowth(removed) <= this.options.budget.trigger - PLAN_MIN_RUNWAY_CALLS * view.recentGrowth();
  }

  /** The end of the current plan, if it is within `limit` and past the coverage (and not provisional, unless `provisional`). */
  private planEnd(limit: number, provisional: boolean): number | undefined {
    const current = this.currentPlan();
    const toUnit = current?.provisional && !provisional ? undefined : current?.toUnit;
    return toUnit === undefined || toUnit <= this.options.view.coverageUnit || toUnit > limit ? undefined : toUnit;
  }

  /**
   * The summary for folding up to `toUnit`: restored when it was computed
   * ahead, awaited when it is being computed, otherwise asked for now (and the
   * fallback's if the summarizer fails).
   */
  async summaryFor(toUnit: number, input: FoldInput): Promise<{ state: SummaryState; source: FloorSource }> {
    const key = this.prefloorKeyFor(toUnit);
    const stored = this.options.snapshots.get(key);
    if (stored?.type === 'prefloor') {
      this.background?.cancel();
      return { state: stored.state, source: 'precomputed' };
    }
    const awaited = this.background ? await this.background.take(key) : undefined;
    if (awaited) return { state: awaited, source: 'awaited' };
    // A job for another span is stale now: the fold summarizes its own.
    this.background?.cancel();
    try {
      return { state: await this.options.summarizer.fold(input), source: 'synchronous' };
    } catch (error) {
      this.lastFallbackError = error;
      return { state: await this.options.fallback.fold(input), source: 'synchronous' };
    }
  }

  /** Stops a summary running in the background (a stopped turn): the fold it was for will summarize itself. */
  cancel(): void {
    this.background?.cancel();
  }

  /** The background floor's state (idle when there is no runner). */
  get state(): BackgroundTask<SummaryState>['state'] {
    return this.background?.state ?? { kind: 'idle' };
  }

  /** The error that made a fold fall back to the static checkpoint last, if any. */
  get fallbackError(): unknown {
    return this.lastFallbackError;
  }

  /** How far a fold may reach with the near window starting at `nearStart` (now, by default; see `foldLimit`). */
  private foldLimit(nearStart = this.options.view.nearWindowStart()): number | undefined {
    return foldLimit(nearStart, this.options.view.coverageUnit, this.options.record.units.length);
  }

  /** Up to here a fold may wait a call for its summary: DEFER_LIMIT_SHARE of the way from the trigger to wEff. */
  private deferLimit(): number {
    const budget = this.options.budget;
    return budget.trigger + DEFER_LIMIT_SHARE * (budget.effective - budget.trigger);
  }

  private budgetKey(): string {
    return `${this.options.budget.effective}-${this.options.budget.trigger}-${this.options.cap}`;
  }

  private startBackground(toUnit: number): void {
    if (!this.options.runner) return;
    const key = this.prefloorKeyFor(toUnit);
    if (this.options.snapshots.get(key)?.type === 'prefloor') return;
    const input = this.options.foldInput(toUnit);
    const summarizer = this.options.summarizer;
    const snapshots = this.options.snapshots;
    this.backgroundTask().start(key, async (signal) => {
      const state = await summarizer.fold(input);
      if (signal.aborted) throw new Error('cancelled');
      snapshots.put(key, { type: 'prefloor', state });
      return state;
    });
  }

  /**
   * The stored plan for the current coverage, or a new one (stored). A new
   * plan folds what the fold one call from now would fold; made ahead of the
   * trigger (`now` false), it is not made until the span outside the near
   * window can buy the fold PLAN_MIN_RUNWAY_CALLS of runway.
   */
  private plan(predicted: number, growth: number, now: boolean): { toUnit: number } | undefined {
    const { view, budget } = this.options;
    const current = this.currentPlan();
    // Ahead of the trigger a stored plan stands (a provisional one until a plan that buys the runway can replace it);
    // at the trigger (`now`) one the view outgrew is followed by another.
    const stands = (): { toUnit: number } | undefined => (current?.toUnit === undefined ? undefined : { toUnit: current.toUnit });
    if (current && !now && (!current.provisional || current.n + 1 >= MAX_PLANS)) return stands();
    const key = planKey(view.coverageEnd, this.budgetKey(), current ? current.n + 1 : 0);
    // Ahead of the trigger the fold comes a call or more later, when the oldest protected step has left the near
    // window: the plan folds what that fold may, not what a fold now could (a span one step short of the fold's).
    const limit = this.foldLimit(now ? view.nearWindowStart() : view.nextNearWindowStart());
    if (limit === undefined) return current && !now ? stands() : undefined;
    const atFold = Math.max(predicted, budget.trigger) + growth;
    const toUnit = view.foldBoundary(limit, atFold);
    const removed = view.spanTokens(toUnit);
    if (removed < MIN_FOLD_SAVING_RATIO * budget.effective) return current && !now ? stands() : undefined;
    // Planning again is worth another wait only when the new span would serve where the planned one does not: when
    // the rungs after the fold must take the rest either way (the near window holds the bulk), the plan stands.
    if (current && predicted - removed + view.summaryGrowth(removed) > budget.trigger) return current && !now ? stands() : undefined;
    // Ahead of the trigger a span that cannot buy the runway yet is planned provisionally when a step as large as the
    // largest lately would carry the view past where the fold may wait: that fold then finds its summary made. A later
    // step whose span can buy the runway plans again.
    const provisional = !now && atFold - removed + view.summaryGrowth(removed) > budget.trigger - PLAN_MIN_RUNWAY_CALLS * growth;
    if (provisional && (current || predicted + view.recentPeak() <= this.deferLimit())) return current ? stands() : undefined;
    const plan: FoldPlan = provisional ? { from: view.coverageEnd, to: view.coverageEndAt(toUnit), provisional: true } : { from: view.coverageEnd, to: view.coverageEndAt(toUnit) };
    this.options.snapshots.put(key, { type: 'plan', plan });
    return { toUnit };
  }

  /** The latest plan stored for the current coverage: its number and where it ends (a unit index). */
  private currentPlan(): { n: number; toUnit: number | undefined; provisional: boolean } | undefined {
    const budgetKey = this.budgetKey();
    let found: { n: number; toUnit: number | undefined; provisional: boolean } | undefined;
    for (let n = 0; n < MAX_PLANS; n++) {
      const entry = this.options.snapshots.get(planKey(this.options.view.coverageEnd, budgetKey, n));
      if (entry?.type !== 'plan') break;
      found = { n, toUnit: this.options.view.unitStartingAt(entry.plan.to), provisional: entry.plan.provisional === true };
    }
    return found;
  }

  private prefloorKeyFor(toUnit: number): string {
    const view = this.options.view;
    return prefloorKey(view.coverageEnd, view.coverageEndAt(toUnit), `${this.options.record.coverageDigest(toUnit)}-${this.budgetKey()}`, this.options.cap);
  }

  private backgroundTask(): BackgroundTask<SummaryState> {
    return (this.background ??= new BackgroundTask<SummaryState>(this.options.runner));
  }
}
