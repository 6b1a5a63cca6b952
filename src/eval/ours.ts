/**
 * Ours as the evaluation replays it: the compaction session exactly as the
 * CLI and the extension run it, its floor summarizer metered as the
 * extension's model fold would be, and the variants the ablations try.
 */
import { DelayedRunner } from '../core/background';
import { continuationRest } from '../core/continuation';
import { MESSAGE_OVERHEAD_TOKENS, summaryCapFor, type Budget } from '../core/budget';
import { renderUnit, type ProjectedMessage, type RetrievalOptions } from '../core/engine';
import type { SessionRecord } from '../core/parts';
import type { Redactor } from '../core/redact';
import { ProviderMeter } from '../core/replay';
import { CompactionSession } from '../core/session';
import { continuationQuestionTokens, ExtractiveSummarizer, type FoldInput, type Summarizer } from '../core/summarizer';
import { renderSummary, SummaryLineCounter, type SummaryState } from '../core/summary';
import type { TokenCounter } from '../core/tokens';
import type { RawRecord } from '../core/types';
import { bump, SUMMARIZER_INSTRUCTION_TOKENS, type CallSample, type FinalView, type FoldMetrics, type StateMetrics, type Strategy } from './strategy';

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
    private readonly redactor: Redactor,
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
      // The span's units the context does not hold are in the question, clipped as the extension clips them.
      const rest = this.counter.count(continuationRest(input, this.redactor, this.counter));
      this.calls.push({ record: input.coverageEnd, tokens: tokens + continuationQuestionTokens(input.units.length) + rest, cacheRead: reused, output, overflow: false });
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
export class Ours implements Strategy {
  private readonly session: CompactionSession;
  readonly compactions: Record<string, number> = {};
  private holds = 0;

  readonly summarizerCalls: CallSample[] = [];
  /** The background floor as in the extension, its answer arriving one model call after it was asked for. */
  private readonly runner = new DelayedRunner(1);
  /** The messages of the last call: a summary asked after them finds them in the prompt cache. */
  private lastSent: readonly ProjectedMessage[] = [];

  constructor(budget: Budget, counter: TokenCounter, redactor: Redactor, variant: OursVariant = {}) {
    const cap = variant.summaryCap ? variant.summaryCap(budget) : summaryCapFor(budget);
    this.session = new CompactionSession({
      budget,
      counter,
      redactor,
      summarizer: new MeteredSummarizer(new ExtractiveSummarizer(new SummaryLineCounter(counter), redactor, cap), counter, redactor, spanTokensFor(budget), this.summarizerCalls, () => this.lastSent),
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
    const { report, messages, boundary } = await this.session.prepareCall(atRecord);
    if (report.held) this.holds++;
    for (const c of report.compactions) bump(this.compactions, `tier ${c.tier}`);
    const first = this.session.engine.firstUnitInView;
    const items = Array.from({ length: this.record.units.length - first }, (_, k) => first + k);
    this.lastSent = messages;
    if (boundary) {
      // The state channel's own checks at every compaction boundary.
      const { counts } = boundary;
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
    this.session.observeSent(tokens + MESSAGE_OVERHEAD_TOKENS * messages);
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
