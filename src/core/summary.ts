/**
 * The floor summary: a `## Task Context` block with fixed sections.
 *
 * Fact sections are append-only across folds (a reused topic key supersedes
 * its earlier line); only Current state is overwritten. The rendered head is
 * capped by demotion, never deletion: findings, then non-safety decisions,
 * constraints and ruled-out approaches move to Archived as pointers; the
 * request log and safety constraints (P0) and deliverable paths (P1) stay.
 */
import { ROLLING_SUMMARY_BUDGET_TOKENS } from './budget';
import { containsSecret, redact } from './redact';
import { MemoTokenCounter, type TokenCounter } from './tokens';

export const SECTION_NAMES = [
  'Requests',
  'Deliverables',
  'Decisions',
  'Constraints',
  'Ruled out',
  'Findings',
  'Archived',
  'Current state',
] as const;
export type SectionName = (typeof SECTION_NAMES)[number];
export type FactSection = Exclude<SectionName, 'Requests' | 'Current state'>;
export const FACT_SECTIONS: readonly FactSection[] = ['Deliverables', 'Decisions', 'Constraints', 'Ruled out', 'Findings', 'Archived'];

/** P0 never demoted; P1 note may shrink, path stays; P2/P3 demote to Archived. */
export type Priority = 0 | 1 | 2 | 3;

export interface RequestLine {
  /** `#n`, assigned once in record order and never renumbered. */
  readonly ordinal: number;
  /** The user's wording, verbatim (a very long message keeps its head verbatim and points at the record). */
  readonly text: string;
  readonly record: number;
  /** Characters of the original not shown here (0 when whole). */
  readonly elided: number;
}

export interface FactLine {
  /** Stable kebab topic key: reusing it supersedes the fact. */
  readonly key: string;
  readonly text: string;
  /** Record indices that establish the fact. */
  readonly sources: readonly number[];
  readonly priority: Priority;
  /**
   * How many later units named one of the line's handles (file paths,
   * identifiers): under the cap the least referred line is demoted first.
   */
  readonly refs?: number;
}

export interface CurrentState {
  readonly goal: string;
  readonly deliverable: string;
  readonly status: string;
  readonly next: string;
}

export interface SummaryState {
  /** Records [0, coverageEnd) are folded into this summary. */
  readonly coverageEnd: number;
  readonly requests: readonly RequestLine[];
  readonly facts: Readonly<Record<FactSection, readonly FactLine[]>>;
  readonly current: CurrentState;
  /** How many folds produced this state. */
  readonly folds: number;
}

export function emptySummary(): SummaryState {
  return {
    coverageEnd: 0,
    requests: [],
    facts: { Deliverables: [], Decisions: [], Constraints: [], 'Ruled out': [], Findings: [], Archived: [] },
    current: { goal: '', deliverable: '', status: '', next: '' },
    folds: 0,
  };
}

/** A mutable working copy used while folding. */
export class SummaryBuilder {
  readonly requests: RequestLine[];
  readonly facts: Record<FactSection, FactLine[]>;
  current: CurrentState;

  constructor(from: SummaryState) {
    this.requests = [...from.requests];
    this.facts = {
      Deliverables: [...from.facts.Deliverables],
      Decisions: [...from.facts.Decisions],
      Constraints: [...from.facts.Constraints],
      'Ruled out': [...from.facts['Ruled out']],
      Findings: [...from.facts.Findings],
      Archived: [...from.facts.Archived],
    };
    this.current = from.current;
  }

  /**
   * Adds a fact, or supersedes the fact with the same key wherever it is.
   * Superseding in the same section replaces the line in place (sources are
   * merged); a key moving to another section leaves its old section.
   */
  upsert(section: FactSection, raw: FactLine): void {
    // Secrets and personal data never enter a summary (the raw record keeps them).
    const line: FactLine = containsSecret(raw.text) ? { ...raw, text: redact(raw.text).text } : raw;
    for (const name of FACT_SECTIONS) {
      const lines = this.facts[name];
      const at = lines.findIndex((l) => l.key === line.key);
      if (at < 0) continue;
      const before = lines[at]!;
      const refs = (before.refs ?? 0) + (line.refs ?? 0);
      const merged: FactLine = { ...line, sources: mergeSources(before.sources, line.sources), ...(refs ? { refs } : {}) };
      if (name === section) {
        lines[at] = merged;
        return;
      }
      lines.splice(at, 1);
      this.facts[section].push(merged);
      return;
    }
    this.facts[section].push(line);
  }

  has(key: string): boolean {
    return FACT_SECTIONS.some((s) => this.facts[s].some((l) => l.key === key));
  }

  build(coverageEnd: number, folds: number): SummaryState {
    const clean = (t: string): string => (containsSecret(t) ? redact(t).text : t);
    const c = this.current;
    const current: CurrentState = { goal: clean(c.goal), deliverable: clean(c.deliverable), status: clean(c.status), next: clean(c.next) };
    return { coverageEnd, requests: this.requests, facts: this.facts, current, folds };
  }
}

function mergeSources(a: readonly number[], b: readonly number[]): number[] {
  const all = [...new Set([...a, ...b])].sort((x, y) => x - y);
  return all.length > 6 ? [...all.slice(0, 2), ...all.slice(-4)] : all;
}

export function formatSources(sources: readonly number[]): string {
  if (sources.length === 0) return '';
  if (sources.length <= 3) return ` (${sources.map((s) => `r${s}`).join(', ')})`;
  return ` (r${sources[0]}, …, r${sources[sources.length - 1]}; ${sources.length} refs)`;
}

export function formatRequest(r: RequestLine): string {
  const tail = r.elided > 0 ? ` […${r.elided} more chars in r${r.record}]` : '';
  return `#${r.ordinal} (r${r.record}): ${r.text}${tail}`;
}

/**
 * Whether a topic key only restates its statement: every word of the key is a
 * word of the text (an extracted line's key is the slug of its first words).
 */
export function keyRestatesText(key: string, text: string): boolean {
  if (text === '') return false;
  const words = new Set(text.toLowerCase().replace(/[`'"]/g, '').split(/[^a-z0-9_]+/));
  return key.split('-').every((w) => w === '' || words.has(w));
}

/**
 * A fact line: `topic-key: statement (sources)`. A key that only restates its
 * statement is said once, by the statement itself: `statement (sources)`. The
 * key still identifies the line in the state (a reused key supersedes).
 */
export function formatFact(f: FactLine): string {
  if (keyRestatesText(f.key, f.text)) return `${f.text}${formatSources(f.sources)}`;
  return `${f.key}: ${f.text}${formatSources(f.sources)}`;
}

export function formatCurrentState(c: CurrentState): string {
  return [`Goal: ${c.goal || '(none)'}`, `Deliverable: ${c.deliverable || '(none)'}`, `Status: ${c.status || '(none)'}`, `Next: ${c.next || '(none)'}`].join('\n');
}

export const TASK_CONTEXT_HEADING = '## Task Context';

/** Renders the state as the `## Task Context` block sent at the head of the context. */
export function renderSummary(state: SummaryState): string {
  const out: string[] = [TASK_CONTEXT_HEADING];
  out.push(
    `Records 0–${Math.max(0, state.coverageEnd - 1)} are folded into this summary (rN = record N). ` +
      'A compacted tool call is recovered with view_tool_call("<toolCallId>").',
  );
  out.push('### Requests');
  out.push(...(state.requests.length ? state.requests.map((r) => `- ${formatRequest(r)}`) : ['(none)']));
  for (const section of FACT_SECTIONS) {
    out.push(`### ${section}`);
    const lines = state.facts[section];
    out.push(...(lines.length ? lines.map((l) => `- ${formatFact(l)}`) : ['(none)']));
  }
  out.push('### Current state');
  out.push(formatCurrentState(state.current));
  return out.join('\n');
}

/** The summary as the CLI's JSON `summary` object. */
export function summaryToJson(state: SummaryState | undefined): Record<SectionName, string[] | string> {
  const s = state ?? emptySummary();
  return {
    Requests: s.requests.map(formatRequest),
    Deliverables: s.facts.Deliverables.map(formatFact),
    Decisions: s.facts.Decisions.map(formatFact),
    Constraints: s.facts.Constraints.map(formatFact),
    'Ruled out': s.facts['Ruled out'].map(formatFact),
    Findings: s.facts.Findings.map(formatFact),
    Archived: s.facts.Archived.map(formatFact),
    'Current state': state ? formatCurrentState(s.current) : '',
  };
}

/**
 * Checks a rendered Task Context: the heading first, then every section
 * heading exactly once and in order. Returns the problems (empty when valid).
 */
export function validateTaskContext(text: string): string[] {
  const problems: string[] = [];
  const lines = text.split('\n');
  if (lines[0]?.trim() !== TASK_CONTEXT_HEADING) problems.push(`first line must be "${TASK_CONTEXT_HEADING}"`);
  let last = -1;
  for (const name of SECTION_NAMES) {
    const positions = lines.flatMap((l, i) => (l.trim() === `### ${name}` ? [i] : []));
    if (positions.length === 0) problems.push(`missing section "${name}"`);
    else if (positions.length > 1) problems.push(`section "${name}" appears ${positions.length} times`);
    else if (positions[0]! < last) problems.push(`section "${name}" is out of order`);
    else last = positions[0]!;
  }
  return problems;
}

/** The next line to demote among those `eligible`: the least referred by later units, then the oldest. */
function leastReferred(lines: readonly FactLine[], eligible: (l: FactLine) => boolean): number {
  let best = -1;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (eligible(l) && (best < 0 || (l.refs ?? 0) < (lines[best]!.refs ?? 0))) best = i;
  }
  return best;
}

/** What the cap did: how many lines moved, and whether P0/P1 alone exceed the cap. */
export interface CapReport {
  readonly demoted: number;
  readonly tokens: number;
  readonly overCap: boolean;
}

const ARCHIVE_GIST_CHARS = 72;
const ARCHIVE_GROUP = 10;
const REQUEST_CLIP_CHARS = 240;

/**
 * Enforces the token cap by demotion, lowest priority first:
 * 1. P3 findings → Archived (gist + sources);
 * 2. P2 decisions, then ruled-out approaches, then non-safety constraints → Archived;
 * 3. Archived gists shortened to their key and sources;
 * 4. the oldest Archived pointers grouped (keys kept, gists gone);
 * 5. deliverable notes shortened (the path stays);
 * 6. long request lines clipped to their verbatim head (the record keeps the rest).
 * Within steps 1–3 the line later units referred to least goes first (`refs`),
 * then the oldest. P0 lines are never removed; if they alone exceed the cap,
 * `overCap` says so.
 */
export function enforceCap(
  state: SummaryState,
  counter: TokenCounter,
  cap: number = ROLLING_SUMMARY_BUDGET_TOKENS,
): { state: SummaryState; report: CapReport } {
  const lines = counter instanceof SummaryLineCounter ? counter : new SummaryLineCounter(counter);
  let tokens = lines.countSummary(state);
  if (tokens <= cap) return { state, report: { demoted: 0, tokens, overCap: false } };
  const b = new SummaryBuilder(state);
  let demoted = 0;
  const measure = (): number => lines.countSummary(b.build(state.coverageEnd, state.folds));

  const demote = (section: FactSection, priority: Priority): void => {
    const sectionLines = b.facts[section];
    while (tokens > cap) {
      const at = leastReferred(sectionLines, (l) => l.priority === priority);
      if (at < 0) break;
      const line = sectionLines[at]!;
      sectionLines.splice(at, 1);
      const gist = line.text.length > ARCHIVE_GIST_CHARS ? `${line.text.slice(0, ARCHIVE_GIST_CHARS)}…` : line.text;
      const archived: FactLine = { key: line.key, text: `[${section}] ${gist}`, sources: line.sources, priority: 3, ...(line.refs ? { refs: line.refs } : {}) };
      b.facts.Archived.push(archived);
      demoted++;
      tokens -= lines.count(`- ${formatFact(line)}`) - lines.count(`- ${formatFact(archived)}`);
    }
    tokens = measure();
  };

  demote('Findings', 3);
  // Within P2, the user's own standing rules go last.
  for (const section of ['Decisions', 'Ruled out', 'Constraints'] as const) demote(section, 2);

  if (tokens > cap) {
    for (let i = leastReferred(b.facts.Archived, (l) => l.text !== ''); i >= 0 && tokens > cap; i = leastReferred(b.facts.Archived, (l) => l.text !== '')) {
      const line = b.facts.Archived[i]!;
      b.facts.Archived[i] = { ...line, text: '' };
      tokens -= lines.count(`- ${formatFact(line)}`) - lines.count(`- ${formatFact(b.facts.Archived[i]!)}`);
    }
    tokens = measure();
  }
  while (tokens > cap && b.facts.Archived.length > ARCHIVE_GROUP) {
    const group = b.facts.Archived.splice(0, ARCHIVE_GROUP);
    const keys = group.flatMap((g) => (g.key.startsWith('archive-group') ? [g.text] : [g.key]));
    const sources = group.flatMap((g) => g.sources);
    const lo = Math.min(...sources);
    const hi = Math.max(...sources);
    b.facts.Archived.unshift({ key: `archive-group-r${lo}-r${hi}`, text: keys.join(', '), sources: [lo, hi], priority: 3 });
    tokens = measure();
    if (b.facts.Archived[0]!.text.length > 2000) break;
  }
  if (tokens > cap) {
    for (let i = 0; i < b.facts.Deliverables.length; i++) {
      const line = b.facts.Deliverables[i]!;
      b.facts.Deliverables[i] = { ...line, text: '', sources: line.sources.slice(-1) };
    }
    tokens = measure();
  }
  if (tokens > cap) {
    for (let i = 0; i < b.requests.length && tokens > cap; i++) {
      const r = b.requests[i]!;
      if (r.text.length <= REQUEST_CLIP_CHARS) continue;
      b.requests[i] = { ...r, text: r.text.slice(0, REQUEST_CLIP_CHARS), elided: r.elided + r.text.length - REQUEST_CLIP_CHARS };
      tokens -= lines.count(`- ${formatRequest(r)}`) - lines.count(`- ${formatRequest(b.requests[i]!)}`);
    }
    tokens = measure();
  }
  return { state: b.build(state.coverageEnd, state.folds), report: { demoted, tokens, overCap: tokens > cap } };
}

/**
 * Counts a rendered Task Context line by line, caching each line: between two
 * folds almost every line is unchanged (fact sections are append-only), so
 * re-measuring the head costs only its new lines. The sum of the lines plus one
 * token per line break matches the count of the whole text to within a few
 * tokens (the tokenizer splits at line breaks).
 */
export class SummaryLineCounter extends MemoTokenCounter {
  constructor(inner: TokenCounter, capacity = 20_000) {
    super(inner, capacity);
  }

  countSummary(state: SummaryState): number {
    const known = this.bySummary.get(state);
    if (known !== undefined) return known;
    const lines = renderSummary(state).split('\n');
    let total = lines.length - 1;
    for (const line of lines) total += this.count(line);
    this.bySummary.set(state, total);
    return total;
  }

  /** States are immutable: a state counted once (by the cap, say) is not rendered again. */
  private readonly bySummary = new WeakMap<SummaryState, number>();
}
