/**
 * A context strategy as the evaluation replays it: what every strategy answers
 * (`Strategy`) and the figures a replay reports — each model call sampled, the
 * final view, and ours' fold and protected-state metrics.
 */
import type { FloorSource, ProjectedMessage } from '../core/engine';
import type { SessionRecord } from '../core/parts';
import type { SummaryState } from '../core/summary';
import type { LayoutKind } from '../core/summaryLayout';
import type { RawRecord } from '../core/types';

export interface CallSample {
  /** The model call happens just before this record. */
  readonly record: number;
  /** Tokens of the contents of the messages sent. */
  readonly tokens: number;
  /** Tokens of the longest unchanged prefix of messages since the previous call (a prompt cache hit). */
  readonly cacheRead: number;
  /** Tokens the model generated in the step that followed (the same for every strategy). */
  readonly output: number;
  /** The context exceeded window − reserve (a provider would have rejected it). */
  readonly overflow: boolean;
}

export interface FinalView {
  readonly messages: ProjectedMessage[];
  readonly tokens: number;
  readonly summary: SummaryState | undefined;
  /** Absolute indices of the units whose messages are in view (in any form). */
  readonly unitsInView: readonly number[];
  /** Paths of the strategy's artifact index (ours only). */
  readonly indexed: { readonly path: string; readonly modified: boolean; readonly read: boolean }[];
}

/** The protected-state channel's checks over a replay (ours only). */
export interface StateMetrics {
  readonly boundaries: number;
  /** Active critical facts missing from the context at a compaction boundary (defects). */
  readonly omitted: number;
  /** Summary lines with no source at a boundary (defects). */
  readonly unsupported: number;
  /** Summary lines that contradicted an active fact (the fact won). */
  readonly conflicts: number;
  readonly activeFacts: number;
  readonly pendingFacts: number;
}

/** Where ours' floor summaries came from and how its head was laid out at the folds (ours only). */
export interface FoldMetrics {
  readonly sources: Readonly<Record<FloorSource, number>>;
  readonly layouts: Readonly<Record<LayoutKind, number>>;
  /** Folds not made because they would have saved less than the minimum share of the window. */
  readonly skipped: number;
}

/** A strategy replayed: it sees each record, answers each model call with its view, and counts what it did. */
export interface Strategy {
  append(record: RawRecord): void;
  opensStep(record: RawRecord): boolean;
  call(atRecord: number): Promise<{ messages: ProjectedMessage[]; items: readonly number[] }>;
  /** After the call's messages are counted (ours refreshes its anchor). */
  measured?(tokens: number, messages: number): void;
  /** The summarizer's model calls so far. */
  readonly summarizerCalls: CallSample[];
  final(): { summary: SummaryState | undefined; indexed: FinalView['indexed'] };
  readonly record: SessionRecord;
  readonly compactions: Record<string, number>;
  floors(): number;
  antiThrash(): number;
}

/** Counts one more compaction of `key`'s kind. */
export function bump(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

/**
 * Tokens of a summary request's instructions beside what it summarizes: the
 * fold prompt's rules and its tool's schema (agent/modelSummarizer: about 450
 * and 150 o200k tokens), and about what Claude Code's compact prompt takes.
 */
export const SUMMARIZER_INSTRUCTION_TOKENS = 600;
