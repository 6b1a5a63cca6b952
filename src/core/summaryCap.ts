/**
 * The cap of the head: demotion, never deletion. Lines worth least (rarely
 * referred to, carrying little, oldest) move to Archived as gists; archived
 * gists of one section are grouped a few to a line; deliverable notes go;
 * on a very long session the least worth archived gists are counted in one
 * pointer line; long requests are clipped last. P0 lines are never touched.
 */
import { ROLLING_SUMMARY_BUDGET_TOKENS } from './budget';
import { clipCommand, gistOf, GIST_WORDS, salience, words } from './digest';
import { ARCHIVED_FROM, CAUSE_JOIN, DELIVERABLE_NOTE, formatFact, OBSERVATION, formatRequest, GIST_SEPARATOR, GROUP_KEY, mergeSources, SummaryBuilder, SummaryLineCounter, type FactLine, type FactSection, type Priority, type RequestLine, type SummaryState } from './summary';
import type { Redactor } from './redact';
import type { TokenCounter } from './tokens';

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
  // What a command printed carries what it printed, not the identifiers of the command line (which re-running recovers).
  const said = OBSERVATION.exec(line.text)?.[1] ?? line.text;
  const concluded = CONCLUSION.test(line.text) ? WORTH_CONCLUSION : 0;
  return Math.min(line.refs ?? 0, WORTH_REFS_MAX) + salience(said) / 2 + WORTH_RECENCY * recency + concluded;
}

/**
 * A statement of what caused a problem, what resolved it or what a tool cannot do: the conclusion of a stretch of
 * work, what the next decision builds on, worth more than any one observation that led to it.
 */
const CONCLUSION = /\b(?:root cause|(?:the|this) (?:real |actual |underlying |main )?(?:cause|culprit|issue|problem|bug) (?:is|was|here is)|caused by|turn(?:s|ed) out|the (?:fix|solution) (?:is|was)|fixed (?:by|it|the)|(?:now|finally) (?:works|working|passes|passing|resolves)|works now|is now (?:working|fixed|resolved)|(?:was|is) (?:the )?(?:issue|problem|cause)|which means|(?:does not|doesn't|do not|don't|cannot|can't|won't) (?:support|accept|allow|handle|work with))\b/i;
/** What stating a cause or a resolution is worth: about as much as being the newest line. */
const WORTH_CONCLUSION = 2;

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
/**
 * A clip that would leave out fewer characters than this keeps the ask whole: its pointer ("[…45 more chars in
 * r18]") costs about what it saves, and the words it hides are often the point ("…like i cannot click on it").
 */
const REQUEST_CLIP_MIN_ELIDED = 100;

/**
 * Whether the request log shows `text` word for word in an ask the cap never clips (one of fewer than
 * REQUEST_CLIP_CHARS + REQUEST_CLIP_MIN_ELIDED characters, whole): a rule said there needs no line of its own.
 */
function inRequestShownWhole(requests: readonly RequestLine[], text: string): boolean {
  return requests.some((r) => r.elided === 0 && r.text.length < REQUEST_CLIP_CHARS + REQUEST_CLIP_MIN_ELIDED && r.text.includes(text));
}
/** A clip ends at the last space this close before its length, rather than inside a word. */
const CLIP_WORD_BACKOFF = 20;
/** Archived lines of one section grouped into one line, gists kept. */
const GROUP_SIZE = 4;

/** Characters of a failed command an archived gist keeps: its program and subcommand, and what it acted on. */
const COMMAND_HEAD_CHARS = 40;

/**
 * An error's opening `n` words, its prefixes ("remote: error:", "fatal:") dropped: an error says what it is first.
 * A line that gives several causes keeps the first (why it failed at first) and then whole later causes, the newest
 * as room allows, never the start of one cut off ("… · RuntimeError: Already…"); it joins them with "; " (a group
 * of gists is joined by " · ").
 */
function errorOpening(error: string, n: number): string {
  const opening = (cause: string): string => {
    const text = cause.replace(/^(?:(?:remote|error|fatal|warning|npm ERR!|E):\s*)+/i, '');
    const w = words(text);
    return w.length <= n ? text : `${w.slice(0, n).join(' ').replace(/[,;:—–]$/, '')}…`;
  };
  const causes = error.split(CAUSE_JOIN).filter((c) => c.trim() !== '');
  if (causes.length <= 1) return opening(error);
  // The first cause is why it failed at first; the newest ones follow whole as room allows.
  const first = opening(causes[0]!);
  let used = words(first).length;
  const later: string[] = [];
  let i = causes.length - 1;
  for (; i >= 1; i--) {
    const cause = opening(causes[i]!);
    const size = words(cause).length;
    if (used + size > n) break;
    later.unshift(cause);
    used += size;
  }
  return [first, ...(i >= 1 ? ['…'] : []), ...later].join('; ');
}

/**
 * The gist of what a command printed (`` `lsof -i -P -n | grep LISTEN` → BetterDis 763 m 4u IPv4… ``): the
 * command, clipped in the middle, and the output's opening in the words left; its "(as of rN)" goes (the sources say
 * when). A gist of the output alone is a row of a table nobody can place ("…4u IPv4 0x3cf0… TCP *:55777
 * (LISTEN)…"): the command is what the output answers. Measured on the corpus: recall −1 probe at 8k, +1 at 16k
 * (with the "(as of rN)" kept: −3 at 8k).
 */
function observationGist(body: string, n: number): string | undefined {
  const seen = /^`([^`]+)` → (.+?)(?: \(as of r\d+\))?$/s.exec(body);
  if (!seen) return undefined;
  const command = clipCommand(seen[1]!, COMMAND_HEAD_CHARS);
  const left = Math.max(OUTPUT_LEAST_WORDS, n - command.split(/\s+/).length);
  // An output says first what it is (a header, the first result): its opening, not the window richest in numbers.
  // A table's header row names columns, not a result: the gist opens at the first row.
  const rows = seen[2]!.split('; ');
  const output = words((rows.length > 1 && TABLE_HEADER.test(rows[0]!) ? rows.slice(1) : rows).join('; '));
  return `\`${command}\` → ${output.slice(0, left).join(' ')}${output.length > left ? '…' : ''}`;
}

/** A row of capitalised column names ("COMMAND PID USER FD TYPE", "NAME READY STATUS RESTARTS AGE"). */
const TABLE_HEADER = /^[A-Z][A-Z0-9_/%-]*(?:\s+[A-Z][A-Z0-9_/%-]*){2,}$/;
/** Words of a command's output its gist keeps however long the command. */
const OUTPUT_LEAST_WORDS = 6;

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
    ? `${clipCommand(failed[1]!, COMMAND_HEAD_CHARS)} failed (${failed[2]}): ${errorOpening(failed[3]!, words)}${failed[4] ? ` → then ${failed[4]} worked` : ''}`
    : observationGist(body, words) ?? gistOf(body, words);
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
 * 4. deliverable notes dropped, the least worth first, until under the cap
 *    (the path stays);
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
  redactor: Redactor,
  cap: number = ROLLING_SUMMARY_BUDGET_TOKENS,
): { state: SummaryState; report: CapReport } {
  const lines = counter instanceof SummaryLineCounter ? counter : new SummaryLineCounter(counter);
  let tokens = lines.countSummary(state);
  if (tokens <= cap) return { state, report: { demoted: 0, tokens, overCap: false } };
  const b = new SummaryBuilder(state, redactor);
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
      if (section === 'Constraints' && inRequestShownWhole(b.requests, line.text)) {
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
  if (tokens > cap) tokens = dropNotes(b.facts.Deliverables, cap, tokens, lineTokens, measure, state.coverageEnd);
  if (tokens > cap) tokens = evictArchived(b, cap, tokens, lineTokens, measure, state.coverageEnd);
  // The request log is P0: its long lines are clipped to their verbatim head only when nothing else is left,
  // the longest first; the task as first asked and the latest ask go last.
  if (tokens > cap) {
    const last = b.requests.length - 1;
    const middle = b.requests.map((_, i) => i).filter((i) => i !== 0 && i !== last);
    tokens = clipRequests(b.requests, middle, cap, tokens, lines);
    if (tokens > cap) tokens = clipRequests(b.requests, last > 0 ? [0, last] : last === 0 ? [0] : [], cap, tokens, lines);
    tokens = measure();
  }
  return { state: b.build(state.coverageEnd, state.folds), report: { demoted, tokens, overCap: tokens > cap } };
}

/**
 * Long request lines (those at `which`) clipped to one length, the longest at which the head fits its cap (never
 * under REQUEST_CLIP_CHARS): every clipped ask keeps as much of its own words as the room allows, rather than a few
 * asks cut hard and the rest whole. Returns the head's tokens after the clip (as `tokens` counts them).
 */
function clipRequests(requests: RequestLine[], which: readonly number[], cap: number, tokens: number, lines: SummaryLineCounter): number {
  const original = new Map(which.map((i) => [i, requests[i]!]));
  const long = which.filter((i) => requests[i]!.text.length >= REQUEST_CLIP_CHARS + REQUEST_CLIP_MIN_ELIDED);
  if (long.length === 0) return tokens;
  const clipped = (r: RequestLine, at: number): RequestLine => {
    if (r.text.length - at < REQUEST_CLIP_MIN_ELIDED) return r;
    // At a word's end when one is near: "…and reshape_data()", not "…and resh".
    const space = r.text.lastIndexOf(' ', at);
    const end = space > at - CLIP_WORD_BACKOFF ? space : at;
    return { ...r, text: r.text.slice(0, end), elided: r.elided + r.text.length - end };
  };
  const cost = new Map<string, number>();
  const lineTokens = (i: number, at: number): number => {
    const key = `${i}:${Math.min(at, original.get(i)!.text.length)}`;
    let n = cost.get(key);
    if (n === undefined) cost.set(key, (n = lines.count(`- ${formatRequest(clipped(original.get(i)!, at))}`)));
    return n;
  };
  const whole = long.reduce((n, i) => n + lineTokens(i, Number.MAX_SAFE_INTEGER), 0);
  const at = (length: number): number => tokens - whole + long.reduce((n, i) => n + lineTokens(i, length), 0);
  let lo = REQUEST_CLIP_CHARS;
  let hi = Math.max(...long.map((i) => requests[i]!.text.length)) - 1;
  if (at(lo) <= cap) {
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (at(mid) <= cap) lo = mid;
      else hi = mid - 1;
    }
  }
  for (const i of long) requests[i] = clipped(original.get(i)!, lo);
  return at(lo);
}


/**
 * Step 4: deliverable notes dropped, the note worth least first (see
 * `worth`), until the head is under its cap; the path and its counts stay.
 * Dropping one note more than the cap needs would lose what the file now
 * holds (the value written, the purpose) for nothing.
 */
function dropNotes(deliverables: FactLine[], cap: number, start: number, lineTokens: (l: FactLine) => number, measure: () => number, coverageEnd: number): number {
  let tokens = start;
  while (tokens > cap) {
    const at = leastReferred(deliverables, (l) => DELIVERABLE_NOTE.test(l.text), coverageEnd);
    if (at < 0) break;
    const line = deliverables[at]!;
    const bare = { ...line, text: line.text.replace(DELIVERABLE_NOTE, ''), sources: line.sources.slice(-1) };
    deliverables[at] = bare;
    tokens -= lineTokens(line) - lineTokens(bare);
  }
  return measure();
}

/** The key of the pointer line that counts the archived gists no longer shown. */
export const EVICTED_KEY = `${'archived~'}evicted`;
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

/** How many archived lines a summary's pointer line counts as not shown. */
export function evictedCount(state: SummaryState): number {
  const pointer = state.facts.Archived.find((l) => l.key === EVICTED_KEY);
  return pointer ? pointerCount(pointer) : 0;
}

/** The number of archived lines a pointer line says are not shown. */
function pointerCount(pointer: FactLine): number {
  return Number(/^(\d+)/.exec(pointer.text)?.[1] ?? 0);
}

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
  // Gists are grouped in the order they happened, so a group reads as one stretch of the work (and its
  // sources as one range), not as whatever left the live sections together.
  const earliest = (l: FactLine): number => (l.sources.length ? Math.min(...l.sources) : 0);
  const kept = (l: FactLine): boolean => l.members !== undefined || l.key === EVICTED_KEY;
  const loose = archived.filter((l) => !kept(l)).sort((x, y) => earliest(x) - earliest(y));
  for (const line of [...archived.filter(kept), ...loose]) {
    const tag = ARCHIVED_FROM.exec(line.text)?.[1] ?? 'Findings';
    if (kept(line)) {
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
