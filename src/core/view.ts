/**
 * The view: what the model sees of the record, as state. Units [0,
 * coverageUnit) are folded into the summary, the parts in view are sent raw
 * or in a reduced form, and the estimate of what that measures is kept exact
 * through every change. The view is never persisted: a preflight derives it
 * again from the raw record and the stored reductions (`derive`).
 */
import type { Budget } from './budget';
import { ViewEstimate, ViewMeter, type EstimateCheckpoint } from './estimate';
import { foldBoundary, foldTarget, nearWindowStart, recentGrowth, summaryGrowth } from './ladder';
import { RevisedMap, type RevisedView } from './memo';
import type { SessionRecord } from './parts';
import type { Anchor, ReducedForm } from './store';
import type { SummaryLineCounter, SummaryState } from './summary';
import type { CachedTokenCounter } from './tokens';
import type { Part, Unit } from './types';

export interface ViewOptions {
  readonly record: SessionRecord;
  readonly counter: CachedTokenCounter;
  readonly summaryCounter: SummaryLineCounter;
  readonly budget: Budget;
  /** Cap of the Task Context. */
  readonly cap: number;
  /** The last steps kept word for word by tiers ① and ② (the near window). */
  readonly protectRecentSteps: number;
}

/** What a fold changed, to put the view back as it was (`unfold`). */
export interface FoldUndo {
  readonly summary: SummaryState | undefined;
  readonly coverageUnit: number;
  readonly estimate: EstimateCheckpoint;
  /** Only the span's forms leave the map. */
  readonly forms: readonly (readonly [string, ReducedForm])[];
}

/** First record of the current turn (the latest user message), −1 before any. */
export function currentTurnRecord(units: readonly Unit[]): number {
  for (let i = units.length - 1; i >= 0; i--) if (units[i]!.kind === 'user') return units[i]!.firstRecord;
  return -1;
}

export class View {
  private readonly record: SessionRecord;
  /** Units [0, coverage) are folded into `folded`. */
  private coverage = 0;
  private folded: SummaryState | undefined;
  private readonly reduced = new RevisedMap<string, ReducedForm>();
  private readonly meter: ViewMeter;
  private readonly tokens = new ViewEstimate();

  constructor(private readonly options: ViewOptions) {
    this.record = options.record;
    this.meter = new ViewMeter(options.counter, options.summaryCounter, this.reduced);
  }

  // ------------------------------------------------------------------ state

  /** Absolute index of the first unit still in view (units before it are folded). */
  get coverageUnit(): number {
    return this.coverage;
  }

  get summary(): SummaryState | undefined {
    return this.folded;
  }

  /** Records [0, coverageEnd) are folded into the summary. */
  get coverageEnd(): number {
    return this.folded?.coverageEnd ?? 0;
  }

  /** The reduced forms in view, by part address. */
  get forms(): RevisedView<string, ReducedForm> {
    return this.reduced;
  }

  /** The reduced form applied to a part address, if any. */
  formOf(address: string): ReducedForm | undefined {
    return this.reduced.get(address);
  }

  /** Applies a form to a part; the caller counts what it changes (`addToUnit`). */
  setForm(address: string, form: ReducedForm): void {
    this.reduced.set(address, form);
  }

  deleteForm(address: string): void {
    this.reduced.delete(address);
  }

  // -------------------------------------------------------------- measuring

  /** predicted = real anchor + estimated increment since it (pure estimation on a cold start). */
  predicted(): number {
    return this.tokens.predicted();
  }

  /** The running estimate of the view (no real measurement involved). */
  get estimate(): number {
    return this.tokens.estimate;
  }

  /** A real measurement of the view as it is now: the new anchor (to persist). */
  observe(real: number): Anchor {
    return this.tokens.observe(real);
  }

  restoreAnchor(anchor: Anchor | undefined): void {
    this.tokens.restoreAnchor(anchor);
  }

  /** Tokens of a part as sent, in its current form. */
  partTokens(part: Part): number {
    return this.meter.partTokens(part);
  }

  /** Tokens of a part as recorded. */
  rawTokens(part: Part): number {
    return this.meter.rawTokens(part);
  }

  /** Tokens of unit `index` in view, in its current forms. */
  unitTokens(index: number): number {
    return this.tokens.unit(index);
  }

  /** Tokens in view of units [coverageUnit, toUnit). */
  spanTokens(toUnit: number): number {
    return this.tokens.span(this.coverage, toUnit);
  }

  addToUnit(index: number, delta: number): void {
    this.tokens.addToUnit(index, delta);
  }

  /** The head's blocks (after the Task Context) measured again. */
  setBlocks(tokens: number): void {
    this.tokens.setBlocks(tokens);
  }

  // ---------------------------------------------------------- deriving, folding

  /**
   * The view derived afresh: units before `coverageUnit` folded into
   * `summary`, each part in view in the form the store has for it (`stored`),
   * every unit counted again. Returns how many forms were restored.
   */
  derive(coverageUnit: number, summary: SummaryState | undefined, stored: (address: string) => ReducedForm | undefined): number {
    const units = this.record.units;
    this.coverage = coverageUnit;
    this.folded = summary;
    this.tokens.restart(summary ? this.meter.summaryTokensOf(summary) : 0);
    this.reduced.clear();
    let restored = 0;
    for (let i = coverageUnit; i < units.length; i++) {
      const unit = units[i]!;
      for (const part of unit.parts) {
        const form = stored(part.address);
        if (form === undefined) continue;
        this.reduced.set(part.address, form);
        restored++;
      }
      this.tokens.addToUnit(i, this.meter.unitTokens(unit));
    }
    return restored;
  }

  /** Units [coverageUnit, toUnit) folded into `state`; what to pass to `unfold` to undo it. */
  fold(toUnit: number, state: SummaryState): FoldUndo {
    const units = this.record.units;
    const forms: [string, ReducedForm][] = [];
    const undo: FoldUndo = { summary: this.folded, coverageUnit: this.coverage, estimate: this.tokens.checkpoint(this.coverage, toUnit), forms };
    for (let i = this.coverage; i < toUnit; i++) {
      for (const part of units[i]!.parts) {
        const form = this.reduced.get(part.address);
        if (form === undefined) continue;
        forms.push([part.address, form]);
        this.reduced.delete(part.address);
      }
    }
    this.tokens.fold(this.coverage, toUnit, this.meter.summaryTokensOf(state));
    this.folded = state;
    this.coverage = toUnit;
    return undo;
  }

  /** The view as it was before the fold `undo` came from (the head's blocks as they were measured then). */
  unfold(undo: FoldUndo): void {
    this.folded = undo.summary;
    this.coverage = undo.coverageUnit;
    this.tokens.restore(undo.estimate);
    for (const [address, form] of undo.forms) this.reduced.set(address, form);
  }

  // ------------------------------------------------------------ where to fold

  /** Absolute index of the first unit of the near window (the Nth-last step). */
  nearWindowStart(): number {
    return nearWindowStart(this.record.units, this.coverage, this.options.protectRecentSteps);
  }

  /** Where the near window will start once one more step is in view (the oldest protected step leaves it). */
  nextNearWindowStart(): number {
    return nearWindowStart(this.record.units, this.coverage, Math.max(1, this.options.protectRecentSteps - 1));
  }

  /** The median tokens of the last steps in view: what one model call adds to the view. */
  recentGrowth(): number {
    return this.recentSteps().median;
  }

  /** The most one model call added to the view among its recent steps. */
  recentPeak(): number {
    return this.recentSteps().peak;
  }

  /** Both of the above, read once. */
  recentSteps(): { median: number; peak: number } {
    return recentGrowth(this.record.units, this.coverage, (i) => this.tokens.unit(i));
  }

  /** Expected growth of the summary when `removed` tokens are folded into it. */
  summaryGrowth(removed: number): number {
    return summaryGrowth(removed, this.options.cap, this.tokens.summaryTokens);
  }

  /**
   * The smallest fold, ending no later than `limit`, that should bring the
   * view from `predicted` to its fold target (see foldTarget), allowing for
   * the summary to grow up to its cap. Never smaller than the protected steps
   * allow when `limit` is the near-window start.
   */
  foldBoundary(limit: number, predicted = this.predicted()): number {
    const target = foldTarget(this.options.budget, this.recentGrowth());
    return foldBoundary(this.coverage, limit, predicted, target, (i) => this.tokens.unit(i), (removed) => this.summaryGrowth(removed));
  }

  /** The first record after a fold up to unit `toUnit` (the record count when it folds every unit). */
  coverageEndAt(toUnit: number): number {
    const units = this.record.units;
    return toUnit < units.length ? units[toUnit]!.firstRecord : this.record.records.length;
  }

  /** The unit that starts at record `record`, if one does. */
  unitStartingAt(record: number): number | undefined {
    const units = this.record.units;
    if (record === this.record.records.length) return units.length;
    const i = this.record.unitIndexAtRecord(record);
    return i < units.length && units[i]!.firstRecord === record ? i : undefined;
  }
}
