/**
 * The tasks open in this window: each task's session, opened from its store
 * or derived again when the settings or the model's window change, the ones
 * running a turn, and the idle ones let go so that memory stays bounded.
 */
import type { Redactor } from '../core/redact';
import type { TokenCounter } from '../core/tokens';
import { nextTurn } from '../core/turns';
import type { TaskStoreHost } from './ports';
import { sessionOptionsFor, type KeeperSettings } from './settings';
import { deterministicSummarizer } from './summarizers';
import { TaskSession } from './taskSession';
import { readSettings } from './vscodeSettings';

/** Window assumed for a task inspected before any turn of it ran in this window (the model is not known yet). */
const INSPECT_DEFAULT_WINDOW = 128_000;

/** A session brought in with Import a Session (its id is made by the import command). */
export function isImportedTask(taskId: string): boolean {
  return taskId.startsWith('import-');
}

export class OpenTasks {
  private readonly tasks = new Map<string, TaskSession>();
  /** When each live task was last used (a turn, the panel, a command), for releasing the idle ones. */
  private readonly used = new Map<string, number>();
  /** The tasks running a turn or a chat command. */
  private readonly busy = new Set<string>();
  /** The model window each task last ran with (its options are derived from it). */
  private readonly windows = new Map<string, number>();
  /** Inspections deriving a task from its store, so that two callers share one derivation. */
  private readonly opening = new Map<string, Promise<TaskSession | undefined>>();

  constructor(
    private readonly sessions: TaskStoreHost,
    /** The token counter every task of this window measures with. */
    private readonly counter: TokenCounter,
    /** The redactor every task of this window hides secrets with. */
    private readonly redactor: Redactor,
  ) {}

  /** The task's live session, if it is open. */
  get(taskId: string): TaskSession | undefined {
    return this.tasks.get(taskId);
  }

  /** Whether the task is open here or kept in the workspace's store. */
  async exists(taskId: string): Promise<boolean> {
    return this.tasks.has(taskId) || (await this.sessions.store()).has(taskId);
  }

  /** Puts a session derived again in the place of the task's live one. */
  replace(task: TaskSession): void {
    this.tasks.set(task.id, task);
  }

  isRunning(taskId: string): boolean {
    return this.busy.has(taskId);
  }

  /** Marks the task as running a turn or a command (until `finished`). */
  started(taskId: string): void {
    this.busy.add(taskId);
  }

  finished(taskId: string): void {
    this.busy.delete(taskId);
  }

  /** The task's session for this window and these settings (derived again when they changed). */
  async open(taskId: string, prompt: string, modelWindow: number, settings: KeeperSettings): Promise<TaskSession> {
    // An inspection deriving the task from its store finishes first: one session per task.
    await this.opening.get(taskId);
    this.windows.set(taskId, modelWindow);
    this.used.set(taskId, Date.now());
    const options = sessionOptionsFor(settings, modelWindow);
    const open = this.tasks.get(taskId);
    if (open && open.fits(options)) return open;
    const title = this.redactor.redact(prompt).text.slice(0, 80);
    let task: TaskSession;
    if (open) task = open.rederive(options, this.counter);
    else {
      const store = await (await this.sessions.store()).task(taskId, title);
      // Opening the database and deriving the task from its records are two turns of the event loop, not one block.
      await nextTurn();
      task = TaskSession.open(store, taskId, title, options, this.counter, this.redactor, deterministicSummarizer(this.counter, this.redactor, settings));
    }
    this.tasks.set(taskId, task);
    return task;
  }

  /** The window a task was last run with in this window (its model's), or the configured/default one. */
  private windowOf(taskId: string, settings: KeeperSettings): number {
    return this.windows.get(taskId) ?? (settings.windowTokens > 0 ? settings.windowTokens : INSPECT_DEFAULT_WINDOW);
  }

  /** A task opened for inspection (commands, panel): the current session, or one derived from the store with the task's options. */
  async inspect(taskId: string): Promise<TaskSession | undefined> {
    this.used.set(taskId, Date.now());
    const open = this.tasks.get(taskId);
    if (open) return open;
    const opening = this.opening.get(taskId);
    if (opening) return opening;
    const derived = this.derive(taskId).finally(() => this.opening.delete(taskId));
    this.opening.set(taskId, derived);
    return derived;
  }

  /**
   * A task derived from its store for inspection. An imported session over
   * the budget's trigger is reduced as its first model call would be — with
   * the deterministic summarizer, no model call — so the panel and the
   * commands show what a model would be sent, not the raw record.
   */
  private async derive(taskId: string): Promise<TaskSession | undefined> {
    const workspace = await this.sessions.store();
    if (!workspace.has(taskId)) return undefined;
    const { settings } = readSettings();
    const task = TaskSession.open(await workspace.task(taskId), taskId, taskId, sessionOptionsFor(settings, this.windowOf(taskId, settings)), this.counter, this.redactor, deterministicSummarizer(this.counter, this.redactor, settings));
    // An imported session never had a model call: it is shown as its first one would be sent. A chat task is
    // shown as its turns left it (its next turn reduces it for the model it runs with).
    if (isImportedTask(taskId) && task.records.length > 0) await task.session.engine.reduceNow(task.nextIndex);
    // A turn that opened the task meanwhile keeps its session.
    const opened = this.tasks.get(taskId);
    if (opened) return opened;
    this.tasks.set(taskId, task);
    return task;
  }

  /** The task derived again from its raw record (the drift reset of every preflight included), with the current settings. */
  async rederived(taskId: string): Promise<TaskSession | undefined> {
    const { settings } = readSettings();
    const open = this.tasks.get(taskId);
    const options = sessionOptionsFor(settings, this.windowOf(taskId, settings));
    let task: TaskSession | undefined;
    if (open) task = open.rederive(options, this.counter);
    else {
      this.tasks.delete(taskId);
      task = await this.inspect(taskId);
    }
    if (task) this.tasks.set(taskId, task);
    return task;
  }

  /** Forgets a deleted task's live session. */
  forget(taskId: string): void {
    this.tasks.delete(taskId);
  }

  /**
   * Lets go of the tasks not used for `idleMs` and not running a turn (their
   * background summary is stopped), then closes the stores no live task holds
   * (a checkpoint each), so memory stays bounded by the tasks in use. A task
   * used again is derived from its store, as after a reload. Returns the ids
   * whose stores were closed.
   */
  async releaseIdle(idleMs: number, now = Date.now()): Promise<string[]> {
    for (const [id, task] of [...this.tasks]) {
      if (this.busy.has(id) || now - (this.used.get(id) ?? 0) < idleMs) continue;
      task.session.engine.cancelBackground();
      this.tasks.delete(id);
      this.used.delete(id);
    }
    const workspace = await this.sessions.store();
    return workspace.closeIdle(idleMs, new Set(this.tasks.keys()), now);
  }

  /** Closes every session (the window shuts down). */
  clear(): void {
    this.tasks.clear();
  }
}
