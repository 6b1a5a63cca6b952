/**
 * Work done once per process on first use, done ahead after activation in
 * small steps instead, so that the first @keeper turn does not do it in
 * larger blocks of its own.
 */
import * as cues from '../core/cues';
import { nextTurn } from '../core/turns';

/** A sentence of each kind of string V8 compiles a pattern for: one-byte (Latin-1) and two-byte. */
const SAMPLES = ['The parser returns undefined because the cache is never cleared.', 'The parser — returns “undefined” because the cache is never cleared.'];

/**
 * Compiles the classifier's shared patterns (core/cues) one at a time, a turn
 * of the event loop for each compilation. V8 compiles a regular expression
 * when it first runs (for one-byte and for two-byte text apart, and again to
 * machine code on a later run), and the cue patterns are large: the
 * classifier's own warm-up compiled many at once, in steps of up to 80 ms
 * (plain Node). Compiled here first, its steps compile only the patterns of
 * classify.ts itself (still about 45 ms for one message). NARRATION is a list
 * of patterns for this reason: as one alternation it was a 35 ms step of its own.
 */
export async function warmPatterns(): Promise<void> {
  // A cue is one pattern or a list of them (NARRATION): each is compiled on a turn of its own.
  const patterns = Object.values(cues).flatMap((cue) => (cue instanceof RegExp ? [cue] : Array.isArray(cue) ? cue.filter((p): p is RegExp => p instanceof RegExp) : []));
  for (const pattern of patterns) {
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

