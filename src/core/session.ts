/**
 * One session as the engine sees it: the raw record, the two projection
 * stores, the artifact index and the compaction engine, wired together.
 * The extension, the CLI and the benchmarks all drive a session through this
 * class, so the live path and the replay path are the same code.
 */
import { ArtifactIndex, observeArtifacts } from './artifacts';
import { summaryCapFor, type Budget } from './budget';
import { CompactionEngine, type PreflightReport, type ProjectedMessage, type RetrievalOptions, type StepReport } from './engine';
import { checkBoundary, type LedgerCounts, type LedgerEntry } from './ledger';
import { SessionRecord } from './parts';
import { MilestoneDetector, type Milestone } from './milestones';
import type { Redactor } from './redact';
import { FactSchema, ProtectedState, type Fact } from './state';
import {
  InMemorySnapshotStore,
  InMemoryToolCompactionStore,
  FACT_PREFIX,
  STATE_EVENT_PREFIX,
  milestoneKey,
  stateEventKey,
  type SnapshotStore,
  type StateEvent,
  type ToolCompactionStore,
} from './store';
import { ExtractiveSummarizer, StaticCheckpointSummarizer, type Summarizer } from './summarizer';
import { SummaryLineCounter } from './summary';
import { CachedTokenCounter, type TokenCounter } from './tokens';
import type { BackgroundRunner } from './background';
import { renderToolInput } from './tools';
import type { RawRecord } from './types';
import { messageOf } from './errors';

export interface SessionOptions {
  readonly budget: Budget;
  readonly counter: TokenCounter;
  /** Hides secrets and personal data in everything that leaves the raw record (built once at the composition root). */
  readonly redactor: Redactor;
  readonly summarizer?: Summarizer;
  readonly snapshots?: SnapshotStore;
  readonly tools?: ToolCompactionStore;
  readonly protectRecentSteps?: number;
  /** Tool calls shorter than this (input + output, in characters) are never shrunk. */
  readonly shrinkMinChars?: number;
  /** Cap of the Task Context head (defaults to summaryCapFor(budget)). */
  readonly summaryCap?: number;
  /** The original-text channel (defaults to the engine's). */
  readonly retrieval?: RetrievalOptions;
  /** Summarize the next fold ahead of it (the background floor), run by this runner. */
  readonly background?: BackgroundRunner;
  /** Records a rewind took out of the conversation (`rewoundRecords`): kept, never in view. */
  readonly rewound?: ReadonlySet<number>;
}

/** What one model call is given: the step's report, the messages to send, the state channel's checks at a compaction. */
export interface PreparedCall {
  readonly report: StepReport;
  readonly messages: ProjectedMessage[];
  readonly boundary?: { readonly entries: LedgerEntry[]; readonly counts: LedgerCounts };
}

export interface ToolCallView {
  readonly toolCallId: string;
  readonly name: string;
  readonly input: string;
  readonly output: string | undefined;
  readonly isError: boolean;
  readonly callRecord: number;
  readonly resultRecord: number | undefined;
}

export class CompactionSession {
  readonly record: SessionRecord;
  readonly redactor: Redactor;
  readonly artifacts: ArtifactIndex;
  /** The protected state channel: facts with sources, versions and write rules. */
  readonly state: ProtectedState;
  /** Stable points beyond the watermark (tests green again, "thanks, next", a topic switch…). */
  readonly milestones: MilestoneDetector;
  readonly snapshots: SnapshotStore;
  readonly tools: ToolCompactionStore;
  readonly counter: CachedTokenCounter;
  readonly engine: CompactionEngine;

  constructor(private readonly options: SessionOptions) {
    this.record = new SessionRecord(options.rewound);
    const { redactor } = options;
    this.redactor = redactor;
    this.artifacts = new ArtifactIndex(redactor);
    this.state = new ProtectedState(redactor);
    this.milestones = new MilestoneDetector(redactor);
    this.counter = new CachedTokenCounter(options.counter);
    const lines = new SummaryLineCounter(options.counter);
    this.snapshots = options.snapshots ?? new InMemorySnapshotStore();
    this.tools = options.tools ?? new InMemoryToolCompactionStore();
    const cap = options.summaryCap ?? summaryCapFor(options.budget);
    const state = this.state;
    this.engine = new CompactionEngine({
      record: this.record,
      snapshots: this.snapshots,
      tools: this.tools,
      summarizer: options.summarizer ?? new ExtractiveSummarizer(lines, redactor, cap),
      fallback: new StaticCheckpointSummarizer(lines, redactor, cap),
      summaryCounter: lines,
      counter: this.counter,
      budget: options.budget,
      ...(options.protectRecentSteps !== undefined ? { protectRecentSteps: options.protectRecentSteps } : {}),
      ...(options.shrinkMinChars !== undefined ? { shrinkMinChars: options.shrinkMinChars } : {}),
      summaryCap: cap,
      ...(options.retrieval ? { retrieval: options.retrieval } : {}),
      ...(options.background ? { background: options.background } : {}),
      redactor,
      blocks: [{ render: (coverageEnd: number) => state.render(coverageEnd), get revision() { return state.changeRevision; } }],
    });
  }

  get budget(): Budget {
    return this.options.budget;
  }

  /** Whether a model call happens just before this record (it opens a new step). */
  opensStep(record: RawRecord): boolean {
    return this.record.opensStep(record);
  }

  /** Appends one record to the raw record and updates the live view incrementally. */
  append(record: RawRecord): void {
    const events = this.record.append(record);
    this.engine.onAppend(events);
    observeArtifacts(this.artifacts, this.record.units, events);
    for (const event of events) {
      const unit = this.record.units[event.unitIndex];
      const part = event.type === 'part' ? event.part : event.type === 'result' ? event.after : undefined;
      if (!part || !unit) continue;
      this.state.observe(unit.kind, part);
      const milestone = this.milestones.observe(unit.kind, part);
      if (milestone) this.checkpoint(milestone);
    }
  }

  /**
   * A milestone snapshot: what the session stood on at a stable point — the
   * summary's coverage and folds, the active and pending facts — kept in the
   * store under its record, to compare against and roll back to.
   */
  private checkpoint(milestone: Milestone): void {
    const key = milestoneKey(milestone.record);
    const audit = this.state.audit();
    const since = this.milestoneAudit;
    this.milestoneAudit = audit.length;
    // Written once: a session derived again (after a crash) keeps the snapshot taken live.
    if (this.snapshots.get(key)) return;
    const summary = this.engine.currentSummary;
    const changed: string[] = [];
    for (let i = since; i < audit.length; i++) changed.push(`${audit[i]!.id}@${audit[i]!.version} ${audit[i]!.status}`);
    this.snapshots.put(key, {
      type: 'milestone',
      milestone: { ...milestone, coverageEnd: this.engine.coverageEnd, folds: summary?.folds ?? 0, audit: audit.length, changed },
    });
  }

  /** The audit position of the last milestone (a milestone snapshot lists only the fact versions written since). */
  private milestoneAudit = 0;

  /**
   * The state channel's checks at a compaction boundary: the summary against the
   * protected facts (the fact wins, the conflict is logged), then the loss ledger
   * over the messages about to be sent.
   */
  checkBoundary(atRecord: number, messages: readonly ProjectedMessage[]): { entries: LedgerEntry[]; counts: LedgerCounts } {
    const summary = this.engine.currentSummary;
    if (summary) this.state.checkSummary(summary);
    this.persistFacts();
    return checkBoundary(atRecord, this.state, messages, summary, this.engine.coverageEnd);
  }

  /** Turn start: restore the bounded checkpoint from the raw record and the store. */
  preflight(): PreflightReport {
    this.replayStateEvents();
    this.persistFacts();
    return this.engine.preflight();
  }

  /**
   * Writes the fact versions written since the last call to the store, one row
   * per `id@version` (idempotent: a session derived again writes the same rows).
   */
  private persistFacts(): void {
    const audit = this.state.audit();
    for (; this.persistedAudit < audit.length; this.persistedAudit++) {
      const fact = audit[this.persistedAudit]!;
      this.snapshots.put(factRowKey(fact), { type: 'fact', fact });
    }
  }

  private persistedAudit = 0;

  /**
   * A user's act on a protected fact (confirm, reject, correct, pin, delete,
   * close): applied now and kept in the store, so every later derivation of the
   * session — after a restart or a crash — starts from it.
   */
  applyStateEvent(event: StateEvent): Fact {
    const fact = this.applyToState(event);
    this.snapshots.put(stateEventKey(this.appliedEvents), { type: 'stateEvent', event });
    this.appliedEvents++;
    this.persistFacts();
    return fact;
  }

  private applyToState(event: StateEvent): Fact {
    switch (event.kind) {
      case 'confirm':
        return this.state.confirm(event.factId, event.record);
      case 'reject':
        return this.state.reject(event.factId, event.record);
      case 'correct':
        if (event.value === undefined) throw new Error('a correction needs the corrected wording');
        return this.state.correct(event.factId, event.value, event.record);
      case 'pin':
        return this.state.pin(event.factId, event.record);
      case 'delete':
        return this.state.delete(event.factId, event.record);
      case 'close':
        return this.state.close(event.factId, event.record);
      case 'supersede':
        return this.state.supersede(event.factId, event.record);
    }
  }

  /**
   * Re-applies the stored user events not applied yet, once the facts they name
   * exist. An act the record has since overtaken (a plan item superseded by the
   * user and later marked done by the model, a decision the user withdrew that a
   * later message reversed) no longer applies: it is skipped and said, never
   * allowed to stop the session from being derived.
   */
  private replayStateEvents(): void {
    const keys = this.snapshots.keys(STATE_EVENT_PREFIX).sort();
    while (this.appliedEvents < keys.length) {
      const entry = this.snapshots.get(keys[this.appliedEvents]!);
      if (entry?.type !== 'stateEvent' || !this.state.get(entry.event.factId)) break;
      try {
        this.applyToState(entry.event);
      } catch (error) {
        this.skippedEvents.push(`Your earlier "${entry.event.kind}" on fact ${entry.event.factId} no longer applies (${messageOf(error)}); it is kept in the store and was skipped.`);
      }
      this.appliedEvents++;
    }
  }

  /** What the user should be told about the session itself (user acts that no longer apply). */
  get notices(): readonly string[] {
    return [...this.engine.notices, ...this.skippedEvents];
  }

  private readonly skippedEvents: string[] = [];

  private appliedEvents = 0;

  /** The compaction operation at a model-call boundary, just before record `atRecord`. */
  step(atRecord: number): Promise<StepReport> {
    this.persistFacts();
    return this.engine.step(atRecord);
  }

  /**
   * Everything before one model call, in the one order the agent loop, the
   * replay and the evaluation follow: the compaction step at the boundary
   * just before record `atRecord`, the projection to send, and, when the step
   * compacted, the state channel's checks over that projection.
   */
  async prepareCall(atRecord: number): Promise<PreparedCall> {
    const report = await this.step(atRecord);
    const messages = this.engine.project();
    const boundary = report.compactions.length > 0 ? this.checkBoundary(atRecord, messages) : undefined;
    return { report, messages, ...(boundary ? { boundary } : {}) };
  }

  /** After a model call: the tokens the provider counted for what was sent, which calibrate the engine's estimate. */
  observeSent(tokens: number): void {
    this.engine.observeRealTokens(tokens);
  }

  /** A fold the user asked for (`/compact`), before record `atRecord`: see `CompactionEngine.compactNow`. */
  compactNow(atRecord: number): Promise<StepReport & { readonly outsideNearWindow: boolean }> {
    this.persistFacts();
    return this.engine.compactNow(atRecord);
  }

  /** The full raw input and output of a tool call, whatever its form in the view. */
  viewToolCall(toolCallId: string): ToolCallView | undefined {
    return toolCallView(this.record, toolCallId);
  }
}

/** The full raw input and output of a tool call of a record (view_tool_call); needs no engine. */
export function toolCallView(record: SessionRecord, toolCallId: string): ToolCallView | undefined {
  const tool = record.findTool(toolCallId);
  if (!tool) return undefined;
  return {
    toolCallId: tool.callId,
    name: tool.name,
    input: renderToolInput(tool),
    output: tool.output,
    isError: tool.isError,
    callRecord: tool.callRecord,
    resultRecord: tool.resultRecord,
  };
}

/** view_tool_call over plain records (a transcript, or a session read from a store). */
export function toolCallViewOf(records: readonly RawRecord[], toolCallId: string): ToolCallView | undefined {
  const record = new SessionRecord();
  for (const r of records) record.append(r);
  return toolCallView(record, toolCallId);
}

function factRowKey(fact: Fact): string {
  return `${FACT_PREFIX}${fact.id}@${String(fact.version).padStart(5, '0')}`;
}

/** The facts as stored: each fact's latest version, the whole audit, and the rows that failed validation. */
export interface StoredFacts {
  readonly facts: Fact[];
  readonly audit: Fact[];
  readonly invalid: { readonly key: string; readonly problem: string }[];
}

/**
 * Reads the protected facts' rows from a session's store without deriving the
 * session: every row is validated (a damaged row is reported, never trusted),
 * the audit is ordered by record then version, and the latest version of each
 * fact is its current state.
 */
export function storedFacts(snapshots: SnapshotStore): StoredFacts {
  const audit: Fact[] = [];
  const invalid: { key: string; problem: string }[] = [];
  for (const key of snapshots.keys(FACT_PREFIX).sort()) {
    const entry = snapshots.get(key);
    const parsed = FactSchema.safeParse(entry?.type === 'fact' ? entry.fact : undefined);
    if (parsed.success) audit.push(parsed.data);
    else invalid.push({ key, problem: entry?.type === 'fact' ? parsed.error.issues.map((i) => `${i.path.join('.') || 'fact'}: ${i.message}`).join('; ') : `not a fact row (${entry?.type ?? 'missing'})` });
  }
  audit.sort((a, b) => a.time - b.time || (a.id < b.id ? -1 : a.id > b.id ? 1 : a.version - b.version));
  const latest = new Map<string, Fact>();
  for (const fact of audit) {
    const current = latest.get(fact.id);
    if (!current || fact.version > current.version) latest.set(fact.id, fact);
  }
  return { facts: [...latest.values()], audit, invalid };
}
