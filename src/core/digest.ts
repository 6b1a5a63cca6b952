/**
 * The pieces a digest line is made of: one statement of at most
 * STATEMENT_MAX_WORDS words with its identifiers verbatim, a gist of
 * GIST_WORDS words for a demoted line, a topic key that names the subject,
 * the test that two statements say the same thing, and how much a statement
 * carries (its handles: paths, identifiers, numbers, error text).
 *
 * Pure functions over strings; deterministic.
 */
import { looksLikeCode } from './classify';
import { redact } from './redact';
import { decodeEntities } from './tools';

/** A fact line states one thing: this many words at most (identifiers count as one word each). */
export const STATEMENT_MAX_WORDS = 32;
/** A demoted line keeps this many words of its statement, chosen around its identifiers. */
export const GIST_WORDS = 12;

const STOP = new Set(
  'a an the to of in on for and or but is are be been being it its this that these those with as at by we i you he she they them our your my me us there here do does did not no so if then than from into also all any just can could will would should must may might has have had was were which what when where who how why very more most some such about over under after before again only own same too out up down off now let lets okay ok well yes ill ive im youre weve thats theres dont doesnt isnt cant wont didnt'.split(
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

/** Words of a text, code spans kept whole. */
export function words(text: string): string[] {
  return text.match(/`[^`]*`|\S+/g) ?? [];
}

/** An identifier, a path, a version, a number with a unit, an error code: what a later reader searches for. */
const HANDLE = /`[^`\n]{2,80}`|(?:[\w.-]*[/\\][\w.@:\\/-]+)|\b[\w-]+\.(?:[a-z]{1,5})\b|\b[a-z]+(?:[A-Z][a-z0-9]+)+\w*\b|\b[A-Za-z]+_[\w]+\b|\b[A-Z]{2,}[\w-]*\d[\w-]*\b|\bv?\d+\.\d+(?:\.\d+)*\b|\b\d{2,}\b|\b0x[0-9a-f]+\b|--?[a-z][\w-]+/g;

/**
 * A placeholder that stands for hidden text (`[REDACTED:api-key:3f9a1c]`, a
 * corpus's `[REDACTED_IP]`, `[USER]`): the same placeholder stands for many
 * different values, so it names nothing a later record could refer back to.
 */
export const PLACEHOLDER = /^\[?(?:redacted\b|redacted_|user\]?$)/i;

/** The handles of a statement, lower-cased, in order of appearance. */
export function handles(text: string): readonly string[] {
  const known = HANDLES_MEMO.get(text);
  if (known) return known;
  if (HANDLES_MEMO.size > 20_000) HANDLES_MEMO.clear();
  const out: string[] = [];
  for (const m of text.matchAll(HANDLE)) {
    const h = m[0].replace(/^`|`$/g, '').replace(/[.,;:]+$/, '').toLowerCase();
    if (h.length >= 2 && !out.includes(h) && !PLACEHOLDER.test(h)) out.push(h);
  }
  HANDLES_MEMO.set(text, out);
  return out;
}

const HANDLES_MEMO = new Map<string, readonly string[]>();

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
  let best = 0;
  let bestScore = -1;
  let sum = 0;
  for (let i = 0; i < w.length; i++) {
    sum += weight[i]!;
    if (i >= n) sum -= weight[i - n]!;
    // Prefer the opening (it names the subject) unless a later window carries more.
    const start = i - n + 1;
    if (start >= 0 && sum > bestScore + (start === 0 ? -1 : 0)) {
      bestScore = sum + (start === 0 ? 1 : 0);
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

/** A word that opens a clause: a cut before it ends a statement where the next one begins. */
const CLAUSE_OPENER = /^(?:which|because|so|but|and|or|while|whereas|since|although|though|—|–)$/i;
/** A word that cannot end a statement: it leads to the words after it. */
const DANGLING =
  /^(?:a|an|the|of|to|in|on|at|for|with|by|from|as|and|or|but|our|your|its|their|my|this|that|these|those|is|are|was|were|be|been|has|have|had|such|via|into|than|then|if|when|while|because|which|who|whose|not|no|any|all|some|each|every|more|most|very|so|also|will|would|can|could|should|must|may|might|it|we|i|you|they)$/i;

/** Statements are compared again and again across folds: their words are split once (read-only sets). */
const SIGNIFICANT_MEMO = new Map<string, Set<string>>();

/** Significant words of a text (for overlap tests): lower-cased, no stop words, code marks removed. */
export function significant(text: string): Set<string> {
  const known = SIGNIFICANT_MEMO.get(text);
  if (known) return known;
  if (SIGNIFICANT_MEMO.size > 20_000) SIGNIFICANT_MEMO.clear();
  const out = new Set<string>();
  SIGNIFICANT_MEMO.set(text, out);
  for (const raw of text.toLowerCase().replace(/[`'"*]/g, '').split(/[^a-z0-9_.\/#@-]+/)) {
    const t = raw.replace(/^[.\-/]+|[.\-/]+$/g, '');
    if (t.length >= 3 && !STOP.has(t)) out.add(t);
  }
  return out;
}

/**
 * Whether two statements say the same thing: most of the shorter one's
 * significant words are in the other, and they name the same identifiers
 * (two lines about different files are different facts).
 */
export function sameStatement(a: string, b: string): boolean {
  if (a === b) return true;
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
  let shared = 0;
  for (const t of small) if (large.has(t)) shared++;
  if (shared / small.size < 0.7) return false;
  return !namesOtherIdentifiers(a, b);
}

/** Whether two statements both name identifiers and none in common (two lines about different files are different facts). */
function namesOtherIdentifiers(a: string, b: string): boolean {
  const hx = handles(a);
  const hy = handles(b);
  return hx.length > 0 && hy.length > 0 && !hx.some((h) => hy.includes(h));
}

/** Words cut to a rough stem: "installation", "installed" and "install" meet; so do "locked" and "lock". */
export function stems(text: string): Set<string> {
  return new Set([...significant(text)].map((w) => w.replace(/(?:ation|ations|ing|ed|es|s)$/, '')).filter((w) => w.length >= 3));
}

/** A statement is said again by another that holds this share of its words, weighted by their rarity. */
const RESTATED_SHARE = 0.6;
/** A word used by at most this share of the statements (and at least two) is rare. */
const RARE_SHARE = 0.05;

/**
 * For each statement, the one that says it again and more, if any: at least
 * RESTATED_SHARE of its words, each weighted by how rare it is among these
 * statements (two lines sharing `dnsmasq`, `blocky` and `0x8000` are about one
 * thing; two sharing "test" and "file" are not), are in a statement that
 * shares one of its rare words, weighs more and passes sameSubject. Chains end
 * at the heaviest statement. Pure: the caller decides which statements may be
 * compared and merges.
 */
export function restatedBy(texts: readonly string[]): (number | undefined)[] {
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
    if (sets[i]!.size < 3) continue;
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
const NEGATION = /\b(?:not|no|never|none|nothing|without|cannot|\w+n't)\b/i;

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
  return !namesOtherIdentifiers(said, by);
}

/** Two statements that give this many of the same measured values (and share a word) state one fact. */
const SAME_MEASURES = 3;

/** The measured values of a statement: its numbers of two digits or more and its decimals, years left out. */
function measures(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/(?<![\w.])(\d+(?:[.,]\d+)*)(?![\w.]*\w)/g)) {
    const n = m[1]!.replace(/,(?=\d{3}\b)/g, '');
    if (/^(?:19|20)\d\d$/.test(n) || /^\d$/.test(n)) continue;
    out.add(n);
  }
  return out;
}

/**
 * A kebab topic key that names the subject of a statement: its identifiers
 * first, then its significant nouns; never a record number or a command
 * prefix. Two to `n` words.
 */
export function subjectKey(raw: string, n = 4): string {
  // A key is derived from text with its secrets hidden: a token never becomes a key.
  const text = redact(raw).text;
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

// ------------------------------------------------------------- short replies

/** An option the assistant offered: its number (or letter) and its wording. */
export interface Offered {
  readonly label: string;
  readonly text: string;
  /** The line of the message the option stands on. */
  readonly line?: number;
}

/** A reply that only selects: "2", "option 4, 5", "the second one", "yes, do that", "go ahead". */
const SELECTION = /^(?:(?:let'?s |i'?ll |we'?ll )?(?:go with |start with |use |do |pick |take |choose |try )?(?:options? |choices? |#|number )?(?:\d+|[a-e])(?:\s*(?:,|and|&|\+|\/)\s*(?:\d+|[a-e]))*[.!)]?|(?:the )?(?:first|second|third|fourth|fifth|last) (?:one|option)|both|all of them|all three|all)$/i;
const ASSENT = /^(?:y|yes|yeah|yep|yup|sure|ok(?:ay)?|please|please do|do it|go ahead|go for it|sounds good|proceed|continue|correct|right|exactly|agreed|approved|lgtm|ja|tak|да)(?:[,.!]?\s*(?:please|do (?:it|that|so)|go ahead|proceed|continue|thanks|thank you))*[.!]?$/i;
const ORDINALS: Record<string, number> = { first: 1, second: 2, third: 3, fourth: 4, fifth: 5 };

/**
 * Numbered or lettered options in an assistant message: "1. …", "Option 2: …",
 * "**A)** …", "### 3. …". A message may hold several numbered lists (a report,
 * then "Would you like me to: 1. … 2. …"): each restart at 1 (or A) opens a new
 * list, and the last list is the one a reply answers.
 */
export function offeredLists(text: string): Offered[][] {
  const lists: Offered[][] = [];
  let current: Offered[] = [];
  for (const [at, line] of text.split('\n').entries()) {
    const m = /^\s{0,3}(?:#{1,4}\s*)?(?:[-*]\s*)?(?:\*\*|__)?(?:option|choice|approach|step)?\s*(\d{1,2}|[A-E])\s*[.):\]]\s*(?:\*\*|__)?\s*[-–—:]?\s*(.+)$/i.exec(line);
    if (!m) continue;
    const body = m[2]!.replace(/\*\*|__/g, '').replace(/\s+/g, ' ').trim();
    if (body.length < 3) continue;
    const label = m[1]!.toLowerCase();
    if ((label === '1' || label === 'a' || current.some((o) => o.label === label)) && current.length) {
      lists.push(current);
      current = [];
    }
    current.push({ label, text: statementOf(body, 14), line: at });
  }
  if (current.length) lists.push(current);
  return lists;
}

/** The options a reply picks from: the last numbered or lettered list of the message. */
export function offeredOptions(text: string): Offered[] {
  const lists = offeredLists(text);
  return lists[lists.length - 1] ?? [];
}

/** Words that put a list to the user as a choice ("Would you like to:", "Let me know which"). */
const OFFER_LEAD = /\b(?:would you like|do you want|shall i|should i|which (?:one|option|of these|would|do)\b|(?:let me know|tell me) which\b|(?:choose|pick|select) (?:one|an option|which)\b|which (?:would|do) you prefer)/i;
/** Words a message may still say after the options it ends with (a closing remark). */
const OFFER_TAIL_WORDS = 30;

/**
 * The options a message ends by putting to the user ("Would you like to:
 * 1. Push to GitHub 2. Clean up temp files"), quoted; undefined when it ends
 * otherwise. The user's next message answers them.
 */
export function awaitedChoice(text: string): string | undefined {
  const options = offeredOptions(text);
  const first = options[0]?.line;
  const last = options[options.length - 1]?.line;
  if (options.length < 2 || first === undefined || last === undefined) return undefined;
  const lines = text.split('\n');
  const after = lines.slice(last + 1).join(' ');
  if (words(after.replace(/[*_#`>-]/g, ' ').trim()).length > OFFER_TAIL_WORDS) return undefined;
  if (!OFFER_LEAD.test(lines.slice(Math.max(0, first - 3), first).join(' ')) && !OFFER_LEAD.test(after)) return undefined;
  return options.map((o) => `${o.label}. ${o.text}`).join('; ');
}

/** The last question an assistant message asks. */
export function lastQuestion(text: string): string | undefined {
  const flat = text.replace(/```[\s\S]*?```/g, ' ').replace(/\*\*|__/g, '');
  // A sentence ends at punctuation followed by a space or a line break: the dot in `pr.test.ts` ends nothing.
  // A question mark ends a question when a space, the end or a closing mark follows it (`https?://` is code);
  // a line of code or of a patch is no question.
  const questions = flat
    .match(/(?:[^.!?\n]|[.!?](?=[^\s"')\]*_]))+\?(?=[\s"')\]*_]|$)/g)
    ?.map((q) => q.trim())
    .filter((q) => q.length >= 8 && q.length <= 300 && !/^[+-]\s/.test(q) && !looksLikeCode(q));
  return questions?.length ? statementOf(questions[questions.length - 1]!, 24) : undefined;
}

export interface ResolvedReply {
  /** What the reply chose, quoted from the offer. */
  readonly chose: string;
  /** The record of the assistant message that offered it. */
  readonly offered: number;
  /** The reply assented to a question rather than picking a numbered option. */
  readonly assent: boolean;
}

/**
 * What a short reply selects among the options just offered: "2" → option 2's
 * wording; "yes" → the question it answers. Undefined when the reply is not a
 * bare selection or nothing was offered.
 */
export function resolveReply(reply: string, offer: { text: string; record: number } | undefined): ResolvedReply | undefined {
  const r = reply.trim().replace(/\s+/g, ' ');
  if (!offer || r.length > 60) return undefined;
  if (SELECTION.test(r)) {
    const options = offeredOptions(offer.text);
    if (options.length === 0) return undefined;
    let labels: string[];
    const ordinal = /(first|second|third|fourth|fifth|last)/i.exec(r)?.[1]?.toLowerCase();
    if (ordinal) labels = [ordinal === 'last' ? options[options.length - 1]!.label : String(ORDINALS[ordinal])];
    else if (/^(?:both|all\b|all of them|all three)/i.test(r)) labels = options.map((o) => o.label);
    else labels = [...r.replace(/^\D*?(?=\b(?:\d+|[a-e])\b)/i, '').matchAll(/\b(\d+|[a-e])\b/gi)].map((m) => m[1]!.toLowerCase());
    const chosen = labels.map((l) => options.find((o) => o.label === l)).filter((o): o is Offered => o !== undefined);
    if (chosen.length === 0) return undefined;
    return { chose: chosen.map((o) => `${o.label}. ${o.text}`).join('; '), offered: offer.record, assent: false };
  }
  if (ASSENT.test(r)) {
    const q = lastQuestion(offer.text);
    return q ? { chose: q, offered: offer.record, assent: true } : undefined;
  }
  return undefined;
}

// ------------------------------------------------------------------ errors

/** `text` cut to `max` characters, marked with "…" where it was cut. */
export function clipChars(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Lines that name an error: what a failed tool's output says about why. */
const ERROR_WORDS = /error|exception|fail|traceback|not found|denied|cannot|can't|refus|invalid|unable|no such|not allowed|blocked|timed? ?out|requires approval|does not exist|doesn't exist|not permitted|rejected|forbidden|missing|unknown|not a valid|no module|fatal/i;

/** Header lines that say nothing of what a file is for. */
const BOILERPLATE_LINE = /^(?:copyright|\(c\)|©|spdx-|license|licensed under|all rights reserved|eslint-|@ts-|-\*-|pylint:|noqa|type: ignore|prettier-ignore|biome-ignore|@format|@flow|@jsx|use strict|generated by|auto-generated|do not edit)/i;

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

/** Output text as a terminal showed it: JSON string escapes of an exported render decoded, colour codes removed. */
export function terminalText(output: string): string {
  // Copilot (SpecStory) wraps what the terminal printed in its tool record: `"terminalCommandOutput": { "text": "…" }`.
  // A record with no such field showed nothing (the output went to a file); the rest of it is the tool's bookkeeping.
  const wrapped = output.includes('"terminalCommandOutput"') ? /"terminalCommandOutput"\s*:\s*\{\s*"text"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(output) : null;
  if (!wrapped && output.includes('"terminalToolSessionId"') && output.includes('"terminalCommandState"')) return '';
  if (wrapped?.[1]) {
    try {
      output = decodeEntities(JSON.parse(wrapped[1]) as string);
    } catch {
      /* read as it stands */
    }
  }
  const tail = output.slice(-6000);
  const decoded = /\\[rnt]|\\u00[0-9a-f]{2}/i.test(tail) ? tail.replace(/\\r\\n|\\n|\\r/g, '\n').replace(/\\t/g, ' ').replace(/\\u001b/gi, '\u001b').replace(/\\"/g, '"') : tail;
  // eslint-disable-next-line no-control-regex
  return unwrapped(decoded.replace(/\u001b\[[0-9;?]*[A-Za-z]|\[\d+(?:;\d+)*m/g, ''));
}

/** Narrowest width a terminal is taken to wrap at. */
const WRAP_MIN_COLUMNS = 78;

/**
 * Lines a terminal wrapped at its width joined again: an export keeps the wrap mid-word ("…tasks.md: No such
 * file or di" / "rectory"). A line as long as the longest, ending inside a word the next line goes on with.
 */
function unwrapped(text: string): string {
  const lines = text.split('\n');
  let width = 0;
  for (const line of lines) width = Math.max(width, line.length);
  if (width < WRAP_MIN_COLUMNS) return text;
  // The longest line is a wrap only at a terminal's width: one more line as long, or a usual column count.
  if (lines.filter((l) => l.length === width).length < 2 && !TERMINAL_COLUMNS.has(width)) return text;
  const out: string[] = [];
  for (const line of lines) {
    const previous = out[out.length - 1];
    // A word cut by the wrap goes on in its own case: "…is missing" then "Exit code: 1" are two lines.
    const wraps = previous !== undefined && previous.length % width === 0 && /\w$/.test(previous) && /^\w/.test(line) && !(/[a-z]$/.test(previous) && /^[A-Z]/.test(line));
    if (wraps && !PROMPT_LINE.test(previous) && !PROMPT_LINE.test(line)) out[out.length - 1] = previous + line;
    else out.push(line);
  }
  return out.join('\n');
}

/** Column counts terminals are commonly set to. */
const TERMINAL_COLUMNS = new Set([80, 100, 120, 132, 160]);

/**
 * A shell prompt a terminal capture shows before a command or after it ends:
 * `user@host dir % cmd`, `user@host:~/dir$ cmd`, `(venv) user@host dir %`,
 * `PS C:\\dir> cmd`. Exported transcripts (SpecStory, Cursor) keep them in a
 * command's output; they are the terminal, not what the command said.
 */
const PROMPT_LINE = /^(?:\([\w.-]+\)\s*)?[\w.-]+@[\w.-]+(?::[^\s$%>]*)?(?:\s+[^\s$%>]+)?\s*[%$#>](?:\s|$)|^PS [A-Za-z]:\\[^>]*>(?:\s|$)/;

/** The lines a command printed: the terminal's text, trimmed, without blank lines, prompts and the echoed command. */
export function outputLines(output: string): string[] {
  return terminalText(output)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !PROMPT_LINE.test(l));
}

/** How telling an output line is about why a tool failed. */
export function errorWeight(raw: string): number {
  // A git server's lines come prefixed ("remote: error: GH013: Repository rule violations found"): the prefix is no part of them.
  const line = raw.replace(/^remote:\s*/, '');
  // Stack frames, a test runner's code frame ("65 |   expect(…)"), passing tests: never why.
  // A traceback's header and the `raise …(` line of its last frame say where, not why.
  // A compiler's code frame ("| |____- argument #5 of type `&str` is missing", "--> src/lib.rs:3:1") points, it does not say.
  if (/^\s*(?:at\s|File "|\^+$|~+$|-{3,}|={3,}|✓|✔|√|PASS\b|ok\s|\d+\s*\||\||-->|Traceback \(most recent call last\)|raise\b)/.test(line)) return -5;
  // What only says that the command failed ("error: failed to push some refs to …") ranks below why it did.
  let w = /^error: failed to push some refs\b|^error: script "[^"]*" exited with code \d+/.test(line) ? -3 : 0;
  // A tally of the errors above ("could not compile `x` due to 12 previous errors", "Found 3 errors") is none of its own.
  if (/\b(?:could not compile\b.*\bdue to|aborting due to)\b.*\berrors?\b|^(?:Found|\d+) \d* ?errors?(?: generated| in \d+ files?)?\.?$|^error: build failed$|^error: (?:test|doctest) failed, to rerun\b/i.test(line)) w -= 5;
  // An assertion's message says what differed: "Expected to not contain: \"Initial commit\"", "AssertionError: …".
  if (/^(?:Expected\b.*:|Received\b.*:|AssertionError\b|assert(?:ion)? failed\b)/.test(line)) w += 3;
  if (/\b\w*(?:Error|Exception)\b:|\berror TS\d+|^\s*\d+:\d+\s+error\s|\[(?:ERROR|FATAL|ERR)\]|^(?:error|fatal|ERROR)\b[:\[ ]|^E\d{3,4}\b|npm ERR!|^✗|^FAIL\b/.test(line)) w += 3;
  if (/not found|denied|refus|invalid|unable|no such|not permitted|not a function|is not set|cannot|can't|missing|not allowed|rejected|forbidden|no module|does not exist|doesn't exist|timed? ?out|requires approval|not a valid|unknown/i.test(line)) w += 2;
  if (ERROR_WORDS.test(line)) w += 1;
  return w;
}

/**
 * The lines of a failed tool's output that say why: the two most telling
 * lines naming an error (an error class, a cause), in the order they came,
 * else the last line. Stack frames never.
 */
export function errorLine(output: string): string {
  // Column padding ("252:47  error    Strings must use doublequote        quotes") is no content.
  const lines = outputLines(output)
    .filter((l) => !/^(?:exit code:? -?\d+|\[?process exited|status: \*\*\w+\*\*|```\w*|[{}\[\],]+|"\w+": .{0,40},?)$/i.test(l))
    .map((l) => l.replace(/ {3,}/g, '  '));
  const ranked = lines
    .map((line, at) => ({ line, at, w: errorWeight(line) }))
    .filter((x) => x.w > 0)
    .sort((a, b) => b.w - a.w || a.at - b.at);
  const picked: { line: string; at: number }[] = [];
  for (const x of ranked) {
    if (picked.length >= 2) break;
    // A second line must name an error or its cause, not merely use the word ("For more information about this error…").
    if (picked.length === 1 && x.w < 2) break;
    if (picked.some((p) => errorSignature(p.line) === errorSignature(x.line))) continue;
    picked.push(x);
  }
  if (picked.length === 0) return clipChars(lines[lines.length - 1] ?? '', 140);
  picked.sort((a, b) => a.at - b.at);
  return picked.length === 1 ? clipChars(picked[0]!.line, 140) : picked.map((p) => clipChars(p.line, 100)).join(' … ');
}

/** An error line with its variable parts (numbers, hex, paths' tails) removed: two failures with one cause share it. */
export function errorSignature(line: string): string {
  // The clause after the last colon names the cause ("… child_copy: cygheap read copy failed, …").
  const clauses = line.split(/:\s+/);
  const tail = clauses.length > 1 && (clauses[clauses.length - 1]!.match(/[a-z]{3,}/gi)?.length ?? 0) >= 2 ? clauses[clauses.length - 1]! : line;
  const words = tail
    .replace(/(['"`])[^'"`\n]*\1/g, ' ')
    .replace(/\S*[/\\]\S*/g, ' ')
    .toLowerCase()
    .match(/[a-z][a-z_-]{2,}/g);
  return (words ?? []).slice(0, 6).join(' ') || tail.toLowerCase().replace(/\d+/g, '#').trim().slice(0, 40);
}

/** The signatures of every error a line quotes (its pieces are joined by " … ", its causes by " · "): two failures with one cause share one. */
export function errorSignatures(text: string): Set<string> {
  // A test run's counts ("3 passed, 4 failed") are no cause: every failing run of a suite has them.
  const pieces = text.split(/ … |; | · /).filter((piece) => !/^\d+ (?:passed|failed)(?:, \d+ failed)?$/.test(piece.trim()));
  return new Set(pieces.map((piece) => errorSignature(piece.replace(/^…|…$/g, ''))).filter((sig) => sig !== ''));
}

