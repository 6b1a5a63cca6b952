/**
 * Budget arithmetic: pure functions over named constants.
 *
 * The gate compares in window-caliber space: the window minus only the output
 * reservation. Prompt overhead (system prompt, tool schemas) is left in on both
 * sides, because the calibrated prediction already includes it.
 */

/** Share of the effective window above which compaction fires. */
export const COMPACTION_TRIGGER_RATIO = 0.65;
/** Share of the effective window that tier ① aims for while it runs. */
export const COMPACTION_STOP_RATIO = 0.5;
/** The near window: the last N steps (model generations) that tiers ① and ② never touch. */
export const COMPACTION_PROTECT_RECENT_STEPS = 5;
/** Least cap of the `## Task Context` head, enforced by demotion, never deletion. */
export const ROLLING_SUMMARY_BUDGET_TOKENS = 2500;
/** The head's cap grows with the window: this share of wEff, between SUMMARY_CAP_LEAST_TOKENS and SUMMARY_CAP_MAX_TOKENS. */
export const SUMMARY_CAP_SHARE = 0.25;
/**
 * The least cap the engine gives the head (a summarizer on its own falls back
 * to the seed's ROLLING_SUMMARY_BUDGET_TOKENS). On an 8k window the request log,
 * deliverables and current state leave the seed's 2,500 little room for facts:
 * measured on the 30 corpus sessions, 3,000 keeps 2.2 more points of the probes
 * for 1.7% more cost (a larger share at 16k bought nothing).
 */
export const SUMMARY_CAP_LEAST_TOKENS = 3000;
export const SUMMARY_CAP_MAX_TOKENS = 8000;
/** Default output reservation of the CLI. */
export const OUTPUT_RESERVED_TOKENS = 8000;
/** Default model window of the CLI. */
export const DEFAULT_CONTEXT_WINDOW = 200_000;
/** A compaction pass saving less than this share of wEff counts as ineffective. */
export const ANTI_THRASH_MIN_SAVING_RATIO = 0.02;
/** Ineffective passes in a row after which compaction stops trying for the turn. */
export const ANTI_THRASH_LIMIT = 2;
/** Tokens charged per message for role and framing, on top of its content. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

export interface Budget {
  readonly window: number;
  readonly reserve: number;
  /** wEff = window − reserve. */
  readonly effective: number;
  readonly trigger: number;
  readonly stop: number;
  /** The near window of this budget, when it is not the seed's COMPACTION_PROTECT_RECENT_STEPS (small windows). */
  readonly protectRecentSteps?: number;
  /**
   * Whether a reduction folds when shrinking old tools alone leaves the view
   * above stop (a narrow dead zone: see NARROW_DEAD_ZONE_RATIO); otherwise the
   * view settles anywhere under the trigger, as the seed describes.
   */
  readonly foldAboveStop: boolean;
}

/**
 * A dead zone (trigger − stop, a share of wEff) this narrow or narrower is not
 * left to settle in. Once the old tools are shrunk, a view under the trigger
 * but above stop can only shed, call after call, the few tool outputs that
 * have aged out of the near window since: each such shrink rewrites the prompt
 * from that output on (a cache miss of most of the view) for a saving of a few
 * thousand tokens, and a fold follows a few calls later anyway. Measured in the
 * eval at 128k (the seed's 0.65 / 0.50): folding at once instead costs 7% less
 * for 0.2 points of recall. The small-window defaults (0.9 / 0.5) keep the
 * seed's dead zone: there the fold it would add costs recall (−0.7 points at
 * 16k) and a wide zone rarely re-triggers.
 */
export const NARROW_DEAD_ZONE_RATIO = 0.2;

export interface BudgetOptions {
  readonly window: number;
  readonly reserve: number;
  readonly triggerRatio?: number;
  readonly stopRatio?: number;
}

export function computeBudget(options: BudgetOptions): Budget {
  const { window, reserve } = options;
  if (!Number.isFinite(window) || window <= 0) throw new RangeError(`window must be a positive number of tokens, got ${window}`);
  if (!Number.isFinite(reserve) || reserve < 0) throw new RangeError(`reserve must be zero or more tokens, got ${reserve}`);
  if (reserve >= window) throw new RangeError(`reserve (${reserve}) must be smaller than the window (${window})`);
  const triggerRatio = options.triggerRatio ?? COMPACTION_TRIGGER_RATIO;
  const stopRatio = options.stopRatio ?? COMPACTION_STOP_RATIO;
  if (!(stopRatio > 0 && stopRatio < triggerRatio && triggerRatio <= 1)) {
    throw new RangeError(`ratios must satisfy 0 < stop (${stopRatio}) < trigger (${triggerRatio}) <= 1`);
  }
  const effective = window - reserve;
  return {
    window,
    reserve,
    effective,
    trigger: Math.floor(effective * triggerRatio),
    stop: Math.floor(effective * stopRatio),
    foldAboveStop: triggerRatio - stopRatio <= NARROW_DEAD_ZONE_RATIO,
  };
}

/**
 * The cap of the Task Context for a budget: a quarter of wEff, at least
 * SUMMARY_CAP_LEAST_TOKENS, at most SUMMARY_CAP_MAX_TOKENS. Measured in the
 * eval: on a 16k window a 3,500-token head keeps 2.6 points more of the probes
 * than 2,500 for 1.5% more tokens at the end; on an 8k window 3,000.
 */
export function summaryCapFor(budget: Budget): number {
  return Math.max(SUMMARY_CAP_LEAST_TOKENS, Math.min(SUMMARY_CAP_MAX_TOKENS, Math.floor(budget.effective * SUMMARY_CAP_SHARE)));
}

/**
 * Small windows (an effective window up to this, i.e. windows up to 32k) run
 * with their own defaults. The seed's 0.65 / 0.50 and five protected steps are
 * tuned for large windows, where attention degrades well before the window is
 * full; on a small window the summary and five raw steps alone nearly reach a
 * 65% trigger, so every few calls fold again and rewrite the prompt's head.
 * Measured side by side in the eval (the "seed ratios" ablation): at 8k the
 * small-window defaults keep more of the probes for less cost. The trigger is
 * late (0.9, as clear-then-summarize's): against 0.8 it folds 11% (8k) and 17%
 * (16k) less often, costs 4% / 3% less and keeps more of the probes; the
 * calibrated estimate and the reactive floor keep the call under the window.
 */
export const SMALL_WINDOW_EFFECTIVE_TOKENS = 28_000;
export const SMALL_WINDOW_TRIGGER_RATIO = 0.9;
export const SMALL_WINDOW_STOP_RATIO = 0.5;
export const SMALL_WINDOW_PROTECT_RECENT_STEPS = 3;

/**
 * The budget a user gets when they set no ratio: the seed's for large windows,
 * the small-window defaults up to SMALL_WINDOW_EFFECTIVE_TOKENS. Ratios given
 * explicitly are kept as given (and the near window with them).
 */
export function defaultBudget(options: BudgetOptions): Budget {
  const effective = options.window - options.reserve;
  if (options.triggerRatio !== undefined || options.stopRatio !== undefined || !(effective <= SMALL_WINDOW_EFFECTIVE_TOKENS)) return computeBudget(options);
  return {
    ...computeBudget({ ...options, triggerRatio: SMALL_WINDOW_TRIGGER_RATIO, stopRatio: SMALL_WINDOW_STOP_RATIO }),
    protectRecentSteps: SMALL_WINDOW_PROTECT_RECENT_STEPS,
  };
}

/** Over the gate: compaction fires. */
export function isOverTrigger(budget: Budget, predicted: number): boolean {
  return predicted > budget.trigger;
}

/**
 * How far short of the provider's count an estimate can fall right after a
 * reduction reshaped the view (a fold's new head, a breakthrough shrink of many
 * outputs), before a call measures it: a pass that ends within this share of
 * the effective window is taken as over it. Measured on the corpus: a
 * breakthrough that ended 22 tokens under a 14,000-token window sent 14,014.
 */
export const WINDOW_SLACK_RATIO = 0.01;

/** Over the effective window, or too near it to trust an estimate no call has measured yet. */
export function isNearWindow(budget: Budget, predicted: number): boolean {
  return predicted > budget.effective * (1 - WINDOW_SLACK_RATIO);
}

/** Providers cache a changed message's common start in blocks of this many tokens (OpenAI: 128). */
export const CACHE_BLOCK_TOKENS = 128;
