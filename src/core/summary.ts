/**
 * The floor summary: a `## Task Context` block with fixed sections.
 *
 * Fact sections are append-only across folds (a reused topic key supersedes
 * its earlier line); only Current state is overwritten. The rendered head is
 * capped by demotion, never deletion: findings, then non-safety decisions,
 * constraints and ruled-out approaches move to Archived as pointers; the
 * request log and safety constraints (P0) and deliverable paths (P1) stay.
 */
import { CACHE_BLOCK_TOKENS, ROLLING_SUMMARY_BUDGET_TOKENS } from './budget';
import { gistOf, GIST_WORDS, salience, words } from './digest';
import { relativeTo, workspaceRootOf } from './paths';
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
  /** A short reply resolved: what it chose among the options just offered, and where they were offered. */
  readonly resolved?: { readonly chose: string; readonly offered: number; readonly assent: boolean };
  /** A reply that only says to go on with the work under way ("continue", "yes, go ahead"): the goal says so, the list leaves it out. */
  readonly continuation?: true;
}

/** Where a fact line comes from: the exact record (a tool result, the user), the agent's prose, or a model summary. */
export type LineOrigin = 'exact' | 'narrative' | 'model';

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
  /** Where the line comes from (undefined: exact). A model summary replaces the narrative lines of its span. */
  readonly origin?: LineOrigin;
  /** An archived line that groups several gists: the keys of their statements, in order (a reused key still finds its gist). */
  readonly members?: readonly string[];
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
  /**
   * The options (or the question) of the last assistant message folded, so a
   * short reply right after the fold boundary ("2", "yes") can still be
   * resolved. Derived from the raw record like everything else here.
   */
  readonly offer?: { readonly record: number; readonly text: string };
  /**
   * How the head is laid out (see `layoutAfterFold`): the lines as first sent,
   * and the lines later folds appended. Absent: rendered in full.
   */
  readonly layout?: {
    readonly frozen: string;
    readonly added: readonly string[];
    /** The identity of each added line (see `renderedLines`); absent in heads stored before it was kept. */
    readonly addedIds?: readonly string[];
  };
  /**
   * The workspace directory the head writes paths relative to (see `paths.ts`),
   * chosen once, when the deliverables first show one, and kept: the lines
   * already sent keep their bytes.
   */
  readonly root?: string;
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
  offer: SummaryState['offer'];
  readonly root: string | undefined;

  constructor(from: SummaryState) {
    this.offer = from.offer;
    this.root = from.root;
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
    // A key whose statement was grouped in Archived is superseded there too: its gist leaves the group.
    this.dropArchivedMember(line.key);
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

  /** Removes the gist of `key` from an archived line that groups it with others (the line goes when it holds nothing else). */
  dropArchivedMember(key: string): void {
    const archived = this.facts.Archived;
    for (let i = 0; i < archived.length; i++) {
      const members = archived[i]!.members;
      const at = members ? members.indexOf(key) : -1;
      if (!members || at < 0) continue;
      const line = archived[i]!;
      const from = ARCHIVED_FROM.exec(line.text);
      const gists = (from ? line.text.slice(from[0].length) : line.text).split(GIST_SEPARATOR);
      if (gists.length !== members.length || members.length <= 1) {
        archived.splice(i, 1);
        return;
      }
      gists.splice(at, 1);
      const rest = members.filter((_, k) => k !== at);
      archived[i] = { ...line, key: `${GROUP_KEY}${rest[0]}`, members: rest, text: `${from ? from[0] : ''}${gists.join(GIST_SEPARATOR)}` };
      return;
    }
  }

  /** The section and line that hold `key`, if any. */
  find(key: string): { section: FactSection; line: FactLine } | undefined {
    for (const section of FACT_SECTIONS) {
      const line = this.facts[section].find((l) => l.key === key);
      if (line) return { section, line };
    }
    return undefined;
  }

  /** Removes the line with `key` wherever it is (a failure later made to succeed is no longer ruled out). */
  remove(key: string): void {
    for (const section of FACT_SECTIONS) {
      const at = this.facts[section].findIndex((l) => l.key === key);
      if (at >= 0) this.facts[section].splice(at, 1);
    }
  }

  build(coverageEnd: number, folds: number): SummaryState {
    const clean = (t: string): string => (containsSecret(t) ? redact(t).text : t);
    const c = this.current;
    const current: CurrentState = { goal: clean(c.goal), deliverable: clean(c.deliverable), status: clean(c.status), next: clean(c.next) };
    // The offer is kept in the stored summary: it is kept with secrets hidden, like every line.
    const root = this.root ?? workspaceRootOf([...this.facts.Deliverables.map((l) => l.key), ...readPaths(this.facts.Findings)]);
    return {
      coverageEnd,
      requests: this.requests,
      facts: this.facts,
      current,
      folds,
      ...(this.offer ? { offer: { record: this.offer.record, text: redact(this.offer.text).text } } : {}),
      ...(root ? { root } : {}),
    };
  }
}

/** The paths of the files whose read a finding reports (`path` (read): what it is for). */
function readPaths(lines: readonly FactLine[]): string[] {
  const out: string[] = [];
  for (const l of lines) {
    const m = l.origin === 'exact' ? READ_LINE.exec(l.text) : null;
    if (m) out.push(m[1]!);
  }
  return out;
}

/** A finding that reports what a read file is for. */
export const READ_LINE = /^`([^`]+)` \(read\): /;

export function mergeSources(a: readonly number[], b: readonly number[]): number[] {
  const all = [...new Set([...a, ...b])].sort((x, y) => x - y);
  return all.length > 6 ? [...all.slice(0, 2), ...all.slice(-4)] : all;
}

/** The source pointer `formatSources` puts at the end of a line, as a pattern (to compare lines without it). */
export const SOURCES_SUFFIX = / \((?:r\d+(?:, r\d+)*|r\d+, …, r\d+; \d+ refs)\)$/;

export function formatSources(sources: readonly number[]): string {
  if (sources.length === 0) return '';
  if (sources.length <= 3) return ` (${sources.map((s) => `r${s}`).join(', ')})`;
  return ` (r${sources[0]}, …, r${sources[sources.length - 1]}; ${sources.length} refs)`;
}

export function formatRequest(r: RequestLine): string {
  const tail = r.elided > 0 ? ` […${r.elided} more chars in r${r.record}]` : '';
  const resolved = r.resolved ? ` → ${r.resolved.assent ? 'agreed to' : 'chose'} "${r.resolved.chose}" (offered r${r.resolved.offered})` : '';
  const text = r.resolved ? `"${r.text}"` : r.text;
  return `#${r.ordinal} (r${r.record}): ${text}${resolved}${tail}`;
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
  // An extracted line is its statement: its key is identity, not content.
  if (f.origin === 'narrative' || f.origin === 'exact' || f.key.startsWith('archived~') || keyRestatesText(f.key, f.text)) return `${f.text}${formatSources(f.sources)}`;
  return `${f.key}: ${f.text}${formatSources(f.sources)}`;
}

export function formatCurrentState(c: CurrentState): string {
  return [`Goal: ${c.goal || '(none)'}`, `Deliverable: ${c.deliverable || '(none)'}`, `Status: ${c.status || '(none)'}`, `Next: ${c.next || '(none)'}`].join('\n');
}

export const TASK_CONTEXT_HEADING = '## Task Context';

/** The opening line of the head: stable across folds (the coverage is said at the end, where it changes). */
const HEAD_NOTE = 'rN = record N; a compacted tool call is recovered with view_tool_call("<toolCallId>").';

/** The heading of the lines appended at later folds, between Archived and Current state. */
export const ADDED_HEADING = '### Added at later folds (newest last)';

/** The fact sections of a state as rendered lines: Requests through Archived. */
/**
 * The request log shows at most this many requests: the first (the task) and
 * the latest. A session of thousands of turns would otherwise carry a head that
 * grows with every turn and costs every fold a pass over all of them; the ones
 * between stay in the record (and their rules in the protected state).
 */
export const REQUESTS_SHOWN = 200;

/** A request this long or longer, sent again word for word, is shown once (shorter ones — "continue", "yes" — are cheaper than a pointer). */
const REPEAT_MIN_CHARS = 40;
/** An earlier request this long that a later one repeats before adding words is pointed at, not repeated. */
const EXTENDED_MIN_CHARS = 120;

/** The requests the head leaves out: all but the first and the latest REQUESTS_SHOWN − 1 (none in a shorter log). */
function elidedRequests(requests: readonly RequestLine[]): readonly RequestLine[] {
  return requests.length <= REQUESTS_SHOWN ? [] : requests.slice(1, requests.length - (REQUESTS_SHOWN - 1));
}

/** The request lines as the head shows them, keyed by their identity (`#n`, and `#…` for the elided run). */
function requestLines(requests: readonly RequestLine[]): [string, string][] {
  // A request sent again word for word (a retried prompt, an agent's re-run) points at its first sending;
  // one sent again with words added says only what it added.
  const first = new Map<string, number>();
  const line = (r: RequestLine): [string, string] => {
    const text = r.text.replace(/\s+/g, ' ').trim();
    const words = text.toLowerCase();
    const long = words.length >= REPEAT_MIN_CHARS && !r.resolved;
    const earlier = long ? first.get(words) : undefined;
    if (earlier !== undefined) return [`#${r.ordinal}`, `- #${r.ordinal} (r${r.record}): the same words as #${earlier}`];
    let extended: [string, number] | undefined;
    if (long) {
      for (const [said, ordinal] of first) {
        if (said.length >= EXTENDED_MIN_CHARS && words.startsWith(said) && /^\W/.test(words.slice(said.length)) && said.length > (extended?.[0].length ?? 0)) extended = [said, ordinal];
      }
      first.set(words, r.ordinal);
    }
    if (extended === undefined) return [`#${r.ordinal}`, `- ${formatRequest(r)}`];
    const added = text.slice(extended[0].length).replace(/^[\s,;:.]+/, '');
    return [`#${r.ordinal}`, `- ${formatRequest({ ...r, text: `the words of #${extended[1]}, then: ${added}` })}`];
  };
  // "Continue" asks for nothing new: Current state's goal says the work was taken up again there.
  const said = (r: RequestLine): boolean => r.ordinal === 1 || !r.continuation;
  const elided = elidedRequests(requests);
  if (elided.length === 0) return requests.filter(said).map(line);
  const from = elided[0]!;
  const to = elided[elided.length - 1]!;
  const pointer: [string, string] = [`#${from.ordinal}…`, `- #${from.ordinal}–#${to.ordinal} (r${from.record}–r${to.record}): ${to.ordinal - from.ordinal + 1} earlier requests, in the record`];
  return [line(requests[0]!), pointer, ...requests.slice(1 + elided.length).filter(said).map(line)];
}

/** The request lines as the head shows them, without their `#n (rN): ` numbering (a reader's view, for audits). */
export function shownRequestTexts(requests: readonly RequestLine[]): string[] {
  return requestLines(requests).map(([, text]) => text.replace(/^- /, '').replace(/^#\d+ \(r\d+\): /, ''));
}

/** Records of the requests the head does not show (see REQUESTS_SHOWN): kept in the record, pointed to by one line. */
export function elidedRequestRecords(state: SummaryState | undefined): ReadonlySet<number> {
  return new Set(elidedRequests(state?.requests ?? []).map((r) => r.record));
}

/**
 * A fact line as the head shows it: paths under the workspace relative to it,
 * except in the user's own rules (Constraints keep their words).
 */
function factLine(state: SummaryState, section: FactSection, l: FactLine): string {
  const text = `- ${formatFact(l)}`;
  return section === 'Constraints' ? text : relativeTo(text, state.root);
}

function renderFacts(state: SummaryState): string[] {
  const out: string[] = ['### Requests'];
  out.push(...(state.requests.length ? requestLines(state.requests).map(([, text]) => text) : ['(none)']));
  // A section whose lines were all archived is not empty: "(none)" there would read as "nothing was decided".
  const archived = new Set(state.facts.Archived.map((l) => ARCHIVED_FROM.exec(l.text)?.[1]));
  for (const section of FACT_SECTIONS) {
    out.push(`### ${section}`);
    const lines = state.facts[section];
    out.push(...(lines.length ? lines.map((l) => factLine(state, section, l)) : [archived.has(section) ? '(only archived lines, below)' : '(none)']));
  }
  return out;
}

/**
 * Renders the state as the `## Task Context` block sent at the head of the
 * context. With a layout (see `layoutAfterFold`) the lines already sent keep
 * their bytes and order and a fold's new lines follow them, so a prompt cache
 * still serves the head's start after a fold; what changes at every fold —
 * Current state, the coverage — comes last.
 */
export function renderSummary(state: SummaryState): string {
  const out: string[] = [TASK_CONTEXT_HEADING, HEAD_NOTE];
  if (state.root) out.push(`Paths are relative to the workspace ${state.root}`);
  if (state.layout) {
    out.push(state.layout.frozen);
    if (state.layout.added.length) out.push(ADDED_HEADING, ...state.layout.added);
  } else out.push(...renderFacts(state));
  out.push('### Current state');
  // The goal is the user's words; what the agent wrote and did is shown relative to the workspace.
  const c = state.current;
  out.push(formatCurrentState({ goal: c.goal, deliverable: relativeTo(c.deliverable, state.root), status: relativeTo(c.status, state.root), next: relativeTo(c.next, state.root) }));
  out.push(`Records 0–${Math.max(0, state.coverageEnd - 1)} are folded into this summary.`);
  return out.join('\n');
}

/** How a head was laid out at a fold: appended to the text already sent, or rendered in full. */
export type LayoutKind = 'appended' | 'rendered';

/** Lines a fold may append before the head is rendered in full again. */
const LAYOUT_MAX_ADDED = 40;
/** How far past its cap a head may run while it keeps, as sent, lines the cap has compressed since. */
const LAYOUT_CAP_SLACK = 0.3;

/** The gists an archived line shows (one, or a group's side by side), without its section tag. */
export function gistsOf(line: FactLine): string[] {
  const body = line.text.replace(ARCHIVED_FROM, '');
  return line.members ? body.split(GIST_SEPARATOR) : [body];
}

/** Each archived key's gist and the section it came from (a grouped line's gists by member, in order). */
function archivedGists(state: SummaryState): Map<string, { tag: string; gist: string }> {
  const out = new Map<string, { tag: string; gist: string }>();
  for (const l of state.facts.Archived) {
    const tag = ARCHIVED_FROM.exec(l.text)?.[1] ?? '';
    const parts = gistsOf(l);
    (l.members ?? [l.key]).forEach((key, i) => out.set(key, { tag, gist: parts[i] ?? '' }));
  }
  return out;
}

/** The words and numbers of a line, lower-cased, punctuation and source pointers left out. */
function tokens(text: string): Set<string> {
  return new Set(text.replace(SOURCES_SUFFIX, '').toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []);
}

/** How many archived lines a summary's pointer line counts as not shown. */
function evictedCount(state: SummaryState): number {
  const pointer = state.facts.Archived.find((l) => l.key === EVICTED_KEY);
  return pointer ? pointerCount(pointer) : 0;
}

/** The number of archived lines a pointer line says are not shown. */
function pointerCount(pointer: FactLine): number {
  return Number(/^(\d+)/.exec(pointer.text)?.[1] ?? 0);
}

/** A line's identity and its text, as the head shows it. */
function renderedLines(state: SummaryState): Map<string, string> {
  const out = new Map<string, string>();
  for (const [id, text] of requestLines(state.requests)) out.set(id, text);
  for (const section of FACT_SECTIONS) for (const l of state.facts[section]) out.set(`${section}\u0000${l.key}`, factLine(state, section, l));
  return out;
}

/** A line as the added block shows it: its section named (a request says it is one). */
function addedLine(id: string, text: string): string {
  if (id.startsWith('#')) return text.replace(/^- /, '- [Request] ');
  const section = id.slice(0, id.indexOf('\u0000'));
  return text.replace(/^- /, `- [${section === 'Archived' ? 'Archived' : section}] `);
}

/**
 * The layout of the head after a fold, from the head the previous fold sent.
 * When every line already sent is still there (its sources may have grown: the
 * line as sent stays), the new lines and the lines whose statement changed are
 * appended under ADDED_HEADING, newest last, and the text already sent keeps
 * its bytes. A line that left (demoted, superseded elsewhere, withdrawn), a
 * request that changed, or too many appended lines render the head in full.
 * Pure: the layout is part of the stored floor summary, so a view derived again
 * from the store is the same.
 */
export function layoutAfterFold(previous: SummaryState | undefined, next: SummaryState, counter?: SummaryLineCounter, cap?: number): { state: SummaryState; kind: LayoutKind } {
  const full = (): { state: SummaryState; kind: LayoutKind } => ({ state: { ...next, layout: { frozen: renderFacts(next).join('\n'), added: [], addedIds: [] } }, kind: 'rendered' });
  // A workspace chosen at this fold rewrites the paths of lines already sent.
  if (!previous || previous.root !== next.root) return full();
  const sent = renderedLines(previous);
  // A head that said (almost) nothing yet is no prefix worth keeping: no cache block would be served from it,
  // and appending would leave every section reading "(none)" above the lines that fill it.
  if (sent.size === 0 || (counter && counter.count(previous.layout?.frozen ?? renderFacts(previous).join('\n')) < CACHE_BLOCK_TOKENS)) return full();
  const now = renderedLines(next);
  const bare = (t: string): string => t.replace(SOURCES_SUFFIX, '');
  const added: string[] = previous.layout ? [...previous.layout.added] : [];
  const addedIds: string[] = previous.layout?.addedIds?.length === added.length ? [...previous.layout.addedIds] : added.map(() => '');
  // What the cap compressed since (a line demoted to a gist, gists grouped, gists counted in the pointer) still
  // says what it said: the head keeps it as sent rather than rewriting every line after it. A line that left
  // for any other reason (superseded, withdrawn) is no longer true, and the head is rendered in full.
  // A key still in a live section was moved or restated there: a new statement, not a compressed one.
  const live = new Set<string>();
  for (const section of FACT_SECTIONS) if (section !== 'Archived') for (const l of next.facts[section]) live.add(l.key);
  const gists = archivedGists(next);
  const sentGists = archivedGists(previous);
  const evictedMore = evictedCount(next) > evictedCount(previous);
  // Compressed: the key's gist now comes from the same section and says only words of the line as sent.
  const compressedTo = (key: string, section: string, text: string): boolean => {
    const g = gists.get(key);
    if (live.has(key) || !g || (section !== 'Archived' && g.tag !== section)) return false;
    const said = tokens(text);
    return [...tokens(g.gist)].every((t) => said.has(t));
  };
  const frozen = previous.layout?.frozen ?? renderFacts(previous).join('\n');
  // The gists the frozen head shows, whole: an archived gist counts as shown only when it stands there as one.
  const frozenGists = new Set<string>();
  for (const l of frozen.split('\n')) {
    const m = ARCHIVED_GISTS.exec(l.replace(SOURCES_SUFFIX, ''));
    if (m) for (const g of m[2]!.split(GIST_SEPARATOR)) frozenGists.add(g);
  }
  const kept = new Set<string>();
  for (const [id, text] of sent) {
    const current = now.get(id);
    if (current === undefined) {
      if (id.startsWith('#')) return full();
      const section = id.slice(0, id.indexOf('\u0000'));
      const key = id.slice(id.indexOf('\u0000') + 1);
      const group = section === 'Archived' ? previous.facts.Archived.find((l) => l.key === key) : undefined;
      const members = group?.members ?? [key];
      const compressed =
        members.every((m) => compressedTo(m, section, group?.members ? (sentGists.get(m)?.gist ?? '') : text)) ||
        (evictedMore && section === 'Archived' && members.every((m) => !live.has(m) && !gists.has(m)));
      if (!compressed) return full();
      for (const m of members) kept.add(m);
      continue;
    }
    if (id.startsWith('#') && current !== text) return full();
  }
  for (const [id, text] of now) {
    const before = sent.get(id);
    if (before !== undefined && bare(before) === bare(text)) continue;
    // The compressed form of lines the head keeps as sent says less than they do: not repeated.
    const line = next.facts.Archived.find((l) => `Archived\u0000${l.key}` === id);
    if (line && (line.members ?? [line.key]).every((m) => kept.has(m))) continue;
    // An archived line shows only the gists the head as first sent does not show: a group that only lost gists
    // (one superseded, its new wording appended on its own) is not repeated. (Lines appended since may be
    // rewritten where they stand, so what they show is no reason to leave a gist out.)
    let shown = text;
    const at = addedIds.indexOf(id);
    if (line) {
      const gists = gistsOf(line);
      const fresh = gists.filter((g) => !frozenGists.has(g));
      if (fresh.length === 0) {
        // An appended line left with nothing the frozen head does not show goes (what it held changed since).
        if (at >= 0) {
          added.splice(at, 1);
          addedIds.splice(at, 1);
        }
        continue;
      }
      if (fresh.length < gists.length) shown = factLine(next, 'Archived', { ...line, text: `[${ARCHIVED_FROM.exec(line.text)?.[1] ?? 'Findings'}] ${fresh.join(GIST_SEPARATOR)}` });
    }
    // A line added at an earlier fold and changed again is rewritten where it stands, not repeated.
    if (at >= 0) added[at] = addedLine(id, shown);
    else {
      added.push(addedLine(id, shown));
      addedIds.push(id);
    }
  }
  if (added.length > LAYOUT_MAX_ADDED) return full();
  const state: SummaryState = { ...next, layout: { frozen, added, addedIds } };
  // Lines repeated in their new wording and lines kept as sent may take the head a little past its cap, not more.
  if (counter && cap !== undefined && counter.countSummary(state) > cap * (1 + LAYOUT_CAP_SLACK)) return full();
  return { state, kind: 'appended' };
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
  const added = lines.findIndex((l) => l.trim() === ADDED_HEADING);
  for (const name of SECTION_NAMES) {
    if (name === 'Current state' && added >= 0 && added > last) last = added;
    const positions = lines.flatMap((l, i) => (l.trim() === `### ${name}` ? [i] : []));
    if (positions.length === 0) problems.push(`missing section "${name}"`);
    else if (positions.length > 1) problems.push(`section "${name}" appears ${positions.length} times`);
    else if (positions[0]! < last) problems.push(`section "${name}" is out of order`);
    else last = positions[0]!;
  }
  return problems;
}

/**
 * What a line is worth keeping live: how often later units named it (up to a
 * few times), how much it carries (identifiers, numbers, error text, a stated
 * reason), and how recent it is (its latest source against the coverage). A
 * new line has had no chance to be named yet; without recency the latest work
 * would be the first to leave the head.
 */
function worth(line: FactLine, coverageEnd: number): number {
  const latest = line.sources.length ? Math.max(...line.sources) : 0;
  const recency = coverageEnd > 0 ? Math.min(1, latest / coverageEnd) : 0;
  return Math.min(line.refs ?? 0, WORTH_REFS_MAX) + salience(line.text) / 2 + WORTH_RECENCY * recency;
}

/** References beyond this many add nothing: a line named again and again early on must not outweigh the latest work forever. */
const WORTH_REFS_MAX = 3;
/** What being the newest line of the summary is worth (an oldest line gets nothing): the next step builds on the latest work. */
const WORTH_RECENCY = 3;

/** The next line to demote among those `eligible`: the one worth least (see `worth`), then the oldest. */
function leastReferred(lines: readonly FactLine[], eligible: (l: FactLine) => boolean, coverageEnd: number): number {
  let best = -1;
  let bestWorth = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (!eligible(l)) continue;
    const w = worth(l, coverageEnd);
    if (best < 0 || w < bestWorth) {
      best = i;
      bestWorth = w;
    }
  }
  return best;
}

/**
 * Words a demoted line keeps: GIST_WORDS under the least cap, more as the cap
 * grows with the window (a head of 3,500 tokens keeps 16-word gists, 4,400 or
 * more keeps 20): a larger head can afford gists that still say what failed
 * and why.
 */
export function gistWordsFor(cap: number): number {
  return Math.max(GIST_WORDS, Math.min(20, Math.round(cap / 220)));
}

/** What the cap did: how many lines moved, and whether P0/P1 alone exceed the cap. */
export interface CapReport {
  readonly demoted: number;
  readonly tokens: number;
  readonly overCap: boolean;
}

const REQUEST_CLIP_CHARS = 240;
/** Archived lines of one section grouped into one line, gists kept. */
const GROUP_SIZE = 4;

/** The section a demoted line came from, as its archived line names it. */
const ARCHIVED_FROM = /^\[(Findings|Decisions|Ruled out|Constraints|Deliverables)\] /;
/** An archived line as rendered ("- [key: ][Findings] gist · gist"): its section, then its gists. */
const ARCHIVED_GISTS = new RegExp(`^- (?:\\S+: )?${ARCHIVED_FROM.source.slice(1)}(.*)$`);

/** Characters of a failed command an archived gist keeps: the program and its subcommand, words whole. */
const COMMAND_HEAD_CHARS = 36;

/** The opening words of a command, up to COMMAND_HEAD_CHARS ("git push origin main", "bun test"). */
function commandHead(command: string): string {
  const w = command.split(/\s+/);
  let head = w[0]!;
  for (const word of w.slice(1)) {
    if (`${head} ${word}`.length > COMMAND_HEAD_CHARS) return `${head}…`;
    head = `${head} ${word}`;
  }
  return head;
}

/** An error's opening `n` words, its prefixes ("remote: error:", "fatal:") dropped: an error says what it is first. */
function errorOpening(error: string, n: number): string {
  const text = error.replace(/^(?:(?:remote|error|fatal|warning|npm ERR!|E):\s*)+/i, '');
  const w = words(text);
  return w.length <= n ? text : `${w.slice(0, n).join(' ').replace(/[,;:—–]$/, '')}…`;
}

/**
 * An archived line: `[Section] gist` with the line's sources, priority 3. The
 * gist keeps `words` words of the statement around its identifiers.
 */
function archive(section: FactSection, line: FactLine, words: number): FactLine {
  const from = ARCHIVED_FROM.exec(line.text);
  const body = from ? line.text.slice(from[0].length) : line.text;
  const tag = from ? from[1]! : section;
  // A failed command's gist is the command's opening words and how its error opens ("git push origin main
  // failed (error): refusing to update checked out branch…"): that is what stops the next attempt.
  const failed = /^`([^`]+)`(?: and \d+ more)? failed \(([^)]*)\)(?: ×\d+)?: (.*?)(?: → then (`[^`]*`) worked \(r\d+\))?$/.exec(body);
  // What replaced it stays with it: the next attempt starts from what worked.
  const gist = failed
    ? `${commandHead(failed[1]!)} failed (${failed[2]}): ${errorOpening(failed[3]!, words)}${failed[4] ? ` → then ${failed[4]} worked` : ''}`
    : gistOf(body, words);
  return {
    key: line.key,
    text: `[${tag}] ${gist}`,
    sources: line.sources,
    priority: 3,
    ...(line.refs ? { refs: line.refs } : {}),
    ...(line.origin ? { origin: line.origin } : {}),
  };
}

/**
 * Enforces the token cap by demotion, never deletion, lowest priority first:
 * 1. P3 findings → Archived, as a gist (see `gistWordsFor`) with their sources;
 * 2. P2 decisions, then ruled-out approaches, then non-safety constraints → Archived;
 * 3. archived gists of one section grouped a few to a line (every gist kept);
 * 4. deliverable notes dropped (the path stays);
 * 5. on a very long session, the archived gists worth least counted in one
 *    pointer line (a finding before a decision or a ruled-out approach of
 *    equal worth, never a constraint);
 * 6. long request lines clipped to their verbatim head, the longest first, the
 *    first and the latest ask last (the record keeps the rest).
 * Within steps 1 and 3 the line later units referred to least goes first
 * (`refs`), then the oldest. No line is ever emptied: a gist always keeps words
 * of its statement. P0 lines are never touched; when they alone exceed the
 * cap, `overCap` says so.
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
  const lineTokens = (l: FactLine): number => lines.count(`- ${formatFact(l)}`);

  const demote = (section: FactSection, priority: Priority): void => {
    const sectionLines = b.facts[section];
    while (tokens > cap) {
      const at = leastReferred(sectionLines, (l) => l.priority === priority, state.coverageEnd);
      if (at < 0) break;
      const line = sectionLines[at]!;
      sectionLines.splice(at, 1);
      demoted++;
      // A rule the request log shows word for word (and the protected state keeps) needs no gist of its own.
      if (section === 'Constraints' && b.requests.some((r) => r.text.includes(line.text))) {
        tokens -= lineTokens(line);
        continue;
      }
      const archived = archive(section, line, gistWordsFor(cap));
      b.facts.Archived.push(archived);
      tokens -= lineTokens(line) - lineTokens(archived);
    }
    tokens = measure();
  };

  demote('Findings', 3);
  // Within P2, the user's own standing rules go last.
  for (const section of ['Decisions', 'Ruled out', 'Constraints'] as const) demote(section, 2);

  if (tokens > cap) groupArchived(b);
  tokens = measure();
  if (tokens > cap) {
    for (let i = 0; i < b.facts.Deliverables.length; i++) {
      const line = b.facts.Deliverables[i]!;
      b.facts.Deliverables[i] = { ...line, text: line.text.replace(/ — .*$/, ''), sources: line.sources.slice(-1) };
    }
    tokens = measure();
  }
  if (tokens > cap) tokens = evictArchived(b, cap, tokens, lineTokens, measure, state.coverageEnd);
  // The request log is P0: its long lines are clipped to their verbatim head only when nothing else is left,
  // the longest first; the task as first asked and the latest ask go last.
  if (tokens > cap) {
    const last = b.requests.length - 1;
    const order = b.requests.map((_, i) => i).sort((x, y) => Number(x === 0 || x === last) - Number(y === 0 || y === last) || b.requests[y]!.text.length - b.requests[x]!.text.length || x - y);
    for (const i of order) {
      if (tokens <= cap) break;
      const r = b.requests[i]!;
      if (r.text.length <= REQUEST_CLIP_CHARS) continue;
      b.requests[i] = { ...r, text: r.text.slice(0, REQUEST_CLIP_CHARS), elided: r.elided + r.text.length - REQUEST_CLIP_CHARS };
      tokens -= lines.count(`- ${formatRequest(r)}`) - lines.count(`- ${formatRequest(b.requests[i]!)}`);
    }
    tokens = measure();
  }
  return { state: b.build(state.coverageEnd, state.folds), report: { demoted, tokens, overCap: tokens > cap } };
}

const EVICTED_KEY = `${'archived~'}evicted`;
/** Archived lines that may leave the head on a very long session (a constraint never does). */
const EVICTABLE: ReadonlySet<string> = new Set(['Findings', 'Decisions', 'Ruled out']);

/**
 * The last resort of a very long session: the least referred archived gists,
 * findings first, then decisions and ruled-out approaches (never a constraint),
 * leave the head, counted in one pointer line that names the records they came
 * from. The record keeps every one of them, and the retrieval channel can
 * quote them back when a later request names them.
 */
function evictArchived(b: SummaryBuilder, cap: number, start: number, lineTokens: (l: FactLine) => number, measure: () => number, coverageEnd: number): number {
  const archived = b.facts.Archived;
  let tokens = start;
  let evicted = 0;
  let lo = Number.MAX_SAFE_INTEGER;
  let hi = -1;
  const pointer = archived.find((l) => l.key === EVICTED_KEY);
  if (pointer) {
    evicted = pointerCount(pointer);
    lo = Math.min(...pointer.sources);
    hi = Math.max(...pointer.sources);
    archived.splice(archived.indexOf(pointer), 1);
  }
  // The line worth least goes first, a finding before a decision or a ruled-out approach of equal worth.
  const evictable = (l: FactLine): boolean => l.key !== EVICTED_KEY && EVICTABLE.has(ARCHIVED_FROM.exec(l.text)?.[1] ?? '');
  while (tokens > cap) {
    let at = -1;
    let least = 0;
    for (let i = 0; i < archived.length; i++) {
      const l = archived[i]!;
      if (!evictable(l)) continue;
      const w = worth(l, coverageEnd) + (ARCHIVED_FROM.exec(l.text)![1] === 'Findings' ? 0 : 1);
      if (at < 0 || w < least) {
        at = i;
        least = w;
      }
    }
    if (at < 0) break;
    const line = archived[at]!;
    archived.splice(at, 1);
    tokens -= lineTokens(line);
    evicted += Math.max(1, line.text.split(' · ').length);
    lo = Math.min(lo, ...line.sources);
    hi = Math.max(hi, ...line.sources);
  }
  if (evicted > 0) {
    archived.unshift({
      key: EVICTED_KEY,
      text: `${evicted} older archived line${evicted === 1 ? '' : 's'} (findings first) are not shown; the record keeps them`,
      sources: lo === hi ? [lo] : [lo, hi],
      priority: 3,
    });
  }
  return measure();
}

/** The key prefix of lines the cap made (groups, the eviction pointer): identity, never shown. */
const GROUP_KEY = 'archived~';
/** Between the gists of a grouped archived line. */
export const GIST_SEPARATOR = ' · ';

/**
 * Groups archived lines of the same section, oldest first, GROUP_SIZE to a
 * line: the gists are kept side by side, the sources merged. Saves the
 * per-line framing (marker, section tag, sources) without dropping a word of
 * any gist.
 */
function groupArchived(b: SummaryBuilder): void {
  const archived = b.facts.Archived;
  const out: FactLine[] = [];
  const open = new Map<string, FactLine[]>();
  const flush = (tag: string): void => {
    const group = open.get(tag);
    if (!group || group.length === 0) return;
    open.delete(tag);
    if (group.length === 1) {
      out.push(group[0]!);
      return;
    }
    const gists = group.map((g) => g.text.replace(ARCHIVED_FROM, ''));
    const refs = group.reduce((a, g) => a + (g.refs ?? 0), 0);
    const members = group.flatMap((g) => g.members ?? [g.key]);
    out.push({
      key: `${GROUP_KEY}${members[0]}`,
      text: `[${tag}] ${gists.join(GIST_SEPARATOR)}`,
      sources: mergeSources(group.flatMap((g) => g.sources), []),
      priority: 3,
      members,
      ...(refs ? { refs } : {}),
    });
  };
  for (const line of archived) {
    const tag = ARCHIVED_FROM.exec(line.text)?.[1] ?? 'Findings';
    if (line.members || line.key === EVICTED_KEY) {
      out.push(line);
      continue;
    }
    const group = open.get(tag) ?? [];
    group.push(line);
    open.set(tag, group);
    if (group.length >= GROUP_SIZE) flush(tag);
  }
  for (const tag of [...open.keys()]) flush(tag);
  archived.splice(0, archived.length, ...out);
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
