/**
 * The evaluation harness: every probed session, every window size, every
 * strategy; the metrics of each run, and totals. Pure given its inputs (no
 * clock, no randomness), so the report it feeds is byte-for-byte reproducible.
 */
import { defaultBudget } from '../core/budget';
import type { Redactor } from '../core/redact';
import { ProviderMeter } from '../core/replay';
import type { TokenCounter } from '../core/tokens';
import type { RawRecord } from '../core/types';
import {
  artifactTrail,
  citations,
  multiGenerationDrift,
  probeRecall,
  probeTarget,
  replayCost,
  utility,
  type CitationReport,
  type CostReport,
  type DriftReport,
  type PrecisionRecall,
} from './metrics';
import type { ProbeFile, ProbeKind } from './probes';
import { auditSummary, auditedLines, type AuditedLine, type NoiseCounts } from './noise';
import type { OursVariant } from './ours';
import { runStrategy, STRATEGY_NAMES, type StrategyName, type StrategyRun } from './strategies';
import type { StateMetrics } from './strategy';

export const EVAL_WINDOWS = [8_000, 16_000, 32_000, 128_000] as const;

/** Output reservation per window: 1/8 of it, at most 8,000 tokens. */
export function reserveFor(window: number): number {
  return Math.min(8_000, Math.floor(window / 8));
}

export interface StrategyMetrics {
  readonly strategy: StrategyName;
  readonly probes: { total: number; kept: number; recall: number; byKind: Record<ProbeKind, { total: number; kept: number }>; missing: string[] };
  readonly staleAsCurrent: number;
  readonly criticalLost: number;
  readonly artifacts: { modified: PrecisionRecall; read: PrecisionRecall };
  readonly citations: Omit<CitationReport, 'problems'> & { problems: string[] };
  readonly tokensEnd: number;
  /** Everything: the chat's calls and the summarizer's. */
  readonly cost: CostReport;
  /** The summarizer's own calls alone (included in `cost`). */
  readonly summarizer: CostReport;
  /**
   * Seed 004's tokens per task: every token sent and generated (chat and
   * summarizer), plus what re-reading the lost facts that have a re-readable
   * source would take (one more call with the final context, and the tool's
   * output again, per source record).
   */
  readonly tokensPerTask: number;
  readonly reread: { readonly probes: number; readonly sources: number; readonly tokens: number };
  /** Ours: where the floor summaries came from, how the head was laid out, folds not made. */
  readonly folds: StrategyRun['folds'] | null;
  readonly compactions: Record<string, number>;
  readonly floorsPer100Steps: number;
  readonly antiThrash: number;
  /** The state channel's checks (Context Keeper only). */
  readonly state: StateMetrics | null;
  /** The noise audit of the summary after the last fold (Context Keeper only). */
  readonly noise: NoiseCounts | null;
  readonly overflowAt: number | null;
  readonly overflowCalls: number;
  readonly utility: number;
  /** Cumulative dollars after each call (for the replay chart). */
  readonly cumulativeDollars: number[];
}

export interface WindowResult {
  readonly window: number;
  readonly reserve: number;
  readonly strategies: StrategyMetrics[];
}

export interface SessionResult {
  readonly session: string;
  readonly records: number;
  readonly steps: number;
  readonly probes: number;
  readonly windows: WindowResult[];
  /** Ours' summary lines after the last fold, by window (the hand-labelled noise sample is drawn from them). */
  readonly finalLines: Readonly<Record<number, readonly AuditedLine[]>>;
}

function round(n: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export async function evaluateSession(
  probeFile: ProbeFile,
  records: readonly RawRecord[],
  counter: TokenCounter,
  redactor: Redactor,
  windows: readonly number[] = EVAL_WINDOWS,
  strategies: readonly StrategyName[] = STRATEGY_NAMES,
): Promise<SessionResult> {
  if (records.length !== probeFile.records) {
    throw new Error(`${probeFile.session}: the probe file expects ${probeFile.records} records, the transcript has ${records.length}`);
  }
  const meter = new ProviderMeter(counter);
  const out: WindowResult[] = [];
  const finalLines: Record<number, AuditedLine[]> = {};
  let steps = 0;
  for (const window of windows) {
    const budget = defaultBudget({ window, reserve: reserveFor(window) });
    const metrics: StrategyMetrics[] = [];
    for (const name of strategies) {
      const run = await runStrategy(name, records, budget, counter, redactor, meter);
      steps = run.steps;
      if (name === 'ours') finalLines[window] = auditedLines(run.final.summary);
      const recall = probeRecall(probeFile.probes, probeTarget(run));
      const cost = replayCost([...run.calls, ...run.summarizerCalls]);
      const summarizer = replayCost(run.summarizerCalls);
      const reread = rereadCost(recall.results.filter((r) => !r.kept).map((r) => r.probe.record), records, counter, run.final.tokens);
      const cites = citations(run.final.summary, run.records, redactor);
      let cumulative = 0;
      const cumulativeDollars = [...run.calls, ...run.summarizerCalls].sort((a, b) => a.record - b.record).map((c) => {
        cumulative += replayCost([c]).dollars;
        return round(cumulative, 6);
      });
      const recallShare = recall.total ? recall.kept / recall.total : 1;
      metrics.push({
        strategy: name,
        probes: {
          total: recall.total,
          kept: recall.kept,
          recall: round(recallShare),
          byKind: recall.byKind,
          missing: recall.results.filter((r) => !r.kept).map((r) => r.probe.id),
        },
        staleAsCurrent: recall.staleAsCurrent,
        criticalLost: recall.criticalLost,
        artifacts: artifactTrail(run, probeFile.artifacts),
        citations: cites,
        tokensEnd: run.final.tokens,
        cost: { ...cost, dollars: round(cost.dollars, 6), dollarsUncached: round(cost.dollarsUncached, 6) },
        summarizer: { ...summarizer, dollars: round(summarizer.dollars, 6), dollarsUncached: round(summarizer.dollarsUncached, 6) },
        tokensPerTask: cost.inputTokens + cost.outputTokens + reread.tokens,
        reread,
        folds: run.folds ?? null,
        compactions: Object.fromEntries(Object.entries(run.compactions).sort(([a], [b]) => (a < b ? -1 : 1))),
        floorsPer100Steps: run.steps ? round((100 * run.floors) / run.steps, 2) : 0,
        antiThrash: run.antiThrash,
        state: run.state ?? null,
        noise: name === 'ours' ? auditSummary(run.final.summary) : null,
        overflowAt: run.overflowAt ?? null,
        overflowCalls: run.calls.filter((c) => c.overflow).length,
        utility: round(utility(recallShare, cost.dollars, recall.criticalLost)),
        cumulativeDollars,
      });
    }
    out.push({ window, reserve: budget.reserve, strategies: metrics });
  }
  return { session: probeFile.session, records: records.length, steps, probes: probeFile.probes.length, windows: out, finalLines };
}

/**
 * What re-reading lost facts would cost an agent: for each distinct source
 * record that is a tool's output (a file read, a command, a fetch — something
 * that can be run again), one more call with the final context plus the
 * output again. Facts stated only in conversation cannot be re-read and add
 * nothing here (their loss shows in recall).
 */
export function rereadCost(lostRecords: readonly number[], records: readonly RawRecord[], counter: TokenCounter, finalTokens: number): { probes: number; sources: number; tokens: number } {
  const sources = new Set<number>();
  let probes = 0;
  for (const at of lostRecords) {
    const r = records[at];
    if (r?.role !== 'tool' || !r.toolOutput) continue;
    probes++;
    sources.add(at);
  }
  let tokens = 0;
  for (const at of sources) tokens += finalTokens + counter.count(records[at]!.toolOutput!);
  return { probes, sources: sources.size, tokens };
}

/** A variant of ours, measured on one session at one window (the ablations of the report). */
export interface VariantResult {
  readonly kept: number;
  readonly total: number;
  readonly tokensEnd: number;
  readonly dollars: number;
}

export async function evaluateVariant(probeFile: ProbeFile, records: readonly RawRecord[], counter: TokenCounter, redactor: Redactor, window: number, variant: OursVariant): Promise<VariantResult> {
  const budget = variant.budget ? variant.budget(window, reserveFor(window)) : defaultBudget({ window, reserve: reserveFor(window) });
  const run = await runStrategy('ours', records, budget, counter, redactor, new ProviderMeter(counter), variant);
  const recall = probeRecall(probeFile.probes, probeTarget(run));
  return { kept: recall.kept, total: recall.total, tokensEnd: run.final.tokens, dollars: replayCost([...run.calls, ...run.summarizerCalls]).dollars };
}

export interface DriftResult {
  readonly session: string;
  readonly drift: DriftReport;
}

export function evaluateDrift(session: string, records: readonly RawRecord[], counter: TokenCounter, redactor: Redactor): DriftResult {
  return { session, drift: multiGenerationDrift(records, counter, redactor, 10) };
}

/** Totals over sessions for one window and one strategy. */
export interface Aggregate {
  readonly strategy: StrategyName;
  readonly window: number;
  readonly probes: number;
  readonly kept: number;
  readonly recall: number;
  readonly byKind: Record<string, { total: number; kept: number }>;
  readonly staleAsCurrent: number;
  readonly criticalLost: number;
  readonly modifiedPrecision: number;
  readonly modifiedRecall: number;
  readonly readPrecision: number;
  readonly readRecall: number;
  readonly citedFacts: number;
  readonly validCitations: number;
  readonly unsourced: number;
  readonly meanTokensEnd: number;
  readonly inputTokens: number;
  readonly cacheReadTokens: number;
  readonly dollars: number;
  readonly summarizerCalls: number;
  readonly summarizerDollars: number;
  readonly tokensPerTask: number;
  readonly rereadProbes: number;
  readonly floorSources: Record<string, number>;
  readonly headLayouts: Record<string, number>;
  readonly foldsSkipped: number;
  readonly compactions: number;
  readonly floorsPer100Steps: number;
  readonly antiThrash: number;
  readonly sessionsOverflowed: number;
  readonly utility: number;
}

function tally(maps: readonly Readonly<Record<string, number>>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of maps) for (const [k, v] of Object.entries(m)) out[k] = (out[k] ?? 0) + v;
  return out;
}

function mean(values: number[]): number {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0;
}

export function aggregate(results: readonly SessionResult[], window: number, strategy: StrategyName): Aggregate {
  const rows = results.flatMap((r) => r.windows.filter((w) => w.window === window).flatMap((w) => w.strategies.filter((s) => s.strategy === strategy)));
  const sum = (f: (m: StrategyMetrics) => number): number => rows.reduce((a, m) => a + f(m), 0);
  const byKind: Record<string, { total: number; kept: number }> = {};
  for (const m of rows) {
    for (const [k, v] of Object.entries(m.probes.byKind)) {
      const e = (byKind[k] ??= { total: 0, kept: 0 });
      e.total += v.total;
      e.kept += v.kept;
    }
  }
  const probes = sum((m) => m.probes.total);
  const kept = sum((m) => m.probes.kept);
  const steps = results.reduce((a, r) => a + r.steps, 0);
  return {
    strategy,
    window,
    probes,
    kept,
    recall: round(probes ? kept / probes : 1),
    byKind,
    staleAsCurrent: sum((m) => m.staleAsCurrent),
    criticalLost: sum((m) => m.criticalLost),
    modifiedPrecision: round(mean(rows.map((m) => m.artifacts.modified.precision))),
    modifiedRecall: round(mean(rows.map((m) => m.artifacts.modified.recall))),
    readPrecision: round(mean(rows.map((m) => m.artifacts.read.precision))),
    readRecall: round(mean(rows.map((m) => m.artifacts.read.recall))),
    citedFacts: sum((m) => m.citations.facts),
    validCitations: sum((m) => m.citations.valid),
    unsourced: sum((m) => m.citations.unsourced),
    meanTokensEnd: Math.round(mean(rows.map((m) => m.tokensEnd))),
    inputTokens: sum((m) => m.cost.inputTokens),
    cacheReadTokens: sum((m) => m.cost.cacheReadTokens),
    dollars: round(sum((m) => m.cost.dollars), 4),
    summarizerCalls: sum((m) => m.summarizer.calls),
    summarizerDollars: round(sum((m) => m.summarizer.dollars), 4),
    tokensPerTask: sum((m) => m.tokensPerTask),
    rereadProbes: sum((m) => m.reread.probes),
    floorSources: tally(rows.map((m) => m.folds?.sources ?? {})),
    headLayouts: tally(rows.map((m) => m.folds?.layouts ?? {})),
    foldsSkipped: sum((m) => m.folds?.skipped ?? 0),
    compactions: sum((m) => Object.values(m.compactions).reduce((a, b) => a + b, 0)),
    floorsPer100Steps: steps ? round(rows.reduce((a, m, i) => a + (m.floorsPer100Steps * (results[i]?.steps ?? 0)) / 100, 0) / (steps / 100), 2) : 0,
    antiThrash: sum((m) => m.antiThrash),
    sessionsOverflowed: rows.filter((m) => m.overflowAt !== null).length,
    utility: round(mean(rows.map((m) => m.utility))),
  };
}
