/**
 * The text of a fold's span as a summarizer's prompt gives it to a model: in a
 * prompt of its own, and, when the chat's context holds only the span's oldest
 * units, the rest given in the question after it (see FoldInput.contextUnits).
 * The extension's model summarizer sends it; the eval meters the same text.
 */
import { keepEnds } from './digest';
import { renderUnit } from './projection';
import type { Redactor } from './redact';
import { CONTINUATION_REST_CHARS_PER_TOKEN, type FoldInput } from './summarizer';
import type { TokenCounter } from './tokens';
import type { Unit } from './types';

/** Units as a fold's prompt gives them: each message after its record numbers and role. */
export function spanText(units: readonly Unit[], redactor: Redactor): string {
  const rendered: string[] = [];
  for (const unit of units) {
    // Secrets never leave for a model in a summary prompt either (the chat's context is redacted the same way).
    for (const m of renderUnit(unit)) rendered.push(`[record ${unit.firstRecord}${unit.lastRecord > unit.firstRecord ? `–${unit.lastRecord}` : ''}] ${m.role}: ${redactor.redact(m.content).text}`);
  }
  return rendered.join('\n\n');
}

/**
 * The span's units a fold's context does not hold (see FoldInput.contextUnits),
 * as its question gives them: their text, start and end kept within
 * `restTokens` tokens (all of it when the engine set no bound); '' when the
 * context holds the whole span.
 */
export function continuationRest(input: FoldInput, redactor: Redactor, counter: TokenCounter): string {
  const rest = input.units.slice(unitsInContext(input));
  if (rest.length === 0) return '';
  const text = spanText(rest, redactor);
  const room = input.restTokens;
  if (room === undefined) return text;
  // Characters first at a generous rate, then measured: code, base64 or CJK run two characters a token or fewer.
  let chars = Math.floor(room * CONTINUATION_REST_CHARS_PER_TOKEN);
  let clipped = clipMiddle(text, chars);
  for (let tokens = counter.count(clipped); tokens > room && chars > 1; tokens = counter.count(clipped)) {
    chars = Math.max(1, Math.floor((chars * room) / tokens) - 1);
    clipped = clipMiddle(text, chars);
  }
  return clipped;
}

/** How many of a fold's units (the oldest) its context holds: all, unless the engine said fewer. */
export function unitsInContext(input: FoldInput): number {
  return Math.min(input.contextUnits ?? input.units.length, input.units.length);
}

/** A text clipped to `chars` characters, its start and its end kept. */
function clipMiddle(text: string, chars: number): string {
  const half = Math.floor(chars / 2);
  return text.length <= chars ? text : keepEnds(text, half, half, (elided) => `[… ${elided} characters not shown …]`);
}
