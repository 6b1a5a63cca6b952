/**
 * The ladder: what the engine does, in order, when the view is over its
 * trigger, and how far each rung goes.
 *
 *   ① shrink old tools outside the near window, oldest first, toward stop;
 *   ② floor-summarize the prefix outside the near window (when still over the
 *     trigger, or, in a narrow dead zone, still above stop);
 *   ③ breakthrough shrink, near window included;
 *   ④ breakthrough floor, no near-window protection; the last guard clips the
 *     one remaining unit when it alone is over the window.
 *
 * Also here: the arithmetic that places a fold's boundary, the anti-thrash
 * gate that stops the ladder for the rest of a turn, the emergency clip's
 * forms, and the log of what the ladder did. The rungs themselves (a shrink,
 * a fold) work on the view: the ladder calls them through `LadderView`.
 */
import { ANTI_THRASH_LIMIT, ANTI_THRASH_MIN_SAVING_RATIO, isNearWindow, isOverTrigger, type Budget } from './budget';
import type { FloorSource } from './foldPlanner';
import { keepEnds } from './digest';
import { outlineOf } from './outline';
import { LOG_PREFIX, logKey, type Gate, type ReducedForm, type SnapshotStore } from './store';
import type { LayoutKind } from './summaryLayout';
import { renderToolInput } from './tools';
import type { Part, Unit } from './types';

export type Tier = 1 | 2 | 3 | 4;

export interface Compaction {
  /** The model call happened just before this record. */
  readonly atRecord: number;
  readonly tier: Tier;
  readonly before: number;
  readonly after: number;
  /** The floor was re-entered because the view was still over the effective window. */
  readonly reactive?: boolean;
}

/** The highest tier among a step's compactions (0: none). */
export function highestTier(compactions: readonly Compaction[]): 0 | Tier {
  return compactions.reduce<0 | Tier>((t, c) => (c.tier > t ? c.tier : t), 0);
}

/** A fold that would save less than this share of wEff is not made (its cache miss would cost more than it buys). */
export const MIN_FOLD_SAVING_RATIO = 0.05;

// ------------------------------------------------------------ where a fold ends

/** Absolute index of the first unit of the near window (the Nth-last step), never before `from`. */
export function nearWindowStart(units: readonly Unit[], from: number, protectRecentSteps: number): number {
  let steps = 0;
  for (let i = units.length - 1; i >= from; i--) {
    if (units[i]!.kind === 'step' && ++steps >= protectRecentSteps) return i;
  }
  return from;
}

/** A fold leaves room under the trigger for this many model calls of the session's recent growth. */
const RUNWAY_CALLS = 8;
/** The recent growth is the median size of this many of the latest steps in view. */
const RUNWAY_SAMPLE = 8;

/**
 * What one model call adds to the view, from the last RUNWAY_SAMPLE steps from `from` on: the median (the recent
 * growth) and the largest (how far one call has carried the view lately).
 */
export function recentGrowth(units: readonly Unit[], from: number, tokensOf: (unitIndex: number) => number): { median: number; peak: number } {
  const sizes: number[] = [];
  for (let i = units.length - 1; i >= from && sizes.length < RUNWAY_SAMPLE; i--) {
    if (units[i]!.kind === 'step') sizes.push(tokensOf(i));
  }
  if (sizes.length === 0) return { median: 0, peak: 0 };
  sizes.sort((a, b) => a - b);
  return { median: sizes[Math.floor(sizes.length / 2)]!, peak: sizes[sizes.length - 1]! };
}

/**
 * Where a fold brings the view: low enough that the session's recent growth
 * (the median size of its last steps in view, a step being what one model call
 * adds) fits RUNWAY_CALLS more calls under the trigger, and never above stop.
 * Read from the record, so a view derived again folds the same.
 */
export function foldTarget(budget: Budget, growth: number): number {
  return Math.min(budget.stop, budget.trigger - RUNWAY_CALLS * growth);
}

/** Least growth of the summary a fold allows for when choosing its boundary. */
const SUMMARY_GROWTH_MIN_TOKENS = 300;
/** Expected growth of the summary per folded token (an extractive fold keeps a small share). */
const SUMMARY_GROWTH_RATIO = 0.15;

/** Expected growth of a summary of `summaryTokens` (capped at `cap`) when `removed` tokens are folded into it. */
export function summaryGrowth(removed: number, cap: number, summaryTokens: number): number {
  const room = Math.max(SUMMARY_GROWTH_MIN_TOKENS, cap - summaryTokens);
  return Math.min(room, SUMMARY_GROWTH_MIN_TOKENS + SUMMARY_GROWTH_RATIO * removed);
}

/**
 * Progressive folding: the smallest prefix from `from`, ending at a unit
 * boundary no later than `limit`, whose removal should bring a view of
 * `predicted` down to `target`, allowing for the summary to grow (`growthOf`).
 * The raw tail kept is therefore as large as the budget allows.
 */
export function foldBoundary(
  from: number,
  limit: number,
  predicted: number,
  target: number,
  tokensOf: (unitIndex: number) => number,
  growthOf: (removed: number) => number,
): number {
  let removed = 0;
  for (let i = from; i < limit; i++) {
    removed += tokensOf(i);
    if (predicted - removed + growthOf(removed) <= target) return i + 1;
  }
  return limit;
}

// ------------------------------------------------------------------ the rungs

/** The view as the ladder works on it. */
export interface LadderView {
  readonly budget: Budget;
  /** Units in the record. */
  unitCount(): number;
  predicted(): number;
  /** The first unit in view: it moves when a fold is kept. */
  firstUnit(): number;
  nearWindowStart(): number;
  /** Shrinks tool parts of units [from, to) oldest first until the view is at `target`. */
  shrink(from: number, to: number, target: number): void;
  /** Folds units up to `toUnit` if that saves at least `minSaving` tokens; whether it was kept. */
  fold(toUnit: number, minSaving: number): Promise<boolean>;
  /** The end of a fold planned ahead for a fold now, if the plan still serves. */
  plannedBoundary(limit: number): number | undefined;
  /** The end of the planned span, whether or not folding it alone is enough (its summary is made ahead in the background). */
  plannedSpan(limit: number): number | undefined;
  /** The smallest fold up to `limit` that brings the view to its fold target. */
  foldBoundary(limit: number): number;
  /** The last guard: the one remaining unit clipped to fit the window. */
  clipLastUnit(): void;
  /** A rung ran: the view was `before` tokens when it started. */
  note(tier: Tier, before: number, reactive?: boolean): void;
}

/** Runs the ladder once over a view that is over its trigger. */
export async function reduceAlongLadder(view: LadderView): Promise<void> {
  const budget = view.budget;
  const near = view.nearWindowStart();
  const firstBefore = view.firstUnit();
  let folded = false;

  // ① shrink old tools outside the near window, oldest first, toward stop
  let before = view.predicted();
  view.shrink(view.firstUnit(), near, budget.stop);
  view.note(1, before);

  // ② floor-summarize the prefix outside the near window: over the trigger, or short of stop in a narrow dead zone
  const shortOfStop = budget.foldAboveStop && view.predicted() > budget.stop;
  if ((isOverTrigger(budget, view.predicted()) || shortOfStop) && near > view.firstUnit()) {
    before = view.predicted();
    await view.fold(view.plannedBoundary(near) ?? view.plannedSpan(near) ?? view.foldBoundary(near), MIN_FOLD_SAVING_RATIO * budget.effective);
    // Attempted: tier ④ fires only when ② did not try this pass (a fold too small to pay is no reason to breach).
    folded = true;
    view.note(2, before);
  }

  // ③ breakthrough shrink, near window included
  if (isOverTrigger(budget, view.predicted())) {
    before = view.predicted();
    view.shrink(view.firstUnit(), view.unitCount(), budget.stop);
    view.note(3, before);
  }

  // ④ breakthrough floor: no near-window protection; keeps only the last unit raw.
  // Re-entered even after ② when the view is still over the effective window:
  // that is the error recovery a provider's hard reject would trigger.
  // A breakthrough planned at an earlier call (the near window held everything then) is made even when ② tried
  // this pass: the near window has moved since, and the fold the plan stands for was only waiting for its summary.
  const overWindow = isNearWindow(budget, view.predicted());
  const overTrigger = isOverTrigger(budget, view.predicted());
  const last = view.unitCount() - 1;
  const planned = overTrigger && view.firstUnit() === firstBefore ? view.plannedBoundary(last) : undefined;
  if ((overTrigger && (!folded || planned !== undefined)) || overWindow) {
    if (last > view.firstUnit()) {
      before = view.predicted();
      // Over the window a fold is the error recovery: any saving will do. Otherwise it must pay like tier ②.
      await view.fold(planned ?? view.foldBoundary(last), overWindow ? 1 : MIN_FOLD_SAVING_RATIO * budget.effective);
      view.note(4, before, folded && planned === undefined);
    }
  }
  if (isNearWindow(budget, view.predicted())) {
    before = view.predicted();
    view.clipLastUnit();
    view.note(4, before, true);
  }
}

// ---------------------------------------------------------- the emergency clip

/** Text tails kept by the emergency clip of an oversized last message. */
const EMERGENCY_HEAD_CHARS = 6000;
const EMERGENCY_TAIL_CHARS = 2000;
/** A piece shorter than this is left whole by the emergency clip. */
const EMERGENCY_MIN_PIECE_CHARS = 1000;
/** The emergency clip stops halving its share here. */
export const EMERGENCY_MIN_SHARE_CHARS = 200;

/** The parts of the last unit the emergency clip cuts: long ones not already dropped. */
export function clippableParts(unit: Unit, formOf: (address: string) => ReducedForm | undefined): Part[] {
  return unit.parts.filter((p) => formOf(p.address)?.how !== 'dropped' && clipLength(p, formOf(p.address)) > EMERGENCY_MIN_PIECE_CHARS);
}

function clipLength(part: Part, form: ReducedForm | undefined): number {
  if (part.kind !== 'tool' || !part.tool) return (form ? form.output : part.text).length;
  if (form) return form.input.length + form.output.length;
  return renderToolInput(part.tool).length + (part.tool.output?.length ?? 0);
}

/** The characters each of `pieces` clipped parts keeps at first: one budget for the whole unit, shared. */
export function firstClipShare(pieces: number): number {
  return Math.max(EMERGENCY_MIN_PIECE_CHARS, Math.floor((EMERGENCY_HEAD_CHARS + EMERGENCY_TAIL_CHARS) / pieces));
}

/**
 * A part clipped to `share` characters (from its form before the clip,
 * `current`, or its raw text): long texts and any tool output left raw (a tool
 * with no reducer, e.g. a sub-agent's report) keep their head and tail, with
 * `recover`, the pointer to the full record.
 */
export function clippedForm(part: Part, current: ReducedForm | undefined, share: number, recover: string): ReducedForm {
  const tool = part.kind === 'tool' ? part.tool : undefined;
  const head = Math.floor(share * 0.75);
  const clip = (text: string): string => keepEnds(text, head, share - head, (elided) => `[… ${elided} characters elided to fit the window; full text: ${recover}]`);
  // A long message with headings and lists keeps its outline: every section still says what it found.
  const outlined = (text: string): string => {
    if (text.length <= share) return text;
    const note = `[outline of a ${text.length}-character message (headings, the opening words of each item and paragraph); full text: ${recover}]`;
    const outline = outlineOf(text, share - note.length - 1);
    return outline !== undefined ? `${note}\n${outline}` : clip(text);
  };
  return tool
    ? { how: 'shrunk', input: clip(current ? current.input : renderToolInput(tool)), output: clip(current ? current.output : (tool.output ?? '')), recover }
    : { how: 'shrunk', input: '', output: current ? clip(current.output) : outlined(part.text), recover };
}

// ------------------------------------------------------------ the gate and the log

/**
 * The anti-thrash gate: a pass that saves less than ANTI_THRASH_MIN_SAVING_RATIO
 * of wEff is ineffective, and after ANTI_THRASH_LIMIT of them in a row the
 * ladder is held off for the rest of the turn. Kept in the store by turn, so
 * a resume in the middle of a turn picks up the gate of that turn.
 */
export class AntiThrashGate {
  private ineffective = 0;
  private held = false;

  /** Whether the ladder is held off for the rest of the turn. */
  get isHeld(): boolean {
    return this.held;
  }

  /** At a preflight: the stored gate if it is the current turn's (`turnRecord`), else a fresh one. */
  resume(stored: Gate | undefined, turnRecord: number): void {
    if (stored && stored.turnRecord === turnRecord) {
      this.ineffective = stored.ineffective;
      this.held = stored.held;
    } else {
      this.ineffective = 0;
      this.held = false;
    }
  }

  /** A pass saved `saving` tokens of a window of `effective`. */
  passed(saving: number, effective: number): void {
    if (saving >= ANTI_THRASH_MIN_SAVING_RATIO * effective) {
      this.ineffective = 0;
    } else if (++this.ineffective >= ANTI_THRASH_LIMIT) {
      this.held = true;
    }
  }

  /** The gate as stored for the turn starting at `turnRecord`. */
  stored(turnRecord: number): Gate {
    return { turnRecord, ineffective: this.ineffective, held: this.held };
  }
}

/**
 * What the ladder did: the compactions, each kept in the store as it happens
 * (history, not a decision: a resumed session reports the same compactions as
 * an uninterrupted one), and how its folds went.
 */
export class CompactionLog {
  private readonly entries: Compaction[] = [];
  private skipped = 0;
  private made = 0;
  private readonly layouts: Record<LayoutKind, number> = { appended: 0, rendered: 0 };
  private readonly sources: Record<FloorSource, number> = { precomputed: 0, awaited: 0, synchronous: 0 };

  constructor(private readonly snapshots: SnapshotStore) {}

  get compactions(): readonly Compaction[] {
    return this.entries;
  }

  /** Reads the log back from the store, when this engine has logged nothing yet. */
  load(): void {
    if (this.entries.length !== 0) return;
    for (const key of this.snapshots.keys(LOG_PREFIX).sort()) {
      const entry = this.snapshots.get(key);
      if (entry?.type === 'log') this.entries.push(entry.compaction);
    }
  }

  add(c: Compaction): void {
    this.snapshots.put(logKey(this.entries.length), { type: 'log', compaction: c });
    this.entries.push(c);
  }

  /** A fold was kept, its head laid out as `layout`, its summary from `source`. */
  foldMade(layout: LayoutKind, source: FloorSource): void {
    this.layouts[layout]++;
    this.sources[source]++;
    this.made++;
  }

  /** A fold was not kept: it would have saved too little. */
  foldSkipped(): void {
    this.skipped++;
  }

  /** Folds not kept because they would have saved too little. */
  get foldsSkipped(): number {
    return this.skipped;
  }

  /** Floor summaries made (tiers ② and ④). */
  get floors(): number {
    return this.made;
  }

  /** Where the summaries of the folds came from. */
  get floorSources(): Readonly<Record<FloorSource, number>> {
    return this.sources;
  }

  /** How the head was laid out at the folds: appended to what was sent, or rendered in full. */
  get headLayouts(): Readonly<Record<LayoutKind, number>> {
    return this.layouts;
  }
}
