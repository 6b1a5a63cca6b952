/**
 * One @keeper task: its raw record in the session store and the compaction
 * session derived from it. Every record is made durable before the engine sees
 * it, so a window reload (or a crash) continues from exactly what was recorded.
 */
import { immediateRunner } from '../core/background';
import { defaultBudget, type Budget } from '../core/budget';
import type { LedgerCounts } from '../core/ledger';
import { rewoundRecords } from '../core/parts';
import type { Redactor } from '../core/redact';
import { CompactionSession } from '../core/session';
import type { FoldInput, Summarizer } from '../core/summarizer';
import type { SummaryState } from '../core/summary';
import type { TokenCounter } from '../core/tokens';
import type { SnapshotStore, ToolCompactionStore } from '../core/store';
import { nextTurn } from '../core/turns';
import type { RawRecord } from '../core/types';
import type { TaskRecordLog } from './ports';
import { SeenFiles } from './tools/seenFiles';

/** Distributes Omit over a union-free interface while keeping optional fields optional. */
export type NewRecord = Omit<RawRecord, 'index'>;

/**
 * A summarizer whose implementation is chosen per turn (the model the user
 * picked may change between turns; the session and its stores do not).
 */
export class SwitchableSummarizer implements Summarizer {
  constructor(public target: Summarizer) {}
  get name(): string {
    return this.target.name;
  }
  fold(input: FoldInput): Promise<SummaryState> {
    return this.target.fold(input);
  }
}

export interface TaskSessionOptions {
  readonly window: number;
  readonly reserve: number;
  readonly triggerRatio?: number;
  readonly stopRatio?: number;
  readonly protectRecentSteps?: number;
  readonly summaryCap?: number;
  readonly shrinkMinChars?: number;
}

export function budgetFor(options: TaskSessionOptions): Budget {
  return defaultBudget({
    window: options.window,
    reserve: options.reserve,
    ...(options.triggerRatio !== undefined ? { triggerRatio: options.triggerRatio } : {}),
    ...(options.stopRatio !== undefined ? { stopRatio: options.stopRatio } : {}),
  });
}

export class TaskSession {
  readonly session: CompactionSession;
  /** The version of each file the model last read or changed in this window (edit_file refuses one changed since). */
  readonly seen = new SeenFiles();
  /** The loss ledger of every compaction boundary met in this window (for the panel's timeline). */
  readonly ledger: LedgerCounts[] = [];
  private next: number;
  private readonly optionsKey: string;

  private constructor(
    readonly id: string,
    private readonly store: TaskRecordLog | undefined,
    options: TaskSessionOptions,
    counter: TokenCounter,
    redactor: Redactor,
    readonly summarizer: SwitchableSummarizer,
    records: readonly RawRecord[],
    memory?: { readonly snapshots: SnapshotStore; readonly tools: ToolCompactionStore },
  ) {
    this.optionsKey = JSON.stringify(options);
    const durable = store && store.mode !== 'reader';
    this.session = new CompactionSession({
      budget: budgetFor(options),
      counter,
      redactor,
      summarizer,
      // The next fold's summary is asked for ahead of it, beside the turn: the fold restores it with no wait.
      background: immediateRunner,
      ...(durable ? { snapshots: store.snapshotStore(id), tools: store.toolStore(id) } : (memory ?? {})),
      ...(options.protectRecentSteps !== undefined ? { protectRecentSteps: options.protectRecentSteps } : {}),
      ...(options.summaryCap !== undefined ? { summaryCap: options.summaryCap } : {}),
      ...(options.shrinkMinChars !== undefined ? { shrinkMinChars: options.shrinkMinChars } : {}),
      rewound: rewoundRecords(records),
    });
    for (const record of records) this.session.append(record);
    this.next = records.length;
    if (records.length > 0) this.session.preflight();
  }

  /**
   * Opens task `id`: the records the store holds are appended to a fresh
   * session and one preflight restores the stored forms and floors. Without a
   * writable store the task lives in memory (the caller says so to the user).
   */
  static open(store: TaskRecordLog | undefined, id: string, title: string, options: TaskSessionOptions, counter: TokenCounter, redactor: Redactor, summarizer: Summarizer): TaskSession {
    if (store && store.mode !== 'reader') store.createSession(id, title);
    const records = store ? store.records(id, { loadPayloads: true }) : [];
    return new TaskSession(id, store, options, counter, redactor, new SwitchableSummarizer(summarizer), records);
  }

  /**
   * The same task derived again from its raw record with other options. A task
   * kept in memory (no writable store) is derived from its own records: the
   * store does not hold them. It keeps the session's redactor.
   */
  rederive(options: TaskSessionOptions, counter: TokenCounter): TaskSession {
    const redactor = this.session.redactor;
    if (this.durable) return TaskSession.open(this.store, this.id, this.id, options, counter, redactor, this.summarizer.target);
    // Its forms, floors and the user's acts live in memory beside it: carried over.
    const again = new TaskSession(this.id, this.store, options, counter, redactor, new SwitchableSummarizer(this.summarizer.target), this.records, { snapshots: this.session.snapshots, tools: this.session.tools });
    again.ledger.push(...this.ledger);
    return again;
  }

  /** Whether this session was built for these options (a new window or ratios need a new derivation). */
  fits(options: TaskSessionOptions): boolean {
    return JSON.stringify(options) === this.optionsKey;
  }

  get durable(): boolean {
    return this.store !== undefined && this.store.mode !== 'reader';
  }

  get nextIndex(): number {
    return this.next;
  }

  get records(): readonly RawRecord[] {
    return this.session.record.records;
  }

  /** The user's turns the task holds, without those a rewind took out. */
  get turns(): number {
    let n = 0;
    for (const unit of this.session.record.units) if (unit.kind === 'user') n++;
    return n;
  }

  /** The first record of turn `turn` (1-based) as the task holds its turns, undefined past the last. */
  turnStart(turn: number): number | undefined {
    let n = 0;
    for (const unit of this.session.record.units) if (unit.kind === 'user' && ++n === turn) return unit.firstRecord;
    return undefined;
  }

  /**
   * Appends one record: durable first (when a store is writable), then into the
   * live view. The two are separate turns of the event loop (the write ends in
   * an fsync, the view counts the record's tokens): a turn's appends never hold
   * the extension host's thread as one block.
   */
  async append(record: NewRecord): Promise<RawRecord> {
    const full = { ...record, index: this.next } as RawRecord;
    this.next++;
    if (this.durable) {
      await this.store!.appendRecord(this.id, full);
      await nextTurn();
    }
    this.session.append(full);
    return full;
  }
}
