/**
 * The Task Context panel's snapshot: everything the panel shows for one task,
 * derived from the task's session as plain data (`PanelState`, declared in
 * src/protocol/messages.ts). No `vscode` here: the provider calls it, the unit
 * tests call it directly.
 *
 * Built after every step of a turn, so it reads what the engine already keeps
 * (the summary, the facts, the artifact index, the compaction log) and counts
 * only the last context sent, through a counter that remembers what it counted.
 */
import { notLoadedTotals, type Compaction, type NotLoadedEntry, type ProjectedMessage } from '../core/engine';
import type { Fact } from '../core/state';
import { FACT_SECTIONS, type CurrentState, type FactLine, type SummaryState } from '../core/summary';
import type { TokenCounter } from '../core/tokens';
import {
  artifactSearchText,
  emptyPages,
  normalizeFilter,
  notLoadedSearchText,
  PAGE_SIZE,
  type ArtifactView,
  type BudgetView,
  type CompactionView,
  type FactView,
  type NotLoadedView,
  type PanelState,
  type SectionView,
  type PagedList,
  type PageView,
  type SummaryLineView,
} from '../protocol/messages';
import type { LastSent, PanelTask } from './ports';

export type { LastSent } from './ports';

export interface PanelStateInput {
  readonly task: PanelTask | undefined;
  readonly running: boolean;
  readonly lastSent?: LastSent | undefined;
  /** Notices from the host (a failed action, a rejected panel message…); the engine's own come first. */
  readonly notices: readonly string[];
  /** The drift report of the last forced rebuild of this task, line by line. */
  readonly drift: readonly string[] | null;
  readonly counter: TokenCounter;
  /** What the panel asked to see of the long lists (the first page of each, unfiltered, when absent). */
  readonly view?: PanelView | undefined;
}

/** How much of each long list the panel shows, and its filter. */
export interface PanelView {
  readonly limits: Readonly<Record<PagedList, number>>;
  readonly filter: string;
}

export function defaultPanelView(): PanelView {
  return { limits: { notLoaded: PAGE_SIZE, artifacts: PAGE_SIZE, compactions: PAGE_SIZE }, filter: '' };
}

/** Longest task title shown (the first line of the first request). */
export const TITLE_MAX_CHARS = 80;

/** The key prefix the model summarizer gives the lines it wrote (src/agent/modelSummarizer.ts). */
const MODEL_KEY_PREFIX = 'model-';

const CURRENT_FIELDS: readonly (keyof CurrentState)[] = ['goal', 'deliverable', 'status', 'next', 'plan'];

export function buildPanelState(input: PanelStateInput): PanelState {
  const task = input.task;
  if (!task) {
    return { task: null, sections: [], facts: [], budget: null, notLoaded: [], artifacts: [], compactions: [], pages: emptyPages(), notices: [...input.notices], drift: input.drift ? [...input.drift] : null };
  }
  const session = task.session;
  const engine = session.engine;
  const view = input.view ?? defaultPanelView();
  const filter = normalizeFilter(view.filter);
  const notLoaded = page(engine.notLoaded(), view.limits.notLoaded, filter, (e) => notLoadedSearchText(e), 'start');
  const artifacts = page(session.artifacts.entries(), view.limits.artifacts, filter, (a) => artifactSearchText(a), 'start');
  // The timeline is not filtered; its newest compactions are the ones sent.
  const compactions = page(task.session.engine.compactions, view.limits.compactions, '', () => '', 'end');
  return {
    task: { id: task.id, title: titleOf(task), records: task.records.length, running: input.running },
    sections: sectionsOf(engine.currentSummary),
    facts: factsOf(session.state.facts(), session.state.audit()),
    budget: budgetOf(task, input.lastSent, input.counter),
    notLoaded: notLoaded.items.map((e) => notLoadedView(e, task.records.length)),
    artifacts: artifacts.items.map((a): ArtifactView => ({ path: a.path, reads: a.reads, modifications: a.modifications, creations: a.creations, steps: [...a.steps] })),
    compactions: compactionsOf(task, compactions.items),
    pages: {
      notLoaded: { ...notLoaded.page, tokens: tokens(notLoadedTotals(notLoaded.all).tokens) },
      artifacts: artifacts.page,
      compactions: compactions.page,
    },
    notices: [...new Set([...session.notices, ...input.notices])],
    drift: input.drift ? [...input.drift] : null,
  };
}

/**
 * The part of a long list the panel shows: the first (or, for `end`, the
 * last) `limit` entries that match the filter, with the counts the panel
 * states ("100 of 16,329").
 */
function page<T>(all: readonly T[], limit: number, filter: string, text: (item: T) => string, from: 'start' | 'end'): { all: readonly T[]; items: readonly T[]; page: PageView } {
  const matching = filter === '' ? all : all.filter((item) => text(item).includes(filter));
  const n = Math.max(0, limit);
  const items = from === 'start' ? matching.slice(0, n) : matching.slice(Math.max(0, matching.length - n));
  return { all, items, page: { total: all.length, matching: matching.length, tokens: 0 } };
}

/** The first line of the first user record, clipped; the task id when there is none. */
function titleOf(task: PanelTask): string {
  const first = task.records.find((r) => r.role === 'user');
  // Secrets and personal data never reach the panel (the raw record keeps them): the session's redactor hides them.
  const line = task.session.redactor.redact(first?.content.split('\n').map((l) => l.trim()).find((l) => l !== '') ?? '').text;
  if (line === '') return task.id;
  return line.length > TITLE_MAX_CHARS ? `${line.slice(0, TITLE_MAX_CHARS - 1)}…` : line;
}

// ---------------------------------------------------------------- sections

/** Every section of the Task Context, in the template's order (none before the first fold). */
export function sectionsOf(summary: SummaryState | undefined): SectionView[] {
  if (!summary) return [];
  const requests: SummaryLineView[] = summary.requests.map((r) => ({ key: `#${r.ordinal}`, text: r.text, sources: [r.record], priority: 0, confidence: 'verbatim' }));
  const facts = FACT_SECTIONS.map((name): SectionView => ({ name, lines: summary.facts[name].map((l) => factLineView(name, l)) }));
  const current: SummaryLineView[] = CURRENT_FIELDS.filter((field) => (summary.current[field] ?? '') !== '').map((field) => ({
    key: field,
    text: summary.current[field] ?? '',
    sources: [],
    // Overwritten at every fold, never demoted: it stays, like a deliverable's path.
    priority: 1,
    confidence: 'extracted',
  }));
  return [{ name: 'Requests', lines: requests }, ...facts, { name: 'Current state', lines: current }];
}

function factLineView(section: string, line: FactLine): SummaryLineView {
  const confidence: SummaryLineView['confidence'] = line.key.startsWith(MODEL_KEY_PREFIX)
    ? 'model'
    : section === 'Constraints' && line.priority === 0
      ? 'verbatim'
      : 'extracted';
  return { key: line.key, text: line.text, sources: [...line.sources], priority: line.priority, confidence };
}

// ---------------------------------------------------------------- facts

/** Every fact's latest version, with its earlier versions (oldest first) from the audit. */
export function factsOf(facts: readonly Fact[], audit: readonly Fact[]): FactView[] {
  const versions = new Map<string, Fact[]>();
  for (const version of audit) {
    const list = versions.get(version.id);
    if (list) list.push(version);
    else versions.set(version.id, [version]);
  }
  return facts.map((fact): FactView => {
    const earlier = (versions.get(fact.id) ?? []).filter((v) => v.version < fact.version).sort((a, b) => a.version - b.version);
    return {
      id: fact.id,
      type: fact.type,
      value: fact.value,
      status: fact.status,
      version: fact.version,
      writer: fact.writer,
      pinned: fact.pinned,
      sources: [...fact.sources],
      reason: fact.reason,
      history: earlier.map((v) => ({ version: v.version, value: v.value, status: v.status, reason: v.reason, time: v.time })),
    };
  });
}

// ---------------------------------------------------------------- budget

/**
 * The budget bar: the last context sent (or the one the engine would send
 * now) split into what it is made of. The head message carries its blocks
 * (the engine's head parts); every other message is the raw tail; what the messages do not
 * carry (the system prompt, the tool schemas, message framing) is overhead.
 * When the measured blocks exceed `current` (the model counts differently, or
 * `current` is an estimate) they are scaled down to sum to it exactly.
 */
export function budgetOf(task: PanelTask, lastSent: LastSent | undefined, counter: TokenCounter): BudgetView {
  const engine = task.session.engine;
  const budget = task.session.budget;
  const messages = lastSent ? lastSent.messages : engine.project();
  const current = tokens(lastSent ? (lastSent.tokens ?? lastSent.predicted) : engine.predicted());
  const measured = measureBlocks(messages, counter);
  const blocks = fitTo(measured, current);
  return {
    window: tokens(budget.window),
    effective: tokens(budget.effective),
    trigger: tokens(budget.trigger),
    stop: tokens(budget.stop),
    current,
    blocks,
  };
}

type Blocks = BudgetView['blocks'];
type MeasuredBlock = Exclude<keyof Blocks, 'overhead'>;
const MEASURED: readonly MeasuredBlock[] = ['protectedState', 'summary', 'retrieved', 'evidence', 'rawTail'];

/** Tokens of each block of the messages (overhead is left at 0: it is what the messages do not hold). */
export function measureBlocks(messages: readonly ProjectedMessage[], counter: TokenCounter): Blocks {
  const out: Blocks = { overhead: 0, protectedState: 0, summary: 0, retrieved: 0, evidence: 0, rawTail: 0 };
  for (const message of messages) {
    // The head says what it is made of (the engine's blocks, as data); every other message is the raw tail.
    if (message.head) for (const { block, text } of message.head) out[block] += counter.count(text);
    else out.rawTail += counter.count(message.content);
  }
  return out;
}

/** The blocks as shares of `current`: overhead takes the rest, or the blocks are scaled to fit. */
function fitTo(measured: Blocks, current: number): Blocks {
  const sum = MEASURED.reduce((n, b) => n + measured[b], 0);
  if (sum <= current) return { ...measured, overhead: current - sum };
  // Largest remainder: integer shares summing to `current` exactly.
  const out: Blocks = { overhead: 0, protectedState: 0, summary: 0, retrieved: 0, evidence: 0, rawTail: 0 };
  const exact = MEASURED.map((b) => ({ b, share: (measured[b] * current) / sum }));
  let left = current;
  for (const { b, share } of exact) {
    out[b] = Math.floor(share);
    left -= out[b];
  }
  for (const { b } of [...exact].sort((x, y) => (y.share % 1) - (x.share % 1) || MEASURED.indexOf(x.b) - MEASURED.indexOf(y.b))) {
    if (left <= 0) break;
    out[b]++;
    left--;
  }
  return out;
}

function tokens(n: number): number {
  return Number.isFinite(n) ? Math.max(0, Math.round(n)) : 0;
}

// ---------------------------------------------------------------- the rest

function notLoadedView(entry: NotLoadedEntry, records: number): NotLoadedView {
  return {
    address: entry.address,
    kind: entry.kind,
    ...(entry.toolCallId !== undefined ? { toolCallId: entry.toolCallId } : {}),
    ...(entry.tool !== undefined ? { tool: entry.tool } : {}),
    ...(entry.subject !== undefined ? { subject: entry.subject } : {}),
    ...(entry.record !== undefined ? { record: entry.record, age: Math.max(0, records - 1 - entry.record) } : {}),
    tokens: tokens(entry.tokens),
    how: entry.how,
    recover: entry.recover,
  };
}

/** The engine's compactions, each with the loss ledger taken at its boundary (when there is one). */
function compactionsOf(task: PanelTask, compactions: readonly Compaction[]): CompactionView[] {
  const shown = new Set(compactions.map((c) => c.atRecord));
  const ledger = new Map(task.ledger.filter((l) => shown.has(l.atRecord)).map((l) => [l.atRecord, l]));
  return compactions.map((c): CompactionView => {
    const view: CompactionView = { atRecord: c.atRecord, tier: c.tier, before: tokens(c.before), after: tokens(c.after), reactive: c.reactive === true };
    const counts = ledger.get(c.atRecord);
    return counts ? { ...view, ledger: { retained: counts.retained, superseded: counts.superseded, omitted: counts.omitted, unsupported: counts.unsupported } } : view;
  });
}

