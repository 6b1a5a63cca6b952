/**
 * How a summary line reads a sentence of the agent's with what stands around
 * it: the intro a list item finishes, the items a sentence ending with a colon
 * opens, the sentence a "This …" refers back to.
 */
import { isFragment, type Sentence } from './classify';
import { STATEMENT_MAX_WORDS, words } from './digest';

/**
 * A list item with the sentence it finishes ("…the code might be: taking the entire current application state
 * rather than just the profile-specific settings"): the item whole, the sentence's closing words before it
 * (clipped from the front with "…" to fit one statement). Undefined when the item leaves no room for them.
 */
export function withIntro(intro: string, item: string): string | undefined {
  const room = STATEMENT_MAX_WORDS - words(item).length;
  if (room < 5) return undefined;
  const w = words(intro);
  const head = w.length <= room ? w.join(' ') : `…${w.slice(w.length - room).join(' ')}`;
  return `${head}: ${lowerFirst(item)}`;
}

/** A sentence as the continuation of a line: its capital dropped unless it opens a name ("The" → "the", "API" stays). */
export function lowerFirst(text: string): string {
  return text.replace(/^[A-Z](?=[a-z])/, (c) => c.toLowerCase());
}

/** An item joining the line of the items before it under one intro keeps this many words; the line at most LISTED_LINE_WORDS. */
export const LISTED_ITEM_WORDS = 16;
export const LISTED_LINE_WORDS = 48;

/** Items a sentence that opens a list takes into its line. */
const LISTED_ITEMS = 4;

/**
 * A sentence as a summary line reads it. One that ends with a colon says
 * little alone ("Move it to a shared utility module, such as:"): the short
 * items under it (up to LISTED_ITEMS) finish it ("…such as:
 * `src/domain/repo-utils.ts`; `src/utils/repo.ts`"). Items that are sentences
 * of their own stand on their own.
 */
export function listed(sentences: readonly Sentence[], i: number): string {
  const s = sentences[i]!;
  if (!/[:：]$/.test(s.text)) return s.text;
  const items: string[] = [];
  for (let j = i + 1; j < sentences.length && items.length < LISTED_ITEMS; j++) {
    const item = sentences[j]!;
    if (!item.item || (s.item && !item.lead?.endsWith(s.text))) break;
    if (isFragment(item.text)) items.push(item.text.replace(/[.;,]$/, ''));
  }
  return items.length ? `${s.text} ${items.join('; ')}` : s.text;
}

/**
 * A sentence whose subject is a pronoun for the sentence before it ("This risks embedding conflicting registered
 * claims…", "That explains the 401"): a pronoun followed by a verb, not a determiner ("This file…", "These tests…").
 */
const REFERS_BACK = /^(?:(?:this|that)\s+(?:is|was|will|would|could|can|may|might|should|also|\w+ed|\w+(?<![su])s)|(?:these|those)\s+(?:are|were|will|would|could|can|may|might|should|also))\b/i;

/**
 * A sentence that refers back ("signToken spreads the payload into the JWT constructor. This risks embedding
 * conflicting claims…") read with the sentence it refers to, as one statement; undefined for any other, or where
 * the sentence before is a heading, a lead-in or another list's item.
 */
export function withReferent(sentences: readonly Sentence[], i: number): string | undefined {
  const s = sentences[i]!;
  const before = sentences[i - 1];
  if (!REFERS_BACK.test(s.text) || before === undefined || before.heading || Boolean(before.item) !== Boolean(s.item) || /[:：]$/.test(before.text)) return undefined;
  return continued(before.text, s.text);
}

/** A statement and the sentence that goes on from it, as one line: "…constructor; this risks embedding…". */
export function continued(statement: string, sentence: string): string {
  return `${statement.replace(/[.…;!]$/, '')}; ${lowerFirst(sentence)}`;
}
