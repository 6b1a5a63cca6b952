/**
 * A plan the agent laid out as a list ("Implementation Order: 1. First
 * implement the data structure changes… 2. Update ConfigManager… 3. …"):
 * each step alone is narration of work to come and never a line of the
 * summary, but the list is what the user approves ("please go ahead and
 * implement everything discussed above") and later checks the work against
 * ("recheck the initial implementation plan"). It is kept as one line, its
 * steps in order, each shortened.
 */
import { classifySentence, type Sentence } from './classify';
import { statementOf } from './digest';
import { lowerFirst } from './sentenceReading';
import type { SummaryBuilder } from './summary';
import { isContinuation, liftsReadOnly } from './userWords';

/** The key of the plan's line: one plan at a time, the one laid out last. */
export const PLAN_KEY = 'plan-laid-out';

/** A lead that announces steps: "Implementation Order:", "Proposed plan:", "Next steps:", "Immediate Actions Required:", "Następne kroki:". */
const PLAN_LEAD = /\b(?:plan|steps|order|approach (?:is|would be)$|roadmap|phases?|strategy|proposal|proposed (?:changes|fix(?:es)?|solution)|action items|actions (?:required|needed)|kroki|шаги|план)(?![\p{L}])/iu;
/** A lead over steps already taken ("Steps completed:", "Wykonane kroki:"): a report of work done, not a plan. */
const DONE_LEAD = /\b(?:taken|completed|done|performed|finished|wykonane|zrobione|выполнен\p{L}*)(?![\p{L}])/iu;
/** A mark of an item's state: done, partly done, failed. */
const STATUS_MARK = /^(?:\[[x ]\]|[✅✔☑⚠❌✗🟡🟢🔴⏳🚧])/u;
/** A lead whose items are the reasons for something, each already said with it (sentenceReading.listed). */
const GIVES_REASONS = /\b(?:because|since|why|reasons?|benefits?|advantages?|as (?:it|this|they))\b/i;
/** A reply that agrees to what was just proposed ("yes, but only after…", "sounds good", "let's do it"). */
const AGREES = /^(?:y|yes|yeah|yep|sure|ok(?:ay)?|agreed|i agree|approved|sounds good|looks good|lgtm|perfect|great|go ahead|go for it|proceed|let'?s do (?:it|that|this)|do it|please (?:go ahead|proceed|do|implement|continue))\b/i;
/** What a plan's line says once the user agreed to it, before their words. */
const AGREED = ' — agreed by the user: ';
/** Words of the user's reply the plan's line quotes. */
const REPLY_WORDS = 14;
/** Per fold (its builder): the plan a step laid out that no user message has answered yet. */
const unanswered = new WeakSet<SummaryBuilder>();

/** Fewer steps than this are not a plan worth a line of their own (one or two read as next steps). */
const MIN_STEPS = 3;
/** Words a step keeps at most, and at least (the plan's line shares its words among its steps). */
const STEP_WORDS = 8;
const MIN_STEP_WORDS = 3;
/** Words the steps of a plan's line keep in all, numbers included (its lead beside them): a plan is one statement. */
const PLAN_LINE_WORDS = 40;

/**
 * Writes the plan a text lays out, if any, as the Decisions line of the plan:
 * the plan laid out last is the plan, and an earlier one (carried out, or
 * replaced) leaves with its sources rather than standing beside it.
 */
export function layPlan(b: SummaryBuilder, sentences: readonly Sentence[], record: number): void {
  const plan = listedPlan(sentences);
  if (plan === undefined) return;
  unanswered.add(b);
  b.remove(PLAN_KEY);
  b.upsert('Decisions', { key: PLAN_KEY, text: b.redactor.redact(plan).text, sources: [record], priority: 3, origin: 'exact' });
}

/**
 * The user's first words after a plan: a reply that agrees to it ("yes, go
 * ahead", "please implement everything discussed above", "continue as
 * planned") makes it theirs too, and its line says so with their words, a
 * condition included ("yes, but only after you have updated the
 * documentation"); anything else leaves it the agent's proposal.
 */
export function answerPlan(b: SummaryBuilder, words: string, record: number): void {
  const line = b.facts.Decisions.find((l) => l.key === PLAN_KEY);
  // Laid out in this fold and not answered yet, or by the message just before this one (an earlier fold's last step).
  const pending = unanswered.delete(b) || (line !== undefined && line.sources.at(-1) === record - 1 && !line.text.includes(AGREED));
  const reply = words.trim();
  if (!pending || (!AGREES.test(reply) && !isContinuation(reply) && !liftsReadOnly(reply))) return;
  if (line) b.upsert('Decisions', { ...line, text: `${line.text}${AGREED}"${b.redactor.redact(statementOf(reply, REPLY_WORDS)).text}"`, sources: [record] });
}

/**
 * The longest list of at least MIN_STEPS items under one lead that plans,
 * as "Lead: 1. step; 2. step; …" — or undefined when the text lays out no
 * such list. Items whose own text ends in a colon head sub-lists: a list of
 * headings is an outline, not steps, and is left to the rest of the fold.
 */
export function listedPlan(sentences: readonly Sentence[]): string | undefined {
  const groups = new Map<string, string[]>();
  for (const s of sentences) {
    if (!s.item || s.lead === undefined || /[:：]$/.test(s.text)) continue;
    const steps = groups.get(s.lead) ?? [];
    steps.push(s.text);
    groups.set(s.lead, steps);
  }
  let best: { lead: string; steps: string[] } | undefined;
  for (const [lead, steps] of groups) {
    // Items that report what is done ("✅ Data Structure Separation") make a progress report (see progressReport), not a plan.
    if (steps.length < MIN_STEPS || (best && best.steps.length >= steps.length) || !plans(lead) || steps.some((s) => STATUS_MARK.test(s))) continue;
    best = { lead, steps };
  }
  if (!best) return undefined;
  const lead = best.lead.replace(/^#+\s*/, '').replace(/[:：]\s*$/, '');
  // Every step keeps its first words rather than the last steps being cut: past what the line can say, the rest are counted.
  const shown = Math.min(best.steps.length, Math.floor(PLAN_LINE_WORDS / (MIN_STEP_WORDS + 1)));
  const each = Math.max(MIN_STEP_WORDS, Math.min(STEP_WORDS, Math.floor(PLAN_LINE_WORDS / shown) - 1));
  const steps = best.steps.slice(0, shown).map((step, i) => `${i + 1}. ${lowerFirst(statementOf(step, each)).replace(/[.;]$/, '')}`);
  const more = best.steps.length - shown;
  return `${lead}: ${steps.join('; ')}${more > 0 ? `; … and ${more} more step${more === 1 ? '' : 's'}` : ''}`;
}

/** Whether a lead announces steps to take (not "Root causes:", "The file includes:", "in this order because:"). */
function plans(lead: string): boolean {
  const text = lead.replace(/[:：]\s*$/, '');
  if (GIVES_REASONS.test(text) || DONE_LEAD.test(text)) return false;
  return PLAN_LEAD.test(text) || classifySentence(`${text}:`, 'assistant').cls === 'plan';
}
