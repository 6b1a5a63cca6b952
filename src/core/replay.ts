/**
 * Plays a recorded session as if it were live, exactly as the extension runs
 * it: every user record starts a turn (preflight), every new step is a model
 * call (the compaction operation runs just before it), tool results get their
 * compacted forms as they arrive. A simulated provider measures each projected
 * context in real tokens and refreshes the calibration anchor.
 */
import { CACHE_BLOCK_TOKENS, MESSAGE_OVERHEAD_TOKENS } from './budget';
import type { Compaction, FloorSource, ProjectedMessage, StepReport } from './engine';
import type { LayoutKind } from './summaryLayout';
import { CompactionSession, type SessionOptions } from './session';
import type { LedgerCounts, LedgerEntry } from './ledger';
import { MemoTokenCounter, type TokenCounter } from './tokens';
import { DelayedRunner } from './background';
import type { RawRecord } from './types';
import { rewoundRecords } from './parts';

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
  /** Where the floor summaries came from: computed ahead in the background, awaited, or asked for at the fold. */
  readonly floorSources: Readonly<Record<FloorSource, number>>;
  /** How the head was laid out at the folds: appended to what was sent, or rendered in full (a demotion). */
  readonly headLayouts: Readonly<Record<LayoutKind, number>>;
  /** Folds not made because they would have saved less than the minimum. */
  readonly foldsSkipped: number;
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
  /**
   * Runs the background floor with the deterministic summarizer standing in
   * for the model, its answer arriving this many model calls after it was
   * asked for. Undefined: no background work (every fold summarizes itself).
   */
  readonly backgroundDelay?: number;
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

  /** Counts by message object: the engine hands out the same object while a message is unchanged. */
  private readonly byMessage = new WeakMap<ProjectedMessage, number>();

  contentTokens(messages: readonly ProjectedMessage[]): number[] {
    return messages.map((m) => this.tokensOf(m));
  }

  /**
   * One model call's prompt: its tokens, and the tokens of its longest prefix
   * unchanged since `previous` — what a provider's automatic prefix cache would
   * serve: every leading message sent as it was, then the common start of the
   * first message that changed, in whole blocks of CACHE_BLOCK_TOKENS
   * (providers cache prefixes in blocks, not to the token).
   */
  measure(messages: readonly ProjectedMessage[], previous: readonly ProjectedMessage[], known = 0): { tokens: number; reused: number } {
    // The leading messages shared (by identity) with the last call measured keep their running totals:
    // a call costs what changed since, not the whole view. `known` of them are known to be shared
    // (the engine says how many it kept), so only what follows is compared.
    const last = this.measured;
    const n = Math.min(messages.length, last.messages.length);
    let same = Math.min(known, n);
    while (same < n && messages[same] === last.messages[same]) same++;
    const cum = last.cum;
    cum.length = same + 1;
    for (let k = same; k < messages.length; k++) cum.push(cum[k]! + this.tokensOf(messages[k]!));
    this.measured = { messages, cum };
    const tokens = cum[messages.length]!;
    const m = Math.min(messages.length, previous.length);
    let i = previous === last.messages ? same : 0;
    while (i < m && (messages[i] === previous[i] || (messages[i]!.role === previous[i]!.role && messages[i]!.content === previous[i]!.content))) i++;
    let reused = cum[i]!;
    if (i < m && messages[i]!.role === previous[i]!.role) {
      const common = commonPrefixLength(messages[i]!.content, previous[i]!.content);
      if (common > 0) {
        const partial = this.counter.count(messages[i]!.content.slice(0, common));
        reused += Math.floor(partial / CACHE_BLOCK_TOKENS) * CACHE_BLOCK_TOKENS;
      }
    }
    return { tokens, reused };
  }

  /** The last call measured and the running totals of its messages (`cum[k]`: tokens of messages [0, k)). */
  private measured: { messages: readonly ProjectedMessage[]; cum: number[] } = { messages: [], cum: [0] };

  private tokensOf(m: ProjectedMessage): number {
    let n = this.byMessage.get(m);
    if (n === undefined) {
      n = this.counter.count(m.content);
      this.byMessage.set(m, n);
    }
    return n;
  }
}


/** Characters two texts share from their start. */
export function commonPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

const noClock: Clock = { now: () => 0 };

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function replay(records: readonly RawRecord[], options: ReplayOptions): Promise<ReplayResult> {
  const runner = options.backgroundDelay !== undefined ? new DelayedRunner(options.backgroundDelay) : undefined;
  const end = Math.min(options.at ?? records.length, records.length);
  // The turns a rewind up to `end` took out are left out from the start: the view the record now gives.
  const rewound = rewoundRecords(records.slice(0, end));
  const session = new CompactionSession({ ...options, ...(runner ? { background: runner } : {}), ...(rewound.size ? { rewound } : {}) });
  const meter = new ProviderMeter(options.counter);
  const clock = options.clock ?? noClock;
  const lines: ReplayStepLine[] = [];
  let previous: ProjectedMessage[] = [];
  let measuredProjection = -1;
  let tokensSent = 0;
  let cacheReused = 0;
  let maxTokens = 0;
  let holds = 0;
  let pendingMs = 0;
  let step = 0;
  const boundaries: LedgerCounts[] = [];
  const defects: LedgerEntry[] = [];

  const modelCall = async (atRecord: number): Promise<{ report: StepReport; messages: ProjectedMessage[]; tokens: number }> => {
    await runner?.tick();
    const t0 = clock.now();
    const { report, messages, boundary } = await session.prepareCall(atRecord);
    const ms = pendingMs + (clock.now() - t0);
    pendingMs = 0;
    if (boundary) {
      boundaries.push(boundary.counts);
      defects.push(...boundary.entries);
    }
    // The engine's count of messages kept holds against the projection just before: the last one measured.
    const known = session.engine.projections === measuredProjection + 1 ? session.engine.unchangedSinceLastProjection : 0;
    measuredProjection = session.engine.projections;
    const { tokens, reused } = meter.measure(messages, previous, known);
    session.observeSent(tokens + MESSAGE_OVERHEAD_TOKENS * messages.length);
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
    if (session.opensStep(record) && !rewound.has(i)) await modelCall(i);
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
    floorSources: { ...session.engine.floorSources },
    headLayouts: { ...session.engine.headLayouts },
    foldsSkipped: session.engine.foldsSkipped,
    antiThrashHolds: holds,
    meanMs: ms.length ? Math.round((ms.reduce((a, b) => a + b, 0) / ms.length) * 1000) / 1000 : 0,
    p95Ms: percentile(ms, 95),
    tokensSent,
    cacheReusedTokens: cacheReused,
    maxTokens,
  };
  return { session, messages: final.messages, tokens: final.tokens, lines, totals, ledger: { boundaries, defects } };
}
