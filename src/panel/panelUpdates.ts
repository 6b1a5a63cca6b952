/**
 * Keeps the Task Context webview up to date: a change schedules an update,
 * coalesced over PANEL_UPDATE_DELAY_MS (a burst of steps costs one snapshot);
 * posts run one at a time, in order; each carries the whole state, or only the
 * parts that changed since the last one the webview received. It knows which
 * task the webview shows (the one of the state last delivered), and posts a
 * compaction to reveal once the webview has that task's state.
 */
import type * as vscode from 'vscode';
import type { HostMessage, PanelSectionKey, PanelState } from '../protocol/messages';

/** Updates after a change are coalesced over this long (a turn fires several changes per step). */
export const PANEL_UPDATE_DELAY_MS = 100;

export class PanelUpdates {
  private view: vscode.WebviewView | undefined;
  /**
   * The task of the state last posted to this webview: the one it shows. Actions
   * are checked against it, not against the task the panel is about to show
   * (which moves to the chat's new task at once, about PANEL_UPDATE_DELAY_MS
   * before the webview redraws).
   */
  private postedTask: string | undefined;
  /** Each top-level key of the state last posted, as JSON; undefined: the next post is a full one. */
  private posted: Map<PanelSectionKey, string> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Posts run one at a time, in order (a snapshot may wait for the store). */
  private queue: Promise<void> = Promise.resolve();
  /** A compaction to reveal after the next state the webview is known to have received. */
  private pendingReveal: { readonly taskId: string; readonly atRecord: number } | undefined;
  private disposed = false;

  /** `snapshot`: the state of the task the panel shows now. */
  constructor(private readonly snapshot: () => Promise<PanelState>) {}

  /** The task of the state the webview last received: the one it shows (undefined: none yet). */
  get shownTask(): string | undefined {
    return this.postedTask;
  }

  /** A new webview to keep up to date: nothing is posted to it yet. */
  attach(view: vscode.WebviewView): void {
    this.view = view;
    this.posted = undefined;
    this.postedTask = undefined;
  }

  /** The webview may have been torn down and loaded again: the next post is a full one. */
  forgetPosted(): void {
    this.posted = undefined;
  }

  /** The view is gone. */
  detach(view: vscode.WebviewView): void {
    if (this.view === view) this.view = undefined;
    this.posted = undefined;
    this.postedTask = undefined;
  }

  /** Reveals a compaction once the webview has its task's state (undefined: none to reveal). */
  revealAfterState(reveal: { readonly taskId: string; readonly atRecord: number } | undefined): void {
    this.pendingReveal = reveal;
  }

  /** Posts a patch after PANEL_UPDATE_DELAY_MS; changes in between are folded into it. */
  schedule(): void {
    if (this.disposed || this.timer !== undefined || !this.view?.visible) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.enqueue(() => this.postState(false));
    }, PANEL_UPDATE_DELAY_MS);
  }

  enqueue(work: () => Promise<void>): void {
    this.queue = this.queue.then(work).catch((error: unknown) => console.error('Context Keeper: the Task Context panel failed to update', error));
  }

  /** The whole state (`full`, or nothing was posted to this webview yet), or the keys that changed. */
  async postState(full: boolean): Promise<void> {
    if (!this.view) return;
    let state: PanelState;
    try {
      state = await this.snapshot();
    } catch (error) {
      console.error('Context Keeper: the Task Context snapshot failed', error);
      return;
    }
    const json = new Map((Object.keys(state) as PanelSectionKey[]).map((key) => [key, JSON.stringify(state[key])]));
    const previous = this.posted;
    let message: HostMessage | undefined;
    if (full || !previous) message = { type: 'state/full', state };
    else {
      const patch: Partial<PanelState> = {};
      for (const [key, value] of json) if (previous.get(key) !== value) Object.assign(patch, { [key]: state[key] });
      if (Object.keys(patch).length > 0) message = { type: 'state/patch', patch };
    }
    const delivered = message === undefined || (await this.post(message));
    this.posted = delivered ? json : undefined;
    if (delivered) this.postedTask = state.task?.id;
    // A webview that answered `ready` (full) or had a state before has its script running: the reveal is not lost.
    const reveal = this.pendingReveal;
    if (delivered && reveal && reveal.taskId === state.task?.id && (full || previous)) {
      this.pendingReveal = undefined;
      await this.post({ type: 'reveal', atRecord: reveal.atRecord });
    }
  }

  async post(message: HostMessage): Promise<boolean> {
    const view = this.view;
    if (!view) return false;
    try {
      return await view.webview.postMessage(message);
    } catch (error) {
      console.warn('Context Keeper: could not post to the Task Context panel', error);
      return false;
    }
  }

  /** Stops the scheduled update and lets go of the view; nothing is posted any more. */
  dispose(): void {
    this.disposed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.view = undefined;
  }
}
