/** How a tool fails: an expected failure the model reads, a cancellation, a system error worded for the model. */
import { messageOf } from '../../core/errors';
import type { ToolOutcome } from './contract';

/** An expected failure: its message is the whole tool output. */
export class ToolError extends Error {
  override readonly name = 'ToolError';
}

/** The rejection of a cancelled call; `outcome` is what the tool had when it stopped, if anything. */
interface AbortErrorWithOutcome extends Error {
  outcome?: ToolOutcome;
}

export function abortError(outcome?: ToolOutcome): AbortErrorWithOutcome {
  const error: AbortErrorWithOutcome = new Error('The tool call was cancelled.');
  error.name = 'AbortError';
  if (outcome !== undefined) error.outcome = outcome;
  return error;
}

export function isAbortError(error: unknown): error is AbortErrorWithOutcome {
  return error instanceof Error && error.name === 'AbortError';
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortError();
}

export function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function describeError(tool: string, error: unknown): string {
  if (error instanceof ToolError) return error.message;
  return `${tool} failed: ${messageOf(error)}`;
}
