/**
 * What an agent thought aloud among its answer: the thought summaries
 * Copilot and Gemini print in SpecStory exports, and the reasoning blocks a
 * transcript kept inline (`<think>`, aider's `<thinking-content-…>`). The
 * fold reads them as reasoning, keeping only their most telling statements.
 */
import { handles, sharedWords, stems } from './digest';

/**
 * A thought summary some agents print among their answer (Copilot and Gemini
 * in SpecStory exports): a bold gerund title on its own line, then one
 * paragraph of first-person narration ("**Analyzing the Dependencies**\n\n
 * I've just realized that…"). It is the agent thinking aloud, read as
 * reasoning, not as what it told the user.
 */
const THOUGHT_TITLE = /^\*\*[A-Z][a-z]+ing\b[^*\n:]{0,80}\*\*[ \t]*$/;
const THOUGHT_OPENING = /^(?:i(?:'m|'ve|'ll|'d| am| have| will| need| should| think|\b)|my |okay|ok,|now,? |currently|it (?:seems|looks|appears)|having |after |with |so,? )/i;

/**
 * A reasoning block a model wrote into its answer and the transcript kept inline: `<think>…</think>` (DeepSeek,
 * Qwen), `<thinking>…</thinking>`, aider's `<thinking-content-HEX>…</thinking-content-HEX>`. It opens a line; an
 * unclosed one runs to the end of the text.
 */
const INLINE_THOUGHT_OPENS = /(?:^|\n)[ \t]*<(?:think|thinking|reasoning|thinking-content-[0-9a-f]+)>/i;
const INLINE_THOUGHT = /(?:^|\n)[ \t]*<(think|thinking|reasoning|thinking-content-[0-9a-f]+)>([\s\S]*?)(?:<\/\1>|$)/gi;

/** Splits text into the thought summaries and inline reasoning blocks it holds and the rest (the answer). */
export function splitThoughts(text: string): { thoughts: string; answer: string } {
  if (text.includes('<') && INLINE_THOUGHT_OPENS.test(text)) {
    const blocks: string[] = [];
    const rest = text.replace(INLINE_THOUGHT, (_, _tag: string, inner: string) => {
      blocks.push(inner.trim());
      return '\n';
    });
    const inner = splitThoughts(rest);
    return { thoughts: [...blocks, inner.thoughts].filter((t) => t !== '').join('\n\n'), answer: inner.answer.trim() === '' ? '' : inner.answer };
  }
  if (!text.includes('**')) return { thoughts: '', answer: text };
  const paragraphs = text.split(/\n[ \t]*\n/);
  const thoughts: string[] = [];
  const answer: string[] = [];
  for (let i = 0; i < paragraphs.length; i++) {
    const p = paragraphs[i]!.trim();
    const next = paragraphs[i + 1]?.trim() ?? '';
    if (THOUGHT_TITLE.test(p) && THOUGHT_OPENING.test(next)) {
      thoughts.push(next);
      i++;
      continue;
    }
    answer.push(paragraphs[i]!);
  }
  return thoughts.length ? { thoughts: thoughts.join('\n\n'), answer: answer.join('\n\n') } : { thoughts: '', answer: text };
}

/** Two thoughts of one class naming this many of the same identifiers, most of the lighter one's words shared, think one thing. */
const SAME_THOUGHT_HANDLES = 2;

/**
 * The statements of a step's reasoning that another of the same class says again: reasoning turns one thought over
 * several times ("My plan is to change the `typescript` feature to activate both `typescript-typescript` and
 * `typescript-tsx`…", then "My intention is to ensure that activating the `typescript` feature correctly enables both
 * …"). Of two that name at least SAME_THOUGHT_HANDLES identifiers in common and share half the lighter one's words, the
 * less telling (less salient; of equals, the earlier) goes.
 */
export function thoughtsSaidAgain<T extends { readonly cls: string; readonly text: string; readonly salience: number; readonly order: number; readonly thought?: boolean }>(
  statements: readonly T[],
): T[] {
  const thoughts = statements.filter((s) => s.thought).sort((x, y) => x.salience - y.salience || x.order - y.order);
  const gone: T[] = [];
  for (const [i, s] of thoughts.entries()) {
    const named = handles(s.text);
    const said = stems(s.text);
    const again = thoughts.slice(i + 1).some((t) => {
      if (t.cls !== s.cls || gone.includes(t)) return false;
      const by = stems(t.text);
      return named.filter((h) => handles(t.text).includes(h)).length >= SAME_THOUGHT_HANDLES && sharedWords(said, by) * 2 >= Math.min(said.size, by.size);
    });
    if (again) gone.push(s);
  }
  return gone;
}
