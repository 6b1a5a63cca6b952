/**
 * Context strategies replayed side by side on one session: ours and the
 * baselines a user would otherwise get, each implemented from its published
 * behaviour. All of them render units with the engine's own renderer and are
 * measured by the same meter, so token and cost figures compare directly.
 * The summarizing baselines use the same deterministic summarizer as ours,
 * which isolates the strategy from the summary's quality.
 */
import { DelayedRunner } from '../core/background';
import { MESSAGE_OVERHEAD_TOKENS, summaryCapFor, type Budget } from '../core/budget';
import { renderUnit, type FloorSource, type ProjectedMessage, type RetrievalOptions } from '../core/engine';
import { SessionRecord } from '../core/parts';
import { ProviderMeter } from '../core/replay';
import { CompactionSession } from '../core/session';
import { continuationQuestionTokens, ExtractiveSummarizer, type FoldInput, type Summarizer } from '../core/summarizer';
import { renderSummary, SummaryLineCounter, type LayoutKind, type SummaryState } from '../core/summary';
import type { TokenCounter } from '../core/tokens';
import { fileTouches, renderToolInput } from '../core/tools';
import type { RawRecord, Unit } from '../core/types';

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

/** Observation masking keeps the outputs of the newest M steps (JetBrains, "The Complexity Trap": M = 10). */
export const MASKING_KEEP_STEPS = 10;
/** Claude Code / Codex compact at about 90% of the usable window. */
export const CLEAR_SUMMARIZE_THRESHOLD = 0.9;
/** Codex keeps up to 20k tokens of the most recent user messages beside the summary (capped here at 20% of the window). */
export const CLEAR_SUMMARIZE_USER_TOKENS = 20_000;
export const CLEAR_SUMMARIZE_USER_SHARE = 0.2;
/** opencode: protect the newest 40k tokens of tool output; prune only when that frees more than 20k; spare the last 2 user turns. */
export const OPENCODE_PRUNE_PROTECT = 40_000;
export const OPENCODE_PRUNE_MINIMUM = 20_000;
export const OPENCODE_PROTECTED_TURNS = 2;
export const MASKED_OUTPUT = 'Old environment output: (omitted)';
export const OPENCODE_CLEARED = '[Old tool result content cleared]';

export interface CallSample {
  /** The model call happens just before this record. */
  readonly record: number;
  /** Tokens of the contents of the messages sent. */
  readonly tokens: number;
  /** Tokens of the longest unchanged prefix of messages since the previous call (a prompt cache hit). */
  readonly cacheRead: number;
  /** Tokens the model generated in the step that followed (the same for every strategy). */
  readonly output: number;
  /** The context exceeded window − reserve (a provider would have rejected it). */
  readonly overflow: boolean;
}

export interface FinalView {
  readonly messages: ProjectedMessage[];
  readonly tokens: number;
  readonly summary: SummaryState | undefined;
  /** Absolute indices of the units whose messages are in view (in any form). */
  readonly unitsInView: readonly number[];
  /** Paths of the strategy's artifact index (ours only). */
  readonly indexed: { readonly path: string; readonly modified: boolean; readonly read: boolean }[];
}

/** The protected-state channel's checks over a replay (ours only). */
export interface StateMetrics {
  readonly boundaries: number;
  /** Active critical facts missing from the context at a compaction boundary (defects). */
  readonly omitted: number;
  /** Summary lines with no source at a boundary (defects). */
  readonly unsupported: number;
  /** Summary lines that contradicted an active fact (the fact won). */
  readonly conflicts: number;
  readonly activeFacts: number;
  readonly pendingFacts: number;
}

/** Where ours' floor summaries came from and how its head was laid out at the folds (ours only). */
export interface FoldMetrics {
  readonly sources: Readonly<Record<FloorSource, number>>;
  readonly layouts: Readonly<Record<LayoutKind, number>>;
  /** Folds not made because they would have saved less than the minimum share of the window. */
  readonly skipped: number;
}

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

interface Strategy {
  append(record: RawRecord): void;
  opensStep(record: RawRecord): boolean;
  call(atRecord: number): Promise<{ messages: ProjectedMessage[]; items: readonly number[] }>;
  /** After the call's messages are counted (ours refreshes its anchor). */
  measured?(tokens: number, messages: number): void;
  /** The summarizer's model calls so far. */
  readonly summarizerCalls: CallSample[];
  final(): { summary: SummaryState | undefined; indexed: FinalView['indexed'] };
  readonly record: SessionRecord;
  readonly compactions: Record<string, number>;
  floors(): number;
  antiThrash(): number;
}

function bump(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

/** Messages of each unit, rendered once and re-rendered only when the unit grows. */
class UnitCache {
  private readonly cache = new Map<number, { key: string; messages: ProjectedMessage[]; tokens: number }>();
  constructor(private readonly record: SessionRecord, private readonly meter: ProviderMeter) {}

  private entry(i: number): { messages: ProjectedMessage[]; tokens: number } {
    const unit = this.record.units[i]!;
    const key = `${unit.lastRecord}:${unit.parts.length}`;
    let hit = this.cache.get(i);
    if (!hit || hit.key !== key) {
      const messages = renderUnit(unit);
      hit = { key, messages, tokens: this.meter.contentTokens(messages).reduce((a, b) => a + b, 0) };
      this.cache.set(i, hit);
    }
    return hit;
  }

  messages(i: number): ProjectedMessage[] {
    return this.entry(i).messages;
  }

  tokens(i: number): number {
    return this.entry(i).tokens;
  }
}

abstract class RawStrategy implements Strategy {
  readonly record = new SessionRecord();
  readonly compactions: Record<string, number> = {};
  readonly summarizerCalls: CallSample[] = [];
  protected readonly units: UnitCache;

  constructor(protected readonly budget: Budget, protected readonly meter: ProviderMeter) {
    this.units = new UnitCache(this.record, meter);
  }

  append(record: RawRecord): void {
    this.record.append(record);
  }

  opensStep(record: RawRecord): boolean {
    return this.record.opensStep(record);
  }

  abstract call(atRecord: number): Promise<{ messages: ProjectedMessage[]; items: readonly number[] }>;

  final(): { summary: SummaryState | undefined; indexed: FinalView['indexed'] } {
    return { summary: undefined, indexed: [] };
  }

  floors(): number {
    return 0;
  }

  antiThrash(): number {
    return 0;
  }

  protected tokensOf(messages: readonly ProjectedMessage[]): number {
    return this.meter.contentTokens(messages).reduce((a, b) => a + b, 0);
  }

  /** Keeps the newest items whose tokens fit in `budget` (what a provider's truncation or a sliding window leaves). */
  protected newestThatFit(items: number[], tokensOf: (i: number) => number, budget: number): number[] {
    const kept: number[] = [];
    let used = 0;
    for (let k = items.length - 1; k >= 0; k--) {
      const t = tokensOf(items[k]!);
      if (used + t > budget) break;
      used += t;
      kept.push(items[k]!);
    }
    return kept.reverse();
  }

  protected all(from = 0): number[] {
    return Array.from({ length: this.record.units.length - from }, (_, k) => from + k);
  }
}

/** 1. No compaction: the whole history every call (a provider rejects it past the window). */
class NoCompaction extends RawStrategy {
  async call(): Promise<{ messages: ProjectedMessage[]; items: number[] }> {
    const items = this.all();
    return { messages: items.flatMap((i) => this.units.messages(i)), items };
  }
}

/** 2. Sliding window: the newest whole units that fit in window − reserve. */
class SlidingWindow extends RawStrategy {
  async call(): Promise<{ messages: ProjectedMessage[]; items: number[] }> {
    const all = this.all();
    const items = this.newestThatFit(all, (i) => this.units.tokens(i), this.budget.effective);
    if (items.length < all.length) bump(this.compactions, 'truncate');
    return { messages: items.flatMap((i) => this.units.messages(i)), items };
  }
}

/** A unit's messages with every tool output replaced by `placeholder`. */
function maskedMessages(unit: Unit, placeholder: string, only?: ReadonlySet<string>): ProjectedMessage[] {
  return renderUnit(unit, (address) => {
    const part = unit.parts.find((p) => p.address === address);
    if (!part?.tool || part.tool.output === undefined) return undefined;
    if (only && !only.has(address)) return undefined;
    return { how: 'shrunk', input: renderToolInput(part.tool), output: placeholder, recover: undefined };
  });
}

/** 3. Observation masking: tool outputs older than the newest M steps become a placeholder. */
class ObservationMasking extends RawStrategy {
  private readonly masked = new Map<number, { key: string; messages: ProjectedMessage[]; tokens: number }>();

  private view(i: number, mask: boolean): { messages: ProjectedMessage[]; tokens: number } {
    if (!mask) return { messages: this.units.messages(i), tokens: this.units.tokens(i) };
    const unit = this.record.units[i]!;
    const key = `${unit.lastRecord}:${unit.parts.length}`;
    let hit = this.masked.get(i);
    if (!hit || hit.key !== key) {
      const messages = maskedMessages(unit, MASKED_OUTPUT);
      hit = { key, messages, tokens: this.tokensOf(messages) };
      this.masked.set(i, hit);
    }
    return hit;
  }

  async call(): Promise<{ messages: ProjectedMessage[]; items: number[] }> {
    const units = this.record.units;
    let steps = 0;
    const mask = new Set<number>();
    for (let i = units.length - 1; i >= 0; i--) {
      if (units[i]!.kind !== 'step') continue;
      if (++steps > MASKING_KEEP_STEPS) mask.add(i);
    }
    if (mask.size) bump(this.compactions, 'mask');
    const all = this.all();
    const items = this.newestThatFit(all, (i) => this.view(i, mask.has(i)).tokens, this.budget.effective);
    if (items.length < all.length) bump(this.compactions, 'truncate');
    return { messages: items.flatMap((i) => this.view(i, mask.has(i)).messages), items };
  }
}

/** Shared by the two baselines that pivot to a summary: Σ = fold(Σ, units since the last pivot). */
abstract class SummarizingStrategy extends RawStrategy {
  protected summary: SummaryState | undefined;
  /** Units [0, start) are folded into the summary. */
  protected start = 0;
  private readonly summarizer: ExtractiveSummarizer;
  private pivots = 0;

  constructor(budget: Budget, meter: ProviderMeter, counter: TokenCounter) {
    super(budget, meter);
    this.summarizer = new ExtractiveSummarizer(counter);
  }

  /** Tokens of the last view sent: a compaction request repeats it (cached) and adds its instruction. */
  private lastSent = 0;

  measured(tokens: number): void {
    this.lastSent = tokens;
  }

  protected pivot(): void {
    const units = this.record.units;
    if (units.length <= this.start) return;
    const history = this.tokensOf([...this.summaryMessages(), ...this.all(this.start).flatMap((i) => this.units.messages(i))]);
    this.summary = this.summarizer.foldSync({
      previous: this.summary,
      units: units.slice(this.start),
      coverageEnd: this.record.records.length,
      // The same cap as ours: the comparison isolates the strategy, not the summary's size.
      cap: summaryCapFor(this.budget),
    });
    this.start = units.length;
    this.pivots++;
    bump(this.compactions, 'summary');
    // Claude Code and opencode ask the chat's model for the summary with the conversation as it stands: the prefix
    // sent last time is a cache read, the instruction and what came since are written, the whole summary is generated.
    this.summarizerCalls.push({
      record: this.record.records.length,
      tokens: history + SUMMARIZER_INSTRUCTION_TOKENS,
      cacheRead: Math.min(this.lastSent, history),
      output: this.tokensOf(this.summaryMessages()),
      overflow: false,
    });
  }

  protected summaryMessages(): ProjectedMessage[] {
    return this.summary ? [{ role: 'user', content: renderSummary(this.summary) }] : [];
  }

  override final(): { summary: SummaryState | undefined; indexed: FinalView['indexed'] } {
    return { summary: this.summary, indexed: [] };
  }

  override floors(): number {
    return this.pivots;
  }
}

/**
 * 4. Clear-then-summarize (Claude Code / Codex): at ~90% of the usable window the
 * whole history is replaced by one summary plus the most recent user messages.
 */
class ClearThenSummarize extends SummarizingStrategy {
  private keptUsers: number[] = [];

  private view(): { messages: ProjectedMessage[]; items: number[] } {
    const items = [...this.keptUsers, ...this.all(this.start)];
    return { messages: [...this.summaryMessages(), ...items.flatMap((i) => this.units.messages(i))], items };
  }

  async call(): Promise<{ messages: ProjectedMessage[]; items: number[] }> {
    let view = this.view();
    if (this.tokensOf(view.messages) <= CLEAR_SUMMARIZE_THRESHOLD * this.budget.effective) return view;
    this.pivot();
    const units = this.record.units;
    const userBudget = Math.min(CLEAR_SUMMARIZE_USER_TOKENS, CLEAR_SUMMARIZE_USER_SHARE * this.budget.effective);
    const users = units.flatMap((u, i) => (u.kind === 'user' ? [i] : []));
    this.keptUsers = this.newestThatFit(users, (i) => this.units.tokens(i), userBudget);
    view = this.view();
    return view;
  }
}

/**
 * 5. opencode: before each call, prune old tool outputs (walking back, sparing the
 * last two user turns and the newest 40k tokens of tool output; only when that
 * frees more than 20k); when the context still overflows the usable window,
 * pivot to a summary.
 */
class OpencodePrune extends SummarizingStrategy {
  private readonly pruned = new Set<string>();

  private unitMessages(i: number): ProjectedMessage[] {
    const unit = this.record.units[i]!;
    if (!unit.parts.some((p) => this.pruned.has(p.address))) return this.units.messages(i);
    return maskedMessages(unit, OPENCODE_CLEARED, this.pruned);
  }

  private view(): { messages: ProjectedMessage[]; items: number[] } {
    const items = this.all(this.start);
    return { messages: [...this.summaryMessages(), ...items.flatMap((i) => this.unitMessages(i))], items };
  }

  private prune(): void {
    const units = this.record.units;
    let turns = 0;
    let seen = 0;
    let prunable = 0;
    const candidates: string[] = [];
    outer: for (let i = units.length - 1; i >= this.start; i--) {
      const unit = units[i]!;
      if (unit.kind === 'user') turns++;
      if (turns < OPENCODE_PROTECTED_TURNS || unit.kind !== 'step') continue;
      for (let k = unit.parts.length - 1; k >= 0; k--) {
        const part = unit.parts[k]!;
        if (!part.tool || part.tool.output === undefined) continue;
        if (this.pruned.has(part.address)) break outer;
        const tokens = this.meter.contentTokens([{ role: 'tool', content: part.tool.output }])[0]!;
        seen += tokens;
        if (seen > OPENCODE_PRUNE_PROTECT) {
          prunable += tokens;
          candidates.push(part.address);
        }
      }
    }
    if (prunable > OPENCODE_PRUNE_MINIMUM) {
      for (const address of candidates) this.pruned.add(address);
      bump(this.compactions, 'prune');
    }
  }

  async call(): Promise<{ messages: ProjectedMessage[]; items: number[] }> {
    this.prune();
    let view = this.view();
    if (this.tokensOf(view.messages) > this.budget.effective) {
      this.pivot();
      view = this.view();
    }
    return view;
  }
}

/**
 * A variant of ours for the ablations of the report: another original-text
 * channel, or another cap of the Task Context. Undefined fields keep the
 * engine's defaults.
 */
export interface OursVariant {
  readonly retrieval?: RetrievalOptions;
  readonly summaryCap?: (budget: Budget) => number;
  /** Another budget for the same window (the seed's ratios at every window, say). */
  readonly budget?: (window: number, reserve: number) => Budget;
}

/**
 * Tokens of a summary request's instructions beside what it summarizes: the
 * fold prompt's rules and its tool's schema (agent/modelSummarizer: about 450
 * and 150 o200k tokens), and about what Claude Code's compact prompt takes.
 */
export const SUMMARIZER_INSTRUCTION_TOKENS = 600;

/** The span a model fold is shown, in tokens: the extension's `spanChars` (twice the window in characters, 4k–60k) at ~4 characters a token. */
function spanTokensFor(budget: Budget): number {
  return Math.round(Math.max(4_000, Math.min(60_000, budget.window * 2)) / 4);
}

/**
 * The deterministic summarizer standing in for the model, metered as the
 * extension's model fold would be with the chat's own model (the default):
 * asked after the chat's context when the engine passes it (the context it
 * last sent is a cache read, the question and the context's new messages are
 * not), otherwise with a prompt of its own (instructions, the lines already
 * kept, the span, clipped as the extension clips it; nothing cached). Either
 * way it is answered with the lines it adds. Every call counts, used or not.
 */
class MeteredSummarizer implements Summarizer {
  readonly name: string;
  private readonly meter: ProviderMeter;
  constructor(
    private readonly inner: Summarizer,
    private readonly counter: TokenCounter,
    private readonly spanTokens: number,
    private readonly calls: CallSample[],
    /** The messages of the chat's last call (what a prompt cache holds). */
    private readonly sent: () => readonly ProjectedMessage[] = () => [],
  ) {
    this.name = inner.name;
    this.meter = new ProviderMeter(counter);
  }

  async fold(input: FoldInput): Promise<SummaryState> {
    const result = await this.inner.fold(input);
    const before = input.previous ? this.counter.count(renderSummary(input.previous)) : 0;
    const output = Math.max(0, this.counter.count(renderSummary(result)) - before);
    if (input.context?.length) {
      const { tokens, reused } = this.meter.measure(input.context, this.sent());
      this.calls.push({ record: input.coverageEnd, tokens: tokens + continuationQuestionTokens(input.units.length), cacheRead: reused, output, overflow: false });
      return result;
    }
    const span = input.units.reduce((n, u) => n + this.counter.count(renderUnit(u).map((m) => m.content).join('\n')), 0);
    // The kept lines are clipped to their last 8,000 characters in the prompt.
    const tokens = SUMMARIZER_INSTRUCTION_TOKENS + Math.min(before, 2_000) + Math.min(span, this.spanTokens);
    this.calls.push({ record: input.coverageEnd, tokens, cacheRead: 0, output, overflow: false });
    return result;
  }
}

/** Ours: the compaction session, exactly as the CLI and the extension run it. */
class Ours implements Strategy {
  private readonly session: CompactionSession;
  readonly compactions: Record<string, number> = {};
  private holds = 0;

  readonly summarizerCalls: CallSample[] = [];
  /** The background floor as in the extension, its answer arriving one model call after it was asked for. */
  private readonly runner = new DelayedRunner(1);
  /** The messages of the last call: a summary asked after them finds them in the prompt cache. */
  private lastSent: readonly ProjectedMessage[] = [];

  constructor(budget: Budget, counter: TokenCounter, variant: OursVariant = {}) {
    const cap = variant.summaryCap ? variant.summaryCap(budget) : summaryCapFor(budget);
    this.session = new CompactionSession({
      budget,
      counter,
      summarizer: new MeteredSummarizer(new ExtractiveSummarizer(new SummaryLineCounter(counter), cap), counter, spanTokensFor(budget), this.summarizerCalls, () => this.lastSent),
      background: this.runner,
      ...(variant.retrieval ? { retrieval: variant.retrieval } : {}),
      ...(variant.summaryCap ? { summaryCap: cap } : {}),
    });
  }

  get folds(): FoldMetrics {
    const engine = this.session.engine;
    return { sources: { ...engine.floorSources }, layouts: { ...engine.headLayouts }, skipped: engine.foldsSkipped };
  }

  get record(): SessionRecord {
    return this.session.record;
  }

  append(record: RawRecord): void {
    this.session.append(record);
    if (record.role === 'user') this.session.preflight();
  }

  opensStep(record: RawRecord): boolean {
    return this.session.opensStep(record);
  }

  async call(atRecord: number): Promise<{ messages: ProjectedMessage[]; items: number[] }> {
    await this.runner.tick();
    const report = await this.session.step(atRecord);
    if (report.held) this.holds++;
    for (const c of report.compactions) bump(this.compactions, `tier ${c.tier}`);
    const first = this.session.engine.firstUnitInView;
    const items = Array.from({ length: this.record.units.length - first }, (_, k) => first + k);
    const messages = this.session.engine.project();
    this.lastSent = messages;
    if (report.compactions.length > 0) {
      // The state channel's own checks at every compaction boundary.
      const { counts } = this.session.checkBoundary(atRecord, messages);
      this.stateChecks.boundaries++;
      this.stateChecks.omitted += counts.omitted;
      this.stateChecks.unsupported += counts.unsupported;
    }
    return { messages, items };
  }

  readonly stateChecks = { boundaries: 0, omitted: 0, unsupported: 0 };

  stateMetrics(): StateMetrics {
    const state = this.session.state;
    return {
      ...this.stateChecks,
      conflicts: state.conflicts().length,
      activeFacts: state.active().length,
      pendingFacts: state.pending().length,
    };
  }

  measured(tokens: number, messages: number): void {
    this.session.engine.observeRealTokens(tokens + MESSAGE_OVERHEAD_TOKENS * messages);
  }

  final(): { summary: SummaryState | undefined; indexed: FinalView['indexed'] } {
    return {
      summary: this.session.engine.currentSummary,
      indexed: this.session.artifacts.entries().map((a) => ({ path: a.path, modified: a.modifications + a.creations > 0, read: a.reads > 0 })),
    };
  }

  floors(): number {
    return this.session.engine.floors;
  }

  antiThrash(): number {
    return this.holds;
  }
}

function createStrategy(name: StrategyName, budget: Budget, counter: TokenCounter, meter: ProviderMeter, variant?: OursVariant): Strategy {
  switch (name) {
    case 'ours':
      return new Ours(budget, counter, variant);
    case 'none':
      return new NoCompaction(budget, meter);
    case 'sliding':
      return new SlidingWindow(budget, meter);
    case 'masking':
      return new ObservationMasking(budget, meter);
    case 'clear-summarize':
      return new ClearThenSummarize(budget, meter, counter);
    case 'opencode':
      return new OpencodePrune(budget, meter, counter);
  }
}

/** Replays a session under one strategy: a model call before every step, and once more at the end. */
export async function runStrategy(
  name: StrategyName,
  records: readonly RawRecord[],
  budget: Budget,
  counter: TokenCounter,
  meter: ProviderMeter = new ProviderMeter(counter),
  variant?: OursVariant,
): Promise<StrategyRun> {
  const strategy = createStrategy(name, budget, counter, meter, variant);
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
