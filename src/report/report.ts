/**
 * The CLI's outputs, shared with the extension's "Project a Transcript"
 * command: the JSON object of the CLI contract and a readable report.
 */
import { defaultBudget, type Budget } from '../core/budget';
import { renderUnit, type Compaction, type NotLoadedEntry, type ProjectedMessage } from '../core/engine';
import { replay, type Clock, type ReplayOptions, type ReplayResult, type ReplayStepLine } from '../core/replay';
import { renderSummary, requestSaid, summaryToJson, TASK_CONTEXT_HEADING } from '../core/summary';
import { parseTranscript, type ParsedTranscript } from '../core/transcript';
import type { Milestone } from '../core/milestones';
import type { Redactor } from '../core/redact';
import type { TokenCounter } from '../core/tokens';
import type { Conflict, Fact } from '../core/state';
import { formatCount } from '../core/formatCount';

export interface ProjectOptions {
  readonly window: number;
  readonly reserve: number;
  /** The token counter the replay measures with. */
  readonly counter: TokenCounter;
  /** The redactor the replay hides secrets with. */
  readonly redactor: Redactor;
  readonly at?: number;
  /** A persistent store to keep the session in (and resume from). */
  readonly persistence?: Pick<ReplayOptions, 'snapshots' | 'tools' | 'resumeFrom' | 'persist'>;
  readonly clock?: Clock;
  readonly onStep?: (line: ReplayStepLine) => void;
}

export interface ProjectJson {
  window: number;
  reserve: number;
  trigger: number;
  stop: number;
  tokens: number;
  messages: ProjectedMessage[];
  notLoaded: NotLoadedEntry[];
  summary: ReturnType<typeof summaryToJson>;
  artifacts: { path: string; reads: number; writes: number }[];
  compactions: { atRecord: number; tier: number; before: number; after: number }[];
  state: Fact[];
  pending: Fact[];
  conflicts: readonly Conflict[];
  ledger: ReplayResult['ledger'];
  /** Secrets and personal data replaced in the context sent, by kind. */
  redactions: { count: number; kinds: Record<string, number> };
  /** What the user should be told (e.g. the protected state over its budget). */
  notices: readonly string[];
  /** Stable points beyond the watermark, each kept as a snapshot in the store. */
  milestones: readonly Milestone[];
}

export async function runProjection(transcript: ParsedTranscript, options: ProjectOptions): Promise<{ budget: Budget; result: ReplayResult }> {
  const budget = defaultBudget({ window: options.window, reserve: options.reserve });
  if (options.at !== undefined && (!Number.isInteger(options.at) || options.at < 0)) {
    throw new RangeError(`--at must be a record number from 0 to ${transcript.records.length}, got ${options.at}`);
  }
  const result = await replay(transcript.records, {
    budget,
    counter: options.counter,
    redactor: options.redactor,
    ...(options.at !== undefined ? { at: options.at } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.onStep ? { onStep: options.onStep } : {}),
    ...(options.persistence ?? {}),
  });
  return { budget, result };
}

export function projectJson(budget: Budget, result: ReplayResult): ProjectJson {
  const engine = result.session.engine;
  return {
    window: budget.window,
    reserve: budget.reserve,
    trigger: budget.trigger,
    stop: budget.stop,
    tokens: result.tokens,
    messages: result.messages.map((m) => ({ role: m.role, content: m.content })),
    notLoaded: engine.notLoaded(),
    summary: summaryToJson(engine.currentSummary),
    artifacts: result.session.artifacts.entries().map((a) => ({ path: a.path, reads: a.reads, writes: a.modifications + a.creations })),
    compactions: engine.compactions.map((c: Compaction) => ({ atRecord: c.atRecord, tier: c.tier, before: c.before, after: c.after })),
    ...result.session.state.toJSON(),
    ledger: result.ledger,
    redactions: countRedactions(result.messages),
    notices: engine.notices,
    milestones: result.session.milestones.milestones,
  };
}

/** Placeholders left by the redaction in the context, by kind. */
function countRedactions(messages: readonly ProjectedMessage[]): { count: number; kinds: Record<string, number> } {
  const kinds: Record<string, number> = {};
  let count = 0;
  for (const m of messages) {
    for (const match of m.content.matchAll(/\[REDACTED:([a-z-]+):[0-9a-f]+\]/g)) {
      kinds[match[1]!] = (kinds[match[1]!] ?? 0) + 1;
      count++;
    }
  }
  return { count, kinds: Object.fromEntries(Object.entries(kinds).sort(([a], [b]) => (a < b ? -1 : 1))) };
}

function bar(value: number, max: number, width = 40): string {
  const filled = Math.max(0, Math.min(width, Math.round((value / max) * width)));
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}

const n = formatCount;
const pct = (part: number, whole: number): string => `${whole > 0 ? Math.round((100 * part) / whole) : 0}%`;

/**
 * The result in plain words, before the details: how much history, how much is
 * sent, what is kept word for word, what was folded or shortened and how to get
 * it back. Every term the details use is said here first.
 */
export function resultInBrief(budget: Budget, result: ReplayResult, title: string | undefined): string[] {
  const engine = result.session.engine;
  const units = result.session.record.units;
  const counter = result.session.counter;
  const history = units.reduce((sum, unit) => sum + renderUnit(unit).reduce((a, m) => a + counter.count(m.content), 0), 0);
  const summary = engine.currentSummary;
  let foldedCalls = 0;
  for (let i = 0; i < engine.firstUnitInView; i++) for (const part of units[i]!.parts) if (part.kind === 'tool') foldedCalls++;
  const shortened = engine.notLoaded().filter((e) => e.kind !== 'span' && e.how !== 'folded').length;
  const rules = result.session.state.active().filter((f) => f.type === 'constraint').length;
  // The requests the head lists ("continue" and greetings are not).
  const requests = summary?.requests.filter(requestSaid).length ?? units.filter((u) => u.kind === 'user').length;
  const out = [
    `Context Keeper replayed ${title ? `"${title}"` : 'the session'}: ${n(result.session.record.records.length)} records, ${n(result.totals.steps)} model calls, a ${n(budget.window)}-token window (${n(budget.effective)} usable after ${n(budget.reserve)} kept for the answer).`,
    `Result: the whole history is ${n(history)} tokens; the model would be sent ${n(result.tokens)} tokens next (${pct(result.tokens, budget.effective)} of what it may use).`,
    `- Kept word for word: the user's ${requests} request${requests === 1 ? '' : 's'} and ${rules} rule${rules === 1 ? '' : 's'} (under "Requests", and "Constraints" or "Protected state", below), and the latest steps as they happened.`,
  ];
  if (summary) {
    out.push(`- Folded: records 0–${n(Math.max(0, summary.coverageEnd - 1))}${foldedCalls ? `, ${n(foldedCalls)} tool call${foldedCalls === 1 ? '' : 's'} among them,` : ''} into the "Task Context" below, a summary of what was asked, decided, found and ruled out; a folded tool call comes back in full with view_tool_call("<id>") ("Evidence not loaded" lists them).`);
  } else out.push('- Folded: nothing; the whole session fits under the point where compaction starts.');
  if (shortened) out.push(`- Shortened: ${shortened} older tool output${shortened === 1 ? '' : 's'} still in view, each with the same pointer back to its full text.`);
  out.push(`Compaction starts when the context passes ${pct(budget.trigger, budget.effective)} of what may be used (${n(budget.trigger)} tokens) and folds down toward ${pct(budget.stop, budget.effective)}; it happened ${n(Object.values(result.totals.compactionsPerTier).reduce((a, b) => a + b, 0))} times on the way. The details follow.`);
  return out;
}

/** How much of each recent message the readable report shows (`--json` has them whole). */
const RECENT_MESSAGE_CHARS = 160;

/** The messages sent after the head, one line each: who, and how each opens (a tool call by its name and input). */
function recentMessages(messages: readonly ProjectedMessage[]): string[] {
  const out = [`## Recent messages, as they happened (${messages.length}; whole in --json)`];
  for (const m of messages) {
    const text = m.content.replace(/^<tool_(?:call|result) [^>]*>\n?|\n?<\/tool_(?:call|result)>$/g, '').replace(/\s+/g, ' ').trim();
    const call = /^<tool_call id="[^"]*" name="([^"]*)">/.exec(m.content)?.[1];
    const who = call !== undefined ? `${m.role} ${call}` : m.role;
    out.push(`- [${who}] ${text.length > RECENT_MESSAGE_CHARS ? `${text.slice(0, RECENT_MESSAGE_CHARS - 1)}…` : text}`);
  }
  return out;
}

/** A readable report: the result in plain words, then the head as the model is sent it, the recent messages, the budget and what was not loaded. */
export function formatReport(budget: Budget, result: ReplayResult, title: string | undefined): string {
  const engine = result.session.engine;
  const out: string[] = [];
  const summary = engine.currentSummary;
  out.push(...resultInBrief(budget, result, title));
  out.push('');
  // The head as the model is sent it: the Task Context, then the protected state, the retrieved records and the evidence not loaded.
  const head = summary ? result.messages.find((m) => m.content.startsWith(TASK_CONTEXT_HEADING)) : undefined;
  out.push(head?.content ?? (summary ? renderSummary(summary) : `${TASK_CONTEXT_HEADING}\n(nothing folded: the whole session fits under the trigger)`));
  out.push('');
  out.push(...recentMessages(result.messages.filter((m) => m !== head)));
  out.push('');
  out.push('## Budget');
  out.push(`window ${budget.window} − reserve ${budget.reserve} = effective ${budget.effective}; trigger ${budget.trigger} (${pct(budget.trigger, budget.effective)}), stop ${budget.stop} (${pct(budget.stop, budget.effective)})`);
  out.push(`projected context: ${result.tokens} tokens in ${result.messages.length} messages ${bar(result.tokens, budget.effective)} ${((100 * result.tokens) / budget.effective).toFixed(1)}% of effective`);
  const t = result.totals;
  out.push(
    `model calls replayed: ${t.steps}; compactions by tier (① old tool outputs shortened, ② folded into the Task Context, ③ breakthrough, ④ emergency clip): ①${t.compactionsPerTier['1']} ②${t.compactionsPerTier['2']} ③${t.compactionsPerTier['3']} ④${t.compactionsPerTier['4']}; floor summaries (folds' summaries): ${t.floorSummaries}; anti-thrash holds (a compaction skipped because the last ones saved too little): ${t.antiThrashHolds}`,
  );
  out.push(`largest context sent: ${t.maxTokens} tokens; tokens sent over the replay: ${t.tokensSent}, of which a prompt cache could reuse ${t.cacheReusedTokens} (${t.tokensSent ? ((100 * t.cacheReusedTokens) / t.tokensSent).toFixed(1) : '0.0'}%)`);
  const state = result.session.state;
  out.push(`protected state: ${state.active().length} active facts, ${state.pending().length} pending confirmation, ${state.conflicts().length} summary conflicts (the fact won)`);
  const omitted = result.ledger.defects.filter((d) => d.disposition === 'omitted').length;
  const unsupported = result.ledger.defects.filter((d) => d.disposition === 'unsupported').length;
  out.push(`loss ledger over ${result.ledger.boundaries.length} compaction boundaries: ${omitted} critical items omitted, ${unsupported} unsupported summary lines`);
  for (const notice of engine.notices) out.push(`notice: ${notice}`);
  const notLoaded = engine.notLoaded();
  out.push('');
  out.push(`## Not loaded (${notLoaded.length})`);
  for (const n of notLoaded.slice(0, 12)) out.push(`- ${n.how} ${n.kind} ${n.toolCallId ?? n.address}: ${n.tokens} tokens; recover: ${n.recover}`);
  if (notLoaded.length > 12) out.push(`- … ${notLoaded.length - 12} more (use --json for the full list)`);
  const artifacts = result.session.artifacts.entries();
  out.push('');
  out.push(`## Artifacts (${artifacts.length})`);
  for (const a of artifacts.slice(0, 20)) out.push(`- ${a.path}: read ×${a.reads}, modified ×${a.modifications}, created ×${a.creations}`);
  if (artifacts.length > 20) out.push(`- … ${artifacts.length - 20} more`);
  return out.join('\n');
}

/** Parses a transcript, projects it and returns the readable report (used by the extension). */
export async function projectTranscriptReport(text: string, options: { window: number; reserve: number; counter: TokenCounter; redactor: Redactor }): Promise<string> {
  const transcript = parseTranscript(text, options.redactor);
  const { budget, result } = await runProjection(transcript, options);
  const warnings = transcript.warnings.length
    ? `\n\n## Transcript warnings (${transcript.warnings.length}; ${transcript.warnings.filter((w) => !w.kept).length} lines skipped)\n${transcript.warnings.map((w) => `- ${w.message}`).join('\n')}`
    : '';
  return formatReport(budget, result, transcript.title) + warnings;
}
