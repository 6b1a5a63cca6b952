/**
 * When a failed model call is tried again: a transient failure (rate limit,
 * overload, a server error, the network) is retried a few times with growing,
 * jittered delays, provided nothing of the answer was streamed yet (the chat
 * would show it twice). A refusal (no permission, blocked, not found, a bad
 * request) is not retried: it would fail the same way.
 */

/** Retries after the first failure. */
export const MODEL_RETRIES = 3;
const BASE_DELAY_MS = 1_000;
const MAX_DELAY_MS = 15_000;

const TRANSIENT =
  /\b(429|500|502|503|504|529)\b|rate.?limit|too many requests|overloaded|temporarily unavailable|try again later|server error|timed? ?out|timeout|ECONNRESET|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|ENOTFOUND|EPIPE|socket hang up|network|fetch failed/i;
const PERMANENT = /not allowed to use this model|permission was declined|was blocked|no longer available|context length|too long|invalid request|\b(400|401|403|404)\b/i;

/** Whether a model call that failed with `error` may succeed if sent again. */
export function isTransientModelError(error: unknown): boolean {
  const text = error instanceof Error ? `${error.name} ${error.message} ${String((error as { code?: unknown }).code ?? '')}` : String(error);
  return TRANSIENT.test(text) && !PERMANENT.test(text);
}

/**
 * The wait before retry `attempt` (1-based): 1 s, 2 s, 4 s… capped at 15 s,
 * each scaled by a jitter in [0.5, 1) so that windows retrying together spread out.
 */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const exponential = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential * (0.5 + random() / 2));
}
