/**
 * Context strategies replayed side by side on one session: ours and the
 * baselines a user would otherwise get, each implemented from its published
 * behaviour. All of them render units with the engine's own renderer and are
 * measured by the same meter, so token and cost figures compare directly.
 * The summarizing baselines use the same deterministic summarizer as ours,
 * which isolates the strategy from the summary's quality. The baselines are
 * in baselines.ts, ours in ours.ts, what each strategy answers in strategy.ts.
 */
import type { Budget } from '../core/budget';
import { renderUnit, type ProjectedMessage } from '../core/engine';
import type { Redactor } from '../core/redact';
import { ProviderMeter } from '../core/replay';
import type { TokenCounter } from '../core/tokens';
import { fileTouches } from '../core/tools';
import type { RawRecord, Unit } from '../core/types';
import { ClearThenSummarize, NoCompaction, ObservationMasking, OpencodePrune, SlidingWindow } from './baselines';
import { Ours, type OursVariant } from './ours';
import type { CallSample, FinalView, FoldMetrics, StateMetrics, Strategy } from './strategy';

export const STRATEGY_NAMES = ['ours', 'none', 'sliding', 'masking', 'clear-summarize', 'opencode'] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];

export const STRATEGY_LABELS: Record<StrategyName, string> = {
  ours: 'Context Keeper',
  none: 'no compaction',
  sliding: 'sliding window',
  masking: 'observation masking',
  'clear-summarize': 'clear-then-summarize',
  opencode: 'opencode prune',
};

export interface StrategyRun {
  readonly name: StrategyName;
  readonly calls: CallSample[];
  /**
   * The summarizer's own model calls (a summarizing strategy's folds or pivots,
   * and ours' background summaries whether their result was used or not).
   */
  readonly summarizerCalls: CallSample[];
  readonly folds: FoldMetrics | undefined;
  readonly final: FinalView;
  /** Compaction events by kind ("tier 1" … for ours; "summary", "prune", "truncate", "mask" for baselines). */
  readonly compactions: Record<string, number>;
  readonly floors: number;
  readonly antiThrash: number;
  readonly state: StateMetrics | undefined;
  readonly overflowAt: number | undefined;
  readonly steps: number;
  readonly records: RawRecord[];
  readonly units: readonly Unit[];
}

function createStrategy(name: StrategyName, budget: Budget, counter: TokenCounter, redactor: Redactor, meter: ProviderMeter, variant?: OursVariant): Strategy {
  switch (name) {
    case 'ours':
      return new Ours(budget, counter, redactor, variant);
    case 'none':
      return new NoCompaction(budget, meter);
    case 'sliding':
      return new SlidingWindow(budget, meter);
    case 'masking':
      return new ObservationMasking(budget, meter);
    case 'clear-summarize':
      return new ClearThenSummarize(budget, meter, counter, redactor);
    case 'opencode':
      return new OpencodePrune(budget, meter, counter, redactor);
  }
}

/** Replays a session under one strategy: a model call before every step, and once more at the end. */
export async function runStrategy(
  name: StrategyName,
  records: readonly RawRecord[],
  budget: Budget,
  counter: TokenCounter,
  redactor: Redactor,
  meter: ProviderMeter = new ProviderMeter(counter),
  variant?: OursVariant,
): Promise<StrategyRun> {
  const strategy = createStrategy(name, budget, counter, redactor, meter, variant);
  const calls: { record: number; tokens: number; cacheRead: number; overflow: boolean }[] = [];
  let previous: ProjectedMessage[] = [];
  let overflowAt: number | undefined;
  let last: { messages: ProjectedMessage[]; items: readonly number[]; tokens: number } = { messages: [], items: [], tokens: 0 };

  const call = async (at: number): Promise<void> => {
    const { messages, items } = await strategy.call(at);
    const { tokens, reused: cacheRead } = meter.measure(messages, previous);
    const overflow = tokens > budget.effective;
    if (overflow && overflowAt === undefined) overflowAt = at;
    strategy.measured?.(tokens, messages.length);
    calls.push({ record: at, tokens, cacheRead, overflow });
    previous = messages;
    last = { messages, items, tokens };
  };

  for (const record of records) {
    if (strategy.opensStep(record)) await call(record.index);
    strategy.append(record);
  }
  await call(records.length);

  // Output tokens: the assistant message of the step each call produced.
  const units = strategy.record.units;
  const stepAt = new Map<number, Unit>();
  for (const u of units) if (u.kind === 'step') stepAt.set(u.firstRecord, u);
  const samples: CallSample[] = calls.map((c) => {
    const step = stepAt.get(c.record);
    const output = step ? meter.contentTokens([renderUnit(step)[0]!])[0]! : 0;
    return { ...c, output };
  });
  const final = strategy.final();
  return {
    name,
    calls: samples,
    summarizerCalls: strategy.summarizerCalls,
    folds: strategy instanceof Ours ? strategy.folds : undefined,
    final: { messages: last.messages, tokens: last.tokens, summary: final.summary, unitsInView: last.items, indexed: final.indexed },
    compactions: strategy.compactions,
    floors: strategy.floors(),
    antiThrash: strategy.antiThrash(),
    state: strategy instanceof Ours ? strategy.stateMetrics() : undefined,
    overflowAt,
    steps: strategy.record.steps,
    records: strategy.record.records,
    units,
  };
}

/** Paths a strategy's final view shows as modified or read: its index, its visible tool calls, its summary's deliverables. */
export function visibleArtifacts(run: StrategyRun): { modified: string[]; read: string[] } {
  const modified = new Set<string>();
  const read = new Set<string>();
  for (const entry of run.final.indexed) {
    if (entry.modified) modified.add(entry.path);
    else if (entry.read) read.add(entry.path);
  }
  for (const i of run.final.unitsInView) {
    for (const part of run.units[i]?.parts ?? []) {
      if (!part.tool) continue;
      for (const touch of fileTouches(part.tool)) (touch.access === 'read' ? read : modified).add(touch.path);
    }
  }
  for (const line of run.final.summary?.facts.Deliverables ?? []) modified.add(line.key);
  for (const path of modified) read.delete(path);
  return { modified: [...modified].sort(), read: [...read].sort() };
}
