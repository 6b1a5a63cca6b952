/**
 * The floor summary: a `## Task Context` block with fixed sections.
 *
 * Fact sections are append-only across folds (a reused topic key supersedes
 * its earlier line); only Current state is overwritten. The rendered head is
 * capped by demotion, never deletion: findings, then non-safety decisions,
 * constraints and ruled-out approaches move to Archived as pointers; the
 * request log and safety constraints (P0) and deliverable paths (P1) stay
 * (summaryCap.ts). How the head is laid out across folds is summaryLayout.ts.
 */
import { isGreeting } from './cues';
import { relativeTo, workspaceRootOf } from './paths';
import { choiceText } from './shortReplies';
import type { Redactor } from './redact';
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
  /** The agent's plan as its todo tool last wrote it (see todoPlan.ts); absent when it keeps none. */
  readonly plan?: string;
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

  /** `redactor` hides secrets in every line added and in Current state; the fold's parts use it too. */
  constructor(
    from: SummaryState,
    readonly redactor: Redactor,
  ) {
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
    const line: FactLine = this.redactor.containsSecret(raw.text) ? { ...raw, text: this.redactor.redact(raw.text).text } : raw;
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
    const clean = (t: string): string => (this.redactor.containsSecret(t) ? this.redactor.redact(t).text : t);
    const c = this.current;
    const current: CurrentState = { goal: clean(c.goal), deliverable: clean(c.deliverable), status: clean(c.status), next: clean(c.next), ...(c.plan ? { plan: clean(c.plan) } : {}) };
    // The offer is kept in the stored summary: it is kept with secrets hidden, like every line.
    const root = this.root ?? workspaceRootOf([...this.facts.Deliverables.map((l) => l.key), ...readPaths(this.facts.Findings)]);
    return {
      coverageEnd,
      requests: this.requests,
      facts: this.facts,
      current,
      folds,
      ...(this.offer ? { offer: { record: this.offer.record, text: this.redactor.redact(this.offer.text).text } } : {}),
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

/** A command's output as a finding: "`which gpg` → /usr/bin/gpg (as of r794)"; group 1 is what it printed. */
export const OBSERVATION = /^(?:\[[^\]]+\] )?`[^`]+` (?:→|worked but) (.*?)(?: \(as of r\d+\))?$/;

/** The source pointer `formatSources` puts at the end of a line, as a pattern (to compare lines without it). */
export const SOURCES_SUFFIX = / \((?:r\d+(?:, r\d+)*|r\d+, …, r\d+; \d+ refs)\)$/;

export function formatSources(sources: readonly number[]): string {
  if (sources.length === 0) return '';
  if (sources.length <= 3) return ` (${sources.map((s) => `r${s}`).join(', ')})`;
  return ` (r${sources[0]}, …, r${sources[sources.length - 1]}; ${sources.length} refs)`;
}

export function formatRequest(r: RequestLine): string {
  const tail = r.elided > 0 ? ` […${r.elided} more chars in r${r.record}]` : '';
  const resolved = r.resolved ? ` → ${choiceText(r.resolved)} (offered r${r.resolved.offered})` : '';
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

/**
 * Where the turn stood when the folded part ends: the user's ask waiting for the agent, the agent's question or
 * answer waiting for the user. The messages after the head always go on from there (the last unit is never folded),
 * so a status or next step that says whose turn it is would be out of date the moment the head is sent ("answer
 * request #11" above the answer itself). They are said as what happened, and the next step is the messages below.
 */
/** The status the fold writes for an ask the agent has not answered yet (group 1: its number). */
export const UNANSWERED_STATUS = /^the user's request (#\d+) is not answered yet$/;
const TURN_STATUS: readonly [RegExp, string][] = [
  [UNANSWERED_STATUS, 'request $1 was not yet answered where the folded part ends'],
  [/^awaiting the user's answer: /, 'the agent asked the user: '],
  [/^awaiting the user's choice of /, 'the agent offered the user a choice of '],
];
const TURN_NEXT = /^(?:answer request #\d+(?: \(the goal\)|: .*?)?|wait for the user's (?:next request(?: \(the agent answered request #\d+(?:, its last command still failing)?\))?|choice))(?=; every item of the plan|$)/;
const NEXT_BELOW = 'go on from the messages below';

/** Where a goal says the work on it was taken up again ("#2 (r3): … — continued at r96"). */
export const CONTINUED_SUFFIX = / — continued at r\d+$/;
/** A goal as the fold keeps it: the request's number and record (group 1), then its words. */
const GOAL = /^(#\d+ \(r\d+\)): /;

export function formatCurrentState(c: CurrentState): string {
  const status = TURN_STATUS.reduce((text, [turn, said]) => text.replace(turn, said), c.status);
  const next = c.next.replace(TURN_NEXT, NEXT_BELOW);
  // The request log above says the goal's words in full: the goal names its request rather than say them again.
  const named = GOAL.exec(c.goal);
  const goal = named ? `request ${named[1]}${CONTINUED_SUFFIX.exec(c.goal)?.[0] ?? ''}` : c.goal;
  const lines = [`Goal: ${goal || '(none)'}`, `Deliverable: ${c.deliverable || '(none)'}`, `Status: ${status || '(none)'}`, `Next: ${next || '(none)'}`];
  if (c.plan) lines.push(`Plan: ${c.plan}`);
  return lines.join('\n');
}

export const TASK_CONTEXT_HEADING = '## Task Context';

/**
 * The heading of Current state, which says how far the summary reaches: records 0–N are folded into it, and
 * the messages after the head (newer) supersede its goal, status and next step.
 */
export function currentStateHeading(coverageEnd: number): string {
  return `${CURRENT_STATE_AS_OF}${Math.max(0, coverageEnd - 1)} (later messages supersede it)`;
}
const CURRENT_STATE_AS_OF = '### Current state as of r';

/** The opening line of the head: stable across folds (the coverage is said at the end, where it changes). */
const HEAD_NOTE = 'rN = record N; a compacted tool call is recovered with view_tool_call("<toolCallId>").';

/** What a redaction marker in the head stands for. */
export const REDACTION_NOTE = '([REDACTED:kind:id] marks a secret hidden from this context: the text it stands in had the secret itself.)';

/** The heading of the lines appended at later folds, between Archived and Current state. */
export const ADDED_HEADING = '### Added at later folds (newest last; a line here replaces a line above on the same file or fact)';

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
export function requestLines(requests: readonly RequestLine[]): [string, string][] {
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
  const elided = elidedRequests(requests);
  if (elided.length === 0) return requests.filter(requestSaid).map(line);
  const from = elided[0]!;
  const to = elided[elided.length - 1]!;
  const pointer: [string, string] = [`#${from.ordinal}…`, `- #${from.ordinal}–#${to.ordinal} (r${from.record}–r${to.record}): ${to.ordinal - from.ordinal + 1} earlier requests, in the record`];
  return [...requests.slice(0, 1).filter(requestSaid).map(line), pointer, ...requests.slice(1 + elided.length).filter(requestSaid).map(line)];
}

/** Whether the head lists a request: "continue" asks for nothing new (Current state's goal says the work was taken up again there), nor does a greeting. */
export function requestSaid(r: RequestLine): boolean {
  return (r.ordinal === 1 || !r.continuation) && !isGreeting(r.text);
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
export function factLine(state: SummaryState, section: FactSection, l: FactLine): string {
  const text = `- ${formatFact(l)}`;
  return section === 'Constraints' ? text : relativeTo(text, state.root);
}

/** A deliverable's note: what follows its path and counts (" — written: …", " — purpose"). */
export const DELIVERABLE_NOTE = / — .*$/;

/** Files with no note that share their status at least this often are listed on one Deliverables line. */
const DELIVERABLE_GROUP_MIN = 3;

/**
 * The Deliverables lines as the head shows them: files with no note of their
 * own that share their status ("created", "modified ×1") — DELIVERABLE_GROUP_MIN
 * or more — on one line at the first one's place, every path verbatim
 * (`- created: a.py, b/c.py, d.md (r3, r5, r9)`, `- modified ×1 each: …`). A session that scaffolds
 * forty files spends its head on what it found, not on forty line openings;
 * the state (and the panel) keeps one line per file.
 */
function deliverableLines(state: SummaryState): string[] {
  const lines = state.facts.Deliverables;
  const bare = (l: FactLine): boolean => !DELIVERABLE_NOTE.test(l.text);
  const byStatus = new Map<string, FactLine[]>();
  for (const l of lines) {
    if (!bare(l)) continue;
    const group = byStatus.get(l.text);
    if (group) group.push(l);
    else byStatus.set(l.text, [l]);
  }
  const out: string[] = [];
  for (const l of lines) {
    const group = bare(l) ? byStatus.get(l.text)! : [];
    if (group.length < DELIVERABLE_GROUP_MIN) out.push(factLine(state, 'Deliverables', l));
    else if (group[0] === l) {
      const sources = group.reduce<number[]>((all, g) => mergeSources(all, g.sources), []);
      out.push(relativeTo(`- ${l.text}${l.text.includes('×') ? ' each' : ''}: ${group.map((g) => g.key).join(', ')}${formatSources(sources)}`, state.root));
    }
  }
  return out;
}

/** The fact sections of a state as rendered lines: Requests through Archived. */
export function renderFacts(state: SummaryState): string[] {
  const out: string[] = ['### Requests'];
  out.push(...(state.requests.length ? requestLines(state.requests).map(([, text]) => text) : ['(none)']));
  // A section whose lines were all archived is not empty: "(none)" there would read as "nothing was decided".
  const archived = new Set(state.facts.Archived.map((l) => ARCHIVED_FROM.exec(l.text)?.[1]));
  for (const section of FACT_SECTIONS) {
    out.push(`### ${section}`);
    const lines = state.facts[section];
    const rendered = section === 'Deliverables' ? deliverableLines(state) : lines.map((l) => factLine(state, section, l));
    out.push(...(lines.length ? rendered : [archived.has(section) ? '(only archived lines, below)' : '(none)']));
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
  // States are immutable (see SummaryLineCounter): a fold's state is rendered once for the head, its count, the
  // protected block's check against it and the retrieval block's.
  const known = rendered.get(state);
  if (known !== undefined) return known;
  const text = renderState(state);
  rendered.set(state, text);
  return text;
}

const rendered = new WeakMap<SummaryState, string>();

function renderState(state: SummaryState): string {
  const out: string[] = [TASK_CONTEXT_HEADING, HEAD_NOTE];
  if (state.root) out.push(`Paths are relative to the workspace ${state.root}`);
  if (state.layout) {
    out.push(state.layout.frozen);
    if (state.layout.added.length) out.push(ADDED_HEADING, ...state.layout.added);
  } else out.push(...renderFacts(state));
  // The state is the fold's, at the last record folded: the messages after the head are newer, and say so first.
  out.push(currentStateHeading(state.coverageEnd));
  // The goal is the user's words; what the agent wrote and did is shown relative to the workspace.
  const c = state.current;
  out.push(formatCurrentState({ goal: c.goal, deliverable: relativeTo(c.deliverable, state.root), status: relativeTo(c.status, state.root), next: relativeTo(c.next, state.root), ...(c.plan ? { plan: relativeTo(c.plan, state.root) } : {}) }));
  // A hidden secret's marker is this context's, not what a tool printed ("assert '[REDACTED_KEY]' in '[REDACTED:private-key:…]'"
  // would read as if the key was hidden where it was in the clear). Said last, where the head changes at every fold anyway.
  if (out.some((l) => l.includes('[REDACTED:'))) out.push(REDACTION_NOTE);
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
  const added = lines.findIndex((l) => l.trim() === ADDED_HEADING);
  for (const name of SECTION_NAMES) {
    if (name === 'Current state' && added >= 0 && added > last) last = added;
    const positions = lines.flatMap((l, i) => (l.trim() === `### ${name}` || (name === 'Current state' && l.startsWith(CURRENT_STATE_AS_OF)) ? [i] : []));
    if (positions.length === 0) problems.push(`missing section "${name}"`);
    else if (positions.length > 1) problems.push(`section "${name}" appears ${positions.length} times`);
    else if (positions[0]! < last) problems.push(`section "${name}" is out of order`);
    else last = positions[0]!;
  }
  return problems;
}

/** The section a demoted line came from, as its archived line names it. */
export const ARCHIVED_FROM = /^\[(Findings|Decisions|Ruled out|Constraints|Deliverables)\] /;

/** The key prefix of lines the cap made (groups, the eviction pointer): identity, never shown. */
export const GROUP_KEY = 'archived~';
/** Between the gists of a grouped archived line. */
export const GIST_SEPARATOR = ' · ';
/** Between the causes a failed command's line gives, oldest first (its archived gist joins them with "; "). */
export const CAUSE_JOIN = ' · ';

/** The gists an archived line shows (one, or a group's side by side), without its section tag. */
export function gistsOf(line: FactLine): string[] {
  const body = line.text.replace(ARCHIVED_FROM, '');
  return line.members ? body.split(GIST_SEPARATOR) : [body];
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
