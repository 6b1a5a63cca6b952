/**
 * How big the view is, without measuring it whole: each part is counted once
 * (by address and form, so unchanged content is never tokenized again), the
 * counts are summed as they change (never re-summed on the hot path), and the
 * last real measurement anchors the estimate (`predicted`).
 */
import { MESSAGE_OVERHEAD_TOKENS } from './budget';
import { KeyedMemo } from './memo';
import { toolKey } from './parts';
import { renderToolCall, renderToolResult } from './projection';
import type { Anchor, ReducedForm } from './store';
import type { SummaryLineCounter, SummaryState } from './summary';
import type { CachedTokenCounter } from './tokens';
import { outputAsSent, renderToolInput } from './tools';
import type { Part, ToolInvocation, Unit } from './types';

function proportional(rawTokens: number, rawChars: number, chars: number): number {
  if (rawChars === 0) return Math.ceil(chars / 4);
  return Math.ceil((rawTokens * chars) / rawChars);
}

/** Length of renderToolCall / renderToolResult without building the string. */
function renderedLength(tool: ToolInvocation, text: string, side: 'in' | 'out'): number {
  if (side === 'in') return `<tool_call id="${tool.callId}" name="${tool.name}">\n\n</tool_call>`.length + text.length;
  return `<tool_result id="${tool.callId}"${tool.isError ? ' error="true"' : ''}>\n\n</tool_result>`.length + text.length;
}

/** Measures what the view is made of: a part in its current form, a unit, the Task Context. */
export class ViewMeter {
  /** Rendered length of each reduced tool's raw input (for proportional estimates). */
  private readonly inputChars = new Map<string, number>();
  private readonly summaryTokens = new KeyedMemo<SummaryState, number>();

  /** `forms` are the reduced forms in view, read at each measurement. */
  constructor(
    private readonly counter: CachedTokenCounter,
    private readonly summaryCounter: SummaryLineCounter,
    private readonly forms: ReadonlyMap<string, ReducedForm>,
  ) {}

  /** Tokens of a part as sent: raw, or in the reduced form that applies to it. */
  partTokens(part: Part): number {
    const form = this.forms.get(part.address);
    if (part.kind !== 'tool' || !part.tool) {
      const text = form ? form.output : part.text;
      return this.counter.countKeyed(`${part.address}|${form ? form.how : 'raw'}`, text);
    }
    const tool = part.tool;
    const inTokens = this.counter.countKeyed(`${part.address}|raw|in`, () => renderToolCall(tool, renderToolInput(tool)));
    const output = outputAsSent(tool, toolKey(part));
    const outTokens = output === undefined ? 0 : this.counter.countKeyed(`${part.address}|raw|out`, () => renderToolResult(tool, output));
    if (form) {
      // A reduced form is mostly a subset of the raw lines: estimate it in
      // proportion to the raw count instead of tokenizing it again. The
      // increment is an estimate anyway; the next real measurement corrects it.
      const rawInChars = this.rawInputChars(part);
      const rawOutChars = output === undefined ? 0 : renderedLength(tool, output, 'out');
      return (
        proportional(inTokens, rawInChars, renderedLength(tool, form.input, 'in')) +
        proportional(outTokens, rawOutChars, renderedLength(tool, form.output, 'out')) +
        MESSAGE_OVERHEAD_TOKENS
      );
    }
    return tool.output === undefined ? inTokens : inTokens + outTokens + MESSAGE_OVERHEAD_TOKENS;
  }

  private rawInputChars(part: Part): number {
    const cached = this.inputChars.get(part.address);
    if (cached !== undefined) return cached;
    const n = renderedLength(part.tool!, renderToolInput(part.tool!), 'in');
    this.inputChars.set(part.address, n);
    return n;
  }

  /** Tokens of a unit's messages in their current forms. */
  unitTokens(unit: Unit): number {
    let total = MESSAGE_OVERHEAD_TOKENS;
    for (const part of unit.parts) total += this.partTokens(part);
    return total;
  }

  /** Tokens of a part as recorded (binary bytes as the note that stands for them), whatever form it is sent in. */
  rawTokens(part: Part): number {
    if (part.kind !== 'tool' || !part.tool) return this.counter.countKeyed(`${part.address}|raw`, part.text);
    const tool = part.tool;
    const input = this.counter.countKeyed(`${part.address}|raw|in`, () => renderToolCall(tool, renderToolInput(tool)));
    const output = outputAsSent(tool, toolKey(part));
    if (output === undefined) return input;
    return input + this.counter.countKeyed(`${part.address}|raw|out`, () => renderToolResult(tool, output));
  }

  /** Tokens of the Task Context as a message (remembered for the last state measured). */
  summaryTokensOf(state: SummaryState): number {
    return this.summaryTokens.get(state, () => this.summaryCounter.countSummary(state) + MESSAGE_OVERHEAD_TOKENS);
  }
}

/** What `ViewEstimate.checkpoint` saves, for a change that may be undone. */
export interface EstimateCheckpoint {
  readonly from: number;
  readonly units: readonly number[];
  readonly summary: number;
  readonly blocks: number;
  readonly total: number;
}

/**
 * The running estimate of the view: the Task Context, the head's other
 * blocks, and each unit in view (by absolute unit index), summed as each
 * changes; and the calibration anchor, the last real measurement with the
 * estimate it was taken at.
 */
export class ViewEstimate {
  /** Tokens of each unit in view, by absolute unit index, in its current forms. */
  private readonly units: number[] = [];
  private summary = 0;
  private blocks = 0;
  /** The sum of the above: never re-summed on the hot path. */
  private total = 0;
  private anchor: Anchor | undefined;

  /** predicted = real anchor + estimated increment since it (pure estimation on a cold start). */
  predicted(): number {
    if (!this.anchor) return this.total;
    return Math.max(0, this.anchor.real + (this.total - this.anchor.estimate));
  }

  /** The estimate alone (no real measurement involved). */
  get estimate(): number {
    return this.total;
  }

  /** A real measurement of the view as it is now: the new anchor (to persist). */
  observe(real: number): Anchor {
    this.anchor = { real, estimate: this.total };
    return this.anchor;
  }

  /** The anchor as stored (undefined: none, the estimate alone predicts). */
  restoreAnchor(anchor: Anchor | undefined): void {
    this.anchor = anchor;
  }

  /** Tokens of the Task Context as counted in the estimate. */
  get summaryTokens(): number {
    return this.summary;
  }

  unit(index: number): number {
    return this.units[index] ?? 0;
  }

  /** Tokens of units [from, to). */
  span(from: number, to: number): number {
    let span = 0;
    for (let i = from; i < to; i++) span += this.units[i] ?? 0;
    return span;
  }

  addToUnit(index: number, delta: number): void {
    this.units[index] = (this.units[index] ?? 0) + delta;
    this.total += delta;
  }

  /** The head's blocks measured again. */
  setBlocks(tokens: number): void {
    this.total += tokens - this.blocks;
    this.blocks = tokens;
  }

  /** Counting starts over: this Task Context, the blocks as last measured, no unit yet (they are added one by one). */
  restart(summaryTokens: number): void {
    this.summary = summaryTokens;
    this.units.length = 0;
    this.total = this.summary + this.blocks;
  }

  /** Units [from, to) leave the view for a Task Context of `summaryTokens`: returns the tokens they had. */
  fold(from: number, to: number, summaryTokens: number): number {
    let removed = 0;
    for (let i = from; i < to; i++) {
      removed += this.units[i] ?? 0;
      this.units[i] = 0;
    }
    this.total += summaryTokens - this.summary - removed;
    this.summary = summaryTokens;
    return removed;
  }

  /** The counts of units [from, to) and of the head, to put back with `restore`. */
  checkpoint(from: number, to: number): EstimateCheckpoint {
    return { from, units: this.units.slice(from, to), summary: this.summary, blocks: this.blocks, total: this.total };
  }

  restore(checkpoint: EstimateCheckpoint): void {
    this.summary = checkpoint.summary;
    this.total = checkpoint.total;
    checkpoint.units.forEach((t, k) => (this.units[checkpoint.from + k] = t));
    this.blocks = checkpoint.blocks;
  }
}
