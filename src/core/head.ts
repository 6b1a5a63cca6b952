/**
 * The head message: the Task Context, then the blocks sent with it — the
 * protected state (never shrunk), passages of the folded record relevant to
 * the current request, and the tool calls folded away with how to get them
 * back. The head changes only when the summary, the coverage or a protected
 * block does, so the prompt-cache prefix stays stable between folds; every
 * block is kept under the key it was built for.
 */
import type { Budget } from './budget';
import { KeyedMemo, type MemoEntry } from './memo';
import { evidenceBlock } from './notLoaded';
import type { SessionRecord } from './parts';
import type { HeadPart } from './projection';
import type { Redactor } from './redact';
import { RetrievalIndex } from './retrieval';
import { RETRIEVAL_KEY, type SnapshotEntry, type SnapshotStore } from './store';
import { OBJECTION_FRAME } from './cues';
import { renderSummary, SOURCES_SUFFIX, type SummaryState } from './summary';
import type { CachedTokenCounter } from './tokens';
import { currentTurnRecord } from './view';

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

/** The protected state's block: its share of wEff. Over it, the user is told (the block is never shrunk). */
const PROTECTED_BLOCK_SHARE = 0.15;

export interface HeadOptions {
  readonly record: SessionRecord;
  readonly snapshots: SnapshotStore;
  readonly budget: Budget;
  readonly counter: CachedTokenCounter;
  /** Blocks sent after the Task Context and never reduced (the protected state). */
  readonly blocks: readonly ContextBlock[];
  readonly retrieval: RetrievalOptions;
  /** Hides secrets in the passages and the folded calls the head quotes. */
  readonly redactor: Redactor;
}

/** The head as rendered: its text and its blocks in order. */
export interface HeadText {
  readonly text: string;
  readonly parts: readonly HeadPart[];
}

/** What `Head.checkpoint` saves, for a fold that may be undone. */
export interface HeadCheckpoint {
  readonly measured: { readonly key: string; readonly text: string };
  readonly retrieval: RetrievalCheckpoint;
  readonly evidence: MemoEntry<number, string> | undefined;
}

export class Head {
  private readonly retrieval: RetrievalBlock;
  /** The evidence block, by the coverage it lists. */
  private readonly evidence = new KeyedMemo<number, string>();
  /** The head rendered, by the summary and the blocks' key. */
  private readonly rendered = new KeyedMemo<{ summary: SummaryState | undefined; key: string }, HeadText>((a, b) => a.summary === b.summary && a.key === b.key);
  /** The blocks as last measured: the key they were built for and their text. */
  private measured = { key: '', text: '' };
  private readonly protectedBudget = new ProtectedBudget();

  constructor(private readonly options: HeadOptions) {
    this.retrieval = new RetrievalBlock(options.record, options.snapshots, options.retrieval, options.redactor);
  }

  /** Things the user should be told (the protected state over its budget). */
  get notices(): readonly string[] {
    return this.protectedBudget.notices;
  }

  /**
   * Re-measures the head's blocks when what they are derived from changed:
   * their new tokens, or undefined when their text is the same.
   */
  measure(coverageUnit: number, summary: SummaryState | undefined): number | undefined {
    const key = this.blocksKey(coverageUnit);
    if (this.measured.key === key) return undefined;
    this.measured.key = key;
    const texts = this.blockTexts(coverageUnit, summary);
    this.protectedBudget.check(texts.slice(0, this.options.blocks.length).join('\n\n'), this.options.budget.effective, this.options.counter);
    const text = texts.filter((t) => t !== '').join('\n\n');
    if (this.measured.text === text) return undefined;
    this.measured.text = text;
    return text ? this.options.counter.count(text) + 1 : 0;
  }

  /** The blocks are derived again at the next measure (counted again only if their text changed). */
  invalidate(): void {
    this.measured.key = '';
  }

  /** The head message's text: the Task Context, the protected blocks, the evidence that was folded. */
  render(coverageUnit: number, summary: SummaryState | undefined): HeadText {
    // Rendered again only when the summary, the coverage or a block's revision changed: the head is
    // projected at every call and its blocks (the protected state above all) grow with the task.
    return this.rendered.get({ summary, key: this.blocksKey(coverageUnit) }, () => {
      const blocks = this.blockTexts(coverageUnit, summary);
      const protectedCount = this.options.blocks.length;
      const parts: HeadPart[] = [
        { block: 'summary' as const, text: summary ? renderSummary(summary) : '' },
        ...blocks.map((t, i) => ({ block: i < protectedCount ? ('protectedState' as const) : i === protectedCount ? ('retrieved' as const) : ('evidence' as const), text: t })),
      ].filter((p) => p.text !== '');
      return { text: parts.map((p) => p.text).join('\n\n'), parts };
    });
  }

  /** The blocks as they are now, to put back with `restore`. */
  checkpoint(): HeadCheckpoint {
    return { measured: { ...this.measured }, retrieval: this.retrieval.checkpoint(), evidence: this.evidence.entry };
  }

  restore(checkpoint: HeadCheckpoint): void {
    this.measured = { ...checkpoint.measured };
    this.retrieval.restore(checkpoint.retrieval);
    this.evidence.restore(checkpoint.evidence);
  }

  /** What the head's blocks are derived from: the coverage and each block's revision. */
  private blocksKey(coverageUnit: number): string {
    return `${coverageUnit}:${this.options.blocks.map((b) => b.revision).join(',')}`;
  }

  /**
   * The head's blocks. Before the first fold only the protected blocks can
   * have something to say (a fact the user corrected or pinned, which must be
   * visible although its record is still in view in its original wording).
   */
  private blockTexts(coverageUnit: number, summary: SummaryState | undefined): string[] {
    const coverageEnd = summary?.coverageEnd ?? 0;
    if (!summary) return this.options.blocks.map((b) => b.render(coverageEnd));
    const shown = renderSummary(summary);
    const blocks = this.options.blocks.map((b) => withoutRepeatedRules(b.render(coverageEnd), shown));
    const retrieved = this.retrieval.text(coverageUnit, summary, this.options.budget.effective);
    const evidence = this.evidence.get(coverageUnit, () => evidenceBlock(this.options.record.units, coverageUnit, coverageEnd, this.options.budget.effective, this.options.redactor));
    return [...blocks, retrieved, evidence];
  }
}

/** The sections of the protected block whose lines the Task Context's Constraints may already show. */
const RULE_SECTIONS = new Set(['### constraint', '### preference']);
/** The sections of the protected block that hold the user's own words, which a request line may already show. */
const USER_SECTIONS = new Set([...RULE_SECTIONS, '### permission', '### decision']);
/** A request line of the Task Context: `- #N (rM): text`, or `- [Request] #N (rM): text` at a later fold. */
const REQUEST_LINE = /^- (?:\[Request\] )?#(\d+) \(r\d+(?:, r\d+)*\): (.*)$/;
/** A line of the protected block: its value and its sources (a version note after them keeps the line whole). */
const PROTECTED_LINE = /^- (.*) \(r\d+(?:, r\d+)*\)$/;

/**
 * The protected block without the user's words the Task Context (`summary`,
 * as rendered) already shows word for word: a rule under Constraints (a
 * session that pasted a prompt of 27 rules sent each twice), or a whole
 * request — a choice ("2" → chose "…"), an objection, a short rule — in the
 * request log (a session of six chosen options sent each twice). One line says
 * where they are, so they keep their force, when it is shorter than the lines
 * it stands for; a line the summary shortened or dropped, or one the user
 * corrected since (`; v2, corrected by the user`), stays here whole.
 */
export function withoutRepeatedRules(block: string, summary: string): string {
  if (!block.startsWith('## Protected state')) return block;
  const rules = new Set<string>();
  const requests = new Map<string, string>();
  let heading = '';
  for (const line of summary.split('\n')) {
    if (line.startsWith('### ')) heading = line;
    const request = REQUEST_LINE.exec(line);
    if (request && (heading === '### Requests' || line.startsWith('- [Request] '))) {
      if (!requests.has(request[2]!)) requests.set(request[2]!, request[1]!);
      continue;
    }
    const m = /^- (\[Constraints\] )?(.*)$/.exec(line);
    if (m && (heading === '### Constraints' || m[1])) rules.add(m[2]!.replace(SOURCES_SUFFIX, ''));
  }
  if (rules.size === 0 && requests.size === 0) return block;
  const out: string[] = [];
  let section: string[] = [];
  // A section's repeated lines give way to one line that says where they are, when that line is the shorter.
  const close = (): void => {
    const name = section[0] ?? '';
    const where = new Map<string, string>();
    if (USER_SECTIONS.has(name)) {
      for (const line of section) {
        const value = PROTECTED_LINE.exec(line)?.[1];
        if (value === undefined) continue;
        const request = requests.get(value) ?? requests.get(value.replace(OBJECTION_FRAME, '$1'));
        if (request !== undefined) where.set(line, `#${request}`);
        else if (RULE_SECTIONS.has(name) && rules.has(value)) where.set(line, 'Constraints');
      }
    }
    const repeated = section.filter((line) => where.has(line));
    const places = [...new Set(where.values())];
    const numbers = places.filter((p) => p.startsWith('#'));
    const said = [
      ...(places.includes('Constraints') ? ['under Constraints (or marked [Constraints] at a later fold)'] : []),
      ...(numbers.length ? [`as request${numbers.length > 1 ? 's' : ''} ${numbers.join(', ')}`] : []),
    ].join(', and ');
    const objections = repeated.every((line) => OBJECTION_FRAME.test(PROTECTED_LINE.exec(line)?.[1] ?? ''));
    const count = (kind: string): string => (repeated.length === 1 ? `one more ${kind}` : `${repeated.length} more ${kind}s`);
    const pointer = objections
      ? `- the user's objection${repeated.length === 1 ? '' : 's'} to what the agent did, word for word in the Task Context above ${said}: in force as if listed here`
      : `- ${count(RULE_SECTIONS.has(name) && !numbers.length ? 'rule' : name === '### decision' ? 'choice' : 'statement')} of the user's, word for word in the Task Context above ${said}: in force as if listed here`;
    out.push(...(repeated.length && repeated.join('\n').length > pointer.length ? [...section.filter((line) => !where.has(line)), pointer] : section));
    section = [];
  };
  for (const line of block.split('\n')) {
    if (line.startsWith('### ')) close();
    section.push(line);
  }
  close();
  return out.join('\n');
}

/** What `RetrievalBlock.checkpoint` saves. */
interface RetrievalCheckpoint {
  readonly entry: MemoEntry<number, string> | undefined;
  readonly query: SnapshotEntry | undefined;
}

/**
 * The original-text channel: folded passages most relevant to the current
 * request (the latest user message), within its share of wEff. Built with
 * the head (at a fold), for the request current then: the prompt-cache
 * prefix stays stable through the turns in between.
 */
class RetrievalBlock {
  private readonly index: RetrievalIndex;
  /** The block, by the coverage it quotes from. */
  private readonly block = new KeyedMemo<number, string>();

  constructor(
    private readonly record: SessionRecord,
    private readonly snapshots: SnapshotStore,
    private readonly options: RetrievalOptions,
    redactor: Redactor,
  ) {
    this.index = new RetrievalIndex(redactor);
  }

  text(coverageUnit: number, summary: SummaryState, effective: number): string {
    return this.block.get(coverageUnit, () => {
      const coverageEnd = summary.coverageEnd;
      // Which request the head was built for is kept with the head's coverage, so a
      // view re-derived after a crash quotes the same passages.
      const stored = this.snapshots.get(RETRIEVAL_KEY);
      let turn: number;
      if (stored?.type === 'retrieval' && stored.retrieval.coverageEnd === coverageEnd) turn = stored.retrieval.queryRecord;
      else {
        turn = currentTurnRecord(this.record.units);
        this.snapshots.put(RETRIEVAL_KEY, { type: 'retrieval', retrieval: { coverageEnd, queryRecord: turn } });
      }
      const units = this.record.units;
      this.index.extend(units, coverageUnit);
      const retrieval = this.options;
      let query = turn >= 0 ? this.record.records[turn]?.content ?? '' : '';
      if (retrieval.query === 'task') {
        // Around the current task: the latest request, the open work and the last failures.
        const c = summary.current;
        const failures = summary.facts['Ruled out'].slice(-2).map((l) => l.text);
        query = [query, c.goal, c.status, c.next, ...failures].join('\n');
      }
      const budgetChars = effective < retrieval.minEffective ? 0 : Math.floor(effective * retrieval.share * 4);
      return query ? this.index.block(query, budgetChars, turn, renderSummary(summary)) : '';
    });
  }

  /** The block and the request it was built for, to put back with `restore` (a fold undone). */
  checkpoint(): RetrievalCheckpoint {
    return { entry: this.block.entry, query: this.snapshots.get(RETRIEVAL_KEY) };
  }

  restore(checkpoint: RetrievalCheckpoint): void {
    this.block.restore(checkpoint.entry);
    if (checkpoint.query) this.snapshots.put(RETRIEVAL_KEY, checkpoint.query);
  }
}

/**
 * The protected blocks have a budget of their own (PROTECTED_BLOCK_SHARE of
 * wEff). They are never shrunk to fit it: when they alone exceed it the user is
 * told, once per size class, so they can review or demote facts themselves.
 */
export class ProtectedBudget {
  private readonly told: string[] = [];
  /** The size class last told about. */
  private toldKey: number | undefined;

  get notices(): readonly string[] {
    return this.told;
  }

  check(text: string, effective: number, counter: CachedTokenCounter): void {
    if (!text) return;
    const budget = Math.floor(effective * PROTECTED_BLOCK_SHARE);
    // A block over 4x its budget is over it whatever its exact count; otherwise count it.
    const tokens = text.length > budget * 16 ? Math.ceil(text.length / 4) : counter.count(text);
    if (tokens <= budget) return;
    const message = `The protected state takes ${tokens} tokens, over its block of ${budget} (${Math.round(PROTECTED_BLOCK_SHARE * 100)}% of the effective window): it is kept whole, and leaves less room for the conversation. Review the facts in the Task Context panel to unpin or delete what no longer applies.`;
    const key = Math.floor(tokens / 500);
    if (this.toldKey === key) return;
    this.toldKey = key;
    this.told.push(message);
  }
}
