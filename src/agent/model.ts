/**
 * The agent's view of a chat model: a port the loop and the model summarizer
 * talk to, so both run under plain mocha with a scripted model. The VS Code
 * adapter (vscodeModel.ts) implements it over `vscode.LanguageModelChat`.
 */
import type { ProjectedMessage } from '../core/engine';

/** A tool as offered to the model. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
}

/** One model request: the instructions, the projected context, the tools. */
export interface ModelRequest {
  readonly system: string;
  readonly messages: readonly ProjectedMessage[];
  readonly tools: readonly ToolSpec[];
  /** 'required': the model must answer with a call of one of `tools` (default: it may). */
  readonly toolMode?: 'auto' | 'required';
}

/** What a model streams back. */
export type ModelEvent =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'call'; readonly callId: string; readonly name: string; readonly input: unknown };

export interface ChatModelPort {
  readonly id: string;
  /** The model's input window in tokens (what the provider accepts). */
  readonly maxInputTokens: number;
  /** Streams the answer; rejects on a model error; stops when `signal` aborts (rejecting with an AbortError). */
  send(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent>;
  /** The model's own count of what a request sends (the calibration anchor). */
  countTokens(request: ModelRequest, signal: AbortSignal): Promise<number>;
}

/** The error a cancelled turn rejects with, whatever layer noticed it first. */
export class AbortError extends Error {
  override readonly name = 'AbortError';
  constructor(message = 'cancelled') {
    super(message);
  }
}

export function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'Canceled' || error.name === 'CancellationError');
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new AbortError();
}

/** Rejects with an AbortError as soon as `signal` aborts; otherwise settles like `promise`. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new AbortError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new AbortError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

export { messageOf } from '../core/errors';
