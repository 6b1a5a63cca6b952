/**
 * The pieces a digest line is made of: one statement of at most
 * STATEMENT_MAX_WORDS words with its identifiers verbatim, a gist of
 * GIST_WORDS words for a demoted line, a topic key that names the subject,
 * the test that two statements say the same thing, and how much a statement
 * carries (its handles: paths, identifiers, numbers, error text); what a
 * file says it is for. What a short reply answers is read in shortReplies.ts,
 * what a command printed in terminalOutput.ts.
 *
 * Pure functions over strings; deterministic.
 */
import { lastSegment } from './paths';
import type { Redactor } from './redact';

/** A fact line states one thing: this many words at most (identifiers count as one word each). */
export const STATEMENT_MAX_WORDS = 32;
/** A demoted line keeps this many words of its statement, chosen around its identifiers. */
export const GIST_WORDS = 12;

const STOP = new Set(
  'a an the to of in on for and or but is are be been being it its this that these those with as at by we i you he she they them our your my me us there here do does did not no so if then than from into also all any just can could will would should must may might has have had was were which what when where who how why very more most some such about over under after before again only own same too out up down off now let lets okay ok well yes ill ive im youre weve thats theres dont doesnt isnt cant wont didnt however although though therefore thus hence during regarding related moreover furthermore additionally meanwhile'.split(
    ' ',
  ),
);

/** Verbs and fillers that say nothing about the subject of a statement. */
const KEY_FILLER = new Set(
  'use uses used using make makes made get gets got set sets need needs want wants see seems look looks found find show shows run runs ran work works worked fix fixed add added update updated create created change changed check checked try tried instead because since still already actually currently really first next then new one two three way thing things issue problem'.split(
    ' ',
  ),
);

/**
 * Whether a statement says nothing a later reader could use: no identifier,
 * and fewer than two words that are neither function words nor fillers
 * ("So that works.", "That fixed the issue.", "It works now."). A number is a
 * word that counts ("Found 3 errors").
 */
export function saysNothing(text: string): boolean {
  if (handles(text).length > 0) return false;
  let content = 0;
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []) {
    const w = word.replace(/'/g, '');
    if ((/\d/.test(w) || (w.length >= 3 && !STOP.has(w) && !KEY_FILLER.has(w))) && ++content >= 2) return false;
  }
  return true;
}

/**
 * Words of a text, code spans kept whole and with what is glued to them: "`spinner.js`, we" is two words, so
 * joined again it reads as written (not "`spinner.js` , we").
 */
export function words(text: string): string[] {
  return text.match(/(?:[^\s`]|`[^`]*`)+|`\S*/g) ?? [];
}

/** An identifier, a path, a version, a number with a unit, an error code: what a later reader searches for. */
const HANDLE = /`[^`\n]{2,80}`|(?:\b[A-Za-z]:(?=\\))?(?:[\w.-]*[/\\][\w.@:\\/-]+)|\b[\w-]+\.(?:[a-z]{1,5})\b|\b[a-z]+(?:[A-Z][a-z0-9]+)+\w*\b|\b[A-Za-z]+_[\w]+\b|\b[A-Z]{2,}[\w-]*\d[\w-]*\b|\bv?\d+\.\d+(?:\.\d+)*\b|\b\d{2,}\b|\b0x[0-9a-f]+\b|(?<![\w-])--?[a-z][\w-]+/g;

/**
 * A placeholder that stands for hidden text (`[REDACTED:api-key:3f9a1c]`, a
 * corpus's `[REDACTED_IP]`, `[USER]`): the same placeholder stands for many
 * different values, so it names nothing a later record could refer back to.
 */
export const PLACEHOLDER = /^\[?(?:redacted\b|redacted_|user\]?$)/i;
/** A placeholder that stands for a segment of a path (group 1: its name, which the path keeps in its place). */
const PLACEHOLDER_SEGMENT = /(?<=[/\\])\[(USER|REDACTED[\w:-]*)\](?=[/\\])/g;

/** Entries a text memo holds before it starts again (a fold's statements, many times over). */
const MEMO_LIMIT = 20_000;

/**
 * A pure function of a text, remembered per text: a fold compares every
 * statement with every other, and each comparison reads the same few values
 * of both. Cleared whole past MEMO_LIMIT entries. What it returns is shared:
 * callers never change it.
 */
export function memoized<T>(compute: (text: string) => T): (text: string) => T {
  const memo = new Map<string, T>();
  return (text) => {
    const known = memo.get(text);
    if (known !== undefined) return known;
    if (memo.size > MEMO_LIMIT) memo.clear();
    const value = compute(text);
    memo.set(text, value);
    return value;
  };
}

/** The handles of a statement, lower-cased, in order of appearance. */
export const handles: (text: string) => readonly string[] = memoized((text) => {
  const out: string[] = [];
  // A placeholder between two separators is a segment of its path (`/Users/[USER]/repo/README.md` is one path, not two).
  const joined = text.includes('[') ? text.replace(PLACEHOLDER_SEGMENT, '$1') : text;
  for (const m of joined.matchAll(HANDLE)) {
    const h = m[0].replace(/^`|`$/g, '').replace(/[.,;:]+$/, '').toLowerCase();
    if (h.length >= 2 && !out.includes(h) && !PLACEHOLDER.test(h)) out.push(h);
  }
  return out;
});

/**
 * A list item with no subject of its own ("Contains IPC handlers for dictation injection…", "It's an Electron main
 * process file") under a lead that names one thing ("Examine `frontend/electron/main.ts`:"): the line names it, or a
 * reader of the digest cannot tell what contains what.
 */
const SUBJECTLESS =
  /^(?:(?:it|this|they|these)(?:'s|'re|\s+(?:is|are|was|were|has|have|does|doesn't|does not|only|also|just|then|now|uses|calls|returns|handles|contains))\b|(?:contains|handles|runs|uses|calls|returns|delegates|manages|defines|exports|imports|initiali[sz]es|creates|reads|writes|sets|checks|stores|provides|implements|wraps|loads|parses|builds|sends|receives|listens|registers|declares|holds|includes|lacks|has|doesn't|does not|only|also)\b)/i;

/** A list item that is one field of its lead's subject: "Fields: The file is empty", "Status: Placeholder, no schema defined". */
const FIELD_ITEM = /^[A-Z][\w-]*(?: [A-Z][\w-]*){0,2}: \S/;
/** A lead that is only a file's path ("**schemas/signal_finalization_request_schema.ts**:", as cleaned of its markdown): its name names it. */
const PATH_LEAD = /^\s*(?:[\w.@-]+[/\\])*([\w.@-]+\.[A-Za-z]\w{0,5})\s*:?\s*$/;

export function withSubject(text: string, lead: string | undefined): string {
  if (lead === undefined || !(SUBJECTLESS.test(text) || FIELD_ITEM.test(text))) return text;
  const path = PATH_LEAD.exec(lead)?.[1];
  const named = path !== undefined ? [`\`${path}\``] : (lead.match(/`[^`\n]{2,120}`/g) ?? []);
  const subject = named.length === 1 ? named[0]! : undefined;
  if (subject === undefined || text.includes(subject) || (path !== undefined && text.includes(path))) return text;
  return `${subject}: ${text}`;
}

/** How much a statement carries for a later reader: its handles, numbers, error text; hedges count against it. */
export function salience(text: string): number {
  let score = Math.min(4, handles(text).length);
  if (/\b(?:error|exception|failed|refused|denied|not found|timed? ?out|exit(?: code)? [1-9]|E\d{3,}|TS\d{4})\b/i.test(text)) score += 1;
  if (/\b(?:because|so that|instead of|rather than|caused by|due to|which means|root cause)\b/i.test(text)) score += 1;
  if (/\b(?:might|may|could|perhaps|possibly|probably|likely|maybe|i think|i believe|seems? to|appears? to)\b/i.test(text)) score -= 1;
  const n = words(text).length;
  if (n < 5) score -= 1;
  return score;
}

/**
 * One statement of at most `max` words, identifiers kept whole: a longer
 * sentence is cut at a clause boundary when one falls in the last third,
 * otherwise at the word limit, with "…".
 */
export function statementOf(sentence: string, max = STATEMENT_MAX_WORDS): string {
  const text = sentence.replace(/\s+/g, ' ').trim().replace(/[:,;]$/, '');
  const w = words(text);
  if (w.length <= max) return text;
  let cut = max;
  for (let i = max - 1; i >= Math.floor((max * 2) / 3); i--) {
    if (/[,;:)]$|—$|–$/.test(w[i]!) || /^(?:which|because|so|but|and|while|whereas|since|—|–)$/i.test(w[i + 1] ?? '')) {
      cut = i + 1;
      break;
    }
  }
  return `${w.slice(0, cut).join(' ').replace(/[,;:—–]$/, '')}…`;
}

/**
 * The gist of a statement for a demoted line: `n` words, the window of the
 * statement that holds the most handles (the earliest on a tie), marked with
 * "…" where words were left out. Never empty for a non-empty statement.
 */
export function gistOf(text: string, n = GIST_WORDS): string {
  const w = words(text.replace(/\s+/g, ' ').trim());
  if (w.length <= n) return w.join(' ');
  const weight = w.map((x) => (handles(x).length ? 2 : /\d/.test(x) ? 1 : 0));
  // A statement that opens with a concession ("Even though the unit tests had issues, the direct tests pass") says
  // its point in the main clause: that is the opening a gist prefers.
  const opening = mainClauseAt(w, n);
  let best = opening;
  let bestScore = -1;
  let sum = 0;
  for (let i = 0; i < w.length; i++) {
    sum += weight[i]!;
    if (i >= n) sum -= weight[i - n]!;
    // Prefer the opening (it names the subject) unless a later window carries more.
    const start = i - n + 1;
    if (start >= 0 && sum > bestScore + (start === opening ? -1 : 0)) {
      bestScore = sum + (start === opening ? 1 : 0);
      best = start;
    }
  }
  // A cut statement ends where a clause does, never on a word that leads to what was cut
  // ("…previously committed to Git, but our edit_file…" says less than "…previously committed to Git…").
  let end = Math.min(best + n, w.length);
  if (end < w.length) {
    // Never at the cost of an identifier or a number: those are what the gist is for.
    for (let i = end - 1; i >= best + Math.ceil(n / 2) && (i === end - 1 || weight[i + 1] === 0); i--) {
      // Not at a colon: what follows one is the payload ("can't find google.com: Query refused").
      if (/[,;)]$|—$|–$/.test(w[i]!) || CLAUSE_OPENER.test(w[i + 1] ?? '')) {
        end = i + 1;
        break;
      }
    }
    while (end - best > 3 && DANGLING.test(w[end - 1]!.replace(/[,;:—–]$/, ''))) end--;
  }
  let start = best;
  while (start > 0 && end - start > 3 && CLAUSE_OPENER.test(w[start]!)) start++;
  const slice = w.slice(start, end).join(' ').replace(/[,;:—–]$/, '');
  return `${start > 0 ? '…' : ''}${slice}${end < w.length ? '…' : ''}`;
}

/**
 * A word that opens a concession or a cause: the clause it opens is background to the main clause after its comma
 * ("Since there are many single-quoted strings in the file, let's fix them with a script": the choice is the point).
 */
const CONCESSIVE = /^(?:although|though|despite|whereas|while|since|because|given)$/i;

/**
 * Where a gist of `n` words of `w` starts to say the main clause when the statement opens with a concession
 * or a cause ("Even though …, X", "Although …, X", "Since …, X"): at the main clause, or earlier when the main clause is shorter than the
 * gist; 0 for any other statement.
 */
function mainClauseAt(w: readonly string[], n: number): number {
  const concedes = CONCESSIVE.test(w[0]!) || /^(?:even (?:though|if)|now that)$/i.test(`${w[0]} ${w[1] ?? ''}`);
  if (!concedes) return 0;
  for (let i = 1; i < w.length - 4; i++) if (/,$/.test(w[i]!)) return Math.max(0, Math.min(i + 1, w.length - n));
  return 0;
}

/** A word that opens a clause: a cut before it ends a statement where the next one begins. */
const CLAUSE_OPENER = /^(?:which|because|so|but|and|or|while|whereas|since|although|though|—|–)$/i;
/** A word that cannot end a statement: it leads to the words after it. */
const DANGLING =
  /^(?:a|an|the|of|to|in|on|at|for|with|by|from|as|and|or|but|our|your|its|their|my|this|that|these|those|is|are|was|were|be|been|has|have|had|such|via|into|than|then|if|when|while|because|which|who|whose|not|no|any|all|some|each|every|more|most|very|so|also|will|would|can|could|should|must|may|might|it|we|i|you|they)$/i;

/** Significant words of a text (for overlap tests): lower-cased, no stop words, code marks removed. */
export const significant: (text: string) => ReadonlySet<string> = memoized((text) => {
  const out = new Set<string>();
  for (const raw of text.toLowerCase().replace(/[`'"*]/g, '').split(/[^a-z0-9_.\/#@-]+/)) {
    const t = raw.replace(/^[.\-/]+|[.\-/]+$/g, '');
    if (t.length >= 3 && !STOP.has(t)) out.add(t);
  }
  return out;
});

/** How many of `words` `by` holds. */
export function sharedWords(words: Iterable<string>, by: ReadonlySet<string>): number {
  let n = 0;
  for (const w of words) if (by.has(w)) n++;
  return n;
}

/**
 * Whether two statements say the same thing: most of the shorter one's
 * significant words are in the other, and they name the same identifiers
 * (two lines about different files are different facts).
 */
export function sameStatement(a: string, b: string): boolean {
  if (a === b) return true;
  // One says it, the other denies it: two statements ("…in the main workspace" and "…in the main workspace, not in the session").
  if (negates(a) !== negates(b)) return false;
  const x = significant(a);
  const y = significant(b);
  if (x.size === 0 || y.size === 0) return false;
  const [small, large] = x.size <= y.size ? [x, y] : [y, x];
  // The same measured values in other words ("345 errors ÷ 90 hours = ~92 a day" and "345 / 90 hours = ~92 errors per day").
  const mx = measures(a);
  const my = measures(b);
  const [fewer, more] = mx.size <= my.size ? [mx, my] : [my, mx];
  const within = [...fewer].every((n) => more.has(n));
  if (fewer.size >= SAME_MEASURES && within && [...small].some((t) => large.has(t))) return true;
  // Other values are another fact, however alike the words ("12 failed" then "13 failed": the later count).
  if (fewer.size > 0 && !within) return false;
  // One or two words say too little to be the same statement as a longer one.
  if (small.size < 3 && x.size !== y.size) return false;
  if (sharedWords(small, large) / small.size < 0.7) return false;
  return !namesOtherIdentifiers(a, b);
}

/**
 * Whether two statements both name identifiers and none in common (two lines about different files are different
 * facts); `byFileName` compares paths by their last segment (the agent's `~/bin/x` and a tool's `/Users/me/bin/x`).
 */
function namesOtherIdentifiers(a: string, b: string, byFileName = false): boolean {
  const hx = byFileName ? handles(a).map(fileName) : handles(a);
  const hy = byFileName ? handles(b).map(fileName) : handles(b);
  return hx.length > 0 && hy.length > 0 && !hx.some((h) => hy.includes(h));
}

/** Whether every handle `said` names is one `by` names (paths by their last segment): `said` names nothing more. */
export function handlesWithin(said: string, by: string): boolean {
  const hy = handles(by).map(fileName);
  return handles(said).every((h) => hy.includes(fileName(h)));
}

/** A path handle by its last segment (`~/bin/claude-tmux` and `/Users/me/bin/claude-tmux` name one file); others as they are. */
function fileName(handle: string): string {
  return /[/\\]/.test(handle) ? lastSegment(handle) : handle;
}

/** Words cut to a rough stem: "installation", "installed" and "install" meet; so do "locked" and "lock". */
export const stems: (text: string) => ReadonlySet<string> = memoized((text) => new Set([...significant(text)].map((w) => w.replace(/(?:ation|ations|ing|ed|es|s)$/, '')).filter((w) => w.length >= 3)));

/** A statement is said again by another that holds this share of its words, weighted by their rarity. */
const RESTATED_SHARE = 0.55;
/** A word used by at most this share of the statements (and at least two) is rare. */
const RARE_SHARE = 0.05;

/**
 * For each statement, the one that says it again and more, if any: at least
 * RESTATED_SHARE of its words, each weighted by how rare it is among these
 * statements (two lines sharing `dnsmasq`, `blocky` and `0x8000` are about one
 * thing; two sharing "test" and "file" are not), are in a statement that
 * shares one of its rare words, weighs more and passes sameSubject. Chains end
 * at the heaviest statement. A statement `fixed` marks is never said again (it
 * only takes others in). Pure: the caller decides which statements may be
 * compared and merges.
 */
export function restatedBy(texts: readonly string[], fixed: (i: number) => boolean = () => false): (number | undefined)[] {
  const sets = texts.map(stems);
  const df = new Map<string, number>();
  for (const set of sets) for (const w of set) df.set(w, (df.get(w) ?? 0) + 1);
  const idf = (w: string): number => Math.log((texts.length + 1) / ((df.get(w) ?? 0) + 0.5));
  const weight = sets.map((set) => [...set].reduce((t, w) => t + idf(w), 0));
  // A word that few of the statements use names their subject: two statements that share none are about other things.
  const rare = Math.max(2, RARE_SHARE * texts.length);
  const into: (number | undefined)[] = texts.map(() => undefined);
  for (let i = 0; i < texts.length; i++) {
    // One or two words say too little to be said again by a longer statement.
    if (sets[i]!.size < 3 || fixed(i)) continue;
    let best = 0;
    for (let j = 0; j < texts.length; j++) {
      if (weight[j]! <= weight[i]!) continue;
      let shared = 0;
      let subject = false;
      for (const w of sets[i]!) {
        if (!sets[j]!.has(w)) continue;
        shared += idf(w);
        if (df.get(w)! <= rare) subject = true;
      }
      const share = shared / weight[i]!;
      if (subject && share >= RESTATED_SHARE && share > best && sameSubject(texts[i]!, texts[j]!)) {
        best = share;
        into[i] = j;
      }
    }
  }
  // Weights rise along a chain, so it ends.
  return into.map((j) => {
    while (j !== undefined && into[j] !== undefined) j = into[j];
    return j;
  });
}

/** A word that turns a statement into its opposite. */
export const NEGATION = /\b(?:not|no|never|none|nothing|without|cannot|\w+n't)\b/i;
/** Whether a statement holds a NEGATION word. */
export const negates: (text: string) => boolean = memoized((text) => NEGATION.test(text));

/**
 * Whether a statement can be said again by another: both say it or both deny
 * it, its measured values are in the other, they share an identifier when both
 * name one, and they are not two items under one lead-in ("X only checks if:
 * the value isn't empty" and "…: the context exists").
 */
function sameSubject(said: string, by: string): boolean {
  if (NEGATION.test(said) !== NEGATION.test(by)) return false;
  const lead = /^([^:]{8,}):\s/.exec(said)?.[1];
  if (lead !== undefined && by.startsWith(`${lead}:`)) return false;
  const m = measures(by);
  if (![...measures(said)].every((n) => m.has(n))) return false;
  return !namesOtherIdentifiers(said, by, true);
}

/** Two statements that give this many of the same measured values (and share a word) state one fact. */
const SAME_MEASURES = 3;

/**
 * The measured values of a statement: its numbers of two digits or more and its decimals, years left out. A
 * percentage is one value at any precision ("98%" and "97.6%" of one reduction): it counts rounded.
 */
export const measures: (text: string) => ReadonlySet<string> = memoized((text) => {
  const out = new Set<string>();
  for (const m of text.matchAll(/(?<![\w.])(\d+(?:[.,]\d+)*)(?![\w.]*\w)(\s?%)?/g)) {
    const n = m[1]!.replace(/,(?=\d{3}\b)/g, '');
    const value = m[2] && /^\d+\.\d+$/.test(n) ? String(Math.round(Number(n))) : n;
    if (/^(?:19|20)\d\d$/.test(n) || /^\d$/.test(n)) continue;
    out.add(value);
  }
  return out;
});

/**
 * A kebab topic key that names the subject of a statement: its identifiers
 * first, then its significant nouns; never a record number or a command
 * prefix. Two to `n` words.
 */
export function subjectKey(raw: string, redactor: Redactor, n = 4): string {
  // A key is derived from text with its secrets hidden: a token never becomes a key.
  const text = redactor.redact(raw).text;
  const picked: string[] = [];
  const push = (t: string): void => {
    const k = t
      .toLowerCase()
      .replace(/[`'"]/g, '')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '');
    if (k.length >= 2 && !/^r?\d+$/.test(k) && !picked.includes(k) && !STOP.has(k) && !KEY_FILLER.has(k)) picked.push(k.slice(0, 30));
  };
  for (const h of handles(text)) {
    if (picked.length >= 2) break;
    if (!/^\d+$/.test(h)) push(h.split(/[/\\]/).pop() ?? h);
  }
  for (const t of significant(text)) {
    if (picked.length >= n) break;
    push(t);
  }
  const key = picked.join('-').replace(/-+/g, '-').slice(0, 60).replace(/-$/, '');
  return key || 'note';
}

/** `text` cut to `max` characters, marked with "…" where it was cut. */
export function clipChars(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** `text` cut to its first `head` and last `tail` characters, `marker(elided)` on a line between (whole when it fits). */
export function keepEnds(text: string, head: number, tail: number, marker: (elided: number) => string): string {
  if (text.length <= head + tail) return text;
  return `${text.slice(0, head)}\n${marker(text.length - head - tail)}\n${text.slice(text.length - tail)}`;
}

/** Of a text cut in its middle, the share of `max` its head keeps (the rest is its tail). */
const MIDDLE_CLIP_HEAD = 0.6;

/** An absolute path (`/Users/me/src/a.ts`, `C:\\src\\a.ts`, `~/x/y`), or one cut before (`…/src/a.ts`); URLs and relative paths are none. */
const ABSOLUTE_PATH = /(?<![\w:/\\.~])(?:…|~|[A-Za-z]:)?(?:[/\\][^\s/\\'"`]+){3,}/g;

/**
 * A text longer than `max` with the upper directories of its longest absolute paths cut, one at a time, until it
 * fits or every path is down to its last `keep` parts (`git add /home/u/M-Claude/Scripts/redact.py` →
 * `git add …/M-Claude/Scripts/redact.py`): where a line must be shortened, the directories above a file say least,
 * and as many as the room allows stay (`…/git/task#001/task#002` says where a path went wrong).
 */
export function shortenPaths(text: string, max: number, keep = 2): string {
  let out = text;
  for (let guard = 0; out.length > max && guard < 100; guard++) {
    let longest: RegExpExecArray | undefined;
    for (const m of out.matchAll(ABSOLUTE_PATH)) {
      if (m[0].split(/[/\\]/).filter((p) => p !== '').length > keep + (m[0].startsWith('…') ? 1 : 0) && (!longest || m[0].length > longest[0].length)) longest = m;
    }
    if (!longest) break;
    const path = longest[0];
    const sep = path.includes('/') ? '/' : '\\';
    const parts = path.split(/[/\\]/).filter((p) => p !== '' && p !== '…');
    out = `${out.slice(0, longest.index)}…${sep}${parts.slice(1).join(sep)}${out.slice(longest.index + path.length)}`;
  }
  return out;
}

/**
 * A command cut to about `max` characters in its middle, marked with "…": its head and its end stay (what tells
 * two commands apart is as often at their end, the file, the URL, the query, as at their start). Each cut moves
 * to a space between words where one is near (`mv test_*.py … tests/integration/`, not `tests/integ …
 * /integration/`), a quoted string it cuts into stays quoted (`powershell "Resolve-DnsName goo…" … "…-DnsOnly"`),
 * and a label clipped before keeps one ellipsis where two would meet.
 */
export function clipCommand(command: string, max: number): string {
  if (command.length <= max) return command;
  // Where each character stands: the quote it is inside, if any.
  const quoteAt: string[] = [];
  let open = '';
  // By UTF-16 unit, as the cut indexes the command (an emoji is two).
  for (let at = 0; at < command.length; at++) {
    const ch = command[at]!;
    const before = open;
    if (open === '' && /["'`]/.test(ch)) open = ch;
    else if (ch === open) open = '';
    quoteAt.push(before && open ? open : '');
  }
  // A space is a boundary, in a quoted string too (the cut keeps that string quoted).
  const boundary = (at: number): boolean => command[at] === ' ';
  const headRoom = Math.round(max * MIDDLE_CLIP_HEAD);
  let headEnd = headRoom;
  for (let at = headRoom; at >= headRoom * SNAP_SHARE; at--) if (boundary(at)) { headEnd = at; break; }
  const tailFrom = command.length - (max - headEnd);
  let tailStart = tailFrom;
  for (let at = tailFrom; at <= tailFrom + (max - headEnd) * (1 - SNAP_SHARE); at++) if (boundary(at)) { tailStart = at + 1; break; }
  // No space near: the tail starts at a part of a path or a name (`/cgi-bin/file.pl`, `::test_timestamp`).
  if (tailStart === tailFrom) tailStart += Math.max(0, command.slice(tailFrom, tailFrom + (max - headEnd) / 2).search(/[/:.=]/));
  const headQuote = quoteAt[headEnd - 1] ?? '';
  const tailQuote = quoteAt[tailStart] ?? '';
  const head = `${command.slice(0, headEnd).trimEnd()}${headQuote ? `…${headQuote}` : ''}`;
  const tail = `${tailQuote ? `${tailQuote}…` : ''}${command.slice(tailStart).trimStart()}`;
  return `${head.replace(/\s*…$/, '')} … ${tail.replace(/^…\s*/, '')}`;
}

/** A cut moves back to a space between words when one is within this share of its room. */
const SNAP_SHARE = 0.5;

/** Header lines that say nothing of what a file is for. */
const BOILERPLATE_LINE = /^(?:copyright|\(c\)|©|spdx-|license|licensed under|all rights reserved|eslint-|@ts-|-\*-|pylint:|noqa|type: ignore|prettier-ignore|biome-ignore|@format|@flow|@jsx|use strict|generated by|auto-generated|do not edit)/i;

/** A top-level declaration of a code file: exported in JS/TS, any in Python, public in Rust. */
const TOP_DECLARATION = /^(?:export\s+(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:const|let|var|function\*?|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)|(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)|pub\s+(?:fn|struct|enum|trait)\s+([A-Za-z_]\w*))/gm;

/**
 * What a code file with no header of its own holds, by the names it declares at its top level ("declares
 * `ValidatorMetadataSchema`"): for a new file, more than its first line ("import { z } from "zod";"). Undefined
 * when it declares none.
 */
export function declaredOf(content: string, max = 3): string | undefined {
  const names: string[] = [];
  for (const m of content.slice(0, 8000).matchAll(TOP_DECLARATION)) {
    const name = m[1] ?? m[2] ?? m[3]!;
    if (!names.includes(name)) names.push(name);
    if (names.length > max) break;
  }
  return names.length ? `declares ${names.slice(0, max).map((n) => `\`${n}\``).join(', ')}${names.length > max ? ', …' : ''}` : undefined;
}

/**
 * What a file says it is for, from the text it was created with: its module
 * docstring or leading comment (code), its title and first sentence (markdown),
 * about `maxWords` words; undefined when it opens with neither. A created
 * file's purpose is what a reader of the Task Context needs of it.
 */
export function purposeOf(path: string, content: string, maxWords = 16): string | undefined {
  const text = content.slice(0, 4000).replace(/^\uFEFF/, '').replace(/^#![^\n]*\n/, '').replace(/^\s+/, '');
  let lines: string[] = [];
  if (/\.(?:md|markdown|mdx|rst|txt)$/i.test(path)) {
    const title = /^#{1,3}\s+([^\n]+)/m.exec(text);
    const rest = title ? text.slice(title.index + title[0].length) : text;
    // The first line of prose under the title, past metadata ("**Date**: …", "Status: …").
    const line = rest
      .split('\n')
      .map((l) => l.replace(/\*\*|__/g, '').trim())
      .find((l) => /^[A-Za-z`]/.test(l) && !/^(?:[-*+]|\d+\.)\s|^```|^\|/.test(l) && !/^(?:date|author|authors|version|status|mode|last (?:updated|modified)|created|updated|owner|tags?)\s*:/i.test(l) && !/^[A-Za-z][\w ]{0,25}:\s*(?:\S+\s*){1,4}$/.test(l));
    lines = [title?.[1] ?? '', line?.split(/(?<=[.!?])\s/)[0] ?? ''];
  } else {
    const doc = /^(?:"""|''')([\s\S]*?)(?:"""|''')/.exec(text) ?? /^\/\*\*?([\s\S]*?)\*\//.exec(text);
    if (doc) lines = doc[1]!.split('\n').map((l) => l.replace(/^\s*\*\s?/, ''));
    else {
      const comments = /^(?:[ \t]*(?:\/\/+|#+|--|;+)[^\n]*(?:\n|$))+/.exec(text);
      if (comments) lines = comments[0].split('\n').map((l) => l.replace(/^\s*(?:\/\/+|#+|--|;+)\s?/, ''));
    }
  }
  const said = lines
    .map((l) => l.replace(/\*\*|__|^#+\s*/g, '').trim())
    // Prose only: a commented-out setting or pattern under the title says nothing of the file's purpose.
    .filter((l) => l !== '' && !BOILERPLATE_LINE.test(l) && !/^[-=~*]{3,}$/.test(l) && !/^@\w+/.test(l) && l.replace(/[^A-Za-z ]/g, '').length >= 0.75 * l.length)
    .slice(0, 2)
    .map((l) => l.replace(/[.:;,]$/, ''));
  const joined = said.join(': ');
  if (words(joined).length < 3) return undefined;
  return statementOf(joined, maxWords);
}
