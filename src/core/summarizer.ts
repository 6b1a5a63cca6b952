/**
 * Summarizers fold a span of units into the running Task Context.
 *
 * Σn = fold(Σn−1, span). The extractive summarizer needs no model. It
 * classifies before it summarizes (seed 000, differentiated compression):
 * - the user's own words (agents' injected text removed, see harness.ts) are
 *   the request, kept verbatim; a short reply is resolved against the options
 *   it answers; every prescriptive sentence is a constraint, verbatim;
 * - the agent's prose is split into sentences and classified (classify.ts):
 *   findings, decisions (with their reason when the next sentence gives it),
 *   failures and plans become statements of at most ~30 words with their
 *   identifiers; process narration and pleasantries never become lines;
 * - tool results give the exact things: files written (Deliverables), commands
 *   that failed with their verbatim error and were not later made to succeed,
 *   edits undone (Ruled out), configuration applied, the plan (todo).
 * Repeated statements merge (sources and references add up). The static
 * checkpoint always produces something; the engine falls back to it when a
 * summarizer fails.
 *
 * The user's side is read in userWords.ts, tool calls in toolResults.ts; a
 * fold's working state is fold.ts (with deliverables.ts and
 * commandHistory.ts), and factLines.ts keeps one line per fact.
 */
import { ROLLING_SUMMARY_BUDGET_TOKENS } from './budget';
import { sentencesOf } from './classify';
import { withInFileAsks } from './aiderWatch';
import type { ProjectedMessage } from './engine';
import { countReferences, dedupe, mergeNothingNew, mergeRestated, supersedeTestStatus, dateByLaterWrites } from './factLines';
import { Fold } from './fold';
import type { Redactor } from './redact';
import { emptySummary, SummaryBuilder, SummaryLineCounter, type SummaryState } from './summary';
import { enforceCap, gistWordsFor } from './summaryCap';
import type { TokenCounter } from './tokens';
import type { Unit } from './types';
import { extractConstraints, goalText, isRequestText, offerOf, resolvedRequest, topicKey } from './userWords';

// What the engine, the protected state and the evaluation read of the summarizer's parts.
export { looksLikeCode } from './classify';
export { handlesOf, sameFact } from './factLines';
export { testSummary } from './toolResults';
export { isGreeting } from './cues';
export { extractConstraints, isContinuation, liftsReadOnly, protectedFromRaw, quotedRules, READ_ONLY_RULE, readUserMessage, REQUEST_MAX_CHARS, resetDrift, topicKey, type ProtectedLines, type UserMessage } from './userWords';

export interface FoldInput {
  /** The summary being extended (undefined for the first fold). */
  readonly previous: SummaryState | undefined;
  /** The units to fold, oldest first; they start where `previous` ends. */
  readonly units: readonly Unit[];
  /** Records [0, coverageEnd) are covered after this fold. */
  readonly coverageEnd: number;
  /** The head's cap for this fold (the engine's, which scales with the window); a summarizer's own cap is the fallback. */
  readonly cap?: number;
  /**
   * The context as the engine projects it when the fold is asked for, when it
   * fits the window: it holds the span (the oldest raw records after the head)
   * and the Task Context the model last read. A summarizer that is the chat's
   * own model asks after it, so a prompt cache serves what the chat sent.
   */
  readonly context?: readonly ProjectedMessage[];
  /**
   * When the span does not fit beside the question whole: how many of `units`
   * (the oldest) `context` holds. The rest are given in the question, clipped
   * to `restTokens`. Absent: the context holds every unit of the span.
   */
  readonly contextUnits?: number;
  readonly restTokens?: number;
  /**
   * The units just before the span (see unitsBefore): an edit at its start that names no file wrote the file they
   * read last, and an aider console there may have announced an ask the span's first reply answers.
   */
  readonly before?: readonly Unit[];
}

/** A fold's question asked after the chat's context: its rules, and one line of the span's index per unit. */
export const CONTINUATION_QUESTION_TOKENS = 450;
export const CONTINUATION_INDEX_TOKENS_PER_UNIT = 25;

/** The most of the window the span's units left out of the context may take in a fold's question. */
export const CONTINUATION_REST_SHARE = 0.25;
/** Characters of the question per token of `restTokens` (prose runs about four; code and other scripts fewer). */
export const CONTINUATION_REST_CHARS_PER_TOKEN = 3;

/** The tokens a fold's question adds after the chat's context (what must still fit the window with it). */
export function continuationQuestionTokens(units: number): number {
  return CONTINUATION_QUESTION_TOKENS + CONTINUATION_INDEX_TOKENS_PER_UNIT * units;
}

export interface Summarizer {
  readonly name: string;
  fold(input: FoldInput): Promise<SummaryState>;
}

/** Sentences of a text, for callers outside the digest (the protected state, injection checks). */
export function splitSentences(text: string): string[] {
  return sentencesOf(text)
    .map((s) => s.text)
    .filter((s) => s.length >= 12);
}

/** Abstract base of the summarizers that need no model: synchronous folds, capped by demotion. */
abstract class LocalSummarizer implements Summarizer {
  abstract readonly name: string;
  protected readonly counter: SummaryLineCounter;

  constructor(
    counter: TokenCounter,
    protected readonly redactor: Redactor,
    protected readonly cap?: number,
  ) {
    this.counter = counter instanceof SummaryLineCounter ? counter : new SummaryLineCounter(counter);
  }

  async fold(input: FoldInput): Promise<SummaryState> {
    return this.foldSync(input);
  }

  abstract foldSync(input: FoldInput): SummaryState;
}

export class ExtractiveSummarizer extends LocalSummarizer {
  readonly name = 'extractive';

  foldSync(input: FoldInput): SummaryState {
    const previous = input.previous ?? emptySummary();
    const b = new SummaryBuilder(previous, this.redactor);
    const fold = new Fold(b, previous, gistWordsFor(input.cap ?? this.cap ?? ROLLING_SUMMARY_BUDGET_TOKENS), input.before);
    // An ask aider's watch mode took from a comment in a file is a user turn before the step that answers it.
    const units = withInFileAsks(input.units, input.before);
    for (const [i, unit] of units.entries()) {
      if (unit.kind === 'user') fold.user(unit);
      else if (unit.kind === 'step') fold.step(unit, units[i + 1]);
    }
    fold.finish(input.units);
    dedupe(b);
    mergeRestated(b);
    mergeNothingNew(b, previous);
    supersedeTestStatus(b);
    dateByLaterWrites(b, previous);
    countReferences(b, input.units);
    const state = b.build(input.coverageEnd, previous.folds + 1);
    return enforceCap(state, this.counter, this.redactor, input.cap ?? this.cap).state;
  }
}

/**
 * The last guard before overflow: keeps the request log and safety constraints
 * already known, adds the new requests verbatim, and records an action count.
 * It cannot fail.
 */
export class StaticCheckpointSummarizer extends LocalSummarizer {
  readonly name = 'static-checkpoint';

  foldSync(input: FoldInput): SummaryState {
    const previous = input.previous ?? emptySummary();
    const b = new SummaryBuilder(previous, this.redactor);
    let actions = 0;
    let lastAsk = previous.current.goal;
    for (const unit of input.units) {
      if (unit.kind === 'step') b.offer = offerOf(unit) ?? b.offer;
      for (const part of unit.parts) {
        if (unit.kind === 'user' && isRequestText(part.text)) {
          const req = resolvedRequest(b.requests.length + 1, part, b.offer, b.redactor);
          b.requests.push(req);
          lastAsk = `#${req.ordinal} (r${part.record}): ${goalText(req)}`;
          for (const c of extractConstraints(part.text)) {
            if (c.safety) b.upsert('Constraints', { key: topicKey(c.sentence, b.redactor), text: c.sentence, sources: [part.record], priority: 0, origin: 'exact' });
          }
        }
        if (part.kind === 'tool') actions++;
      }
    }
    const first = input.units[0]?.firstRecord ?? previous.coverageEnd;
    b.current = {
      goal: lastAsk,
      deliverable: previous.current.deliverable,
      status: `checkpoint: ${actions} tool action(s) in records ${first}–${Math.max(first, input.coverageEnd - 1)} folded without a summary`,
      next: previous.current.next,
      ...(previous.current.plan ? { plan: previous.current.plan } : {}),
    };
    return enforceCap(b.build(input.coverageEnd, previous.folds + 1), this.counter, this.redactor, input.cap ?? this.cap).state;
  }
}
