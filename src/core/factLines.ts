/**
 * One line per fact: a statement joins the summary as a new line or merges
 * into the line that already says it (sources and references add up); after
 * a fold, lines saying one statement and statements said again with more are
 * merged, and each line counts how often later units named it. The exact line
 * of a failed tool (`label failed (code): error`) is read here too.
 */
import { sentencesOf } from './classify';
import { OBJECTION_FRAME, SUCCESS_CLAIM, USER_REFUTES } from './cues';
import { clipChars, handles, handlesWithin, measures, memoized, NEGATION, PLACEHOLDER, restatedBy, sameStatement, sharedWords, significant, stems, subjectKey } from './digest';
import { askText, splitQuoted } from './harness';
import { CAUSE_JOIN, FACT_SECTIONS, gistsOf, mergeSources, OBSERVATION, SOURCES_SUFFIX, type FactLine, type FactSection, type LineOrigin, type SummaryBuilder, type SummaryState } from './summary';
import { CUT_TRACEBACK, errorSignatures } from './terminalOutput';
import { TEST_COMMAND } from './tools';
import type { Unit } from './types';

/** The tail of a failure that a later run of the same command overcame (the line is then a finding). */
export const RESOLVED = /; later it worked \(r\d+\)$/;

/** A failed-tool line: `label[ and N more] failed (code)[ ×n]: error`. */
export const FAILED_LINE = /^(.*?)(?: and (\d+) more)? failed \((exit -?\d+|error)\)(?: ×(\d+))?: (.*)$/;
/** Whether a line is a failed-tool line (FAILED_LINE), remembered per text: a fold asks it of every pair of lines. */
const isFailedLine = memoized((text) => FAILED_LINE.test(text));

/** What replaced a failed command, as its line says it (`noteReplacement`). */
export const REPLACED_TAIL = / → then `[^`]*` worked \(r\d+\)$/;

/** This many causes one command failed with, the first and the newest, are kept on its line (joined by CAUSE_JOIN). */
const MAX_CAUSES = 3;

/**
 * A command's failed line once it failed again with `why` (`times` and `error`
 * are what the line said; `shared` tells an error that shares a cause with
 * `why`): its count goes up; a cause it failed with again is said in its latest
 * words, the others stay; a new cause joins them in order, the first (why it
 * failed at first) and the newest kept, so a run that fails on something new is
 * news without a line of its own. A traceback cut before its exception names none.
 */
export function failedAgain(label: string, code: string, times: string | undefined, error: string, why: string, shared: (error: string) => boolean): string {
  const prior = error.replace(RESOLVED, '').replace(REPLACED_TAIL, '').split(CAUSE_JOIN);
  const all = why.startsWith(CUT_TRACEBACK) ? prior : shared(error) ? [...new Set(prior.map((cause) => (shared(cause) ? why : cause)))] : [...prior, why];
  const causes = all.length > MAX_CAUSES ? [all[0]!, ...all.slice(1 - MAX_CAUSES)] : all;
  return `${label} failed (${code}) ×${Number(times ?? 1) + 1}: ${causes.join(CAUSE_JOIN)}`;
}

/**
 * Adds a statement to the summary, or merges it into the line that already
 * says it (anywhere in the fact sections): the sources and references add up
 * and the wording with more identifiers wins. A new statement gets a key that
 * names its subject; a key already used for a different subject is never
 * reused (the topic self-check), it gets a suffix.
 */
export function addStatement(b: SummaryBuilder, section: FactSection, line: Omit<FactLine, 'key'>, origin: LineOrigin): void {
  for (const name of ['Findings', 'Decisions', 'Ruled out', 'Constraints', 'Archived'] as const) {
    const lines = b.facts[name];
    // An archived line may group several gists: any of them may be the statement.
    const at = lines.findIndex((l) => gistsOf(l).some((g) => sameFact(g.replace(/^…|…$/g, ''), line.text)));
    if (at < 0) continue;
    const before = lines[at]!;
    const richer = handles(line.text).length > handles(before.text).length && name === section && !before.members;
    lines[at] = { ...before, ...(richer ? { text: line.text } : {}), sources: mergeSources(before.sources, line.sources), refs: (before.refs ?? 0) + 1 };
    return;
  }
  // The agent's own words about a result recorded exactly a step before say it again, with less: a failure ("BFG
  // installation failed due to a lock" after `brew install bfg` failed … locked) or an outcome ("The session domain
  // tests are now passing." after `bun test src/domain/session.test.ts` → 12 passed). They join the exact line.
  if ((section === 'Ruled out' || section === 'Findings') && origin === 'narrative') {
    const restated = b.facts[section].findIndex((l) => l.origin === 'exact' && restatesExact(line, l));
    if (restated >= 0) {
      const exact = b.facts[section][restated]!;
      b.facts[section][restated] = { ...exact, sources: mergeSources(exact.sources, line.sources), refs: (exact.refs ?? 0) + 1 };
      return;
    }
  }
  let key = subjectKey(line.text, b.redactor);
  for (let n = 2; b.has(key); n++) key = `${subjectKey(line.text, b.redactor)}-${n}`;
  b.upsert(section, { ...line, key, origin });
}

/**
 * Whether two lines state one fact. A command's failure and its result are two, however alike their words
 * ("`bun test x` failed (error): 1 failed; error: TypeError: …" and "`bun test x` → 2 passed"): the error is
 * what the next attempt needs.
 */
export function sameFact(a: string, b: string): boolean {
  if (isFailedLine(a) !== isFailedLine(b) || eventOf(a) !== eventOf(b)) return false;
  // Two commands applied, two commits: one event when they quote one command or hash; two outputs, never when they differ.
  if (eventOf(a) !== '') return eventSubject(a) === eventSubject(b);
  if (OBSERVATION.test(a) && OBSERVATION.test(b) && OBSERVATION.exec(a)![1]!.trim() !== OBSERVATION.exec(b)![1]!.trim()) return false;
  // Two failures of one command are one only when they share a cause: a run that fails for another reason is news.
  const fa = FAILED_LINE.exec(a);
  const fb = fa ? FAILED_LINE.exec(b) : null;
  if (fa && fb) {
    const why = (error: string): Set<string> => errorSignatures(error.replace(RESOLVED, '').replace(REPLACED_TAIL, ''));
    const causes = why(fb[5]!);
    if (fa[1] !== fb[1] || ![...why(fa[5]!)].some((sig) => causes.has(sig))) return false;
  }
  return sameStatement(a, b);
}

/** What an event line names: a commit its hash, a command applied its quoted command, a stop the request it stopped, anything else its text. */
function eventSubject(text: string): string {
  if (text.startsWith('committed') || text.startsWith("the user's own edits")) return /\b[0-9a-f]{7,40}\b/.exec(text)?.[0] ?? text;
  if (text.startsWith('applied')) return /`[^`]+`/.exec(text)?.[0] ?? text;
  if (text.startsWith('the user stopped')) return /#\d+/.exec(text)?.[0] ?? text;
  return text.replace(SOURCES_SUFFIX, '');
}

/** The kind of event an exact line records: a commit and the undo that discards it are two facts; so are two stops of two asks. */
const eventOf = memoized((text) => /^(?:committed|work discarded|applied|edit of|the user stopped|the user's own edits)\b/.exec(text)?.[0] ?? '');

/** A failure's record is this close before the agent's sentence about it. */
const RESTATED_WITHIN_RECORDS = 4;
/** The latest of `sources` just before `record` (at most RESTATED_WITHIN_RECORDS), or -1: what words said at `record` may be about. */
export const sourceJustBefore = (sources: readonly number[], record: number): number => Math.max(-1, ...sources.filter((r) => r < record && r >= record - RESTATED_WITHIN_RECORDS));

/** Whether a sentence of the agent says again, in its words, what a tool's exact line just recorded. */
function restatesExact(line: Omit<FactLine, 'key'>, exact: FactLine): boolean {
  const first = Math.min(...line.sources);
  if (sourceJustBefore(exact.sources, first) < 0) return false;
  const recorded = stems(exact.text);
  const covered = (text: string): [number, number] => {
    const said = stems(text);
    return [sharedWords(said, recorded), said.size];
  };
  const [shared, size] = covered(line.text);
  if (size === 0 || shared < 2 || shared * 2 < size) return false;
  // A cause the exact line does not show ("because the private key field has spaces") is the agent's diagnosis: it stays.
  const cause = /\b(?:because|due to|caused by|since|as)\b(.*)$/i.exec(line.text)?.[1];
  if (cause === undefined) return true;
  const [explained, words] = covered(cause);
  return explained * 2 > words;
}

/** Words that say what the agent was doing, not what to: two objections that differ only in them are one complaint. */
const DOING = stems('editing changing making modifying working doing touching writing changes edits files');
/** A complaint of fewer words than this is told the same as another only when they say the same words. */
const COMPLAINT_MIN_WORDS = 2;

/**
 * The key of the user's earlier objection that `sentence` (an objection too)
 * makes again in other words, if any: "you're editing the main workspace", then
 * "you're making changes in the main workspace", "you're in the main
 * workspace". Its line then takes the newest wording, the sources adding up, so
 * the complaint is one line that cites every time it was made.
 */
export function repeatedObjection(b: SummaryBuilder, sentence: string): string | undefined {
  const complaint = (text: string): Set<string> | undefined => {
    const said = OBJECTION_FRAME.exec(text)?.[1];
    return said === undefined ? undefined : new Set([...stems(said)].filter((w) => !DOING.has(w)));
  };
  const now = complaint(sentence);
  if (!now || now.size === 0) return undefined;
  for (const line of b.facts.Constraints) {
    const before = complaint(line.text);
    if (!before || before.size === 0) continue;
    const [small, large] = before.size <= now.size ? [before, now] : [now, before];
    if ((small.size >= COMPLAINT_MIN_WORDS || small.size === large.size) && [...small].every((w) => large.has(w))) return line.key;
  }
  return undefined;
}

/** The user's reply a disputed line carries ("… — not so, the user (r324): "…""), and the frame of an objection. */
const DISPUTED_SUFFIX = / — not so, the user \(r\d+\): ".*"$/;

/** What a fact line states, without its group tag, the ellipses of a gist, its "(as of rN)" or who disputed or objected to it. */
function statementText(text: string): string {
  return text.replace(/^\[[^\]]+\] /, '').replace(/^…|…$/g, '').replace(/ \(as of r\d+\)$/, '').replace(DISPUTED_SUFFIX, '').replace(OBJECTION_FRAME, '$1');
}

/** `into` having taken `line` in: their sources add up, and `line` (with its references) counts as one more reference. */
function absorb(into: FactLine, line: FactLine): FactLine {
  return { ...into, sources: mergeSources(into.sources, line.sources), refs: (into.refs ?? 0) + (line.refs ?? 0) + 1 };
}

/**
 * Takes the lines `gone` names out of `sections`, each absorbed into the line it maps to (several may go into one;
 * a line mapped to nothing just goes).
 */
function mergeAway(b: SummaryBuilder, sections: readonly FactSection[], gone: ReadonlyMap<FactLine, FactLine | undefined>): void {
  if (gone.size === 0) return;
  const merged = new Map<FactLine, FactLine>();
  for (const [line, to] of gone) {
    // A line merged into one that went too ends in the line that one went into.
    let into = to;
    for (const seen = new Set([line]); into && gone.has(into) && !seen.has(into); ) {
      seen.add(into);
      into = gone.get(into);
    }
    if (into === line) into = undefined;
    if (into) merged.set(into, absorb(merged.get(into) ?? into, line));
  }
  for (const section of sections) b.facts[section] = b.facts[section].filter((l) => !gone.has(l)).map((l) => merged.get(l) ?? l);
}

/**
 * One line per statement: a line that says what an earlier line (in any fact
 * section) already says is merged into it — sources and references add up —
 * whatever path wrote it (a tool result, a repeated observation, a gist). The
 * user's constraints are verbatim and never merged away, and take in only a
 * line that says nothing more (their words cannot take its text); a grouped
 * archived line is left whole.
 */
export function dedupe(b: SummaryBuilder): void {
  const kept: { section: FactSection; index: number; text: string }[] = [];
  for (const section of ['Constraints', 'Decisions', 'Ruled out', 'Findings', 'Archived'] as const) {
    const lines = b.facts[section];
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      const text = statementText(line.text);
      const same = section === 'Constraints' || line.members ? undefined : kept.find((k) => sameFact(k.text, text) && (k.section !== 'Constraints' || saysNoMore(text, k.text)));
      if (!same) {
        kept.push({ section, index: i, text });
        continue;
      }
      b.facts[same.section][same.index] = absorb(b.facts[same.section][same.index]!, line);
      lines.splice(i--, 1);
    }
  }
}

/** Whether `said` holds nothing `by` does not: most of its significant words are in it (a longer line says more, and is not merged into a shorter one). */
function saysNoMore(said: string, by: string): boolean {
  const mine = significant(said);
  return sharedWords(mine, significant(by)) >= SAYS_NO_MORE_SHARE * mine.size;
}
const SAYS_NO_MORE_SHARE = 0.7;

/**
 * A statement of the agent's said again, with more, by another line is merged
 * into it (sources and references add up): the same finding in a step's
 * narration and in its closing summary, a decision and its restatement, a gist
 * that says less than a live line, the agent's account of an exact line (a
 * command's outcome, an edit, a commit, a failure with its error, a
 * deliverable). Exact lines are events that merely look alike: they take
 * prose in and never merge themselves; the user's constraints are verbatim.
 * Prose merges into prose of its own section (a decision is not a finding,
 * and Ruled out is the anti-re-explore list), an archived gist into any.
 */
export function mergeRestated(b: SummaryBuilder): void {
  const lines: { section: FactSection; line: FactLine; text: string; exact: boolean }[] = [];
  for (const section of ['Deliverables', 'Decisions', 'Ruled out', 'Findings', 'Archived'] as const) {
    for (const line of b.facts[section]) {
      if (line.members) continue;
      // A deliverable's key is its file.
      const text = section === 'Deliverables' ? `${line.key}: ${line.text}` : statementText(line.text);
      const exact = section === 'Deliverables' || eventOf(text) !== '' || isFailedLine(text) || text.includes(' → ');
      lines.push({ section, line, text, exact });
    }
  }
  const gone = new Map<FactLine, FactLine>();
  // The agent's prose among itself: the rarity of a word is its rarity in prose.
  const prose = lines.filter((l) => !l.exact);
  const into = restatedBy(prose.map((l) => l.text));
  prose.forEach((l, i) => {
    const target = into[i] === undefined ? undefined : prose[into[i]!]!;
    if (target && (l.section === 'Archived' || target.section === l.section)) gone.set(l.line, target.line);
  });
  // Then a live statement the agent makes of an exact line (the file it says it wrote, the failure it narrates), when
  // it names nothing the line does not (a setting or a file it adds is news); a ruled-out line stays in Ruled out.
  const left = lines.filter((l) => l.exact || (!gone.has(l.line) && l.section !== 'Archived'));
  const onto = restatedBy(
    left.map((l) => l.text),
    (i) => left[i]!.exact,
  );
  left.forEach((l, i) => {
    const target = onto[i] === undefined ? undefined : left[onto[i]!]!;
    if (!target?.exact || (l.section === 'Ruled out' && target.section !== 'Ruled out') || !handlesWithin(l.text, target.text)) return;
    gone.set(l.line, target.line);
  });
  mergeAway(b, ['Deliverables', 'Decisions', 'Ruled out', 'Findings', 'Archived'], gone);
}

/** `git reset` back a number of commits (HEAD~n, HEAD^^): its mode (soft, mixed, hard) and how far. */
const RESET_COMMITS = /\bgit reset(?: --(soft|mixed|hard))? HEAD(?:~(\d+)|(\^+)|(~))(?![\w^~])/;

/**
 * A command that undoes work. `git reset` back n commits takes the last n
 * commit lines off Decisions (they are no longer on the branch) and says
 * which commits went and whether their changes were kept (in Ruled out when
 * they were discarded, in Decisions when kept, to squash or redo them): a model
 * reading "committed 2623ca1" must not take it for the branch's state after
 * `git reset --soft HEAD~2`. Any other undo (files checked out or restored, a
 * stash, a reset to a name) is recorded as it ran.
 */
export function discardWork(b: SummaryBuilder, cmd: string, label: string, sources: readonly number[]): void {
  const reset = RESET_COMMITS.exec(cmd);
  const back = !reset ? 0 : reset[2] ? Number(reset[2]) : reset[3] ? reset[3].length : 1;
  const at = Math.min(...sources);
  const commits = b.facts.Decisions.filter((l) => l.text.startsWith('committed ') && Math.max(...l.sources) < at)
    .sort((x, y) => Math.max(...y.sources) - Math.max(...x.sources))
    .slice(0, back);
  if (commits.length === 0) {
    addStatement(b, 'Ruled out', { text: `work discarded: ${label}`, sources, priority: 2 }, 'exact');
    return;
  }
  b.facts.Decisions = b.facts.Decisions.filter((l) => !commits.includes(l));
  const which = commits.map((l) => l.text.replace(/^committed /, '').replace(/ \(--[^)]*\)$/, '')).join('; ');
  const hard = reset![1] === 'hard';
  const changes = `${commits.length === 1 ? 'its' : 'their'} changes ${hard ? 'discarded' : 'kept'}`;
  const took = `\`${reset![0]}\` took ${commits.length === 1 ? 'a commit' : `${commits.length} commits`} off the branch (${changes}): ${which}`;
  // Changes kept are no work thrown away: the commits were taken back (to squash or redo them), a choice made.
  if (hard) addStatement(b, 'Ruled out', { text: `work discarded: ${took}`, sources: mergeSources(commits.flatMap((l) => l.sources), sources), priority: 2 }, 'exact');
  else addStatement(b, 'Decisions', { text: `commits taken back: ${took}`, sources: mergeSources(commits.flatMap((l) => l.sources), sources), priority: 2 }, 'exact');
}

/** A statement of fewer significant words is too short to judge as said already (a bare "DNS works!"). */
const NOTHING_NEW_MIN_WORDS = 3;
/** Words that judge or hedge what a statement says and add nothing to it ("Good, the working tree is clean…"). */
const NO_NEWS = stems('good great perfect excellent nice likely possibly probably seems looks like sure confirms indeed clearly simply something');

/**
 * A statement of the agent's that this fold adds and that says nothing the
 * summary does not already say — each of its significant words and measured
 * values stands in another line or a request — is merged into the line that
 * shares most of its words (sources and references add up): the agent's recap
 * of a finding stated earlier ("So the issue was with the `dns_table` nftables
 * table" beside "DNS works! The `dns_table` was interfering"), its restatement
 * of the user's ask. The lightest such statement goes first, so of two that
 * say one thing the fuller stays. Lines already written (`before`), the user's
 * constraints and exact lines (outcomes, edits, failures) are never merged
 * here; neither is a statement that negates what its nearest line affirms.
 */
export function mergeNothingNew(b: SummaryBuilder, before: SummaryState): void {
  const written = new Set(FACT_SECTIONS.flatMap((s) => before.facts[s].map((l) => l.text)));
  // How many statements (and requests) hold each word and each measured value: one is the statement's own.
  const words = new Map<string, number>();
  const values = new Map<string, number>();
  const count = (into: Map<string, number>, set: Iterable<string>, by: number): void => {
    for (const w of set) into.set(w, (into.get(w) ?? 0) + by);
  };
  const lines: { section: FactSection; line: FactLine; text: string; words: ReadonlySet<string>; values: ReadonlySet<string> }[] = [];
  for (const section of FACT_SECTIONS) {
    for (const line of b.facts[section]) {
      const text = statementText(line.text);
      lines.push({ section, line, text, words: stems(text), values: measures(text) });
    }
  }
  for (const r of b.requests) {
    const text = askText(r.text);
    count(words, stems(text), 1);
    count(values, measures(text), 1);
  }
  for (const l of lines) {
    count(words, l.words, 1);
    count(values, l.values, 1);
  }
  const candidates = lines
    .filter((l) => (l.section === 'Decisions' || l.section === 'Findings' || l.section === 'Ruled out') && l.line.origin === 'narrative' && !written.has(l.line.text))
    .filter((l) => l.words.size >= NOTHING_NEW_MIN_WORDS && !isFailedLine(l.text) && eventOf(l.text) === '')
    .sort((x, y) => x.words.size - y.words.size);
  const gone = new Map<FactLine, FactLine | undefined>();
  for (const c of candidates) {
    if (![...c.words].every((w) => words.get(w)! >= 2 || NO_NEWS.has(w)) || ![...c.values].every((n) => values.get(n)! >= 2)) continue;
    let best: (typeof lines)[number] | undefined;
    let bestShared = 0;
    for (const l of lines) {
      if (l === c || gone.has(l.line)) continue;
      const shared = sharedWords(c.words, l.words);
      if (shared > bestShared) [best, bestShared] = [l, shared];
    }
    if (best && NEGATION.test(c.text) !== NEGATION.test(best.text)) continue;
    count(words, c.words, -1);
    count(values, c.values, -1);
    gone.set(c.line, best?.line);
  }
  mergeAway(b, FACT_SECTIONS, gone);
}

/**
 * The handles of a statement: what a later record would name to refer back to
 * it — inline-code spans, file paths and names, identifiers (snake_case,
 * camelCase, dotted or slashed names). Lower-cased.
 */
export function handlesOf(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/`([^`\n]{3,60})`/g)) out.add(m[1]!.trim().toLowerCase());
  for (const raw of text.split(/[\s`'"(),;:!?<>[\]{}*]+/)) {
    const t = raw.replace(/^[.\-/]+|[.\-/]+$/g, '');
    if (t.length < 4 || t.length > 80) continue;
    if (/[a-z]/i.test(t) && (/[/_]/.test(t) || /\.[a-z]/i.test(t) || /[a-z][A-Z]/.test(t)) && !PLACEHOLDER.test(t)) out.add(t.toLowerCase());
  }
  return [...out];
}

/** How much of a tool output is searched for handles. */
const REFERENCE_OUTPUT_CHARS = 2000;

/** What a unit says: its texts, tool inputs and the head of tool outputs, lower-cased. */
function unitText(unit: Unit): string {
  const pieces: string[] = [];
  for (const part of unit.parts) {
    if (part.kind === 'tool' && part.tool) {
      pieces.push(JSON.stringify(part.tool.input ?? ''));
      if (part.tool.output) pieces.push(part.tool.output.slice(0, REFERENCE_OUTPUT_CHARS));
    } else pieces.push(part.text);
  }
  return pieces.join('\n').toLowerCase();
}

/**
 * Adds to each fact line the number of newly folded units after its sources
 * that name one of its handles. A fact later steps keep coming back to is the
 * one the cap keeps live longest (and whose archived gist it keeps longest).
 */
export function countReferences(b: SummaryBuilder, units: readonly Unit[]): void {
  const texts = units.map((u) => ({ first: u.firstRecord, text: unitText(u) }));
  for (const section of ['Decisions', 'Constraints', 'Ruled out', 'Findings', 'Archived'] as const) {
    const lines = b.facts[section];
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.key.startsWith('archived~') || line.sources.length === 0) continue;
      const named = handlesOf(line.text);
      if (named.length === 0) continue;
      const after = Math.max(...line.sources);
      let n = 0;
      for (const t of texts) if (t.first > after && named.some((h) => t.text.includes(h))) n++;
      if (n) lines[i] = { ...line, refs: (line.refs ?? 0) + n };
    }
  }
}

/** A user message that disputes the agent's report is a short one: a long message asks for more than that. */
const DISPUTE_MAX_CHARS = 200;
/** The report a user disputes ended this close before their message. */
const DISPUTED_WITHIN_RECORDS = 3;

/**
 * The user says the change the agent just reported did not take ("it's not opening a new tab", "still get the
 * error", "you seem to be editing the wrong files"): what that report said it changed ("The key changes are: add
 * `newWindow.focus()`…") and its claims that it works ("This will now only open the new tab…", anywhere in its turn
 * since `turnStart`, the user's message before) were not so. Each moves to Ruled out with the user's
 * words (`words`, their message at `record`), so the next attempt knows that approach did not work.
 */
export function disputeClaims(b: SummaryBuilder, words: string, record: number, turnStart = record - DISPUTED_WITHIN_RECORDS): void {
  // The user may quote the claim they dispute ("> I need to edit files in the main workspace… no, that's the
  // opposite of whats true"): then their own words are the reply, and the line that says what they quoted goes.
  const { own, quoted } = splitQuoted(words);
  const said = askText(quoted.length ? own : words);
  if (said.length > DISPUTE_MAX_CHARS || !USER_REFUTES.test(sentencesOf(said)[0]?.text ?? said)) return;
  const claims = quoted.flatMap((q) => sentencesOf(q).map((s) => s.text));
  const reply = clipChars(b.redactor.redact(said.replace(/\s+/g, ' ').trim()).text, 120);
  for (const section of ['Decisions', 'Findings'] as const) {
    const lines = b.facts[section];
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      const latest = Math.max(...line.sources);
      // A claim that it works, anywhere in the agent's turn since the user last spoke (`turnStart`); what the report
      // said it changed, in its closing records only.
      const claim = section === 'Findings' && SUCCESS_CLAIM.test(line.text);
      if (line.origin === 'exact' || latest >= record || latest < (claim ? Math.min(turnStart, record - DISPUTED_WITHIN_RECORDS) : record - DISPUTED_WITHIN_RECORDS)) continue;
      // What the report said it changed (Decisions) or that it now works (a claim among Findings), or what was quoted.
      const disputed = claims.length ? claims.some((c) => sameStatement(c, statementText(line.text))) : section === 'Decisions' || claim;
      if (!disputed) continue;
      lines.splice(i--, 1);
      // Under its own key, unless another line holds it (a rule of the user's about the same subject): never merged into that.
      const taken = Object.values(b.facts).some((ls) => ls.some((l) => l.key === line.key));
      b.upsert('Ruled out', { ...line, key: taken ? `${line.key}-disputed-r${record}` : line.key, text: `${line.text.replace(/[.…]$/, '')} — not so, the user (r${record}): "${reply}"`, sources: mergeSources(line.sources, [record]), priority: 2 });
    }
  }
}

/** A sentence about how tests stand: "All our tests are passing.", "Now we have 10 passing tests and 2 failing tests." */
const TEST_STATUS = /\b(?:tests?|specs?|suite)\b[^.;]*\b(?:pass(?:es|ed|ing)?|fail(?:s|ed|ing)?|green)\b|\b(?:pass(?:es|ed|ing)?|fail(?:s|ed|ing)?|green)\b[^.;]*\b(?:tests?|specs?|suite)\b/i;
/** What makes such a sentence more than a snapshot: a cause, an error, an expectation or a condition. */
const MORE_THAN_STATUS = /\b(?:because|due to|caused by|since|why|error|exception|timed? ?out|problem|issue|cause|reason|expected|expect|should|will|would|could|might|if|once|when|until|unless|but|except|however)\b|:/i;
/** A user's question: it ends with a question mark or opens as one. */
const USER_QUESTION = /\?$|^(?:do|does|did|are|is|was|were|have|has|can|could|how|what|which|why|where|when)\b/i;
/** The agent's answer to a question follows it this closely. */
const ANSWER_WITHIN_RECORDS = 2;
/** A snapshot of longer than this many words says more than how the tests stand. */
const STATUS_MAX_WORDS = 20;
/** The file handles of a statement (names with a dot or a slash): which tests it is about. */
const fileHandles = (text: string): string[] => handles(text).filter((h) => /[./]/.test(h) && !/^\d/.test(h)).map((h) => h.slice(h.lastIndexOf('/') + 1));

/**
 * The agent's snapshots of how the tests stand ("The get.test.ts tests are now
 * passing.", "Now we have 10 passing tests and 2 failing tests.") are true
 * until the next run: a later run of the tests (its exact line, with its
 * counts) or a later snapshot about the same tests supersedes each, and it is
 * merged into the first that does (sources add up), so the digest does not
 * read an old count as the state. A snapshot naming files is superseded by a
 * later status of one of them or of the whole suite; one naming none (the
 * suite) only by a later status of the suite. A sentence that says why tests
 * fail, or what is expected, is a finding, not a snapshot; so is the agent's
 * answer to the user's question about the tests (what the user was told).
 */
export function supersedeTestStatus(b: SummaryBuilder): void {
  const statuses: { line: FactLine; text: string; at: number; files: string[]; snapshot: boolean }[] = [];
  for (const section of ['Findings', 'Ruled out', 'Archived'] as const) {
    for (const line of b.facts[section]) {
      if (line.members || line.sources.length === 0) continue;
      const text = statementText(line.text);
      const exact = FAILED_LINE.exec(text)?.[1] ?? /^`([^`]+)` (?:→|worked)/.exec(text)?.[1];
      const snapshot = line.origin === 'narrative' && TEST_STATUS.test(text) && !MORE_THAN_STATUS.test(text) && text.split(/\s+/).length <= STATUS_MAX_WORDS;
      if (!snapshot && !(exact !== undefined && TEST_COMMAND.test(exact) && /\b(?:pass|fail|ok\b|error)/i.test(text.slice(exact.length)))) continue;
      statuses.push({ line, text, at: Math.max(...line.sources), files: fileHandles(exact ?? text), snapshot });
    }
  }
  statuses.sort((x, y) => x.at - y.at);
  // The agent's answer to the user's question ("do all tests pass now?") is what the user was told: it stays.
  const asked = b.requests.filter((r) => USER_QUESTION.test(askText(r.text).trim())).map((r) => r.record);
  const answers = (line: FactLine): boolean => asked.some((r) => line.sources.some((s) => s > r && s <= r + ANSWER_WITHIN_RECORDS));
  const gone = new Map<FactLine, FactLine>();
  for (const s of statuses) {
    if (!s.snapshot || answers(s.line)) continue;
    const next = statuses.find((t) => t.at > s.at && (t.files.length === 0 || t.files.some((f) => s.files.includes(f))));
    if (next) gone.set(s.line, next.line);
  }
  mergeAway(b, ['Findings', 'Ruled out', 'Archived'], gone);
}

/** The ordinal of the request a goal (`#2 (r3): …`, as Current state keeps it) is the work of. */
export function askOf(goal: string): string | undefined {
  return /^#(\d+) /.exec(goal)?.[1];
}

/**
 * The user stopped the agent ("[Request interrupted by user]") while it worked on the goal (`#2 (r3): …`): that request
 * may be left unfinished, which the request log alone does not say. Returns the record, for Current state.
 */
export function stoppedWork(b: SummaryBuilder, record: number, goal: string): number {
  const ask = askOf(goal);
  if (ask !== undefined) addStatement(b, 'Decisions', { text: `the user stopped the agent while it worked on request #${ask}: it may be unfinished`, sources: [record], priority: 3 }, 'exact');
  return record;
}

/** The user told the agent to go on ("resume", "continue") with the goal it was stopped on: it is no longer left stopped. */
export function resumedWork(b: SummaryBuilder, goal: string): void {
  const ask = askOf(goal);
  if (ask !== undefined) b.facts.Decisions = b.facts.Decisions.filter((l) => !l.text.startsWith(`the user stopped the agent while it worked on request #${ask}:`));
}

/** What a statement says a file lacks or is not yet, or does wrong: a state its next edit may end. */
const LACKS = /\b(?:not|no|doesn't|does not|isn't|is not|aren't|are not|missing|lacks?|placeholders?|empty|stubs?|only|yet|bug|broken|wrong|incorrect(?:ly)?|ignores?|drops?|dropped|mismatch(?:es)?|collision|incomplete|fails?|failing)\b/i;

/**
 * A finding this fold made that says what a file lacks or does wrong ("The README does not
 * mention the `tasks` command", "The pre-commit hook is not installed", "`clearCookie` ignores config") was
 * true until the file was changed: when a later write of this fold changed
 * a file it names (by its name, or its name without an extension that is no
 * plain word: "README", "pre-commit"), the line
 * says so, so it is not read as the file's state now; so does a decision to
 * leave a file as it is (LEFT_ALONE). Lines of earlier folds keep the bytes
 * already sent.
 */
export function dateByLaterWrites(b: SummaryBuilder, before: SummaryState): void {
  const written = b.facts.Deliverables.filter((l) => !l.members && l.sources.length > 0).map((l) => {
    const name = l.key.split(/[\\/]/).pop() ?? l.key;
    const stem = name.replace(/\.[A-Za-z]\w{0,5}$/, '');
    // Its name without the extension only when that is no plain word ("README", "pre-commit"; not "config", "index").
    const pattern = new RegExp(`(?<![\\w.-])(?:${[name, ...(stem.length >= 4 && /[A-Z_-]/.test(stem) ? [stem] : [])].map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})(?![\\w-])`, 'i');
    return { path: l.key, pattern, sources: l.sources };
  });
  if (written.length === 0) return;
  // `within`: the file must be named in what `says` matched ("leaving `verify.ts` untouched"), not elsewhere in the line.
  const dated = (section: 'Findings' | 'Decisions', says: RegExp, within = false): FactLine[] => {
    const old = new Set(before.facts[section].map((l) => l.text));
    return b.facts[section].map((line) => {
      const said = says.exec(line.text)?.[0];
      if (line.members || line.origin === 'exact' || line.sources.length === 0 || old.has(line.text) || said === undefined) return line;
      const at = Math.max(...line.sources);
      for (const w of written) {
        const after = w.sources.find((s) => s > at);
        if (after !== undefined && w.pattern.test(within ? said : line.text)) return { ...line, text: `${line.text.replace(/[.…]$/, '')} (said before \`${w.path}\` was changed at r${after})` };
      }
      return line;
    });
  };
  b.facts.Findings = dated('Findings', LACKS);
  // "Leaving the `verify.ts` error untouched": the choice held until the agent changed that file after all.
  b.facts.Decisions = dated('Decisions', LEFT_ALONE, true);
}

/** A choice to leave a file as it is: "leaving `verify.ts` untouched", "I won't modify the README". */
const LEFT_ALONE = /\b(?:leav(?:e|ing)|left|keep(?:ing)?|kept)\b[^;]{0,80}?\b(?:untouched|unchanged|as[- ]is|alone)\b|\b(?:won't|will not|not going to|don't|do not|no need to)\s+(?:touch|modify|change|edit)\b[^;,]{0,60}/i;

/**
 * A snapshot of how far the work is: "We have completed about 60% of the planned implementation", "All planned
 * components have been implemented", "3 of 7 steps done", a count of what is built so far ("Now 12 Swift files
 * created.", "Now we have 28 Swift files.", "4 files created so far.").
 */
const PROGRESS = /\b(?:now|so far|in total|already)\b[^.;]{0,40}?\b\d+ (?:[\w-]+ ){0,2}(?:files|modules|components|classes|screens|pages|endpoints)\b(?! (?:to|that|which|need|needs|still|left|remain))|^\d+ (?:[\w-]+ ){0,2}(?:files|modules|components|classes|screens|pages|endpoints) (?:have been |were |are )?(?:created|written|added|implemented|in place)\b|\b(?:completed|finished|done|implemented)\b[^.;]*\b\d{1,3}\s?%|\b\d{1,3}\s?%[^.;]*\b(?:complete|completed|done|implemented|finished)\b|\ball (?:the )?(?:planned |remaining |listed )?(?:components|items|tasks|steps|phases|parts|changes)\b[^.;]*\b(?:have been|are|were)\b[^.;]*\b(?:implemented|complete|completed|done|finished)\b|\b\d+ (?:of|out of) \d+ (?:steps|tasks|items|phases|components)\b[^.;]*\b(?:done|complete|completed|implemented|finished)\b/i;

/**
 * The agent's report of how far the work is holds until its next one: a
 * report in `text` (a message of the agent's at `record`) replaces the
 * progress findings said before it (their sources add up), so "about 60%
 * done" is not read as the state after "all planned components have been
 * implemented". Only a findings line of the agent's own words is replaced.
 */
export function progressReport(b: SummaryBuilder, text: string, record: number): void {
  if (!PROGRESS.test(text)) return;
  const said = sentencesOf(text).map((s) => s.text).filter((t) => PROGRESS.test(t)).pop();
  if (said === undefined) return;
  const before = b.facts.Findings.filter((l) => l.origin !== 'exact' && !l.members && l.sources.length > 0 && Math.max(...l.sources) < record && PROGRESS.test(statementText(l.text)));
  if (before.length === 0) return;
  b.facts.Findings = b.facts.Findings.filter((l) => !before.includes(l));
  b.upsert('Findings', { key: before[0]!.key, text: clipChars(b.redactor.redact(said).text, 240), sources: mergeSources(before.flatMap((l) => l.sources), [record]), priority: 3, origin: 'narrative' });
}
