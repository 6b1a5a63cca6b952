/**
 * Plays a recorded session as if it were live, exactly as the extension runs
 * it: every user record starts a turn (preflight), every new step is a model
 * call (the compaction operation runs just before it), tool results get their
 * compacted forms as they arrive. A simulated provider measures each projected
 * context in real tokens and refreshes the calibration anchor.
 */
import { MESSAGE_OVERHEAD_TOKENS } from './budget';
import type { Compaction, ProjectedMessage, StepReport } from './engine';
import { CompactionSession, type SessionOptions } from './session';
import type { LedgerCounts, LedgerEntry } from './ledger';
import { MemoTokenCounter, type TokenCounter } from './tokens';
import type { RawRecord } from './types';

export interface Clock {
  /** Milliseconds, monotonic. */
  now(): number;
}

export interface ReplayStepLine {
  readonly step: number;
  /** The model call happens just before this record. */
  readonly record: number;
  readonly predicted: number;
  readonly tokens: number;
  readonly tier: number;
  readonly ms: number;
  readonly prefixReused: number;
}

export interface ReplayTotals {
  readonly steps: number;
  readonly compactionsPerTier: Record<'1' | '2' | '3' | '4', number>;
  readonly floorSummaries: number;
  readonly antiThrashHolds: number;
  readonly meanMs: number;
  readonly p95Ms: number;
  readonly tokensSent: number;
  readonly cacheReusedTokens: number;
  readonly maxTokens: number;
}

export interface ReplayOptions extends SessionOptions {
  /** Project just before this record (default: after the last one). */
  readonly at?: number;
  /**
   * Records [0, resumeFrom) are already durable in the session's stores (a run
   * that stopped or crashed): they are appended without model calls and the
   * view is re-derived by one preflight, then the replay goes on live.
   */
  readonly resumeFrom?: number;
  /** Makes a record durable before the engine sees it (the persistent store). */
  readonly persist?: (record: RawRecord) => Promise<void>;
  readonly clock?: Clock;
  readonly onStep?: (line: ReplayStepLine) => void;
}

export interface ReplayResult {
  readonly session: CompactionSession;
  /** The loss ledger: per compaction boundary, counts, and every defect found. */
  readonly ledger: { readonly boundaries: LedgerCounts[]; readonly defects: LedgerEntry[] };
  readonly messages: ProjectedMessage[];
  /** o200k tokens of the contents of `messages`. */
  readonly tokens: number;
  readonly lines: ReplayStepLine[];
  readonly totals: ReplayTotals;
}

/**
 * Counts a projected context the way a provider would report it, caching per
 * message content so an unchanged prefix is not re-tokenized every call.
 */
export class ProviderMeter {
  private readonly counter: MemoTokenCounter;
  constructor(counter: TokenCounter) {
    this.counter = new MemoTokenCounter(counter, 50_000);
  }

  contentTokens(messages: readonly ProjectedMessage[]): number[] {
    return messages.map((m) => this.counter.count(m.content));
  }

  /**
   * One model call's prompt: the tokens of each message, their total, and the
   * tokens of the longest run of leading messages unchanged since `previous`
   * (what a provider's prompt cache would serve).
   */
  measure(messages: readonly ProjectedMessage[], previous: readonly ProjectedMessage[]): { counts: number[]; tokens: number; reused: number } {
    const counts = this.contentTokens(messages);
    const tokens = counts.reduce((a, b) => a + b, 0);
    let reused = 0;
    for (let i = 0; i < messages.length && i < previous.length; i++) {
      if (messages[i]!.role !== previous[i]!.role || messages[i]!.content !== previous[i]!.content) break;
      reused += counts[i]!;
    }
    return { counts, tokens, reused };
  }
}

const noClock: Clock = { now: () => 0 };

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function replay(records: readonly RawRecord[], options: ReplayOptions): Promise<ReplayResult> {
  const session = new CompactionSession(options);
  const meter = new ProviderMeter(options.counter);
  const clock = options.clock ?? noClock;
  const end = Math.min(options.at ?? records.length, records.length);
  const lines: ReplayStepLine[] = [];
  let previous: ProjectedMessage[] = [];
  let tokensSent = 0;
  let cacheReused = 0;
  let maxTokens = 0;
  let holds = 0;
  let pendingMs = 0;
  let step = 0;
  const boundaries: LedgerCounts[] = [];
  const defects: LedgerEntry[] = [];

  const modelCall = async (atRecord: number): Promise<{ report: StepReport; messages: ProjectedMessage[]; tokens: number }> => {
    const t0 = clock.now();
    const report = await session.step(atRecord);
    const ms = pendingMs + (clock.now() - t0);
    pendingMs = 0;
    const messages = session.engine.project();
    if (report.compactions.length > 0) {
      const checked = session.checkBoundary(atRecord, messages);
      boundaries.push(checked.counts);
      defects.push(...checked.entries);
    }
    const { tokens, reused } = meter.measure(messages, previous);
    session.engine.observeRealTokens(tokens + MESSAGE_OVERHEAD_TOKENS * messages.length);
    if (report.held) holds++;
    tokensSent += tokens;
    cacheReused += reused;
    maxTokens = Math.max(maxTokens, tokens);
    const line: ReplayStepLine = { step, record: atRecord, predicted: report.predicted, tokens, tier: report.tier, ms: Math.round(ms * 1000) / 1000, prefixReused: reused };
    step++;
    lines.push(line);
    options.onStep?.(line);
    previous = messages;
    return { report, messages, tokens };
  };

  const resumeFrom = Math.min(options.resumeFrom ?? 0, end);
  for (let i = 0; i < resumeFrom; i++) session.append(records[i]!);
  if (resumeFrom > 0) session.preflight();
  for (let i = resumeFrom; i < end; i++) {
    const record = records[i]!;
    if (session.opensStep(record)) await modelCall(i);
    await options.persist?.(record);
    const t0 = clock.now();
    session.append(record);
    if (record.role === 'user') session.preflight();
    pendingMs += clock.now() - t0;
  }
  const final = await modelCall(end);

  const perTier = { '1': 0, '2': 0, '3': 0, '4': 0 };
  for (const c of session.engine.compactions as Compaction[]) perTier[String(c.tier) as '1' | '2' | '3' | '4']++;
  const ms = lines.map((l) => l.ms);
  const totals: ReplayTotals = {
    steps: lines.length,
    compactionsPerTier: perTier,
    floorSummaries: session.engine.floors,
    antiThrashHolds: holds,
    meanMs: ms.length ? Math.round((ms.reduce((a, b) => a + b, 0) / ms.length) * 1000) / 1000 : 0,
    p95Ms: percentile(ms, 95),
    tokensSent,
    cacheReusedTokens: cacheReused,
    maxTokens,
  };
  return { session, messages: final.messages, tokens: final.tokens, lines, totals, ledger: { boundaries, defects } };
}
