/**
 * The metrics of the evaluation, each a pure function with a known answer on a
 * hand-made input (see test/unit/evalMetrics.test.ts).
 */
import { quotedAskWords } from '../core/aiderWatch';
import { knownPathOf } from '../core/artifacts';
import { SessionRecord } from '../core/parts';
import { forwardSlashes } from '../core/paths';
import type { Redactor } from '../core/redact';
import { ExtractiveSummarizer, protectedFromRaw } from '../core/summarizer';
import {
  FACT_SECTIONS,
  formatCurrentState,
  formatFact,
  formatRequest,
  type FactSection,
  type SummaryState,
} from '../core/summary';
import type { TokenCounter } from '../core/tokens';
import type { RawRecord } from '../core/types';
import { PROBE_KINDS, scoreProbe, type Probe, type ProbeFile, type ProbeKind, type ProbeResult, type ProbeTarget } from './probes';
import type { StrategyRun } from './strategies';
import { visibleArtifacts } from './strategies';
import type { CallSample } from './strategy';

// ------------------------------------------------------------------ probes

/** Sections of a summary that present facts as current (not Ruled out, not Archived). */
const CURRENT_SECTIONS: readonly FactSection[] = ['Deliverables', 'Decisions', 'Constraints', 'Findings'];

/**
 * What a summary presents as standing now: its fact sections and Current state. The request log is not in it:
 * it is the user's words in order, each with its record ("#1 (r0): … DO NOT modify code" stays there after #2
 * lifted it), so a stale phrase found only in the log is history, not a claim.
 */
export function currentText(summary: SummaryState | undefined): string {
  if (!summary) return '';
  const lines: string[] = [];
  for (const section of CURRENT_SECTIONS) lines.push(...summary.facts[section].map(formatFact));
  lines.push(formatCurrentState(summary.current));
  return lines.join('\n');
}

export function probeTarget(run: StrategyRun): ProbeTarget {
  return {
    text: run.final.messages.map((m) => m.content).join('\n'),
    currentText: currentText(run.final.summary),
    artifactPaths: run.final.indexed.map((e) => e.path),
  };
}

export interface RecallByKind {
  readonly total: number;
  readonly kept: number;
  readonly byKind: Record<ProbeKind, { total: number; kept: number }>;
  readonly staleAsCurrent: number;
  /** Probes of kind request or constraint that were not kept (the critical losses). */
  readonly criticalLost: number;
  readonly results: ProbeResult[];
}

export function probeRecall(probes: readonly Probe[], target: ProbeTarget): RecallByKind {
  const byKind = Object.fromEntries(PROBE_KINDS.map((k) => [k, { total: 0, kept: 0 }])) as Record<ProbeKind, { total: number; kept: number }>;
  const results = probes.map((p) => scoreProbe(p, target));
  let kept = 0;
  let stale = 0;
  let criticalLost = 0;
  for (const r of results) {
    const k = byKind[r.probe.kind];
    k.total++;
    if (r.kept) {
      k.kept++;
      kept++;
    } else if (r.probe.kind === 'request' || r.probe.kind === 'constraint') criticalLost++;
    if (r.staleAsCurrent) stale++;
  }
  return { total: results.length, kept, byKind, staleAsCurrent: stale, criticalLost, results };
}

// ------------------------------------------------------------ artifact trail

export interface PrecisionRecall {
  readonly precision: number;
  readonly recall: number;
  readonly truePositives: number;
  readonly predicted: number;
  readonly truth: number;
}

function normalisePath(p: string): string {
  return forwardSlashes(p.trim()).replace(/^\.\//, '').replace(/\/+$/, '').toLowerCase();
}

/**
 * Two paths name the same file when equal, when one ends the other at a '/' boundary, or by the
 * engine's own rule (`knownPathOf`: `~/x` and the home directory's absolute `…/x`).
 */
export function samePath(a: string, b: string): boolean {
  const x = normalisePath(a);
  const y = normalisePath(b);
  return x === y || x.endsWith(`/${y}`) || y.endsWith(`/${x}`) || knownPathOf(a, [b]) === b;
}

/** Precision and recall of predicted paths against the truth (1 when both are empty). */
export function precisionRecall(predicted: readonly string[], truth: readonly string[]): PrecisionRecall {
  const tpPredicted = predicted.filter((p) => truth.some((t) => samePath(p, t))).length;
  const tpTruth = truth.filter((t) => predicted.some((p) => samePath(p, t))).length;
  return {
    precision: predicted.length ? tpPredicted / predicted.length : truth.length ? 0 : 1,
    recall: truth.length ? tpTruth / truth.length : 1,
    truePositives: tpTruth,
    predicted: predicted.length,
    truth: truth.length,
  };
}

export function artifactTrail(run: StrategyRun, truth: ProbeFile['artifacts']): { modified: PrecisionRecall; read: PrecisionRecall } {
  const seen = visibleArtifacts(run);
  return { modified: precisionRecall(seen.modified, truth.modified), read: precisionRecall(seen.read, truth.read) };
}

// ----------------------------------------------------------------- citations

export interface CitationReport {
  /** Fact lines (requests and section facts) checked. */
  readonly facts: number;
  /** Facts whose every source is a real record (and, for requests, whose text is in it). */
  readonly valid: number;
  /** Facts that name no source at all: must be 0. */
  readonly unsourced: number;
  readonly problems: string[];
}

function normaliseText(t: string): string {
  return t.replace(/\s+/g, ' ').trim();
}

/** Every fact in a summary must resolve to real records; a request must be the text of its record. */
export function citations(summary: SummaryState | undefined, records: readonly RawRecord[], redactor: Redactor): CitationReport {
  if (!summary) return { facts: 0, valid: 0, unsourced: 0, problems: [] };
  let facts = 0;
  let valid = 0;
  let unsourced = 0;
  const problems: string[] = [];
  for (const r of summary.requests) {
    facts++;
    const record = records[r.record];
    // The request log holds the user's words with secrets redacted: a user record's opening words, or what the user
    // wrote where the record quotes it (a comment aider's watch mode acted on: its prompt, or the reply quoting it).
    const said = record ? normaliseText(redactor.redact(record.content).text) : '';
    const text = normaliseText(r.text);
    const quoted = quotedAskWords(text);
    if (record && ((record.role === 'user' && said.startsWith(text)) || (quoted !== text && said.includes(quoted)))) valid++;
    else problems.push(`request #${r.ordinal} does not match record r${r.record}`);
  }
  for (const section of FACT_SECTIONS) {
    for (const line of summary.facts[section]) {
      facts++;
      if (line.sources.length === 0) {
        unsourced++;
        problems.push(`${section}: ${line.key} has no source`);
        continue;
      }
      const bad = line.sources.filter((s) => !Number.isInteger(s) || s < 0 || s >= records.length);
      if (bad.length === 0) valid++;
      else problems.push(`${section}: ${line.key} cites missing record(s) ${bad.map((b) => `r${b}`).join(', ')}`);
    }
  }
  return { facts, valid, unsourced, problems };
}

// ---------------------------------------------------------------------- cost

/** Published prices, dollars per million tokens. */
export interface Prices {
  readonly model: string;
  readonly input: number;
  readonly cacheWrite: number;
  readonly cacheRead: number;
  readonly output: number;
}

export const PRICES: readonly Prices[] = [{ model: 'Claude Sonnet (2026)', input: 3.0, cacheWrite: 3.75, cacheRead: 0.3, output: 15.0 }];

export interface CostReport {
  readonly calls: number;
  readonly inputTokens: number;
  readonly cacheReadTokens: number;
  readonly outputTokens: number;
  /** With prompt caching: the unchanged prefix read at the cache price, the rest written at the cache-write price. */
  readonly dollars: number;
  /** The same calls without prompt caching (every input token at the input price). */
  readonly dollarsUncached: number;
}

export function replayCost(calls: readonly CallSample[], prices: Prices = PRICES[0]!): CostReport {
  let input = 0;
  let cacheRead = 0;
  let output = 0;
  for (const c of calls) {
    input += c.tokens;
    cacheRead += c.cacheRead;
    output += c.output;
  }
  const perM = 1_000_000;
  return {
    calls: calls.length,
    inputTokens: input,
    cacheReadTokens: cacheRead,
    outputTokens: output,
    dollars: (cacheRead * prices.cacheRead + (input - cacheRead) * prices.cacheWrite + output * prices.output) / perM,
    dollarsUncached: (input * prices.input + output * prices.output) / perM,
  };
}

// ------------------------------------------------------------------- utility

/** U = G − λ·C − μ·L (seed 000): G probe recall, C replay cost in dollars, L critical probes lost. */
export interface UtilityWeights {
  readonly lambda: number;
  readonly mu: number;
}

export const UTILITY_WEIGHTS: UtilityWeights = { lambda: 0.5, mu: 0.05 };

export function utility(recall: number, dollars: number, criticalLost: number, w: UtilityWeights = UTILITY_WEIGHTS): number {
  return recall - w.lambda * dollars - w.mu * criticalLost;
}

// ---------------------------------------------------- multi-generation drift

export interface DriftReport {
  readonly generations: number;
  /** The request log and safety constraints after N folds equal a rebuild from the raw record. */
  readonly protectedIdentical: boolean;
  readonly protectedDiff: string[];
  /** Per section: lines of the N-generation summary that a single rebuild from raw does not have, and vice versa. */
  readonly sections: Record<string, { onlyGenerations: number; onlyRebuild: number; shared: number }>;
}

/**
 * Folds a session in `generations` consecutive spans (Σn = fold(Σn−1, span n)),
 * then rebuilds the summary in one fold from the raw record, and compares: the
 * protected lines must be identical; the other sections' divergence is reported.
 */
export function multiGenerationDrift(records: readonly RawRecord[], counter: TokenCounter, redactor: Redactor, generations = 10): DriftReport {
  const record = new SessionRecord();
  for (const r of records) record.append(r);
  const units = record.units;
  const summarizer = new ExtractiveSummarizer(counter, redactor);
  let state: SummaryState | undefined;
  const size = Math.max(1, Math.ceil(units.length / generations));
  let done = 0;
  for (let g = 0; g < generations && done < units.length; g++) {
    const end = Math.min(units.length, done + size);
    state = summarizer.foldSync({ previous: state, units: units.slice(done, end), coverageEnd: end < units.length ? units[end]!.firstRecord : records.length });
    done = end;
  }
  const rebuilt = summarizer.foldSync({ previous: undefined, units, coverageEnd: records.length });
  const raw = protectedFromRaw(units, redactor);
  const diff: string[] = [];
  const requestsOf = (s: SummaryState | undefined): string[] => (s?.requests ?? []).map(formatRequest);
  const a = requestsOf(state);
  const b = raw.requests.map(formatRequest);
  if (a.join('\n') !== b.join('\n')) diff.push(`request log differs: ${a.length} vs ${b.length} lines`);
  for (const c of raw.safety) {
    if (!state?.facts.Constraints.some((l) => l.key === c.key && l.text === c.text)) diff.push(`safety constraint missing after ${generations} folds: ${c.text}`);
  }
  const sections: DriftReport['sections'] = {};
  for (const section of FACT_SECTIONS) {
    const x = new Set((state?.facts[section] ?? []).map((l) => `${l.key}: ${l.text}`));
    const y = new Set(rebuilt.facts[section].map((l) => `${l.key}: ${l.text}`));
    let shared = 0;
    for (const line of x) if (y.has(line)) shared++;
    sections[section] = { onlyGenerations: x.size - shared, onlyRebuild: y.size - shared, shared };
  }
  return { generations, protectedIdentical: diff.length === 0, protectedDiff: diff, sections };
}
