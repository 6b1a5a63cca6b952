/**
 * The compaction operation, run before every model call.
 *
 *   restore (fold the covered prefix into its summary, swap in stored reduced
 *   forms) → measure against trigger → only if over, reduce along the ladder:
 *   ① shrink old tools outside the near window, oldest first, toward stop;
 *   ② floor-summarize the prefix outside the near window (when still over the
 *     trigger, or, in a narrow dead zone, still above stop);
 *   ③ breakthrough shrink, near window included;
 *   ④ breakthrough floor, no near-window protection.
 *
 * Decisions are never persisted: the view is re-derived from the raw record,
 * the snapshot store and the budget. The store keeps only the reduction
 * outputs (reduced forms, floor summaries) and the calibration anchor.
 */
import {
  ANTI_THRASH_LIMIT,
  ANTI_THRASH_MIN_SAVING_RATIO,
  COMPACTION_PROTECT_RECENT_STEPS,
  MESSAGE_OVERHEAD_TOKENS,
  isOverTrigger,
  isNearWindow,
  summaryCapFor,
  type Budget,
} from './budget';
import type { AppendEvent, SessionRecord } from './parts';
import {
  ANCHOR_KEY,
  GATE_KEY,
  LOG_PREFIX,
  RETRIEVAL_KEY,
  logKey,
  FLOOR_PREFIX,
  floorKey,
  parseFloorKey,
  planKey,
  prefloorKey,
  type Anchor,
  type ReducedForm,
  type SnapshotStore,
  type ToolCompactionStore,
} from './store';
import { continuationQuestionTokens, protectedFromRaw, resetDrift, type FoldInput, type ProtectedLines, type Summarizer } from './summarizer';
import { renderSummary, type SummaryLineCounter, type SummaryState } from './summary';
import { layoutAfterFold, type LayoutKind } from './summaryLayout';
import { outlineOf } from './outline';
import { RetrievalIndex } from './retrieval';
import type { CachedTokenCounter } from './tokens';
import { BackgroundTask, type BackgroundRunner } from './background';
import { reduceTool, renderToolInput, shellCommand, toolSubject } from './tools';
import type { Part, ToolInvocation, Unit } from './types';
import { redact } from './redact';

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

export interface ProjectedMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  /** What is measured and sent: tool calls and results rendered as tagged text. */
  readonly content: string;
  /**
   * The same step in structured form, for providers that take tool calls as
   * parts: an assistant message's own text and its calls (input as rendered,
   * possibly reduced), a tool message's result. `content` stays the source of truth.
   */
  readonly prose?: string;
  readonly calls?: readonly ProjectedCall[];
  readonly result?: ProjectedResult;
  /** The head message's blocks, in order, as data (the panel measures them; `content` is their texts joined). */
  readonly head?: readonly HeadPart[];
}

/** The blocks the head is made of: the Task Context, the protected state, passages retrieved from the record, the evidence not loaded. */
export type HeadBlock = 'summary' | 'protectedState' | 'retrieved' | 'evidence';

export interface HeadPart {
  readonly block: HeadBlock;
  readonly text: string;
}

export interface ProjectedCall {
  readonly callId: string;
  readonly name: string;
  readonly input: string;
}

export interface ProjectedResult {
  readonly callId: string;
  readonly output: string;
  readonly isError: boolean;
}

export interface NotLoadedEntry {
  readonly address: string;
  readonly kind: 'tool' | 'text' | 'reasoning' | 'span';
  readonly toolCallId?: string;
  /** The tool's name, and what the call was about (its command or first file, secrets hidden). */
  readonly tool?: string;
  readonly subject?: string;
  /** The record the part starts at (the call, for a tool part). */
  readonly record?: number;
  readonly tokens: number;
  readonly how: 'shrunk' | 'dropped' | 'folded';
  readonly recover: string;
}

/** The highest tier among a step's compactions (0: none). */
function highestTier(compactions: readonly Compaction[]): 0 | Tier {
  return compactions.reduce<0 | Tier>((t, c) => (c.tier > t ? c.tier : t), 0);
}

/**
 * What a list of parts not loaded adds up to: the folded span's tokens count
 * its tool calls (listed too, each with its own size) once; shrunk and dropped
 * parts are counted apart.
 */
export function notLoadedTotals(entries: readonly NotLoadedEntry[]): { readonly tokens: number; readonly shrunk: number; readonly dropped: number } {
  const span = entries.some((e) => e.kind === 'span');
  let tokens = 0;
  let shrunk = 0;
  let dropped = 0;
  for (const e of entries) {
    if (!(span && e.how === 'folded' && e.kind !== 'span')) tokens += e.tokens;
    if (e.how === 'shrunk') shrunk++;
    else if (e.how === 'dropped') dropped++;
  }
  return { tokens, shrunk, dropped };
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
  /** Applied to every message the model is sent (secrets and personal data). */
  readonly redact?: (text: string) => string;
  /** The original-text channel (defaults to DEFAULT_RETRIEVAL). */
  readonly retrieval?: RetrievalOptions;
  /**
   * Summarize the next fold's span ahead of the fold (the background floor),
   * with this runner deciding when the work happens. Without it the same span
   * is planned and summarized at the fold: the view is the same either way.
   */
  readonly background?: BackgroundRunner;
}

/** Where the summary of a fold came from. */
export type FloorSource = 'precomputed' | 'awaited' | 'synchronous';

/**
 * A block that compaction never shrinks, sent inside the head message with the
 * Task Context. It shows what the folded records established (what is still in
 * view speaks for itself), so it changes only when the head does and the
 * prompt-cache prefix stays stable between folds.
 */
export interface ContextBlock {
  readonly revision: number;
  /** The block for records [0, coverageEnd) folded ('' when there is nothing to show). */
  render(coverageEnd: number): string;
}

/** The protected state's block: its share of wEff. Over it, the user is told (the block is never shrunk). */
const PROTECTED_BLOCK_SHARE = 0.15;

/**
 * How the original-text channel quotes folded records: its share of wEff (in
 * characters, ≈ 4 a token), the smallest window it is used at, and what it
 * searches for: the latest request, or the current task (the latest request,
 * the goal, status and next step, the last failures).
 */
export interface RetrievalOptions {
  readonly share: number;
  readonly minEffective: number;
  readonly query: 'request' | 'task';
}

/**
 * Measured side by side in the eval (eval/report.md, "The original-text
 * channel"): a larger block or a task-built query buys less recall per token
 * than the same tokens spent on the Task Context, so the block stays small.
 */
export const DEFAULT_RETRIEVAL: RetrievalOptions = { share: 0.04, minEffective: 10_000, query: 'request' };

/** How many of the most recently folded tool calls the context lists by id: one per 1,000 tokens of wEff, 5 to 20. */
const EVIDENCE_PER_TOKENS = 1000;
const EVIDENCE_MIN = 5;
const EVIDENCE_MAX = 20;

/** A fold that would save less than this share of wEff is not made (its cache miss would cost more than it buys). */
const MIN_FOLD_SAVING_RATIO = 0.05;

/** A fold leaves room under the trigger for this many model calls of the session's recent growth. */
const RUNWAY_CALLS = 8;
/** The recent growth is the median size of this many of the latest steps in view. */
const RUNWAY_SAMPLE = 8;

/**
 * The background watermark: this many calls of recent growth below the trigger
 * the view plans its next fold and starts summarizing it (as late as possible,
 * so that the span outside the near window is as long as it will get).
 */
const WATERMARK_CALLS = 2;
/** A plan made ahead of the trigger waits until its span buys the fold this many calls of runway. */
const PLAN_MIN_RUNWAY_CALLS = 2;
/**
 * Over the trigger, a fold with no plan it can use waits a call for its
 * summary while the view is under this share of the way to wEff (it still
 * fits the window), at most MAX_PLANS times per coverage.
 */
const DEFER_LIMIT_SHARE = 1;
const MAX_PLANS = 3;

/** Least growth of the summary a fold allows for when choosing its boundary. */
const SUMMARY_GROWTH_MIN_TOKENS = 300;
/** Expected growth of the summary per folded token (an extractive fold keeps a small share). */
const SUMMARY_GROWTH_RATIO = 0.15;

/** Text tails kept by the emergency clip of an oversized last message. */
/** The room left for a fold's question, over its estimate (the mean on the corpus; the largest was 1.3 times it). */
const QUESTION_MARGIN = 1.3;
const EMERGENCY_HEAD_CHARS = 6000;
const EMERGENCY_TAIL_CHARS = 2000;
/** A piece shorter than this is left whole by the emergency clip. */
const EMERGENCY_MIN_PIECE_CHARS = 1000;
/** The emergency clip stops halving its share here. */
const EMERGENCY_MIN_SHARE_CHARS = 200;

export function renderToolCall(tool: ToolInvocation, input: string): string {
  return `<tool_call id="${tool.callId}" name="${tool.name}">\n${input}\n</tool_call>`;
}

export function renderToolResult(tool: ToolInvocation, output: string): string {
  return `<tool_result id="${tool.callId}"${tool.isError ? ' error="true"' : ''}>\n${output}\n</tool_result>`;
}

function proportional(rawTokens: number, rawChars: number, chars: number): number {
  if (rawChars === 0) return Math.ceil(chars / 4);
  return Math.ceil((rawTokens * chars) / rawChars);
}

/** Length of renderToolCall / renderToolResult without building the string. */
function renderedLength(tool: ToolInvocation, text: string, side: 'in' | 'out'): number {
  if (side === 'in') return `<tool_call id="${tool.callId}" name="${tool.name}">\n\n</tool_call>`.length + text.length;
  return `<tool_result id="${tool.callId}"${tool.isError ? ' error="true"' : ''}>\n\n</tool_result>`.length + text.length;
}

/**
 * The messages of one unit: a user or system message, or a step's assistant
 * message (text, reasoning and tool calls) followed by one tool message per
 * result. `formOf` supplies a reduced form for a part, if one applies.
 */
export function renderUnit(unit: Unit, formOf: (address: string) => ReducedForm | undefined = () => undefined): ProjectedMessage[] {
  if (unit.kind !== 'step') {
    const part = unit.parts[0];
    const text = part ? (formOf(part.address)?.output ?? part.text) : '';
    // An empty message carries nothing, and providers reject one.
    return text.trim() === '' ? [] : [{ role: unit.kind, content: text }];
  }
  const pieces: string[] = [];
  const prose: string[] = [];
  const calls: ProjectedCall[] = [];
  const results: ProjectedMessage[] = [];
  for (const part of unit.parts) {
    const form = formOf(part.address);
    if (part.kind === 'tool' && part.tool) {
      const input = form ? form.input : renderToolInput(part.tool);
      pieces.push(renderToolCall(part.tool, input));
      calls.push({ callId: part.tool.callId, name: part.tool.name, input });
      const output = form ? form.output : part.tool.output;
      if (output !== undefined) {
        results.push({ role: 'tool', content: renderToolResult(part.tool, output), result: { callId: part.tool.callId, output, isError: part.tool.isError } });
      }
    } else if (part.kind === 'reasoning') {
      pieces.push(`<reasoning>\n${form ? form.output : part.text}\n</reasoning>`);
    } else {
      const text = form ? form.output : part.text;
      pieces.push(text);
      prose.push(text);
    }
  }
  const content = pieces.join('\n');
  if (content.trim() === '' && results.length === 0) return [];
  return [{ role: 'assistant', content, prose: prose.join('\n'), calls }, ...results];
}

/**
 * A call's name and what it was about (its command's first line, else the
 * first file it touched), secrets hidden before the subject is cut (a cut
 * token no longer looks like one); `ellipsis` marks a cut.
 */
function callLabel(tool: ToolInvocation, max = 120, ellipsis = true): { tool: string; subject?: string } {
  const subject = toolSubject(tool);
  if (subject === undefined || subject === '') return { tool: tool.name };
  const shown = redact(subject.slice(0, 4096)).text;
  if (shown.length <= max) return { tool: tool.name, subject: shown };
  return { tool: tool.name, subject: ellipsis ? `${shown.slice(0, max - 1)}…` : shown.slice(0, max) };
}

/** A folded call as the head's evidence block names it: `Bash \`npm test\``, `Read src/a.ts`. */
function evidenceLabel(part: Part): string {
  const tool = part.tool!;
  const command = shellCommand(tool) !== undefined;
  const { subject } = callLabel(tool, command ? 80 : Number.POSITIVE_INFINITY, false);
  if (subject === undefined) return tool.name;
  return command ? `${tool.name} \`${subject}\`` : `${tool.name} ${subject}`;
}

/** A stored floor summary's key and what it covers. */
interface FloorCandidate {
  readonly key: string;
  readonly parsed: { readonly coverageEnd: number; readonly digest: string };
}

export class CompactionEngine {
  private readonly record: SessionRecord;
  private readonly snapshots: SnapshotStore;
  private readonly toolStore: ToolCompactionStore;
  private readonly counter: CachedTokenCounter;
  /** The last steps kept word for word by tiers ① and ② (the near window). */
  readonly protectRecentSteps: number;
  readonly budget: Budget;

  /** Units [0, coverageUnit) are folded into `summary`. */
  private coverageUnit = 0;
  /** The folded prefix's entries for `notLoaded` (see foldedEntries). */
  private foldedCache: { upTo: number; spanTokens: number; entries: NotLoadedEntry[] } | undefined;
  private summary: SummaryState | undefined;
  private summaryTokens = 0;
  private readonly forms = new RevisedMap<string, ReducedForm>();
  /** Forms and floors this engine wrote to the store (a preflight after none of them has nothing to re-derive). */
  private viewWrites = 0;
  private preflightMark: { coverageUnit: number; summary: SummaryState | undefined; viewWrites: number } | undefined;
  /** Rendered length of each reduced tool's raw input (for proportional estimates). */
  private readonly inputChars = new Map<string, number>();
  /** Tokens of each unit in view, by absolute unit index, in its current forms. */
  private readonly unitTokens: number[] = [];
  /** Running estimate of the whole view: never re-summed on the hot path. */
  private estimate = 0;
  private anchor: Anchor | undefined;
  private ineffective = 0;
  private held = false;
  private readonly log: Compaction[] = [];
  private lastFallbackError: unknown;
  private floorCount = 0;
  private driftChecked: { stored: SummaryState; coverageUnit: number; repaired: SummaryState } | undefined;
  private summaryTokenMemo: { state: SummaryState; tokens: number } | undefined;
  private protectedCache: { upTo: number; lines: ProtectedLines } | undefined;
  /** The head's blocks as last measured: the key they were built for, their text, their tokens. */
  private blockKey = '';
  private blockText = '';
  private blockTokens = 0;
  private evidenceCache: { key: string; text: string } | undefined;
  private retrievalCache: { key: string; text: string } | undefined;
  private readonly retrieval = new RetrievalIndex();
  private readonly noticeList: string[] = [];
  private protectedNoticeKey: number | undefined;

  constructor(private readonly options: EngineOptions) {
    this.record = options.record;
    this.snapshots = options.snapshots;
    this.toolStore = options.tools;
    this.counter = options.counter;
    this.budget = options.budget;
    this.protectRecentSteps = options.protectRecentSteps ?? options.budget.protectRecentSteps ?? COMPACTION_PROTECT_RECENT_STEPS;
  }

  // ---------------------------------------------------------------- measuring

  /** predicted = real anchor + estimated increment since it (pure estimation on a cold start). */
  predicted(): number {
    if (!this.anchor) return this.estimate;
    return Math.max(0, this.anchor.real + (this.estimate - this.anchor.estimate));
  }

  /** Our running estimate of the view (no real measurement involved). */
  estimated(): number {
    return this.estimate;
  }

  /** A real measurement of the view just sent: refreshes the anchor and persists it. */
  observeRealTokens(real: number): void {
    if (!Number.isFinite(real) || real < 0) return;
    this.refreshBlocks();
    this.anchor = { real, estimate: this.estimate };
    this.snapshots.put(ANCHOR_KEY, { type: 'anchor', anchor: this.anchor });
  }

  get compactions(): readonly Compaction[] {
    return this.log;
  }

  get coverageEnd(): number {
    return this.summary?.coverageEnd ?? 0;
  }

  get currentSummary(): SummaryState | undefined {
    return this.summary;
  }

  /** The reduced form applied to a part address, if any. */
  formOf(address: string): ReducedForm | undefined {
    return this.forms.get(address);
  }

  private partTokens(part: Part): number {
    const form = this.forms.get(part.address);
    if (part.kind !== 'tool' || !part.tool) {
      const text = form ? form.output : part.text;
      return this.counter.countKeyed(`${part.address}|${form ? form.how : 'raw'}`, text);
    }
    const tool = part.tool;
    const inTokens = this.counter.countKeyed(`${part.address}|raw|in`, () => renderToolCall(tool, renderToolInput(tool)));
    const outTokens = tool.output === undefined ? 0 : this.counter.countKeyed(`${part.address}|raw|out`, () => renderToolResult(tool, tool.output!));
    if (form) {
      // A reduced form is mostly a subset of the raw lines: estimate it in
      // proportion to the raw count instead of tokenizing it again. The
      // increment is an estimate anyway; the next real measurement corrects it.
      const rawInChars = this.rawInputChars(part);
      const rawOutChars = tool.output === undefined ? 0 : renderedLength(tool, tool.output, 'out');
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

  private unitTokensOf(unit: Unit): number {
    let total = MESSAGE_OVERHEAD_TOKENS;
    for (const part of unit.parts) total += this.partTokens(part);
    return total;
  }

  private addToUnit(unitIndex: number, delta: number): void {
    this.unitTokens[unitIndex] = (this.unitTokens[unitIndex] ?? 0) + delta;
    this.estimate += delta;
  }

  // ----------------------------------------------------------- live appends

  /**
   * Folds what one appended record changed into the running view: counts only
   * the new content, restores a stored form for a new part, and mints the
   * eager reduced form of a tool result as it arrives.
   */
  onAppend(events: readonly AppendEvent[]): void {
    for (const event of events) {
      if (event.unitIndex < this.dirtyFrom) this.dirtyFrom = event.unitIndex;
      if (event.unitIndex < this.coverageUnit) continue;
      switch (event.type) {
        case 'unit':
          this.addToUnit(event.unitIndex, MESSAGE_OVERHEAD_TOKENS);
          break;
        case 'part': {
          this.restorePart(event.part);
          if (event.part.tool?.output !== undefined) this.mintToolForm(event.part);
          this.addToUnit(event.unitIndex, this.partTokens(event.part));
          break;
        }
        case 'result': {
          const before = this.partTokens(event.before);
          this.mintToolForm(event.after);
          this.addToUnit(event.unitIndex, this.partTokens(event.after) - before);
          break;
        }
      }
    }
  }

  private toolKey(part: Part): string {
    return part.address.slice('tool:'.length);
  }

  private mintToolForm(part: Part): void {
    if (!part.tool || this.toolStore.get(this.toolKey(part))) return;
    // The recovery pointer names the part's own key, which stays unique when a log reused a call id.
    const reduced = reduceTool({ ...part.tool, callId: this.toolKey(part) }, this.options.shrinkMinChars);
    if (reduced) this.toolStore.put(this.toolKey(part), reduced);
  }

  private restorePart(part: Part): boolean {
    const entry = this.snapshots.get(part.address);
    if (entry?.type !== 'form') return false;
    this.forms.set(part.address, entry.form);
    return true;
  }

  // ---------------------------------------------------------------- preflight

  /**
   * The stored floors, deepest coverage first. Floors are content-addressed and
   * never removed while the engine lives, so the sorted list is rebuilt only when
   * one was added: a preflight at every turn does not parse and sort them all again.
   */
  private floorCandidates(): readonly FloorCandidate[] {
    const keys = this.snapshots.keys(FLOOR_PREFIX);
    const known = this.floorList;
    if (known.count !== keys.length) {
      let added = false;
      for (const key of keys) {
        if (known.seen.has(key)) continue;
        known.seen.add(key);
        const parsed = parseFloorKey(key);
        if (parsed) {
          known.list.push({ key, parsed });
          added = true;
        }
      }
      if (added) known.list.sort((a, b) => b.parsed.coverageEnd - a.parsed.coverageEnd || (a.key < b.key ? -1 : 1));
      known.count = keys.length;
    }
    return known.list;
  }

  private readonly floorList: { count: number; seen: Set<string>; list: FloorCandidate[] } = { count: 0, seen: new Set(), list: [] };

  /**
   * Turn start: restore a bounded checkpoint on the pristine raw. Folds the
   * longest stored coverage that still matches the raw into its summary,
   * re-derives the protected lines of that summary from the raw (drift reset),
   * swaps in every stored reduced form and seeds the calibration anchor.
   * It does not reduce.
   */
  preflight(): PreflightReport {
    const units = this.record.units;
    let coverageUnit = 0;
    let summary: SummaryState | undefined;
    for (const c of this.floorCandidates()) {
      const unitIndex = this.record.unitIndexAtRecord(c.parsed.coverageEnd);
      if (unitIndex >= units.length || units[unitIndex]!.firstRecord !== c.parsed.coverageEnd) continue;
      if (this.record.coverageDigest(unitIndex) !== c.parsed.digest) continue;
      const entry = this.snapshots.get(c.key);
      if (entry?.type !== 'floor') continue;
      coverageUnit = unitIndex;
      summary = entry.floor.state;
      break;
    }
    let drifted = 0;
    if (summary) {
      // Drift reset: the protected lines are re-derived from the raw record. A
      // summary already checked against this same coverage is not checked again.
      const checked = this.driftChecked;
      if (checked && checked.stored === summary && checked.coverageUnit === coverageUnit) {
        summary = checked.repaired;
      } else {
        const stored = summary;
        // The raw-derived lines are a left fold over the covered units: extend the
        // cached fold rather than walking the whole history at every turn.
        const cache = this.protectedCache;
        const lines =
          cache && cache.upTo <= coverageUnit
            ? protectedFromRaw(units.slice(cache.upTo, coverageUnit), cache.lines)
            : protectedFromRaw(units.slice(0, coverageUnit));
        this.protectedCache = { upTo: coverageUnit, lines };
        const reset = resetDrift(stored, lines);
        summary = reset.state;
        drifted = reset.drifted;
        this.driftChecked = { stored, coverageUnit, repaired: summary };
      }
    }
    let restoredForms = 0;
    const mark = this.preflightMark;
    if (mark && mark.coverageUnit === coverageUnit && mark.summary === summary && mark.viewWrites === this.viewWrites && this.coverageUnit === coverageUnit && this.summary === summary) {
      // Nothing the view is derived from changed since the last preflight: the
      // same floor, no form or floor written, and every record appended since
      // went through onAppend, which restores and counts exactly as the loop
      // below would. Re-deriving would give the same view at a cost that grows
      // with the history.
      restoredForms = this.forms.size;
    } else {
      this.coverageUnit = coverageUnit;
      this.summary = summary;
      this.summaryTokens = summary ? this.summaryTokensOf(summary) : 0;
      this.forms.clear();
      this.unitTokens.length = 0;
      // The blocks are derived again below (refreshBlocks); counted again only if their text changed.
      this.estimate = this.summaryTokens + this.blockTokens;
      this.blockKey = '';
      for (let i = coverageUnit; i < units.length; i++) {
        const unit = units[i]!;
        for (const part of unit.parts) if (this.restorePart(part)) restoredForms++;
        const tokens = this.unitTokensOf(unit);
        this.unitTokens[i] = tokens;
        this.estimate += tokens;
      }
    }
    this.preflightMark = { coverageUnit, summary, viewWrites: this.viewWrites };
    if (this.log.length === 0) {
      for (const key of this.snapshots.keys(LOG_PREFIX).sort()) {
        const entry = this.snapshots.get(key);
        if (entry?.type === 'log') this.log.push(entry.compaction);
      }
    }
    const anchor = this.snapshots.get(ANCHOR_KEY);
    this.anchor = anchor?.type === 'anchor' ? anchor.anchor : undefined;
    // The anti-thrash gate is per turn. A preflight in the middle of a turn (a
    // resume after a crash) picks up the gate of that turn; a new turn resets it.
    const gate = this.snapshots.get(GATE_KEY);
    const turn = this.currentTurnRecord();
    if (gate?.type === 'gate' && gate.gate.turnRecord === turn) {
      this.ineffective = gate.gate.ineffective;
      this.held = gate.gate.held;
    } else {
      this.ineffective = 0;
      this.held = false;
    }
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
      this.prepareFold(predicted);
      return { predicted, after: predicted, tier: 0, compactions: [], held: false };
    }
    if (this.held && !isNearWindow(this.budget, predicted)) {
      return { predicted, after: predicted, tier: 0, compactions: [], held: true };
    }
    if (this.deferFold(predicted)) {
      return { predicted, after: predicted, tier: 0, compactions: [], held: false, deferred: true };
    }
    const compactions = await this.reduce(atRecord);
    const after = this.predicted();
    const saving = predicted - after;
    if (saving >= ANTI_THRASH_MIN_SAVING_RATIO * this.budget.effective) {
      this.ineffective = 0;
    } else if (++this.ineffective >= ANTI_THRASH_LIMIT) {
      this.held = true;
    }
    this.snapshots.put(GATE_KEY, { type: 'gate', gate: { turnRecord: this.currentTurnRecord(), ineffective: this.ineffective, held: this.held } });
    this.prepareFold(after);
    return { predicted, after, tier: highestTier(compactions), compactions, held: false };
  }

  private summaryTokensOf(state: SummaryState): number {
    if (this.summaryTokenMemo?.state === state) return this.summaryTokenMemo.tokens;
    const tokens = this.options.summaryCounter.countSummary(state) + MESSAGE_OVERHEAD_TOKENS;
    this.summaryTokenMemo = { state, tokens };
    return tokens;
  }

  /** First record of the current turn (the latest user message), −1 before any. */
  private currentTurnRecord(): number {
    const units = this.record.units;
    for (let i = units.length - 1; i >= 0; i--) if (units[i]!.kind === 'user') return units[i]!.firstRecord;
    return -1;
  }

  /** Whether the anti-thrash gate holds compaction off for the rest of the turn. */
  get antiThrashHeld(): boolean {
    return this.held;
  }

  private async reduce(atRecord: number): Promise<Compaction[]> {
    const out: Compaction[] = [];
    const units = this.record.units;
    const note = (tier: Tier, before: number, reactive = false): void => {
      const c = this.logged(atRecord, tier, before, reactive);
      if (c) out.push(c);
    };
    const near = this.nearWindowStart();
    let folded = false;

    // ① shrink old tools outside the near window, oldest first, toward stop
    let before = this.predicted();
    this.shrink(this.coverageUnit, near, this.budget.stop);
    note(1, before);

    // ② floor-summarize the prefix outside the near window: over the trigger, or short of stop in a narrow dead zone
    const shortOfStop = this.budget.foldAboveStop && this.predicted() > this.budget.stop;
    if ((isOverTrigger(this.budget, this.predicted()) || shortOfStop) && near > this.coverageUnit) {
      before = this.predicted();
      await this.fold(this.plannedBoundary(near) ?? this.foldBoundary(near), MIN_FOLD_SAVING_RATIO * this.budget.effective);
      // Attempted: tier ④ fires only when ② did not try this pass (a fold too small to pay is no reason to breach).
      folded = true;
      note(2, before);
    }

    // ③ breakthrough shrink, near window included
    if (isOverTrigger(this.budget, this.predicted())) {
      before = this.predicted();
      this.shrink(this.coverageUnit, units.length, this.budget.stop);
      note(3, before);
    }

    // ④ breakthrough floor: no near-window protection; keeps only the last unit raw.
    // Re-entered even after ② when the view is still over the effective window:
    // that is the error recovery a provider's hard reject would trigger.
    const overWindow = isNearWindow(this.budget, this.predicted());
    if ((isOverTrigger(this.budget, this.predicted()) && !folded) || overWindow) {
      const last = units.length - 1;
      if (last > this.coverageUnit) {
        before = this.predicted();
        // Over the window a fold is the error recovery: any saving will do. Otherwise it must pay like tier ②.
        await this.fold(this.foldBoundary(last), overWindow ? 1 : MIN_FOLD_SAVING_RATIO * this.budget.effective);
        note(4, before, folded);
      }
    }
    if (isNearWindow(this.budget, this.predicted())) {
      before = this.predicted();
      this.clipLastUnit();
      note(4, before, true);
    }
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
    this.snapshots.put(logKey(this.log.length), { type: 'log', compaction: c });
    this.log.push(c);
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
    const near = this.nearWindowStart();
    const outsideNearWindow = near > this.coverageUnit;
    const compactions: Compaction[] = [];
    if (outsideNearWindow && (await this.fold(near, 1))) {
      const c = this.logged(atRecord, 2, predicted);
      if (c) compactions.push(c);
    }
    const after = this.predicted();
    this.prepareFold(after);
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

  /**
   * Progressive folding: the smallest prefix, ending at a unit boundary no later
   * than `limit`, whose removal should bring the view down to stop, allowing for
   * the summary to grow up to its cap. The raw tail kept is therefore as large as
   * the budget allows (the token window), and never smaller than the protected
   * steps when `limit` is the near-window start.
   */
  private foldBoundary(limit: number, predicted = this.predicted()): number {
    const target = this.foldTarget();
    let removed = 0;
    for (let i = this.coverageUnit; i < limit; i++) {
      removed += this.unitTokens[i] ?? 0;
      if (predicted - removed + this.summaryGrowth(removed) <= target) return i + 1;
    }
    return limit;
  }

  private cap(): number {
    return this.options.summaryCap ?? summaryCapFor(this.budget);
  }

  /** Expected growth of the summary when `removed` tokens are folded into it. */
  private summaryGrowth(removed: number): number {
    const room = Math.max(SUMMARY_GROWTH_MIN_TOKENS, this.cap() - this.summaryTokens);
    return Math.min(room, SUMMARY_GROWTH_MIN_TOKENS + SUMMARY_GROWTH_RATIO * removed);
  }

  // ------------------------------------------------------- the background floor

  private budgetKey(): string {
    return `${this.budget.effective}-${this.budget.trigger}-${this.cap()}`;
  }

  /**
   * After a model call's step: when the view is within WATERMARK_CALLS of
   * recent growth of the trigger, plan the span the next fold will cover
   * (once per coverage, stored) and, with a background runner, start
   * summarizing it. The plan is made whether or not anything runs in the
   * background, so both paths fold the same span.
   */
  private prepareFold(predicted: number): void {
    const growth = this.recentGrowth();
    if (predicted + WATERMARK_CALLS * growth < this.budget.trigger) return;
    const plan = this.plan(predicted, growth, false);
    if (plan) this.startBackground(plan.toUnit);
  }

  /**
   * Over the trigger with no plan yet (the view jumped past the watermark in
   * one step): while it stays under DEFER_LIMIT the fold waits one call —
   * planned now, summarized in the background meanwhile, made at the next
   * call — rather than asking the summarizer on the hot path. Whether it
   * waits depends only on the record and the store, never on how far the
   * background work got.
   */
  private deferFold(predicted: number): boolean {
    if (predicted > this.deferLimit()) return false;
    const current = this.currentPlan();
    if (current && (this.plannedBoundary(this.nearWindowStart()) !== undefined || current.n + 1 >= MAX_PLANS)) return false;
    const plan = this.plan(predicted, this.recentGrowth(), true);
    if (!plan) return false;
    this.startBackground(plan.toUnit);
    return true;
  }

  /** Up to here a fold may wait a call for its summary: DEFER_LIMIT_SHARE of the way from the trigger to wEff. */
  private deferLimit(): number {
    return this.budget.trigger + DEFER_LIMIT_SHARE * (this.budget.effective - this.budget.trigger);
  }

  private startBackground(toUnit: number): void {
    if (!this.options.background) return;
    const key = this.prefloorKeyFor(toUnit);
    if (this.snapshots.get(key)?.type === 'prefloor') return;
    const input = this.foldInput(toUnit);
    const summarizer = this.options.summarizer;
    const snapshots = this.snapshots;
    this.backgroundTask().start(key, async (signal) => {
      const state = await summarizer.fold(input);
      if (signal.aborted) throw new Error('cancelled');
      snapshots.put(key, { type: 'prefloor', state });
      return state;
    });
  }

  /**
   * The stored plan for the current coverage, or a new one (stored). A new
   * plan folds what the fold one call from now would fold; made ahead of the
   * trigger (`now` false), it is not made until the span outside the near
   * window can buy the fold PLAN_MIN_RUNWAY_CALLS of runway.
   */
  private plan(predicted: number, growth: number, now: boolean): { toUnit: number } | undefined {
    const current = this.currentPlan();
    // Ahead of the trigger a stored plan stands; at the trigger (`now`) one the view outgrew is followed by another.
    if (current && !now) return current.toUnit === undefined ? undefined : { toUnit: current.toUnit };
    const key = planKey(this.coverageEnd, this.budgetKey(), current ? current.n + 1 : 0);
    const near = this.nearWindowStart();
    if (near <= this.coverageUnit) return undefined;
    const atFold = Math.max(predicted, this.budget.trigger) + growth;
    const toUnit = this.foldBoundary(near, atFold);
    const removed = this.spanTokens(toUnit);
    if (removed < MIN_FOLD_SAVING_RATIO * this.budget.effective) return undefined;
    if (!now && atFold - removed + this.summaryGrowth(removed) > this.budget.trigger - PLAN_MIN_RUNWAY_CALLS * growth) return undefined;
    this.snapshots.put(key, { type: 'plan', plan: { from: this.coverageEnd, to: this.coverageEndAt(toUnit) } });
    return { toUnit };
  }

  /**
   * The planned span's end for a fold now, if there is a plan for this
   * coverage and folding it brings the view under the trigger; otherwise (no
   * plan, or the view grew past what it was planned for) undefined, and the
   * fold chooses afresh.
   */
  private plannedBoundary(limit: number): number | undefined {
    const toUnit = this.currentPlan()?.toUnit;
    if (toUnit === undefined || toUnit <= this.coverageUnit || toUnit > limit) return undefined;
    const removed = this.spanTokens(toUnit);
    return this.predicted() - removed + this.summaryGrowth(removed) <= this.budget.trigger ? toUnit : undefined;
  }

  /** The latest plan stored for the current coverage: its number and where it ends (a unit index). */
  private currentPlan(): { n: number; toUnit: number | undefined } | undefined {
    const budgetKey = this.budgetKey();
    let found: { n: number; toUnit: number | undefined } | undefined;
    for (let n = 0; n < MAX_PLANS; n++) {
      const entry = this.snapshots.get(planKey(this.coverageEnd, budgetKey, n));
      if (entry?.type !== 'plan') break;
      found = { n, toUnit: this.unitStartingAt(entry.plan.to) };
    }
    return found;
  }

  /** The unit that starts at record `record`, if one does. */
  private unitStartingAt(record: number): number | undefined {
    const units = this.record.units;
    if (record === this.record.records.length) return units.length;
    const i = this.record.unitIndexAtRecord(record);
    return i < units.length && units[i]!.firstRecord === record ? i : undefined;
  }

  /** Tokens in view of units [coverageUnit, toUnit). */
  private spanTokens(toUnit: number): number {
    let span = 0;
    for (let i = this.coverageUnit; i < toUnit; i++) span += this.unitTokens[i] ?? 0;
    return span;
  }

  /** The first record after a fold up to unit `toUnit` (the record count when it folds every unit). */
  private coverageEndAt(toUnit: number): number {
    const units = this.record.units;
    return toUnit < units.length ? units[toUnit]!.firstRecord : this.record.records.length;
  }

  private foldInput(toUnit: number): FoldInput {
    const input = { previous: this.summary, units: this.record.units.slice(this.coverageUnit, toUnit), coverageEnd: this.coverageEndAt(toUnit), cap: this.cap() };
    // The context goes with the question only as far as it fits beside it. The newest units are left out
    // first: a prefix of what was sent is still a cache hit, and the span is at its start.
    const room = this.budget.effective - QUESTION_MARGIN * continuationQuestionTokens(input.units.length);
    const units = this.record.units;
    let tokens = this.predicted();
    let end = units.length;
    while (tokens > room && end > toUnit) tokens -= this.unitTokens[--end] ?? 0;
    if (tokens > room) return input;
    const view = this.project();
    if (end === units.length) return { ...input, context: view };
    const tail = this.tail!;
    const head = view.length - tail.messages.length;
    return { ...input, context: view.slice(0, head + (tail.starts[end - this.coverageUnit] ?? tail.messages.length)) };
  }

  private prefloorKeyFor(toUnit: number): string {
    return prefloorKey(this.coverageEnd, this.coverageEndAt(toUnit), `${this.record.coverageDigest(toUnit)}-${this.budgetKey()}`, this.cap());
  }

  private background: BackgroundTask<SummaryState> | undefined;

  private backgroundTask(): BackgroundTask<SummaryState> {
    return (this.background ??= new BackgroundTask<SummaryState>(this.options.background));
  }

  /** Stops a summary running in the background (a stopped turn): the fold it was for will summarize itself. */
  cancelBackground(): void {
    this.background?.cancel();
  }

  /** The background floor's state (idle when there is no runner). */
  get backgroundState(): BackgroundTask<SummaryState>['state'] {
    return this.background?.state ?? { kind: 'idle' };
  }

  /**
   * The summary for folding up to `toUnit`: restored when it was computed
   * ahead, awaited when it is being computed, otherwise asked for now (and the
   * fallback's if the summarizer fails).
   */
  private async summaryFor(toUnit: number, input: FoldInput): Promise<{ state: SummaryState; source: FloorSource }> {
    const key = this.prefloorKeyFor(toUnit);
    const stored = this.snapshots.get(key);
    if (stored?.type === 'prefloor') {
      this.background?.cancel();
      return { state: stored.state, source: 'precomputed' };
    }
    const awaited = this.background ? await this.background.take(key) : undefined;
    if (awaited) return { state: awaited, source: 'awaited' };
    // A job for another span is stale now: the fold summarizes its own.
    this.background?.cancel();
    try {
      return { state: await this.options.summarizer.fold(input), source: 'synchronous' };
    } catch (error) {
      this.lastFallbackError = error;
      return { state: await this.options.fallback.fold(input), source: 'synchronous' };
    }
  }

  /** Where the summaries of this engine's folds came from. */
  get floorSources(): Readonly<Record<FloorSource, number>> {
    return this.sources;
  }

  private readonly sources: Record<FloorSource, number> = { precomputed: 0, awaited: 0, synchronous: 0 };

  /**
   * Where a fold brings the view: low enough that the session's recent growth
   * (the median size of its last steps in view, a step being what one model call
   * adds) fits RUNWAY_CALLS more calls under the trigger, and never above stop.
   * Read from the record, so a view derived again folds the same.
   */
  private foldTarget(): number {
    return Math.min(this.budget.stop, this.budget.trigger - RUNWAY_CALLS * this.recentGrowth());
  }

  /** The median tokens of the last RUNWAY_SAMPLE steps in view: what one model call adds to the view. */
  private recentGrowth(): number {
    const units = this.record.units;
    const sizes: number[] = [];
    for (let i = units.length - 1; i >= this.coverageUnit && sizes.length < RUNWAY_SAMPLE; i--) {
      if (units[i]!.kind === 'step') sizes.push(this.unitTokens[i] ?? 0);
    }
    if (sizes.length === 0) return 0;
    sizes.sort((a, b) => a - b);
    return sizes[Math.floor(sizes.length / 2)]!;
  }

  /** Absolute index of the first unit of the near window (the Nth-last step). */
  private nearWindowStart(): number {
    const units = this.record.units;
    let steps = 0;
    for (let i = units.length - 1; i >= this.coverageUnit; i--) {
      if (units[i]!.kind === 'step' && ++steps >= this.protectRecentSteps) return i;
    }
    return this.coverageUnit;
  }

  /** Shrinks tool parts of units [from, to) oldest first until `target`, finishing each unit. */
  private shrink(from: number, to: number, target: number): void {
    const units = this.record.units;
    for (let i = from; i < to; i++) {
      if (this.predicted() <= target) return;
      const unit = units[i]!;
      if (unit.kind !== 'step') continue;
      for (const part of unit.parts) {
        if (part.kind !== 'tool' || this.forms.has(part.address)) continue;
        const form = this.toolStore.get(this.toolKey(part));
        if (!form) continue; // a miss is a skip, never a drop
        const beforeTokens = this.partTokens(part);
        this.forms.set(part.address, form);
        const afterTokens = this.partTokens(part);
        if (afterTokens >= beforeTokens) {
          this.forms.delete(part.address);
          continue;
        }
        this.viewWrites++;
        this.snapshots.put(part.address, { type: 'form', form });
        this.addToUnit(i, afterTokens - beforeTokens);
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
    if (toUnit <= this.coverageUnit || toUnit >= units.length + 1) return false;
    // What the span holds bounds what folding it can save: not worth a summarizer call when that is too little.
    if (this.spanTokens(toUnit) < minSaving) {
      this.skippedFolds++;
      return false;
    }
    const input = this.foldInput(toUnit);
    const coverageEnd = input.coverageEnd;
    const made = await this.summaryFor(toUnit, input);
    let state = made.state;
    // The lines already sent keep their bytes: the fold's delta is appended unless a full render is needed.
    const laid = layoutAfterFold(this.summary, state, this.options.summaryCounter, input.cap);
    state = laid.state;
    const before = this.predicted();
    // What a fold that does not pay must put back: only the span's forms leave the map.
    const undo = {
      summary: this.summary,
      summaryTokens: this.summaryTokens,
      coverageUnit: this.coverageUnit,
      estimate: this.estimate,
      unitTokens: this.unitTokens.slice(this.coverageUnit, toUnit),
      forms: [] as [string, ReducedForm][],
      // The head's blocks as they were (the estimate counts them), and the request the retrieval block was built for.
      blocks: { key: this.blockKey, text: this.blockText, tokens: this.blockTokens, retrieval: this.retrievalCache, evidence: this.evidenceCache, query: this.snapshots.get(RETRIEVAL_KEY) },
    };
    let removed = 0;
    for (let i = this.coverageUnit; i < toUnit; i++) {
      removed += this.unitTokens[i] ?? 0;
      this.unitTokens[i] = 0;
      for (const part of units[i]!.parts) {
        const form = this.forms.get(part.address);
        if (form === undefined) continue;
        undo.forms.push([part.address, form]);
        this.forms.delete(part.address);
      }
    }
    const summaryTokens = this.summaryTokensOf(state);
    this.estimate += summaryTokens - this.summaryTokens - removed;
    this.summaryTokens = summaryTokens;
    this.summary = state;
    this.coverageUnit = toUnit;
    this.refreshBlocks();
    if (before - this.predicted() < Math.max(1, minSaving)) {
      // Not worth its cache miss (or worse, bigger): the view stays as it was.
      this.summary = undo.summary;
      this.summaryTokens = undo.summaryTokens;
      this.coverageUnit = undo.coverageUnit;
      this.estimate = undo.estimate;
      undo.unitTokens.forEach((t, k) => (this.unitTokens[undo.coverageUnit + k] = t));
      for (const [address, form] of undo.forms) this.forms.set(address, form);
      // The blocks go back too: rendered again for the old coverage they could quote other passages, and the
      // estimate restored above counts the old ones.
      this.blockKey = undo.blocks.key;
      this.blockText = undo.blocks.text;
      this.blockTokens = undo.blocks.tokens;
      this.retrievalCache = undo.blocks.retrieval;
      this.evidenceCache = undo.blocks.evidence;
      if (undo.blocks.query) this.snapshots.put(RETRIEVAL_KEY, undo.blocks.query);
      this.refreshBlocks();
      this.skippedFolds++;
      return false;
    }
    const digest = this.record.coverageDigest(toUnit);
    this.viewWrites++;
    this.snapshots.put(floorKey(coverageEnd, digest), { type: 'floor', floor: { coverageEnd, digest, state } });
    // The view is now what a preflight restoring this floor derives (its forms and counts were kept
    // exact through the fold): the next preflight need not derive it again unless something else is written.
    this.preflightMark = { coverageUnit: toUnit, summary: state, viewWrites: this.viewWrites };
    this.layouts[laid.kind]++;
    this.sources[made.source]++;
    this.floorCount++;
    return true;
  }

  /** Folds not kept because they would have saved too little (see `fold`). */
  get foldsSkipped(): number {
    return this.skippedFolds;
  }

  private skippedFolds = 0;

  /** Floor summaries made by this engine (tiers ② and ④). */
  get floors(): number {
    return this.floorCount;
  }

  /** How the head was laid out at this engine's folds: appended to what was sent, or rendered in full. */
  get headLayouts(): Readonly<Record<LayoutKind, number>> {
    return this.layouts;
  }

  private readonly layouts: Record<LayoutKind, number> = { appended: 0, rendered: 0 };

  /**
   * Last guard: the one remaining unit is itself over the window. Its long texts
   * and any tool output left raw (a tool with no reducer, e.g. a sub-agent's
   * report) keep their head and tail, with a pointer to the full record.
   */
  private clipLastUnit(): void {
    const index = this.record.units.length - 1;
    const unit = this.record.units[index];
    if (!unit || index < this.coverageUnit) return;
    // One budget of characters for the whole unit, shared by its long pieces.
    const clippable = unit.parts.filter((p) => this.forms.get(p.address)?.how !== 'dropped' && this.clipLength(p) > EMERGENCY_MIN_PIECE_CHARS);
    if (clippable.length === 0) return;
    const originals = new Map(clippable.map((p) => [p.address, this.forms.get(p.address)]));
    // Characters are not tokens (dense text has more than one token a character):
    // halve the share until the estimate fits.
    let share = Math.max(EMERGENCY_MIN_PIECE_CHARS, Math.floor((EMERGENCY_HEAD_CHARS + EMERGENCY_TAIL_CHARS) / clippable.length));
    do {
      this.clipParts(index, clippable, originals, share);
      share = Math.floor(share / 2);
    } while (isNearWindow(this.budget, this.predicted()) && share >= EMERGENCY_MIN_SHARE_CHARS);
  }

  private clipParts(index: number, clippable: readonly Part[], originals: ReadonlyMap<string, ReducedForm | undefined>, share: number): void {
    for (const part of clippable) {
      const before = this.partTokens(part);
      const tool = part.kind === 'tool' ? part.tool : undefined;
      const recover = tool ? `view_tool_call("${this.toolKey(part)}")` : `record r${part.record}`;
      const current = originals.get(part.address);
      const clip = (text: string): string => {
        if (text.length <= share) return text;
        const head = Math.floor(share * 0.75);
        const tail = share - head;
        return `${text.slice(0, head)}\n[… ${text.length - share} characters elided to fit the window; full text: ${recover}]\n${text.slice(-tail)}`;
      };
      // A long message with headings and lists keeps its outline: every section still says what it found.
      const outlined = (text: string): string => {
        if (text.length <= share) return text;
        const note = `[outline of a ${text.length}-character message (headings, the opening words of each item and paragraph); full text: ${recover}]`;
        const outline = outlineOf(text, share - note.length - 1);
        return outline !== undefined ? `${note}\n${outline}` : clip(text);
      };
      const form: ReducedForm = tool
        ? { how: 'shrunk', input: clip(current ? current.input : renderToolInput(tool)), output: clip(current ? current.output : (tool.output ?? '')), recover }
        : { how: 'shrunk', input: '', output: current ? clip(current.output) : outlined(part.text), recover };
      this.forms.set(part.address, form);
      this.viewWrites++;
      this.snapshots.put(part.address, { type: 'form', form });
      this.addToUnit(index, this.partTokens(part) - before);
    }
  }

  private clipLength(part: Part): number {
    const form = this.forms.get(part.address);
    if (part.kind !== 'tool' || !part.tool) return (form ? form.output : part.text).length;
    if (form) return form.input.length + form.output.length;
    return renderToolInput(part.tool).length + (part.tool.output?.length ?? 0);
  }

  /** The error that made the engine fall back to the static checkpoint last, if any. */
  get fallbackError(): unknown {
    return this.lastFallbackError;
  }

  // --------------------------------------------------------------- projecting

  /** The messages sent to the model: Task Context head, then the raw or reduced tail. */
  project(): ProjectedMessage[] {
    const { text, parts } = this.headText();
    const head = this.headMessage(text, parts);
    const { messages: tail, kept } = this.tailView();
    const sameHead = head === this.projectedHead;
    this.projectedHead = head;
    this.unchangedCount = sameHead ? (head ? 1 : 0) + kept : 0;
    this.projectionCount++;
    // A fresh array each call (callers keep the previous one), copied in one block.
    return head ? [head].concat(tail) : tail.slice();
  }

  /**
   * How many leading messages of the last projection are the very objects of
   * the projection before it: a meter counts only what follows, so measuring
   * a call costs what changed, not the whole view.
   */
  get unchangedSinceLastProjection(): number {
    return this.unchangedCount;
  }

  /** Projections made so far: `unchangedSinceLastProjection` relates the last one to the one just before it. */
  get projections(): number {
    return this.projectionCount;
  }

  private unchangedCount = 0;
  private projectionCount = 0;
  private projectedHead: ProjectedMessage | undefined;

  /**
   * The messages of the units in view, kept between calls: while the
   * coverage and the forms are unchanged, only the units appended to since
   * the last call are rendered again, so a call costs what changed, not the
   * whole view. Any fold, shrink or restore re-checks every unit in view
   * (a lookup each, a render only where something changed).
   */
  private tailView(): { messages: ProjectedMessage[]; kept: number } {
    const units = this.record.units;
    let t = this.tail;
    let kept = 0;
    if (t && t.coverage === this.coverageUnit && t.forms === this.forms.revision) {
      // Units [coverage, coverage + starts.length) are rendered; the ones an append touched since go again.
      const k = Math.max(0, this.dirtyFrom - t.coverage);
      if (k < t.starts.length) {
        t.messages.length = t.starts[k]!;
        t.starts.length = k;
      }
      kept = t.messages.length;
    } else {
      t = { coverage: this.coverageUnit, forms: this.forms.revision, starts: [], messages: [] };
      this.tail = t;
    }
    for (let i = t.coverage + t.starts.length; i < units.length; i++) {
      t.starts.push(t.messages.length);
      for (const m of this.unitView(i, units[i]!)) t.messages.push(m);
    }
    this.dirtyFrom = Infinity;
    this.pruneUnitViews(units.length);
    return { messages: t.messages, kept };
  }

  /** The rendered tail: the messages of units [coverage, coverage + starts.length), `starts[k]` where unit coverage + k begins. */
  private tail: { coverage: number; forms: number; starts: number[]; messages: ProjectedMessage[] } | undefined;
  /** The first unit an append touched since the last projection. */
  private dirtyFrom = Infinity;

  /**
   * Unit `i` as sent: rendered with its current forms and redacted, computed
   * again only when the unit grew or one of its forms changed. A unit's
   * messages keep their identity from call to call, so projecting costs a
   * lookup per unit in view, not a render and a redaction of the whole view.
   */
  private unitView(i: number, unit: Unit): readonly ProjectedMessage[] {
    const cached = this.unitViews.get(i);
    if (cached && cached.unit === unit && cached.lastRecord === unit.lastRecord && cached.parts === unit.parts.length && this.sameForms(unit, cached.forms)) return cached.messages;
    // Every part's form: a text part has one too once the last guard clipped it.
    const forms = unit.parts.map((part) => this.forms.get(part.address));
    const messages = renderUnit(unit, (address) => this.forms.get(address)).map((m) => this.redactMessage(m));
    this.unitViews.set(i, { unit, lastRecord: unit.lastRecord, parts: unit.parts.length, forms, messages });
    return messages;
  }

  private sameForms(unit: Unit, forms: readonly (ReducedForm | undefined)[]): boolean {
    for (let k = 0; k < unit.parts.length; k++) if (this.forms.get(unit.parts[k]!.address) !== forms[k]) return false;
    return true;
  }

  /** Drops the cached views of units folded away (they are never sent again unless the coverage is rebuilt). */
  private pruneUnitViews(units: number): void {
    if (this.unitViews.size <= 2 * Math.max(16, units - this.coverageUnit)) return;
    for (const i of this.unitViews.keys()) if (i < this.coverageUnit || i >= units) this.unitViews.delete(i);
  }

  private readonly unitViews = new Map<number, { unit: Unit; lastRecord: number; parts: number; forms: (ReducedForm | undefined)[]; messages: ProjectedMessage[] }>();

  /** The head as a message, the same object while its text is unchanged. */
  private headMessage(text: string, parts: readonly HeadPart[]): ProjectedMessage | undefined {
    if (text === '') return undefined;
    if (this.lastHead?.text !== text) this.lastHead = { text, message: this.redactMessage({ role: 'user', content: text, head: parts }) };
    return this.lastHead.message;
  }

  private lastHead: { text: string; message: ProjectedMessage } | undefined;

  /** A message with secrets hidden; the structured form carries the same text and is redacted alike, never dropped. */
  private redactMessage(m: ProjectedMessage): ProjectedMessage {
    const redact = this.options.redact;
    if (!redact) return m;
    const content = redact(m.content);
    if (content === m.content) return m;
    return {
      ...m,
      content,
      ...(m.prose !== undefined ? { prose: redact(m.prose) } : {}),
      ...(m.calls ? { calls: m.calls.map((c) => ({ ...c, input: redact(c.input) })) } : {}),
      ...(m.result ? { result: { ...m.result, output: redact(m.result.output) } } : {}),
      ...(m.head ? { head: m.head.map((p) => ({ ...p, text: redact(p.text) })) } : {}),
    };
  }

  /** The head message: the Task Context, the protected blocks, the evidence that was folded. */
  private headText(): { text: string; parts: readonly HeadPart[] } {
    // Rendered again only when the summary, the coverage or a block's revision changed: the head is
    // projected at every call and its blocks (the protected state above all) grow with the task.
    const key = this.blocksKey();
    const cached = this.headCache;
    if (cached && cached.summary === this.summary && cached.key === key) return cached;
    const blocks = this.blockTexts();
    const protectedCount = (this.options.blocks ?? []).length;
    const parts: HeadPart[] = [
      { block: 'summary' as const, text: this.summary ? renderSummary(this.summary) : '' },
      ...blocks.map((t, i) => ({ block: i < protectedCount ? ('protectedState' as const) : i === protectedCount ? ('retrieved' as const) : ('evidence' as const), text: t })),
    ].filter((p) => p.text !== '');
    const text = parts.map((p) => p.text).join('\n\n');
    this.headCache = { summary: this.summary, key, text, parts };
    return this.headCache;
  }

  private headCache: { summary: SummaryState | undefined; key: string; text: string; parts: readonly HeadPart[] } | undefined;

  /**
   * The head's blocks. Before the first fold only the protected blocks can
   * have something to say (a fact the user corrected or pinned, which must be
   * visible although its record is still in view in its original wording).
   */
  private blockTexts(): string[] {
    const blocks = (this.options.blocks ?? []).map((b) => b.render(this.coverageEnd));
    if (!this.summary) return blocks;
    return [...blocks, this.retrievalBlock(), this.evidenceBlock()];
  }

  /**
   * The original-text channel: folded passages most relevant to the current
   * request (the latest user message), within RETRIEVAL_SHARE of wEff.
   */
  private retrievalBlock(): string {
    // Refreshed with the head (at a fold), for the request current then: the
    // prompt-cache prefix stays stable through the turns in between.
    const key = String(this.coverageUnit);
    if (this.retrievalCache?.key === key) return this.retrievalCache.text;
    // Which request the head was built for is kept with the head's coverage, so a
    // view re-derived after a crash quotes the same passages.
    const stored = this.snapshots.get(RETRIEVAL_KEY);
    let turn: number;
    if (stored?.type === 'retrieval' && stored.retrieval.coverageEnd === this.coverageEnd) turn = stored.retrieval.queryRecord;
    else {
      turn = this.currentTurnRecord();
      this.snapshots.put(RETRIEVAL_KEY, { type: 'retrieval', retrieval: { coverageEnd: this.coverageEnd, queryRecord: turn } });
    }
    const units = this.record.units;
    this.retrieval.extend(units, this.coverageUnit);
    const retrieval = this.options.retrieval ?? DEFAULT_RETRIEVAL;
    let query = turn >= 0 ? this.record.records[turn]?.content ?? '' : '';
    if (retrieval.query === 'task' && this.summary) {
      // Around the current task: the latest request, the open work and the last failures.
      const c = this.summary.current;
      const failures = this.summary.facts['Ruled out'].slice(-2).map((l) => l.text);
      query = [query, c.goal, c.status, c.next, ...failures].join('\n');
    }
    const budgetChars = this.budget.effective < retrieval.minEffective ? 0 : Math.floor(this.budget.effective * retrieval.share * 4);
    const text = query ? this.retrieval.block(query, budgetChars, turn) : '';
    this.retrievalCache = { key, text };
    return text;
  }

  /** What the head's blocks are derived from: the coverage and each block's revision. */
  private blocksKey(): string {
    return `${this.coverageUnit}:${(this.options.blocks ?? []).map((b) => b.revision).join(',')}`;
  }

  /** Re-measures the head's blocks when they change, keeping the running estimate exact. */
  private refreshBlocks(): void {
    const key = this.blocksKey();
    if (this.blockKey === key) return;
    this.blockKey = key;
    const texts = this.blockTexts();
    this.checkProtectedBudget(texts.slice(0, (this.options.blocks ?? []).length).join('\n\n'));
    const text = texts.filter((t) => t !== '').join('\n\n');
    if (this.blockText === text) return;
    this.blockText = text;
    const tokens = text ? this.counter.count(text) + 1 : 0;
    this.estimate += tokens - this.blockTokens;
    this.blockTokens = tokens;
  }

  /**
   * The protected blocks have a budget of their own (PROTECTED_BLOCK_SHARE of
   * wEff). They are never shrunk to fit it: when they alone exceed it the user is
   * told, once per size class, so they can review or demote facts themselves.
   */
  private checkProtectedBudget(text: string): void {
    if (!text) return;
    const budget = Math.floor(this.budget.effective * PROTECTED_BLOCK_SHARE);
    // A block over 4x its budget is over it whatever its exact count; otherwise count it.
    const tokens = text.length > budget * 16 ? Math.ceil(text.length / 4) : this.counter.count(text);
    if (tokens <= budget) return;
    const message = `The protected state takes ${tokens} tokens, over its block of ${budget} (${Math.round(PROTECTED_BLOCK_SHARE * 100)}% of the effective window): it is kept whole, and leaves less room for the conversation. Review the facts in the Task Context panel to unpin or delete what no longer applies.`;
    const key = Math.floor(tokens / 500);
    if (this.protectedNoticeKey === key) return;
    this.protectedNoticeKey = key;
    this.noticeList.push(message);
  }

  /** Things the user should be told (the protected state over its budget). */
  get notices(): readonly string[] {
    return this.noticeList;
  }

  private evidenceKey(): string {
    return String(this.coverageUnit);
  }

  /**
   * "Evidence not loaded", in the context itself: the most recently folded tool
   * calls and every shrunk or dropped one in view, each with how to get it back,
   * so the model knows what it does not know.
   */
  private evidenceBlock(): string {
    const key = this.evidenceKey();
    if (this.evidenceCache?.key === key) return this.evidenceCache.text;
    const units = this.record.units;
    const folded: string[] = [];
    let more = false;
    for (let i = this.coverageUnit - 1; i >= 0 && !more; i--) {
      const parts = units[i]!.parts;
      for (let k = parts.length - 1; k >= 0; k--) {
        const part = parts[k]!;
        if (part.kind !== 'tool' || !part.tool) continue;
        if (folded.length >= Math.min(EVIDENCE_MAX, Math.max(EVIDENCE_MIN, Math.floor(this.budget.effective / EVIDENCE_PER_TOKENS)))) {
          more = true;
          break;
        }
        folded.push(`- view_tool_call("${part.address.slice(5)}"): ${evidenceLabel(part)} (folded, r${part.record})`);
      }
    }
    let text = '';
    if (folded.length) {
      text = [
        '## Evidence not loaded',
        `Tool calls folded into this summary, newest first${more ? ` (earlier ones of records r0–r${this.coverageEnd - 1} too)` : ''}; shortened results below carry their own pointer.`,
        ...folded,
      ].join('\n');
    }
    this.evidenceCache = { key, text };
    return text;
  }

  /** Absolute index of the first unit still in view (units before it are folded). */
  get firstUnitInView(): number {
    return this.coverageUnit;
  }

  /** Everything the model is not seeing in full, and how to get it back. */
  notLoaded(): NotLoadedEntry[] {
    const out: NotLoadedEntry[] = [];
    const units = this.record.units;
    if (this.coverageUnit > 0) {
      const folded = this.foldedEntries();
      out.push({
        address: `span:r0-r${this.coverageEnd - 1}`,
        kind: 'span',
        tokens: folded.spanTokens,
        how: 'folded',
        recover: `records r0–r${this.coverageEnd - 1} (summarized in ## Task Context)`,
      });
      for (const entry of folded.entries) out.push(entry);
    }
    for (let i = this.coverageUnit; i < units.length; i++) {
      for (const part of units[i]!.parts) {
        const form = this.forms.get(part.address);
        if (!form) continue;
        const entry: NotLoadedEntry = {
          address: part.address,
          kind: part.kind,
          record: part.record,
          tokens: this.rawTokens(part),
          how: form.how,
          recover: form.recover ?? 'not recoverable by the model (dropped by the tool\'s own declaration)',
        };
        out.push(part.tool ? { ...entry, toolCallId: part.tool.callId, ...callLabel(part.tool) } : entry);
      }
    }
    return out;
  }

  /**
   * The folded prefix's tool calls and its raw tokens, extended as the
   * coverage grows (a folded unit never changes), so a panel snapshot of a
   * long task costs the raw tail, not the whole history.
   */
  private foldedEntries(): { upTo: number; spanTokens: number; entries: NotLoadedEntry[] } {
    let cache = this.foldedCache;
    if (!cache || cache.upTo > this.coverageUnit) cache = { upTo: 0, spanTokens: 0, entries: [] };
    const units = this.record.units;
    for (let i = cache.upTo; i < this.coverageUnit; i++) {
      for (const part of units[i]!.parts) {
        const tokens = this.rawTokens(part);
        cache.spanTokens += tokens;
        if (part.kind === 'tool' && part.tool) {
          cache.entries.push({ address: part.address, kind: 'tool', toolCallId: part.tool.callId, ...callLabel(part.tool), record: part.record, tokens, how: 'folded', recover: `view_tool_call("${part.tool.callId}")` });
        }
      }
    }
    cache.upTo = this.coverageUnit;
    this.foldedCache = cache;
    return cache;
  }

  private rawTokens(part: Part): number {
    if (part.kind !== 'tool' || !part.tool) return this.counter.countKeyed(`${part.address}|raw`, part.text);
    const tool = part.tool;
    const input = this.counter.countKeyed(`${part.address}|raw|in`, () => renderToolCall(tool, renderToolInput(tool)));
    if (tool.output === undefined) return input;
    return input + this.counter.countKeyed(`${part.address}|raw|out`, () => renderToolResult(tool, tool.output!));
  }
}

/** A map that counts its changes: a projection built at one revision is still valid at the same revision. */
class RevisedMap<K, V> extends Map<K, V> {
  revision = 0;

  override set(key: K, value: V): this {
    if (super.get(key) !== value || !super.has(key)) this.revision++;
    return super.set(key, value);
  }

  override delete(key: K): boolean {
    const had = super.delete(key);
    if (had) this.revision++;
    return had;
  }

  override clear(): void {
    if (this.size > 0) this.revision++;
    super.clear();
  }
}
