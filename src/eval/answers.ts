/**
 * Δtask: the probes asked of a real model, once with the full history and once
 * with the context our engine projects, both scored by the probe's phrases.
 * The full history is clipped to its newest messages when it does not fit the
 * window (a provider would reject it whole), and the report says so.
 */
import { defaultBudget } from '../core/budget';
import { renderUnit, type ProjectedMessage } from '../core/engine';
import { SessionRecord } from '../core/parts';
import type { Redactor } from '../core/redact';
import { replay } from '../core/replay';
import type { TokenCounter } from '../core/tokens';
import type { RawRecord } from '../core/types';
import { formatCount } from '../core/formatCount';
import { slidingWindow } from './earlyContext';
import { scoreProbe, type Probe, type ProbeFile } from './probes';

export type Ask = (messages: readonly ProjectedMessage[], question: string, signal: AbortSignal) => Promise<string>;

export interface AnswerProbeOptions {
  readonly window: number;
  readonly reserve: number;
  readonly counter: TokenCounter;
  /** Hides secrets on both sides before the model is asked. */
  readonly redactor: Redactor;
  readonly ask: Ask;
  readonly signal: AbortSignal;
  readonly onProgress?: (done: number, total: number) => void;
}

export interface AnsweredProbe {
  readonly probe: Probe;
  readonly full: { readonly answer: string; readonly correct: boolean };
  readonly compacted: { readonly answer: string; readonly correct: boolean };
}

export interface AnswerReport {
  readonly results: readonly AnsweredProbe[];
  readonly fullAccuracy: number;
  readonly compactedAccuracy: number;
  /** compacted − full, in percentage points (negative: compaction lost answers). */
  readonly deltaTask: number;
  readonly fullTokens: number;
  readonly compactedTokens: number;
  /** The full history did not fit and was clipped to its newest messages. */
  readonly fullClipped: boolean;
}

export const PROBE_QUESTION_PREFIX = 'Answer from the conversation above only, briefly and with exact names, paths and wording where they exist:';

function correct(probe: Probe, answer: string): boolean {
  return scoreProbe(probe, { text: answer, currentText: answer, artifactPaths: [] }).kept;
}

export async function runAnswerProbes(records: readonly RawRecord[], file: ProbeFile, options: AnswerProbeOptions): Promise<AnswerReport> {
  const budget = defaultBudget({ window: options.window, reserve: options.reserve });
  const record = new SessionRecord();
  for (const r of records) record.append(r);
  // Both sides are redacted alike (the projected side is redacted by the engine): secrets never go to the model.
  const everything = record.units.flatMap((u) => renderUnit(u)).map((m) => ({ role: m.role, content: options.redactor.redact(m.content).text }));
  const full = slidingWindow(everything, budget.effective, options.counter);
  const compacted = (await replay(records, { budget, counter: options.counter, redactor: options.redactor })).messages;
  const tokens = (messages: readonly ProjectedMessage[]): number => messages.reduce((n, m) => n + options.counter.count(m.content), 0);

  const results: AnsweredProbe[] = [];
  for (const probe of file.probes) {
    if (options.signal.aborted) throw Object.assign(new Error('cancelled'), { name: 'AbortError' });
    const question = `${PROBE_QUESTION_PREFIX} ${probe.question}`;
    const fullAnswer = await options.ask(full, question, options.signal);
    const compactedAnswer = await options.ask(compacted, question, options.signal);
    results.push({ probe, full: { answer: fullAnswer, correct: correct(probe, fullAnswer) }, compacted: { answer: compactedAnswer, correct: correct(probe, compactedAnswer) } });
    options.onProgress?.(results.length, file.probes.length);
  }
  const share = (pick: (r: AnsweredProbe) => boolean): number => (results.length ? (100 * results.filter(pick).length) / results.length : 0);
  const fullAccuracy = share((r) => r.full.correct);
  const compactedAccuracy = share((r) => r.compacted.correct);
  return {
    results,
    fullAccuracy,
    compactedAccuracy,
    deltaTask: compactedAccuracy - fullAccuracy,
    fullTokens: tokens(full),
    compactedTokens: tokens(compacted),
    fullClipped: full.length < everything.length,
  };
}

export function formatAnswerReport(title: string, report: AnswerReport, window: number): string {
  const pct = (n: number): string => `${n.toFixed(1)}%`;
  const lines = [
    `# Δtask — ${title}`,
    '',
    `Window ${formatCount(window)} tokens. Full history: ${formatCount(report.fullTokens)} tokens${report.fullClipped ? ' (did not fit: clipped to its newest messages)' : ''}. Context Keeper: ${formatCount(report.compactedTokens)} tokens.`,
    '',
    `| | correct answers |`,
    `|---|---|`,
    `| full history | ${pct(report.fullAccuracy)} |`,
    `| Context Keeper | ${pct(report.compactedAccuracy)} |`,
    `| **Δtask** | **${report.deltaTask >= 0 ? '+' : ''}${report.deltaTask.toFixed(1)} points** |`,
    '',
    '| probe | kind | question | full | compacted |',
    '|---|---|---|---|---|',
  ];
  const cell = (s: string): string => s.replace(/\s+/g, ' ').replace(/\|/g, '\\|').slice(0, 160);
  for (const r of report.results) {
    lines.push(`| ${r.probe.id} | ${r.probe.kind} | ${cell(r.probe.question)} | ${r.full.correct ? '✓' : '✗'} ${cell(r.full.answer)} | ${r.compacted.correct ? '✓' : '✗'} ${cell(r.compacted.answer)} |`);
  }
  return `${lines.join('\n')}\n`;
}
