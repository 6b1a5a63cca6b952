/**
 * The baselines a user would otherwise get, each implemented from its
 * published behaviour: no compaction, a sliding window, observation masking,
 * clear-then-summarize (Claude Code, Codex) and opencode's prune. The two that
 * pivot to a summary use the same deterministic summarizer as ours.
 */
import { summaryCapFor, type Budget } from '../core/budget';
import { renderUnit, type ProjectedMessage } from '../core/engine';
import { SessionRecord } from '../core/parts';
import type { ProviderMeter } from '../core/replay';
import type { Redactor } from '../core/redact';
import { ExtractiveSummarizer } from '../core/summarizer';
import { renderSummary, type SummaryState } from '../core/summary';
import type { TokenCounter } from '../core/tokens';
import { renderToolInput } from '../core/tools';
import type { RawRecord, Unit } from '../core/types';
import { bump, SUMMARIZER_INSTRUCTION_TOKENS, type CallSample, type FinalView, type Strategy } from './strategy';

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
export class NoCompaction extends RawStrategy {
  async call(): Promise<{ messages: ProjectedMessage[]; items: number[] }> {
    const items = this.all();
    return { messages: items.flatMap((i) => this.units.messages(i)), items };
  }
}

/** 2. Sliding window: the newest whole units that fit in window − reserve. */
export class SlidingWindow extends RawStrategy {
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
export class ObservationMasking extends RawStrategy {
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

  constructor(budget: Budget, meter: ProviderMeter, counter: TokenCounter, redactor: Redactor) {
    super(budget, meter);
    this.summarizer = new ExtractiveSummarizer(counter, redactor);
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
export class ClearThenSummarize extends SummarizingStrategy {
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
export class OpencodePrune extends SummarizingStrategy {
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
