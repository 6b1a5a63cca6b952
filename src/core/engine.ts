/**
 * The compaction operation, run before every model call.
 *
 *   restore (fold the covered prefix into its summary, swap in stored reduced
 *   forms) → measure against trigger → only if over, reduce along the ladder
 *   (see ladder.ts):
 *   ① shrink old tools outside the near window, oldest first, toward stop;
 *   ② floor-summarize the prefix outside the near window (when still over the
 *     trigger, or, in a narrow dead zone, still above stop);
 *   ③ breakthrough shrink, near window included;
 *   ④ breakthrough floor, no near-window protection.
 *
 * Decisions are never persisted: the view is re-derived from the raw record,
 * the snapshot store and the budget. The store keeps only the reduction
 * outputs (reduced forms, floor summaries) and the calibration anchor.
 *
 * The engine wires its parts and runs the operation: the view and its
 * estimate (view.ts, estimate.ts), the head (head.ts), what is sent
 * (projection.ts), the reductions in the store (storedReductions.ts), the
 * background floor (foldPlanner.ts) and what is not loaded (notLoaded.ts).
 */
import { unitsBefore } from './artifacts';
import type { BackgroundRunner, BackgroundState } from './background';
import { COMPACTION_PROTECT_RECENT_STEPS, MESSAGE_OVERHEAD_TOKENS, isNearWindow, isOverTrigger, summaryCapFor, type Budget } from './budget';
import { FoldPlanner, type FloorSource } from './foldPlanner';
import { DEFAULT_RETRIEVAL, Head, type ContextBlock, type RetrievalOptions } from './head';
import { AntiThrashGate, CompactionLog, EMERGENCY_MIN_SHARE_CHARS, clippableParts, clippedForm, firstClipShare, highestTier, reduceAlongLadder, type Compaction, type Tier } from './ladder';
import { NotLoadedList, type NotLoadedEntry } from './notLoaded';
import { toolKey, type AppendEvent, type SessionRecord } from './parts';
import { Projection, type ProjectedMessage } from './projection';
import type { Redactor } from './redact';
import { ANCHOR_KEY, GATE_KEY, type ReducedForm, type SnapshotStore, type ToolCompactionStore } from './store';
import { StoredReductions } from './storedReductions';
import { CONTINUATION_REST_SHARE, continuationQuestionTokens, type FoldInput, type Summarizer } from './summarizer';
import { type SummaryLineCounter, type SummaryState } from './summary';
import { layoutAfterFold, type LayoutKind } from './summaryLayout';
import type { CachedTokenCounter } from './tokens';
import { reduceTool } from './tools';
import type { Part } from './types';
import { View, currentTurnRecord } from './view';

export { DEFAULT_RETRIEVAL, type ContextBlock, type RetrievalOptions } from './head';
export type { Compaction, Tier } from './ladder';
export type { FloorSource } from './foldPlanner';
export { notLoadedTotals, type NotLoadedEntry } from './notLoaded';
export { renderToolCall, renderToolResult, renderUnit, type HeadBlock, type HeadPart, type ProjectedCall, type ProjectedMessage, type ProjectedResult } from './projection';

export interface StepReport {
  readonly predicted: number;
  readonly after: number;
  /** Highest tier applied (0: none). */
  readonly tier: 0 | Tier;
  readonly compactions: readonly Compaction[];
  /** The anti-thrash gate held this step off although it was over trigger. */
  readonly held: boolean;
  /** Over the trigger, the fold waits one call for its summary (see the background floor). */
  readonly deferred?: boolean;
}

export interface PreflightReport {
  readonly coverageEnd: number;
  readonly restoredForms: number;
  /** P0 lines of the restored summary that differed from the raw and were reset. */
  readonly drifted: number;
  readonly predicted: number;
}

export interface EngineOptions {
  readonly record: SessionRecord;
  readonly snapshots: SnapshotStore;
  readonly tools: ToolCompactionStore;
  readonly summarizer: Summarizer;
  /** Used when `summarizer` fails; must not fail itself. */
  readonly fallback: Summarizer;
  readonly counter: CachedTokenCounter;
  /** Measures the Task Context line by line (shared with the summarizers' cap). */
  readonly summaryCounter: SummaryLineCounter;
  readonly budget: Budget;
  readonly protectRecentSteps?: number;
  /** Tool calls whose input + output are shorter than this stay whole (default PRECOMPACT_MIN_CHARS). */
  readonly shrinkMinChars?: number;
  /** Cap of the Task Context head (defaults to summaryCapFor(budget)). */
  readonly summaryCap?: number;
  /** Blocks sent after the Task Context and never reduced (the protected state). */
  readonly blocks?: readonly ContextBlock[];
  /** Hides secrets and personal data in every message the model is sent, and in what the head quotes. */
  readonly redactor: Redactor;
  /** The original-text channel (defaults to DEFAULT_RETRIEVAL). */
  readonly retrieval?: RetrievalOptions;
  /**
   * Summarize the next fold's span ahead of the fold (the background floor),
   * with this runner deciding when the work happens. Without it the same span
   * is planned and summarized at the fold: the view is the same either way.
   */
  readonly background?: BackgroundRunner;
}

/** The room left for a fold's question, over its estimate (the mean on the corpus; the largest was 1.3 times it). */
const QUESTION_MARGIN = 1.3;

/** Characters a clipped piece is first given per token of room (prose runs about four; the clip re-measures). */
const CLIP_CHARS_PER_TOKEN = 3.5;

export class CompactionEngine {
  private readonly record: SessionRecord;
  private readonly snapshots: SnapshotStore;
  /** The last steps kept word for word by tiers ① and ② (the near window). */
  readonly protectRecentSteps: number;
  readonly budget: Budget;

  /** What is folded, what is reduced, and what it all measures. */
  private readonly view: View;
  private readonly head: Head;
  private readonly projection: Projection;
  private readonly stored: StoredReductions;
  private readonly planner: FoldPlanner;
  private readonly gate = new AntiThrashGate();
  private readonly log: CompactionLog;
  private readonly notLoadedList: NotLoadedList;

  constructor(private readonly options: EngineOptions) {
    this.record = options.record;
    this.snapshots = options.snapshots;
    this.budget = options.budget;
    this.protectRecentSteps = options.protectRecentSteps ?? options.budget.protectRecentSteps ?? COMPACTION_PROTECT_RECENT_STEPS;
    const { record, snapshots, budget, counter, redactor } = options;
    this.view = new View({ record, counter, summaryCounter: options.summaryCounter, budget, cap: this.cap, protectRecentSteps: this.protectRecentSteps });
    this.head = new Head({ record, snapshots, budget, counter, blocks: options.blocks ?? [], retrieval: options.retrieval ?? DEFAULT_RETRIEVAL, redactor });
    this.projection = new Projection(record, redactor);
    this.stored = new StoredReductions(record, snapshots, redactor);
    this.planner = new FoldPlanner({
      record,
      snapshots,
      view: this.view,
      budget,
      cap: this.cap,
      summarizer: options.summarizer,
      fallback: options.fallback,
      ...(options.background ? { runner: options.background } : {}),
      foldInput: (toUnit) => this.foldInput(toUnit),
    });
    this.log = new CompactionLog(snapshots);
    this.notLoadedList = new NotLoadedList(record, this.view, redactor);
  }

  // ---------------------------------------------------------------- measuring

  /** predicted = real anchor + estimated increment since it (pure estimation on a cold start). */
  predicted(): number {
    return this.view.predicted();
  }

  /** Our running estimate of the view (no real measurement involved). */
  estimated(): number {
    return this.view.estimate;
  }

  /** A real measurement of the view just sent: refreshes the anchor and persists it. */
  observeRealTokens(real: number): void {
    if (!Number.isFinite(real) || real < 0) return;
    this.refreshBlocks();
    this.snapshots.put(ANCHOR_KEY, { type: 'anchor', anchor: this.view.observe(real) });
  }

  get compactions(): readonly Compaction[] {
    return this.log.compactions;
  }

  get coverageEnd(): number {
    return this.view.coverageEnd;
  }

  get currentSummary(): SummaryState | undefined {
    return this.view.summary;
  }

  /** The reduced form applied to a part address, if any. */
  formOf(address: string): ReducedForm | undefined {
    return this.view.formOf(address);
  }

  private get cap(): number {
    return this.options.summaryCap ?? summaryCapFor(this.options.budget);
  }

  // ----------------------------------------------------------- live appends

  /**
   * Folds what one appended record changed into the running view: counts only
   * the new content, restores a stored form for a new part, and mints the
   * eager reduced form of a tool result as it arrives.
   */
  onAppend(events: readonly AppendEvent[]): void {
    for (const event of events) {
      this.projection.touched(event.unitIndex);
      if (event.unitIndex < this.view.coverageUnit) continue;
      switch (event.type) {
        case 'unit':
          this.view.addToUnit(event.unitIndex, MESSAGE_OVERHEAD_TOKENS);
          break;
        case 'part': {
          this.restorePart(event.part);
          if (event.part.tool?.output !== undefined) this.mintToolForm(event.part);
          this.view.addToUnit(event.unitIndex, this.view.partTokens(event.part));
          break;
        }
        case 'result': {
          const before = this.view.partTokens(event.before);
          this.mintToolForm(event.after);
          this.view.addToUnit(event.unitIndex, this.view.partTokens(event.after) - before);
          break;
        }
      }
    }
  }

  private mintToolForm(part: Part): void {
    const tools = this.options.tools;
    if (!part.tool || tools.get(toolKey(part))) return;
    // The recovery pointer names the part's own key, which stays unique when a log reused a call id.
    const reduced = reduceTool({ ...part.tool, callId: toolKey(part) }, this.options.shrinkMinChars);
    if (reduced) tools.put(toolKey(part), reduced);
  }

  private restorePart(part: Part): void {
    const form = this.stored.formOf(part.address);
    if (form) this.view.setForm(part.address, form);
  }

  // ---------------------------------------------------------------- preflight

  /**
   * Turn start: restore a bounded checkpoint on the pristine raw. Folds the
   * longest stored coverage that still matches the raw into its summary,
   * re-derives the protected lines of that summary from the raw (drift reset),
   * swaps in every stored reduced form and seeds the calibration anchor.
   * It does not reduce.
   */
  preflight(): PreflightReport {
    const { coverageUnit, summary, drifted } = this.stored.restore();
    let restoredForms: number;
    if (this.stored.isDerived(coverageUnit, summary) && this.view.coverageUnit === coverageUnit && this.view.summary === summary) {
      // Nothing the view is derived from changed since the last preflight: the
      // same floor, no form or floor written, and every record appended since
      // went through onAppend, which restores and counts exactly as deriving
      // would. Deriving again would give the same view at a cost that grows
      // with the history.
      restoredForms = this.view.forms.size;
    } else {
      restoredForms = this.view.derive(coverageUnit, summary, (address) => this.stored.formOf(address));
      // The blocks are derived again below (refreshBlocks); counted again only if their text changed.
      this.head.invalidate();
    }
    this.stored.markDerived(coverageUnit, summary);
    this.log.load();
    const anchor = this.snapshots.get(ANCHOR_KEY);
    this.view.restoreAnchor(anchor?.type === 'anchor' ? anchor.anchor : undefined);
    // The anti-thrash gate is per turn. A preflight in the middle of a turn (a
    // resume after a crash) picks up the gate of that turn; a new turn resets it.
    const gate = this.snapshots.get(GATE_KEY);
    this.gate.resume(gate?.type === 'gate' ? gate.gate : undefined, currentTurnRecord(this.record.units));
    this.refreshBlocks();
    return { coverageEnd: this.coverageEnd, restoredForms, drifted, predicted: this.predicted() };
  }

  // --------------------------------------------------------------- the step

  /**
   * The operation at a model-call boundary. `atRecord` is the record the call
   * happens before (for the compaction log).
   */
  async step(atRecord: number): Promise<StepReport> {
    this.refreshBlocks();
    const predicted = this.predicted();
    if (!isOverTrigger(this.budget, predicted)) {
      this.planner.prepare(predicted);
      return { predicted, after: predicted, tier: 0, compactions: [], held: false };
    }
    if (this.gate.isHeld && !isNearWindow(this.budget, predicted)) return { predicted, after: predicted, tier: 0, compactions: [], held: true };
    if (this.planner.defer(predicted)) return { predicted, after: predicted, tier: 0, compactions: [], held: false, deferred: true };
    // Past where a fold may wait: tier ① first (the ladder's own first rung, no model call); if that is enough
    // for a fold with no plan yet to wait a call, its summary is made meanwhile.
    this.shrink(this.view.coverageUnit, this.view.nearWindowStart(), this.budget.stop);
    const shrunk = this.logged(atRecord, 1, predicted);
    if (shrunk && this.planner.defer(this.predicted(), true)) return { predicted, after: this.predicted(), tier: 1, compactions: [shrunk], held: false, deferred: true };
    const compactions = [...(shrunk ? [shrunk] : []), ...(await this.reduce(atRecord))];
    const after = this.predicted();
    this.gate.passed(predicted - after, this.budget.effective);
    this.snapshots.put(GATE_KEY, { type: 'gate', gate: this.gate.stored(currentTurnRecord(this.record.units)) });
    this.planner.prepare(after);
    return { predicted, after, tier: highestTier(compactions), compactions, held: false };
  }

  /** Whether the anti-thrash gate holds compaction off for the rest of the turn. */
  get antiThrashHeld(): boolean {
    return this.gate.isHeld;
  }

  private async reduce(atRecord: number): Promise<Compaction[]> {
    const out: Compaction[] = [];
    await reduceAlongLadder({
      budget: this.budget,
      unitCount: () => this.record.units.length,
      predicted: () => this.predicted(),
      firstUnit: () => this.view.coverageUnit,
      nearWindowStart: () => this.view.nearWindowStart(),
      shrink: (from, to, target) => this.shrink(from, to, target),
      fold: (toUnit, minSaving) => this.fold(toUnit, minSaving),
      plannedBoundary: (limit) => this.planner.plannedBoundary(limit),
      plannedSpan: (limit) => this.planner.plannedSpan(limit),
      foldBoundary: (limit) => this.view.foldBoundary(limit),
      clipLastUnit: () => this.clipLastUnit(),
      note: (tier, before, reactive) => {
        const c = this.logged(atRecord, tier, before, reactive);
        if (c) out.push(c);
      },
    });
    return out;
  }

  /**
   * Logs a reduction that changed the view (`before` → now). The log is
   * history, not a decision: kept in the store so that a resumed session
   * reports the same compactions as an uninterrupted one.
   */
  private logged(atRecord: number, tier: Tier, before: number, reactive = false): Compaction | undefined {
    this.refreshBlocks();
    const after = this.predicted();
    if (after === before) return undefined;
    const c: Compaction = reactive ? { atRecord, tier, before, after, reactive } : { atRecord, tier, before, after };
    this.log.add(c);
    return c;
  }

  /**
   * A fold the user asked for (`/compact` in the chat), whatever the budget:
   * everything before the near window (the protected last steps stay word for
   * word) goes into the summary now. It is stored and logged like any fold, so
   * every later derivation restores it. Nothing is folded when the near window
   * already starts where the summary ends, or when the fold would not make the
   * view smaller (its report then has no compaction).
   */
  async compactNow(atRecord: number): Promise<StepReport & { readonly outsideNearWindow: boolean }> {
    this.refreshBlocks();
    const predicted = this.predicted();
    const near = this.view.nearWindowStart();
    const outsideNearWindow = near > this.view.coverageUnit;
    const compactions: Compaction[] = [];
    if (outsideNearWindow && (await this.fold(near, 1))) {
      const c = this.logged(atRecord, 2, predicted);
      if (c) compactions.push(c);
    }
    const after = this.predicted();
    this.planner.prepare(after);
    return { predicted, after, tier: highestTier(compactions), compactions, held: false, outsideNearWindow };
  }

  /**
   * The ladder at once for a record no model call ran on (an imported
   * session shown in the panel): over the trigger, it reduces as a step
   * would, without waiting for a background summary (there is no next call
   * to wait for) and without the anti-thrash gate (there is no turn).
   */
  async reduceNow(atRecord: number): Promise<StepReport> {
    this.refreshBlocks();
    const predicted = this.predicted();
    if (!isOverTrigger(this.budget, predicted)) return { predicted, after: predicted, tier: 0, compactions: [], held: false };
    const compactions = await this.reduce(atRecord);
    const after = this.predicted();
    return { predicted, after, tier: highestTier(compactions), compactions, held: false };
  }

  // ------------------------------------------------------- the background floor

  /** Stops a summary running in the background (a stopped turn): the fold it was for will summarize itself. */
  cancelBackground(): void {
    this.planner.cancel();
  }

  /** The background floor's state (idle when there is no runner). */
  get backgroundState(): BackgroundState {
    return this.planner.state;
  }

  /** Where the summaries of this engine's folds came from. */
  get floorSources(): Readonly<Record<FloorSource, number>> {
    return this.log.floorSources;
  }

  /** The error that made the engine fall back to the static checkpoint last, if any. */
  get fallbackError(): unknown {
    return this.planner.fallbackError;
  }

  /** What the summarizer is asked for a fold up to `toUnit`: the span, and the view it was sent in as far as it fits. */
  private foldInput(toUnit: number): FoldInput {
    const view = this.view;
    const units = this.record.units;
    const input = { previous: view.summary, units: units.slice(view.coverageUnit, toUnit), coverageEnd: view.coverageEndAt(toUnit), cap: this.cap, before: unitsBefore(units, view.coverageUnit) };
    // The context goes with the question only as far as it fits beside it. The newest units are left out
    // first: a prefix of what was sent is still a cache hit, and the span is at its start. A span too large to fit
    // beside the question (a breakthrough fold takes in the step that jumped past the window) keeps its oldest units
    // in the context, as sent, and gives the question the rest, clipped (`left`: their tokens).
    const room = this.budget.effective - QUESTION_MARGIN * continuationQuestionTokens(input.units.length);
    const restCap = Math.floor(CONTINUATION_REST_SHARE * this.budget.effective);
    let tokens = this.predicted();
    let end = units.length;
    let left = 0;
    const rest = (): number => Math.min(restCap, left);
    while (tokens + rest() > room && end > view.coverageUnit) {
      const unit = view.unitTokens(--end);
      tokens -= unit;
      if (end < toUnit) left += unit;
    }
    if (end === view.coverageUnit) return input;
    const messages = this.project();
    if (end === units.length) return { ...input, context: messages };
    const head = messages.length - this.projection.tailLength;
    const context = messages.slice(0, head + this.projection.tailBefore(end));
    return end >= toUnit ? { ...input, context } : { ...input, context, contextUnits: end - view.coverageUnit, restTokens: rest() };
  }

  // ------------------------------------------------------------ the rungs

  /** Shrinks tool parts of units [from, to) oldest first until `target`, finishing each unit. */
  private shrink(from: number, to: number, target: number): void {
    const units = this.record.units;
    const view = this.view;
    for (let i = from; i < to; i++) {
      if (this.predicted() <= target) return;
      const unit = units[i]!;
      if (unit.kind !== 'step') continue;
      for (const part of unit.parts) {
        if (part.kind !== 'tool' || view.forms.has(part.address)) continue;
        const form = this.options.tools.get(toolKey(part));
        if (!form) continue; // a miss is a skip, never a drop
        const beforeTokens = view.partTokens(part);
        view.setForm(part.address, form);
        const afterTokens = view.partTokens(part);
        if (afterTokens >= beforeTokens) {
          view.deleteForm(part.address);
          continue;
        }
        this.stored.putForm(part.address, form);
        view.addToUnit(i, afterTokens - beforeTokens);
      }
    }
  }

  /**
   * Folds units [coverageUnit, toUnit) into the summary and stores it by
   * coverage — if the fold pays: the view it leaves is measured before the fold
   * is kept, and a fold that saves less than `minSaving` tokens (a fold never
   * makes the view bigger: `minSaving` is at least 1) is undone and not stored.
   * Returns whether the fold was kept.
   */
  private async fold(toUnit: number, minSaving = 1): Promise<boolean> {
    const units = this.record.units;
    const view = this.view;
    if (toUnit <= view.coverageUnit || toUnit >= units.length + 1) return false;
    // What the span holds bounds what folding it can save: not worth a summarizer call when that is too little.
    if (view.spanTokens(toUnit) < minSaving) {
      this.log.foldSkipped();
      return false;
    }
    const input = this.foldInput(toUnit);
    const coverageEnd = input.coverageEnd;
    const made = await this.planner.summaryFor(toUnit, input);
    // The lines already sent keep their bytes: the fold's delta is appended unless a full render is needed.
    const laid = layoutAfterFold(view.summary, made.state, this.options.summaryCounter, input.cap);
    const state = laid.state;
    const before = this.predicted();
    // What a fold that does not pay must put back: the view (only the span's forms leave it), and the head's
    // blocks as they were (the estimate counts them) with the request the retrieval block was built for.
    const headBefore = this.head.checkpoint();
    const undo = view.fold(toUnit, state);
    this.refreshBlocks();
    if (before - this.predicted() < Math.max(1, minSaving)) {
      // Not worth its cache miss (or worse, bigger): the view stays as it was.
      view.unfold(undo);
      // The blocks go back too: rendered again for the old coverage they could quote other passages, and the
      // estimate restored above counts the old ones.
      this.head.restore(headBefore);
      this.refreshBlocks();
      this.log.foldSkipped();
      return false;
    }
    this.stored.putFloor(coverageEnd, this.record.coverageDigest(toUnit), state);
    // The view is now what a preflight restoring this floor derives (its forms and counts were kept
    // exact through the fold): the next preflight need not derive it again unless something else is written.
    this.stored.markDerived(toUnit, state);
    this.log.foldMade(laid.kind, made.source);
    return true;
  }

  /** Folds not kept because they would have saved too little (see `fold`). */
  get foldsSkipped(): number {
    return this.log.foldsSkipped;
  }

  /** Floor summaries made by this engine (tiers ② and ④). */
  get floors(): number {
    return this.log.floors;
  }

  /** How the head was laid out at this engine's folds: appended to what was sent, or rendered in full. */
  get headLayouts(): Readonly<Record<LayoutKind, number>> {
    return this.log.headLayouts;
  }

  /**
   * Last guard: the one remaining unit is itself over the window. Its long texts
   * and any tool output left raw (a tool with no reducer, e.g. a sub-agent's
   * report) keep their head and tail, with a pointer to the full record.
   */
  private clipLastUnit(): void {
    const index = this.record.units.length - 1;
    const unit = this.record.units[index];
    if (!unit || index < this.view.coverageUnit) return;
    // One budget of characters for the whole unit, shared by its long pieces.
    const clippable = clippableParts(unit, (address) => this.view.formOf(address));
    if (clippable.length === 0) return;
    const originals = new Map(clippable.map((p) => [p.address, this.view.formOf(p.address)]));
    // The pieces may fill what the rest of the view leaves under the trigger (an outline of a long report keeps more of
    // each section the more room it has), never less than the fixed first share. Characters are not tokens: the share
    // is rescaled by what each clip measured (a few times at most) toward that room, then halved while the view is still
    // near the window.
    const pieceTokens = (): number => clippable.reduce((n, p) => n + this.view.partTokens(p), 0);
    const room = this.budget.trigger - (this.predicted() - pieceTokens());
    const least = firstClipShare(clippable.length);
    let share = Math.max(least, Math.floor((room * CLIP_CHARS_PER_TOKEN) / clippable.length));
    this.clipParts(index, clippable, originals, share);
    for (let attempt = 0, used = pieceTokens(); attempt < 4 && share > least && used > room; attempt++, used = pieceTokens()) {
      share = Math.max(least, Math.floor((share * room * (attempt < 2 ? 0.95 : 0.8)) / used));
      this.clipParts(index, clippable, originals, share);
    }
    while (isNearWindow(this.budget, this.predicted()) && share >= EMERGENCY_MIN_SHARE_CHARS * 2) {
      share = Math.floor(share / 2);
      this.clipParts(index, clippable, originals, share);
    }
  }

  private clipParts(index: number, clippable: readonly Part[], originals: ReadonlyMap<string, ReducedForm | undefined>, share: number): void {
    for (const part of clippable) {
      const before = this.view.partTokens(part);
      const recover = part.kind === 'tool' && part.tool ? `view_tool_call("${toolKey(part)}")` : `record r${part.record}`;
      const form = clippedForm(part, originals.get(part.address), share, recover);
      this.view.setForm(part.address, form);
      this.stored.putForm(part.address, form);
      this.view.addToUnit(index, this.view.partTokens(part) - before);
    }
  }

  // --------------------------------------------------------------- projecting

  /** The messages sent to the model: Task Context head, then the raw or reduced tail. */
  project(): ProjectedMessage[] {
    const view = this.view;
    return this.projection.project(this.head.render(view.coverageUnit, view.summary), view.coverageUnit, view.forms);
  }

  /**
   * How many leading messages of the last projection are the very objects of
   * the projection before it: a meter counts only what follows, so measuring
   * a call costs what changed, not the whole view.
   */
  get unchangedSinceLastProjection(): number {
    return this.projection.unchanged;
  }

  /** Projections made so far: `unchangedSinceLastProjection` relates the last one to the one just before it. */
  get projections(): number {
    return this.projection.count;
  }

  /** Re-measures the head's blocks when they change, keeping the running estimate exact. */
  private refreshBlocks(): void {
    const tokens = this.head.measure(this.view.coverageUnit, this.view.summary);
    if (tokens !== undefined) this.view.setBlocks(tokens);
  }

  /** Things the user should be told (the protected state over its budget). */
  get notices(): readonly string[] {
    return this.head.notices;
  }

  /** Absolute index of the first unit still in view (units before it are folded). */
  get firstUnitInView(): number {
    return this.view.coverageUnit;
  }

  /** Everything the model is not seeing in full, and how to get it back. */
  notLoaded(): NotLoadedEntry[] {
    return this.notLoadedList.list();
  }
}
