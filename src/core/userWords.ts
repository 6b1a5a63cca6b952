/**
 * What the user said, read for the summary: request lines (a short reply
 * resolved against what the assistant last offered), the rules a message
 * states (and those it only carries: injected or pasted text), the read-only
 * phase an ask for the change ends, and the protected lines (request log,
 * safety constraints) re-derived from the raw record.
 */
import { classifySentence, isRuleSentence, looksLikeCode, looksLikeLog, ruleKind, sentencesOf } from './classify';
import { withInFileAsks } from './aiderWatch';
import { OBJECTED, REPROACH, RULE_CLAUSE, RULE_MODAL } from './cues';
import { handles, statementOf, subjectKey } from './digest';
import { AGENT_SUMMARY_TRAILER, askText, splitQuoted, splitUserText, type QuotedText, type UserText } from './harness';
import type { Redactor } from './redact';
import { choiceText, resolveReply } from './shortReplies';
import { SummaryBuilder, type FactLine, type RequestLine, type SummaryState } from './summary';
import type { Part, Unit } from './types';

/** Requests longer than this keep their verbatim head; the record keeps the rest. */
export const REQUEST_MAX_CHARS = 1200;
const MAX_CONSTRAINTS_PER_MESSAGE = 24;

const SAFETY_PATTERN =
  /\b(never|must not|mustn't|do not|don't|not allowed|forbidden|prohibited|under no circumstances)\b.*|\b(production|prod db|secret|password|credential|api key|private key|delete|drop table|force[- ]push|rm -rf|security|privacy|personal data|pii|destructive|backup|sign(?:ed|ing)?)\b/i;
/**
 * A rule that keeps the agent from changing anything for now ("DO NOT modify
 * code, JUST identify where the issue lies", "I do not wish to make changes at
 * this point"): a phase of looking, which the user's later ask for the change
 * ends. A rule about one thing ("never touch package.json", "don't change the
 * tests") is not one.
 */
export const READ_ONLY_RULE =
  /\b(?:do not|don't|dont|never)\b[^.!?\n]{0,15}?\b(?:modify|change|edit|touch|write|alter)\s+(?:any(?:thing)?\s+)?(?:of\s+)?(?:the\s+)?(?:code(?:base)?|files?|anything)\b|\b(?:do not|don't|dont|never)\b[^.!?\n]{0,25}?\bmake\s+(?:any\s+)?(?:code\s+)?changes\b|\bnot\s+(?:want|wish)\s+to\s+(?:make\s+)?(?:any\s+)?changes\b/i;
/** An ask for the change itself: "please go ahead and implement everything discussed", "now fix it". */
const ASKS_FOR_CHANGES =
  /\b(?:go ahead and (?:implement|make|apply|fix|change|update|do)|(?:please |now |ok,? )?implement (?:it|this|that|them|these|those|everything|all|the (?:fix|changes?|plan))|make (?:the|these|those) changes|apply (?:the |these |those )?(?:changes|fix(?:es)?)|start (?:fixing|implementing|coding|making the changes)|you (?:can|may) (?:now )?(?:edit|change|modify|implement|make (?:the )?changes))\b/i;

/** Whether a user message ends a read-only phase: it asks for the change and does not restate the rule. */
export function liftsReadOnly(text: string): boolean {
  return ASKS_FOR_CHANGES.test(text) && !READ_ONLY_RULE.test(text);
}

/** Removes the read-only rules stated before `record` (whose ask for the change lifted them) from `lines`. */
export function dropLiftedRules(lines: FactLine[], record: number): void {
  for (let i = lines.length - 1; i >= 0; i--) if (READ_ONLY_RULE.test(lines[i]!.text) && lines[i]!.sources.every((s) => s < record)) lines.splice(i, 1);
}

const PROHIBITIVE = /\b(never|must not|mustn't|do not|don't|dont|not allowed|forbidden|prohibited|under no circumstances|no\s+\w+\s+(?:allowed|permitted)|without)\b/i;

/** A stable kebab topic key naming the subject of a statement. */
export function topicKey(text: string, redactor: Redactor, words = 5): string {
  return subjectKey(text, redactor, words);
}

/** Is a user message a request: does it hold any of the user's own words? */
export function isRequestText(text: string): boolean {
  return splitUserText(text).words !== '';
}

export function requestLine(ordinal: number, record: number, text: string, redactor: Redactor): RequestLine {
  const split = splitUserText(text);
  // "[image]\nfix these issues": what "these" points at came as an image, which the log does not hold; the line says it came.
  const image = split.words.trim() !== '' && split.harness.some((h) => h.kind === 'placeholder' && /^\[image\b/i.test(h.text.trim()));
  const t = redactor.redact(`${askText(split.words)}${image ? ' [with an image]' : ''}`).text;
  if (t.length <= REQUEST_MAX_CHARS) return { ordinal, text: t, record, elided: 0 };
  return { ordinal, text: t.slice(0, REQUEST_MAX_CHARS), record, elided: t.length - REQUEST_MAX_CHARS };
}

/**
 * The user-stated constraints of one message, verbatim, with their safety
 * flag: every prescriptive sentence of the user's own words, wherever it
 * stands ("Also, never…" and "From now on, always…" included). Pasted code,
 * logs, quoted text and agent-injected text are not rules the user stated.
 */
export function extractConstraints(text: string | UserMessage, limit = MAX_CONSTRAINTS_PER_MESSAGE): { sentence: string; safety: boolean }[] {
  const message = typeof text === 'string' ? readUserMessage(text) : text;
  if (message.split.words === '') return [];
  // A message that is all quote ("> Search all files in `schemas/`…") is what the user sent as their own: its ask and its rules.
  if (allQuoted(message)) return ruleSentences(message.split.words, limit);
  return ruleSentences(message.quoted.own, limit).map((r) => ({ ...r, sentence: withQuotesRestored(r.sentence, message.split.words) }));
}

/** A quoted passage marked `"…"` in the user's own words (see splitQuoted), as a pattern: open mark, the mark, close mark. */
const QUOTE_MARK = /["“]…["”]/;
/** A passage quoted in a rule is said with it when it is this short; a longer one stays marked (the record keeps it). */
const RULE_QUOTE_MAX_CHARS = 200;

/**
 * A rule with the passages it quotes put back: `Do not add "…".` is a rule about
 * nothing, `Do not add "and you should also restructure X, Y, Z".` says what
 * not to add. The passage was set aside so that a rule inside someone else's
 * text is not read as the user's; the rule that quotes it is still the user's
 * sentence, word for word. Unchanged when the sentence is not found as written.
 */
function withQuotesRestored(sentence: string, words: string): string {
  if (!QUOTE_MARK.test(sentence)) return sentence;
  const literal = (chunk: string): string => chunk.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+');
  const pattern = sentence.split(QUOTE_MARK).map(literal).join(`["“]([^"“”\\n]{1,${RULE_QUOTE_MAX_CHARS}})["”]`);
  const found = new RegExp(pattern).exec(words);
  return found ? found[0].replace(/\s+/g, ' ') : sentence;
}

/** A user message read once: what an agent injected into it, and the user's own words apart from what they pasted. */
export interface UserMessage {
  readonly split: UserText;
  readonly quoted: QuotedText;
}

export function readUserMessage(text: string): UserMessage {
  const split = splitUserText(text);
  return { split, quoted: splitQuoted(split.words) };
}

/** Whether the user's words are all quote, none their own around it: then the quote is their message. */
function allQuoted(message: UserMessage): boolean {
  return message.quoted.own.trim() === '' && message.split.words.trim() !== '';
}

/** A reply that only says to go on with the work under way ("continue", "i agree, continue", "keep going"). */
const CONTINUATION = /^(?:(?:ok(?:ay)?|yes|yeah|sure|great|good|perfect|thanks|thank you|i agree|agreed|looks good|sounds good|lgtm)[,.!]?\s*)*(?:please\s+)?(?:continue|go on|keep going|carry on|proceed|resume|next|go ahead|do it|do so|continue please|please continue|try (?:it |that )?again|retry|redo (?:it|that)|do (?:it|that) again)(?:\s+(?:please|then|as (?:planned|discussed|agreed|proposed|suggested|before)|and do (?:so|it|that)|with (?:the|that|it)(?: \w+)?|where you left off))?[.!]*$/i;

/** Whether a reply only says to go on with the work under way (asks for nothing new). */
export function isContinuation(words: string): boolean {
  return CONTINUATION.test(words.trim());
}

/** Whether the user's own words are rules and courtesy only, no ask. */
export function onlyRules(words: string): boolean {
  let rules = 0;
  // A rule typed after an ask in one run ("ensure the changelog is accurate. and yes, apply the changes yourself, always")
  // is a sentence of its own: the ask before it is still asked.
  for (const text of userSentences(splitQuoted(words).own)) {
    const { cls } = classifySentence(text, 'user');
    // A rule in a clause of an ask ("run them in order, but only one at a time") asks for the work too.
    if (cls === 'rule' && ruleKind(text) !== 'clause') rules++;
    else if (cls !== 'pleasantry' && cls !== 'other') return false;
  }
  return rules > 0;
}

/** A rule that leaves its verb's object to the sentence before it: "you should be", "you must", "always do". */
const ELLIPTICAL_RULE = /^(?:\S+\s+){0,2}\S+[.!]?$/;

/**
 * A short rule whose object is what the sentence before it named ("In CONVENTIONS.md, reorder the lists. DO NOT
 * CHANGE the contents.", "why did you delete it? don't do that again"): kept with that sentence, or it reads as a
 * rule for the whole session.
 */
const REFERRING_RULE = /\b(?:it|them|this|that|those|these|the (?:contents?|file|files|lists?|order|rest|same|text|wording|code|items?))\b/i;
const REFERRING_RULE_MAX_WORDS = 8;
/** A rule that says it holds from now on ("from now on, always ask before merging them") sets its own reach. */
const STANDING_RULE = /^(?:from now on|going forward|in (?:the )?future|henceforth|always|never)\b/i;
const REFERRED_MAX_CHARS = 160;

/** A full stop a user typed before a lower-case sentence ("no, do not clean it up. look at this error"), not after an abbreviation. */
const LOWER_CASE_STOP = /(?<!\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|no|fig|ca)\.)(?<=[a-z0-9)"'`][.!?])\s+(?=[a-z])/;

/**
 * The sentences of the user's words, a sentence typed in lower case after a
 * full stop apart too when either part is a rule: a rule is kept as the user
 * said it, without the ask or the pasted error that followed it in one run.
 */
function userSentences(text: string): string[] {
  return sentencesOf(text).flatMap(({ text: said }) => {
    const parts = said.split(LOWER_CASE_STOP);
    return parts.length > 1 && parts.some((p) => isRuleSentence(p)) ? parts : [said];
  });
}

/**
 * A message longer than this is a brief, not a correction: its "You are auditing the core repository…" frames the
 * agent's role rather than reproaches what it did (a reproach is said in a short reply).
 */
const REPROACH_MAX_CHARS = 400;

/** The prescriptive sentences of `text` (code and log lines left out). */
function ruleSentences(text: string, limit: number): { sentence: string; safety: boolean }[] {
  const out: { sentence: string; safety: boolean }[] = [];
  let previous = '';
  for (const said of userSentences(text)) {
    const before = previous;
    previous = said;
    if (said.length < 6 || looksLikeCode(said) || looksLikeLog(said) || !isRuleSentence(said)) continue;
    // An answer to the user's own question says its rule with it ("are you in the session repo? you should be").
    const refers = before !== '' && before.length <= REFERRED_MAX_CHARS && said.split(/\s+/).length <= REFERRING_RULE_MAX_WORDS && REFERRING_RULE.test(said) && !STANDING_RULE.test(said) && handles(said).length === 0 && !isRuleSentence(before);
    const sentence = (ELLIPTICAL_RULE.test(said) && before.endsWith('?')) || refers ? `${before} ${said}` : said;
    const safety = PROHIBITIVE.test(sentence) && SAFETY_PATTERN.test(sentence);
    // "you're editing in the main workspace" states the opposite of its rule: it is kept as what the user objected to.
    const reproach = REPROACH.test(said) && !RULE_MODAL.test(said) && !RULE_CLAUSE.test(said);
    if (reproach && text.length > REPROACH_MAX_CHARS) continue;
    out.push({ sentence: reproach ? OBJECTED(sentence) : sentence, safety });
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * The rules inside what a user message carries but the user did not write:
 * text an agent injected into their turn and text they pasted or quoted.
 * Each is a candidate the user must confirm, never an active rule.
 */
export function quotedRules(text: string | UserMessage, limit = MAX_CONSTRAINTS_PER_MESSAGE): { sentence: string; injected: boolean }[] {
  const { split, quoted } = typeof text === 'string' ? readUserMessage(text) : text;
  // The harness's own instructions to the model (go on without asking) are no rule a user could confirm.
  const injected = split.harness.filter((h) => h.kind !== 'interrupted' && h.kind !== 'placeholder').map((h) => ({ text: h.kind === 'agent-summary' ? h.text.replace(AGENT_SUMMARY_TRAILER, '') : h.text, injected: true }));
  const pieces = [...injected, ...(allQuoted({ split, quoted }) ? [] : quoted.quoted.map((q) => ({ text: q, injected: false })))];
  const out: { sentence: string; injected: boolean }[] = [];
  for (const { text: piece, injected: fromHarness } of pieces) {
    // Tags and log prefixes (a timestamp, `##[warning]`, `[ERROR]`) go: the sentence after them is what could be obeyed.
    const plain = piece
      .slice(0, 20_000)
      .replace(/<\/?[a-zA-Z_-]+[^>]*>/g, '\n')
      .replace(/^\s*(?:\S*\d{4}-\d\d-\d\d[T ]\d\d:\d\d\S*\s+)?(?:##\[\w+\]\s*|\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|NOTICE)\]?:?\s+)?/gim, '');
    for (const { sentence } of ruleSentences(plain, limit - out.length)) {
      // A sentence that ends in a comma was cut where its line wrapped (a docstring in a file listing: "Must be 'days',
      // 'seconds', 'microseconds',"): no statement a user could confirm.
      if (sentence.length <= 300 && !/,\s*$/.test(sentence)) out.push({ sentence, injected: fromHarness });
    }
    if (out.length >= limit) break;
  }
  return out;
}

/** The last assistant prose of a step: what a short reply right after it answers. */
export function offerOf(unit: Unit): { record: number; text: string } | undefined {
  for (let i = unit.parts.length - 1; i >= 0; i--) {
    const p = unit.parts[i]!;
    if (p.kind === 'text' && p.text.trim() !== '') return { record: p.record, text: p.text.slice(-6000) };
  }
  return undefined;
}

/** A request line with its short reply resolved against what the assistant last offered. */
export function resolvedRequest(ordinal: number, part: Part, offer: { record: number; text: string } | undefined, redactor: Redactor, words = splitUserText(part.text).words): RequestLine {
  const line = requestLine(ordinal, part.record, part.text, redactor);
  const resolved = line.elided === 0 ? resolveReply(line.text, offer) : undefined;
  if (resolved) return { ...line, resolved: { chose: redactor.redact(resolved.chose).text, offered: resolved.offered, assent: resolved.assent } };
  // After the first ask, a reply that only says to go on asks for nothing new.
  return ordinal > 1 && isContinuation(words) ? { ...line, continuation: true } : line;
}

/** The protected lines of a covered prefix, derived from the raw units alone. */
export interface ProtectedLines {
  readonly requests: RequestLine[];
  readonly safety: FactLine[];
  /** What the last folded assistant message offered (for a reply right after the boundary). */
  readonly offer?: { readonly record: number; readonly text: string };
}

/**
 * Re-derives the P0 lines (request log, safety constraints) from the raw units
 * of a covered prefix. Preflight compares them with a restored summary so that
 * a summary of a summary can never drift away from what the user said.
 * `continueFrom` extends the lines of the units before `units` (a left fold).
 */
export function protectedFromRaw(units: readonly Unit[], redactor: Redactor, continueFrom?: ProtectedLines, before: readonly Unit[] = []): ProtectedLines {
  const requests: RequestLine[] = continueFrom ? [...continueFrom.requests] : [];
  const safety: FactLine[] = continueFrom ? [...continueFrom.safety] : [];
  let offer = continueFrom?.offer;
  // The asks aider's watch mode took from comments are requests too, as the fold makes them (see aiderWatch.ts).
  for (const unit of withInFileAsks(units, before)) {
    if (unit.kind === 'step') {
      offer = offerOf(unit) ?? offer;
      continue;
    }
    if (unit.kind !== 'user') continue;
    for (const part of unit.parts) {
      if (!isRequestText(part.text)) continue;
      const { words } = splitUserText(part.text);
      requests.push(resolvedRequest(requests.length + 1, part, offer, redactor, words));
      // A read-only rule the user's ask for the change ended is not put back.
      if (liftsReadOnly(words)) dropLiftedRules(safety, part.record);
      for (const c of extractConstraints(part.text)) {
        if (c.safety) safety.push({ key: topicKey(c.sentence, redactor), text: c.sentence, sources: [part.record], priority: 0, origin: 'exact' });
      }
    }
  }
  return { requests, safety, ...(offer ? { offer } : {}) };
}

/**
 * Restores the raw-derived P0 lines into a summary: the request log is taken
 * from the raw as is, missing or altered safety constraints are put back.
 * Returns the repaired state and how many lines had drifted.
 */
export function resetDrift(state: SummaryState, raw: ProtectedLines, redactor: Redactor): { state: SummaryState; drifted: number } {
  let drifted = 0;
  const b = new SummaryBuilder(state, redactor);
  const same =
    raw.requests.length === state.requests.length &&
    raw.requests.every((r, i) => {
      const s = state.requests[i]!;
      return s.ordinal === r.ordinal && s.record === r.record && r.text.startsWith(s.text) && s.resolved?.chose === r.resolved?.chose;
    });
  if (!same) {
    drifted += Math.max(1, Math.abs(raw.requests.length - state.requests.length));
    b.requests.splice(0, b.requests.length, ...raw.requests);
  }
  for (const line of raw.safety) {
    const existing = b.facts.Constraints.find((l) => l.key === line.key);
    if (existing && existing.text === line.text) continue;
    drifted++;
    b.upsert('Constraints', existing ? { ...line, sources: [...existing.sources, ...line.sources] } : line);
  }
  return { state: drifted ? b.build(state.coverageEnd, state.folds) : state, drifted };
}

const CURRENT_MAX_WORDS = 40;

/** The goal: the whole ask (its opening words when long, with where the rest is), and what a short reply chose. */
export function goalText(req: RequestLine): string {
  // A link reads as its text there: the request keeps the address.
  const ask = statementOf(req.text.replace(/\[([^\]\n]+)\]\((?:https?:|\.{0,2}\/)[^)\s]*\)/g, '$1').replace(/\s+/g, ' '), CURRENT_MAX_WORDS);
  return req.resolved ? `"${ask}" → ${choiceText(req.resolved)}` : ask;
}
