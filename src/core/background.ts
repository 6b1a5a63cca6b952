/**
 * The background floor: a fold's summary computed ahead of the fold, off the
 * hot path. When the view crosses a watermark below the trigger the engine
 * plans the span its next fold will cover and starts summarizing it here; the
 * result is stored content-addressed (the engine's `prefloor:` keys), so the
 * fold at the trigger restores it with no summarizer call. A miss, a failure
 * or a stale result falls back to the synchronous fold, and since the span is
 * planned the same way whether or not anything runs in the background, the
 * view is the same either way.
 *
 * This module is only the state machine; what it runs is passed in:
 *
 *   Idle ──start(key, work)──▶ Running ──work resolves──▶ Ready
 *     ▲                          │     └──work throws────▶ Failed
 *     └──take / cancel / a start for another key (the old job is stale)──┘
 *
 * A job started for a key that is no longer wanted (the span or the budget
 * changed) is cancelled by the next start or by `cancel`; its late result is
 * ignored. Nothing here reads a clock: a runner decides when the work happens
 * (immediately in the extension, after N model calls in a replay).
 */

export type BackgroundState =
  | { readonly kind: 'idle' }
  | { readonly kind: 'running'; readonly key: string }
  | { readonly kind: 'ready'; readonly key: string }
  | { readonly kind: 'failed'; readonly key: string; readonly error: unknown };

/** A started job: its settlement, and how to have it done now when someone needs it now. */
export interface BackgroundJob<T> {
  readonly done: Promise<T>;
  /** Runs the work now if the runner was holding it back (a replay's simulated delay); no-op otherwise. */
  expedite(): void;
}

/** When the work of a job happens. */
export interface BackgroundRunner {
  run<T>(work: () => Promise<T>): BackgroundJob<T>;
}

/** The extension's runner: the work starts at once (a model request takes its own time). */
export const immediateRunner: BackgroundRunner = {
  run<T>(work: () => Promise<T>): BackgroundJob<T> {
    return { done: work(), expedite: () => undefined };
  },
};

/**
 * Work that starts when `start` is first called (once, however often it is
 * called); `done` settles with its result. What a runner that defers work hands out.
 */
export function startLater<T>(work: () => Promise<T>): { done: Promise<T>; start: () => Promise<unknown> } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const done = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  let started: Promise<unknown> | undefined;
  const start = (): Promise<unknown> => {
    started ??= work().then(resolve, reject);
    return started;
  };
  return { done, start };
}

/**
 * A replay's runner: a job's work runs after `delay` more model calls
 * (`tick()` is called once per call), standing in for a summarizer request
 * that takes about as long as `delay` steps of the agent.
 */
export class DelayedRunner implements BackgroundRunner {
  private readonly queue: { due: number; start: () => Promise<unknown> }[] = [];
  private calls = 0;

  constructor(readonly delay: number) {
    if (!(Number.isInteger(delay) && delay >= 0)) throw new RangeError(`the delay is a whole number of model calls, got ${delay}`);
  }

  run<T>(work: () => Promise<T>): BackgroundJob<T> {
    const { done, start } = startLater(work);
    if (this.delay === 0) void start();
    else this.queue.push({ due: this.calls + this.delay, start });
    return {
      done,
      expedite: () => {
        void start();
      },
    };
  }

  /** One model call is about to go out: work whose delay has passed runs, and has settled when this resolves. */
  async tick(): Promise<void> {
    this.calls++;
    const started: Promise<unknown>[] = [];
    for (let i = 0; i < this.queue.length; ) {
      const job = this.queue[i]!;
      if (job.due <= this.calls) {
        this.queue.splice(i, 1);
        started.push(job.start());
      } else i++;
    }
    await Promise.allSettled(started);
  }
}

export class BackgroundTask<T> {
  private current: BackgroundState = { kind: 'idle' };
  private job: BackgroundJob<T> | undefined;
  private controller: AbortController | undefined;
  private value: T | undefined;
  /** Incremented by every start and cancel: a settlement of an older generation is stale. */
  private generation = 0;

  constructor(private readonly runner: BackgroundRunner = immediateRunner) {}

  get state(): BackgroundState {
    return this.current;
  }

  /**
   * Starts `work` for `key` unless a job for that key is already running or
   * ready. A job for another key is stale: it is cancelled first. The work
   * gets an abort signal that fires on cancellation.
   */
  start(key: string, work: (signal: AbortSignal) => Promise<T>): void {
    const s = this.current;
    if ((s.kind === 'running' || s.kind === 'ready') && s.key === key) return;
    this.cancel();
    const generation = ++this.generation;
    const controller = new AbortController();
    this.controller = controller;
    this.current = { kind: 'running', key };
    const job = this.runner.run(() => (controller.signal.aborted ? Promise.reject(new Error('cancelled')) : work(controller.signal)));
    this.job = job;
    job.done.then(
      (value) => {
        if (generation !== this.generation) return;
        this.value = value;
        this.current = { kind: 'ready', key };
      },
      (error: unknown) => {
        if (generation !== this.generation) return;
        this.current = { kind: 'failed', key, error };
      },
    );
  }

  /**
   * The result for `key`: at once when ready, awaited when running (the
   * runner is told it is needed now), undefined when idle, failed or stale.
   * Taking a result resets the task to idle.
   */
  async take(key: string): Promise<T | undefined> {
    const s = this.current;
    if (s.kind === 'idle' || s.key !== key) return undefined;
    if (s.kind === 'running') {
      const generation = this.generation;
      this.job!.expedite();
      try {
        await this.job!.done;
      } catch {
        // reported through the state below
      }
      // Settlement handlers run before this continuation: the state is final for this generation.
      if (generation !== this.generation) return undefined;
    }
    const settled = this.current;
    if (settled.kind !== 'ready' || settled.key !== key) {
      if (settled.kind === 'failed' && settled.key === key) this.reset();
      return undefined;
    }
    const value = this.value;
    this.reset();
    return value;
  }

  /** Stops a running job (its late result is ignored) and returns to idle. */
  cancel(): void {
    if (this.current.kind === 'running') this.controller?.abort();
    this.generation++;
    this.reset();
  }

  private reset(): void {
    this.current = { kind: 'idle' };
    this.job = undefined;
    this.controller = undefined;
    this.value = undefined;
  }
}
