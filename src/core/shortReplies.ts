/**
 * What a short reply answers: the numbered or lettered options an assistant
 * message ends by putting to the user, the last question it asks, and a reply
 * ("2", "the second one", "yes") resolved against them.
 */
import { looksLikeCode } from './classify';
import { statementOf, stems, words } from './digest';

/** An option the assistant offered: its number (or letter) and its wording. */
export interface Offered {
  readonly label: string;
  readonly text: string;
  /** The line of the message the option stands on. */
  readonly line?: number;
}

/** A reply that only selects: "2", "option 4, 5", "the second one", "yes, do that", "go ahead". */
const SELECTION = /^(?:(?:let'?s |i'?ll |we'?ll )?(?:go with |start with |use |do |pick |take |choose |try )?(?:options? |choices? |#|number )?(?:\d+|[a-e])(?:\s*(?:,|and|&|\+|\/)\s*(?:\d+|[a-e]))*[.!)]?|(?:the )?(?:first|second|third|fourth|fifth|last) (?:one|option)|both|all of them|all three|all)$/i;
const ASSENT = /^(?:y|yes|yeah|yep|yup|sure|ok(?:ay)?|please|please do|do it|go ahead|go for it|sounds good|proceed|continue|correct|right|exactly|agreed|approved|lgtm|ja|tak|да)(?:[,.!]?\s*(?:and\s+)?(?:please|do (?:it|that|so)|go ahead|proceed|continue|thanks|thank you))*[.!]?$/i;
/** An option's label and words that may echo its wording ("2 import GPG key", "option 3 - rebase"). */
const ECHOED_CHOICE = /^(?:options? |choices? |#)?(\d{1,2}|[a-e])\s*[.):,-]?\s+((?:\S+\s*){1,6})$/i;
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
/** A line that leads into work reported as done: "The changes include:", "I've implemented the following:". */
const REPORT_LEAD = /\b(?:changes?|changed|include[sd]?|implemented|completed|done|summary|made|added|fixed|updated|accomplished)\b[^.?!]*[:：]\s*$/i;
/** A question that picks among a list's items. */
const PICKS_AMONG = /\b(?:which|one of|any of|these|option|them)\b/i;
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
  const lead = lines.slice(Math.max(0, first - 3), first).join(' ');
  if (!OFFER_LEAD.test(lead) && !OFFER_LEAD.test(after)) return undefined;
  // A list the message reports as done ("The changes include: 1. … 5. …") is no menu, whatever question follows it,
  // unless that question picks among the items ("Which of these…").
  const leadLine = lines.slice(0, first).reverse().find((l) => l.trim() !== '') ?? '';
  if (!OFFER_LEAD.test(lead) && REPORT_LEAD.test(leadLine) && !PICKS_AMONG.test(after)) return undefined;
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

/** What a resolved reply did, as the summary says it: `chose "2. Use PowerShell…"` or `agreed to "…"`. */
export function choiceText(reply: Pick<ResolvedReply, 'chose' | 'assent'>): string {
  return `${reply.assent ? 'agreed to' : 'chose'} "${reply.chose}"`;
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
  // "2 import GPG key": the option's number and a few of its own words, nothing more.
  const echo = ECHOED_CHOICE.exec(r);
  if (echo) {
    const option = offeredOptions(offer.text).find((o) => o.label === echo[1]!.toLowerCase());
    const said = stems(echo[2]!);
    const own = option !== undefined ? stems(option.text) : undefined;
    if (option && own && said.size > 0 && [...said].every((w) => own.has(w))) return { chose: `${option.label}. ${option.text}`, offered: offer.record, assent: false };
  }
  if (ASSENT.test(r)) {
    const q = lastQuestion(offer.text);
    return q ? { chose: q, offered: offer.record, assent: true } : undefined;
  }
  return undefined;
}

/** A question the agent put to the user through its question tool, and the user's answer. */
export interface AnsweredQuestion {
  readonly question: string;
  readonly answer: string;
}

/** How much of a question and of an answer the summary quotes. */
const QUESTION_CHARS = 160;
const ANSWER_CHARS = 240;

/** The answers as Claude Code's AskUserQuestion and opencode's question tool return them. */
const ANSWERED_LEAD = /^\s*User has answered your questions?:\s*/i;
const ANSWERED_TAIL = /\s*You can now continue with the user's answers in mind\.?\s*$/i;
/** One `"question"="answer"` (or `"question" → "answer"`) pair, up to the next pair or the end. */
const ANSWER_PAIR = /"([\s\S]+?)"\s*(?:=|→|->)\s*"([\s\S]*?)"(?=\s*(?:,\s*"|\.?\s*$|\n|user notes:))(?:\s*user notes:\s*([^\n]+))?/g;
/** A dialog's answers are read from this much of its result (answers are short; the pair pattern is not linear). */
const ANSWERS_MAX_CHARS = 8_000;
/** An answer that says nothing was chosen. */
const UNANSWERED = /^(?:\(no option selected\)|unanswered)$/i;

/**
 * What the user answered through the agent's question tool — a choice made in
 * a dialog, not typed as a message, so it is the user's decision all the same:
 * `User has answered your questions: "Which store?"="SQLite", …` (Claude Code,
 * opencode), or Cline's and Roo's `ask_followup_question`, whose result is
 * `<answer>…</answer>` for the `question` of its input. Undefined when the
 * output is no such answer; questions left unanswered are left out.
 */
export function answeredQuestions(input: unknown, output: string): AnsweredQuestion[] | undefined {
  // Only a call that asked: text of the same form in what a page or a file returned is no answer of the user's.
  const asked = questionsAsked(input);
  if (asked.length === 0) return undefined;
  if (ANSWERED_LEAD.test(output)) {
    const body = output.slice(0, ANSWERS_MAX_CHARS).replace(ANSWERED_LEAD, '').replace(ANSWERED_TAIL, '');
    const pairs = [...body.matchAll(ANSWER_PAIR)]
      .map((m) => ({ question: m[1]!.trim(), answer: [m[2]!.trim(), m[3]?.trim()].filter(Boolean).join(' — ') }))
      .filter((p) => p.answer !== '' && !UNANSWERED.test(p.answer) && asked.includes(oneLine(p.question)));
    return pairs.length > 0 ? pairs : undefined;
  }
  const answer = /^\s*<answer>\s*([\s\S]*?)\s*<\/answer>\s*$/i.exec(output)?.[1];
  return answer && asked.length === 1 ? [{ question: asked[0]!, answer }] : undefined;
}

/** Whitespace as one space: a question compared with the one the call asked. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** `text` cut to `max` characters, ending in "…" when cut. */
function clipped(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text;
}

/** The questions a call put to the user: its input's `question`, or each `question` of its `questions`. */
export function questionsAsked(input: unknown): string[] {
  if (input === null || typeof input !== 'object') return [];
  const { question, questions } = input as { question?: unknown; questions?: unknown };
  const all = Array.isArray(questions) ? questions.map((q: unknown) => (q !== null && typeof q === 'object' ? (q as { question?: unknown }).question : undefined)) : [question];
  return all.filter((q): q is string => typeof q === 'string' && q.trim() !== '').map(oneLine);
}

/** An answer as the summary and the protected state say it: `the user answered "Which store?" → "SQLite"`. */
export function answerText(a: AnsweredQuestion): string {
  return `the user answered "${clipped(oneLine(a.question), QUESTION_CHARS)}" → "${clipped(oneLine(a.answer), ANSWER_CHARS)}"`;
}

/** Claude Code's ExitPlanMode approved (and harnesses that copy it): the plan in its input, or after "## Approved Plan:". */
const PLAN_APPROVED = /^\s*User has approved (?:your|the) plan\b/i;
/** How much of an approved plan the decision quotes: its title, then its first items. */
const PLAN_ITEMS = 6;
const PLAN_CHARS = 320;
/** Its title and first items are read from this much of the plan. */
const PLAN_READ_CHARS = 8_000;

/** The plan a call put to the user (ExitPlanMode's `plan`), if its input holds one. */
function planGiven(input: unknown): string | undefined {
  const plan = input !== null && typeof input === 'object' ? (input as { plan?: unknown }).plan : undefined;
  return typeof plan === 'string' ? plan : undefined;
}

/** A plan's lines as read: trimmed, without blank lines and code fences, from its first PLAN_READ_CHARS. */
function planLines(plan: string): string[] {
  return plan.slice(0, PLAN_READ_CHARS).split('\n').map((l) => l.trim()).filter((l) => l !== '' && !/^```/.test(l));
}

/** Bold markers taken off, their words kept. */
function unbolded(line: string): string {
  return line.replace(/\*\*(.+?)\*\*|__(.+?)__/g, '$1$2');
}

/** A plan's title: its first line, without heading marks. */
function titleOf(lines: readonly string[]): string | undefined {
  return lines[0] === undefined ? undefined : unbolded(lines[0].replace(/^#+\s*/, ''));
}

/** The title of the plan a call put to the user, if it put one (it names the call). */
export function planTitle(input: unknown): string | undefined {
  const plan = planGiven(input);
  return plan === undefined ? undefined : titleOf(planLines(plan));
}

/** An approved plan as a decision: `the user approved the plan "Title": item; item; …`, or undefined when it has no text. */
function approvedPlan(input: unknown, output: string): string | undefined {
  const plan = planGiven(input) ?? /## Approved Plan:\s*\n([\s\S]+)$/.exec(output)?.[1];
  if (!plan || plan.trim() === '') return undefined;
  const lines = planLines(plan);
  // Its steps are its list items; a plan written as sections only is said by its headings.
  const listed = lines.slice(1).filter((l) => /^(?:[-*+]|\d{1,2}[.)])\s/.test(l));
  const items = (listed.length ? listed : lines.slice(1).filter((l) => /^#{2,4}\s/.test(l)))
    .map((l) => unbolded(l.replace(/^(?:#{2,4}|[-*+]|\d{1,2}[.)])\s*(?:\[[ x]\]\s*)?/i, '')))
    .filter((l) => l.length > 2)
    .slice(0, PLAN_ITEMS);
  return clipped(`the user approved the plan "${titleOf(lines)}"${items.length ? `: ${items.join('; ')}` : ''}`, PLAN_CHARS);
}

/**
 * What the user decided in one of the agent's dialogs, as the summary and the
 * protected state say it: the answers to its questions, or the plan they
 * approved. Undefined when the tool's result is no such dialog.
 */
export function dialogDecisions(name: string, input: unknown, output: string): string[] | undefined {
  // A plan approved is the answer to a call that put a plan forward (ExitPlanMode), never text a page returned.
  const putPlan = /plan/i.test(name) || planGiven(input) !== undefined;
  if (PLAN_APPROVED.test(output)) {
    if (!putPlan) return undefined;
    const plan = approvedPlan(input, output);
    return plan ? [plan] : undefined;
  }
  return answeredQuestions(input, output)?.map(answerText);
}
