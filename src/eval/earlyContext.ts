/**
 * Does the projected context still carry what the user said at the start?
 *
 * Probes are taken from the user records in the first quarter of a session:
 * each request (its opening words) and each sentence that states a rule
 * ("must", "never", "don't", "always", "only", …). A probe passes when its text
 * appears verbatim in the projected messages. The same probes are checked
 * against a sliding window of the same size (the newest raw messages that fit),
 * the strategy most agents fall back on.
 *
 * The rule detector here is deliberately independent of the summarizer's own
 * constraint extraction, so the check is not circular. What an agent injected
 * into the user's turn (core/harness) is not the user's and yields no probe.
 */
import type { ProjectedMessage } from '../core/engine';
import { splitUserText } from '../core/harness';
import type { RawRecord } from '../core/types';
import type { TokenCounter } from '../core/tokens';

export interface EarlyProbe {
  readonly kind: 'request' | 'constraint';
  readonly record: number;
  /** Text that must appear verbatim (whitespace-normalised) in the context. */
  readonly text: string;
}

const RULE = /\b(must|never|don't|do not|always|only|should not|shouldn't|avoid|make sure)\b/i;
const REQUEST_PROBE_CHARS = 60;

function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function isProbeable(text: string): boolean {
  return text.trim().length >= 8;
}

/** Probes from the user records among the first `share` of the records. */
export function earlyProbes(records: readonly RawRecord[], share = 0.25): EarlyProbe[] {
  const end = Math.max(1, Math.ceil(records.length * share));
  const probes: EarlyProbe[] = [];
  for (const r of records.slice(0, end)) {
    if (r.role !== 'user') continue;
    const words = splitUserText(r.content).words;
    if (!isProbeable(words)) continue;
    const text = normalise(words);
    probes.push({ kind: 'request', record: r.index, text: text.slice(0, REQUEST_PROBE_CHARS) });
    for (const line of words.replace(/```[\s\S]*?```/g, ' ').split(/(?<=[.!?])\s+|\n+/)) {
      const sentence = normalise(line.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, ''));
      const code = /^\d+\s*[:→|]/.test(sentence) || /[{}();=]/.test(sentence) || /^(def|class|import|return|self\.)\b/.test(sentence);
      if (sentence.length >= 12 && sentence.length <= 320 && !code && RULE.test(sentence)) probes.push({ kind: 'constraint', record: r.index, text: sentence });
    }
  }
  return probes;
}

export interface ProbeScore {
  readonly total: number;
  readonly kept: number;
  readonly missing: EarlyProbe[];
}

/** Which probes appear verbatim in the messages. */
export function scoreProbes(probes: readonly EarlyProbe[], messages: readonly ProjectedMessage[]): ProbeScore {
  const haystack = normalise(messages.map((m) => m.content).join('\n'));
  const missing = probes.filter((p) => !haystack.includes(p.text));
  return { total: probes.length, kept: probes.length - missing.length, missing };
}

/** The newest raw messages whose content fits in `budget` tokens (a sliding window). */
export function slidingWindow(messages: readonly ProjectedMessage[], budget: number, counter: TokenCounter): ProjectedMessage[] {
  const kept: ProjectedMessage[] = [];
  let used = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const tokens = counter.count(messages[i]!.content);
    if (used + tokens > budget) break;
    used += tokens;
    kept.push(messages[i]!);
  }
  return kept.reverse();
}
