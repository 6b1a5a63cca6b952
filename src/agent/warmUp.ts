/**
 * Work done once per process on first use, done ahead after activation in
 * small steps instead, so that the first @keeper turn does not do it in
 * larger blocks of its own.
 */
import { classifySentence, ruleKind, sentencesOf, type SpeakerRole } from '../core/classify';
import * as cues from '../core/cues';
import { nextTurn } from '../core/turns';

/** A sentence of each kind of string V8 compiles a pattern for: one-byte (Latin-1) and two-byte. */
const SAMPLES = ['The parser returns undefined because the cache is never cleared.', 'The parser — returns “undefined” because the cache is never cleared.'];

/**
 * Every pattern of the shared cues: a cue is one pattern, a list of them
 * (NARRATION) or a table of weighted cues (AGENT_CUES, each with its pattern).
 */
export function cuePatterns(): RegExp[] {
  return Object.values(cues).flatMap((cue) => (cue instanceof RegExp ? [cue] : Array.isArray(cue) ? cue.flatMap(patternOf) : []));
}

/** The pattern of an entry of a cue list: the entry itself, or a weighted cue's `pattern`. */
function patternOf(entry: unknown): RegExp[] {
  if (entry instanceof RegExp) return [entry];
  const pattern = (entry as { pattern?: unknown } | null)?.pattern;
  return pattern instanceof RegExp ? [pattern] : [];
}

/**
 * Compiles the classifier's shared patterns (core/cues) one at a time, a turn
 * of the event loop for each compilation. V8 compiles a regular expression
 * when it first runs (for one-byte and for two-byte text apart, and again to
 * machine code on a later run), and the cue patterns are large: the
 * classifier's own warm-up compiled many at once, in steps of up to 80 ms
 * (plain Node). Compiled here first, its steps compile only the patterns of
 * classify.ts itself (about 8 ms for one message; 80 ms while the weighted
 * cue table, AGENT_CUES, was left to them). NARRATION is a list of patterns
 * for this reason: as one alternation it was a 35 ms step of its own.
 */
export async function warmPatterns(): Promise<void> {
  for (const pattern of cuePatterns()) {
    for (const sample of SAMPLES) {
      for (let run = 0; run < 2; run++) {
        await nextTurn();
        // A global or sticky pattern keeps where it stopped: the classifier finds it as it was.
        const lastIndex = pattern.lastIndex;
        pattern.test(sample);
        pattern.lastIndex = lastIndex;
      }
    }
  }
}

/** One message per turn of the warm-up: a user's ask with a rule, an agent's report under a heading, its narration. */
const WARM_UP: readonly (readonly [SpeakerRole, string])[] = [
  ['user', 'Please fix the failing test in `src/app.ts`. From now on, never commit without asking me first, and only touch tests after I say so.'],
  ['assistant', '## Root cause\nThe parser returns `undefined` because the cache is never cleared, so I decided to reset it in `load()` instead of patching each caller.'],
  ['assistant', "Let me check the logs. I'll run the tests now: 3 passed, 1 failed (exit 1). Next steps:\n- update the docs\n- Would you like me to commit?"],
];

/**
 * Classifies a few sample messages, one a turn of the event loop. V8 compiles
 * a regular expression when it is first run, and the cue and rule patterns
 * are large: the first user message of a session compiled them in the turn's
 * block (about 50 ms measured in the extension host). The extension runs this
 * after activation so that the first turn finds them compiled.
 */
export async function warmClassifier(): Promise<void> {
  for (const [role, text] of WARM_UP) {
    await nextTurn();
    for (const s of sentencesOf(text)) {
      classifySentence(s.text, role, s.lead);
      if (role === 'user') ruleKind(s.text);
    }
  }
}
