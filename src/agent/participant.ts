/**
 * @keeper, the chat participant: maps a chat session to its task (through
 * `ChatResult.metadata`, which survives window reloads; the history carries no
 * tool calls, the store does), runs a turn of the agent loop with the model the
 * user picked, streams the answer, and reports what was sent (the status-bar
 * gauge and the Task Context panel listen).
 */
import { existsSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { formatDrift, rebuildDrift, type SummaryDrift } from '../core/drift';
import { notLoadedTotals, type StepReport } from '../core/engine';
import { redact } from '../core/redact';
import type { Fact } from '../core/state';
import type { StateEvent } from '../core/store';
import { ExtractiveSummarizer, type Summarizer } from '../core/summarizer';
import { SummaryLineCounter } from '../core/summary';
import type { TokenCounter } from '../core/tokens';
import { nextTurn } from '../core/turns';
import type { TaskStoreHost } from './ports';
import { contextMarkdown, factsMarkdown, isChatCommand, NO_TASK_YET, nothingToFold, rebuildMarkdown, type ChatCommandName } from './chatCommands';
import { describeCompaction, describeTurnCompactions, foldedSoFar, ModelCallError, recordRewind, recordUndo, runTurn, type Attachment, type FoldedSoFar, type SentInfo, type ToolRunner, type TurnIO } from './loop';
import { AbortError, isAbort, messageOf, type ToolSpec } from './model';
import { ModelSummarizer } from './modelSummarizer';
import { systemPrompt } from './prompt';
import { matchesToolPattern, parseSettings, sessionOptionsFor, SETTINGS_SECTION, type KeeperSettings } from './settings';
import { TaskSession } from './taskSession';
import { AGENT_TOOLS, describeToolCall, runTool } from './tools';
import { allowListed } from './tools/confirmation';
import type { ConfirmRequest, ToolContext, ToolOutcome } from './tools/contract';
import { describeModelError, VsCodeChatModel } from './vscodeModel';
import { KeeperTerminals } from './terminal';
import { editorFiles, undoEdits, WORKSPACE_TOOLS, WorkspaceTools, type TurnEdit } from './workspaceTools';

export const PARTICIPANT_ID = 'context-keeper.keeper';

/** What `ChatResult.metadata` carries: the pointer from a chat session to its task. */
export interface KeeperMetadata {
  readonly taskId: string;
  readonly cancelled?: boolean;
  /** How many requests of the task were recorded once this one was: a history that shows fewer lost turns (Restore Checkpoint, Start Over). */
  readonly turn?: number;
  /** How the turn ended when it did not answer: the step limit stopped it, or the model failed (the followups offer to go on). */
  readonly stopped?: 'max-steps' | 'error';
}

export type Confirm = (request: ConfirmRequest) => Promise<boolean>;

export interface SentEvent extends SentInfo {
  readonly taskId: string;
}

export interface TurnEndEvent {
  readonly taskId: string;
  readonly outcome: 'answer' | 'max-steps' | 'cancelled' | 'error';
  readonly error?: string;
}

/** Finds the task a chat session belongs to: the newest @keeper answer in its history names it. */
export function taskIdFromHistory(history: readonly (vscode.ChatRequestTurn | vscode.ChatResponseTurn)[]): string | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const turn = history[i];
    if (turn instanceof vscode.ChatResponseTurn) {
      const id = (turn.result.metadata as Partial<KeeperMetadata> | undefined)?.taskId;
      if (typeof id === 'string' && /^[\w.-]{1,100}$/.test(id)) return id;
    }
  }
  return undefined;
}

/** The highest `turn` a response of the chat history carries (undefined: none does). */
export function turnsInHistory(history: readonly (vscode.ChatRequestTurn | vscode.ChatResponseTurn)[]): number | undefined {
  let most: number | undefined;
  for (const turn of history) {
    if (!(turn instanceof vscode.ChatResponseTurn)) continue;
    const n = (turn.result.metadata as Partial<KeeperMetadata> | undefined)?.turn;
    if (typeof n === 'number' && Number.isInteger(n) && n >= 0) most = Math.max(most ?? 0, n);
  }
  return most;
}

/** Turns the chat no longer shows: where they start in the task, which they are, the files they left changed. */
interface Rewind {
  readonly notices: Notice[];
  readonly fromRecord: number;
  readonly turns: readonly number[];
  readonly files: readonly string[];
}

/** A line the response keeps after its answer, with its button. */
interface Notice {
  readonly markdown: string;
  readonly button?: vscode.Command;
}

/** Writes notices into a response, each a paragraph of its own with its button. */
function writeNotices(stream: vscode.ChatResponseStream, notices: readonly Notice[]): void {
  for (const notice of notices) {
    stream.markdown(`\n\n${notice.markdown}\n\n`);
    if (notice.button) stream.button(notice.button);
  }
}

/** The command a turn's Undo button runs (contributed in package.json). */
export const UNDO_TURN_COMMAND = 'contextKeeper.undoTurnEdits';
/** Opens the Task Context panel on a task (registered by the extension; a button in a response that compacted). */
export const OPEN_PANEL_COMMAND = 'contextKeeper.openPanel';
/** Opens the messages of a task's last model call as a document. */
const SHOW_CONTEXT_COMMAND = 'contextKeeper.showContext';
/** Turns whose edits can still be undone from their button. */
const MAX_UNDOABLE_TURNS = 20;
/** The workspace-state key of the undoable turns, the most text they may hold there in all, and how long they are kept. */
const UNDO_STATE_KEY = 'contextKeeper.undoableTurns';
const UNDO_STATE_MAX_CHARS = 2_000_000;
const UNDO_STATE_MAX_AGE_MS = 7 * 24 * 3600_000;

/** An undoable turn as the workspace's state keeps it (JSON). */
interface SavedTurn {
  readonly key: string;
  readonly taskId: string;
  readonly turn: number;
  /** When the turn ended (ms since the epoch). */
  readonly savedAt: number;
  readonly edits: readonly { readonly uri: string; readonly rel: string; readonly before: string; readonly after: string; readonly created?: boolean }[];
}

/** A session brought in with Import a Session (its id is made by the import command). */
export function isImportedTask(taskId: string): boolean {
  return taskId.startsWith('import-');
}

export function newTaskId(now = new Date()): string {
  return `task-${now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')}-${Math.random().toString(36).slice(2, 8)}`;
}

export class KeeperAgent implements vscode.Disposable {
  private readonly tasks = new Map<string, TaskSession>();
  /** When each live task was last used (a turn, the panel, a command), for releasing the idle ones. */
  private readonly used = new Map<string, number>();
  private readonly busy = new Set<string>();
  /** The model window each task last ran with (its options are derived from it). */
  private readonly windows = new Map<string, number>();
  /** The running turns, aborted when the extension shuts down (commands run in their own process group). */
  private readonly running = new Set<AbortController>();
  private readonly _onDidSend = new vscode.EventEmitter<SentEvent>();
  readonly onDidSend = this._onDidSend.event;
  private readonly _onDidEndTurn = new vscode.EventEmitter<TurnEndEvent>();
  readonly onDidEndTurn = this._onDidEndTurn.event;
  private readonly _onDidRewind = new vscode.EventEmitter<{ readonly taskId: string; readonly removed: number; readonly files: readonly string[] }>();
  /** The chat showed fewer of a task's turns than were recorded (Restore Checkpoint, Start Over). */
  readonly onDidRewind = this._onDidRewind.event;
  private readonly _onDidChangeTask = new vscode.EventEmitter<string>();
  /** A task's record or state changed (a turn step, a user act on a fact). */
  readonly onDidChangeTask = this._onDidChangeTask.event;
  private lastTaskId: string | undefined;
  /** The task this window ran before the last one (whose edits a new task's first turn names). */
  private previousTaskId: string | undefined;
  /** Undoable turns already named to a new task as left applied. */
  private readonly leftEditsSaid = new Set<string>();

  /**
   * How edits, writes and commands are approved: undefined (the default) asks
   * the user inline in the chat, through VS Code's tool confirmation; tests
   * install a function that decides instead.
   */
  confirm: Confirm | undefined;
  /** @keeper's workspace tools, run as language model tools (their confirmations are inline). */
  private readonly workspaceTools: WorkspaceTools;
  /** Where run_command runs: a terminal with shell integration, the user's shell. */
  private readonly terminals = new KeeperTerminals();
  /** The edits of the last turns that changed files, by the key their Undo button carries. */
  private readonly turnEdits = new Map<string, { readonly taskId: string; readonly turn: number; readonly savedAt: number; readonly edits: readonly TurnEdit[] }>();
  private editedTurns = 0;

  constructor(
    private readonly sessions: TaskStoreHost,
    /** The token counter every task of this window measures with (one, built at the composition root). */
    private readonly counter: TokenCounter,
    /** Where model errors, retries and tool failures are logged (the "Context Keeper" output channel). */
    private readonly log?: vscode.LogOutputChannel,
    /** Where the undoable turns are kept across window reloads (the workspace's state). */
    private readonly undoState?: vscode.Memento,
  ) {
    this.loadUndoable();
    this.workspaceTools = new WorkspaceTools((signal) => {
      const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
      if (!folder) return undefined;
      const { settings } = readSettings();
      return {
        root: folder.uri.fsPath,
        signal,
        confirm: async () => true, // another agent's call: VS Code asked the user before it ran
        viewToolCall: () => undefined,
        files: editorFiles([]),
        ...(settings.runCommandsInTerminal ? { terminal: this.terminals } : {}),
        ...ripgrepFor(),
        commandTimeoutMs: settings.commandTimeoutSeconds * 1000,
        maxOutputChars: settings.toolOutputMaxChars,
      };
    });
  }

  /** The task of the most recent turn in this window. */
  get activeTaskId(): string | undefined {
    return this.lastTaskId;
  }

  readonly handler: vscode.ChatRequestHandler = async (request, context, stream, token): Promise<vscode.ChatResult> => {
    // The tokenizer's tables, built in slices since activation: a turn counting before they are done would build
    // the rest in one block, with every extension of the window waiting. (A failure shows at the first count.)
    await this.counter.prepare?.().catch(() => undefined);
    const taskId = taskIdFromHistory(context.history) ?? newTaskId();
    let metadata: KeeperMetadata = { taskId };
    const model = request.model as vscode.LanguageModelChat | undefined;
    if (!model) {
      return { errorDetails: { message: 'No language model is selected. Pick one in the chat view\'s model picker and ask again.' }, metadata };
    }
    if (isChatCommand(request.command)) {
      // A command acts on the task; words after it are no request (they would be lost without a word).
      if (request.prompt.trim() !== '') stream.markdown(`> The text after /${request.command} is not used: to ask @keeper something, send it without a command.\n\n`);
      return this.chatCommand(request.command, taskId, model, stream, token);
    }
    const prompt = request.prompt.trim();
    if (prompt === '') {
      stream.markdown('Ask @keeper to do something in this workspace, e.g. `@keeper add input validation to src/api.ts and run the tests`.');
      return { metadata };
    }
    if (this.busy.has(taskId)) {
      return { errorDetails: { message: 'This task is still running a turn; wait for it to finish or stop it first.' }, metadata };
    }
    const root = vscode.workspace.workspaceFolders?.[0]?.uri;
    if (!root || root.scheme !== 'file') {
      return { errorDetails: { message: '@keeper works on a folder on disk: open a folder first.' }, metadata };
    }

    const { settings, problems } = readSettings();
    /**
     * What the response says after its answer: notices, the compaction line, buttons. Written at the start, VS Code
     * folds them under "Completed N steps" with the turn's tool calls and progress once the turn ends.
     */
    const footer: Notice[] = problems.map((problem) => ({ markdown: `> ⚠ Setting ignored: ${problem}` }));
    const controller = new AbortController();
    // A stopped turn also stops the summary being computed ahead for it: its result would not be the model's.
    const cancellation = token.onCancellationRequested(() => {
      this.tasks.get(taskId)?.session.engine.cancelBackground();
      controller.abort();
    });
    // A background summary may finish after the turn: it says nothing into a response that has ended.
    let open = true;
    const say = (message: string): void => {
      if (open) stream.progress(message);
    };
    this.running.add(controller);
    this.busy.add(taskId);
    this.previousTaskId = this.lastTaskId === taskId ? this.previousTaskId : this.lastTaskId;
    this.lastTaskId = taskId;
    /** The files this turn changed, for its Undo button. */
    const edits: TurnEdit[] = [];
    /** The compactions of this turn, for the line its response keeps. */
    const compactions: { report: StepReport; folded: FoldedSoFar }[] = [];
    try {
      const chatModel = new VsCodeChatModel(model, settings.windowTokens > 0 ? settings.windowTokens : undefined);
      let task = await this.task(taskId, prompt, chatModel.maxInputTokens, settings);
      const recorded = task.turns;
      const rewind = this.rewound(taskId, task, recorded, turnsInHistory(context.history));
      if (rewind) {
        footer.push(...rewind.notices);
        task = await this.rewindTask(task, rewind, chatModel.maxInputTokens, settings);
      }
      if (recorded === 0) footer.push(...this.leftEdits(taskId));
      metadata = { ...metadata, turn: task.turns + 1 };
      if (!task.durable) footer.push({ markdown: '> ⚠ The session store is not writable (another window owns it, or the disk failed): this task is kept in memory only.' });
      const system = systemPrompt({ workspace: root.fsPath, os: `${os.type()} ${os.release()}`, date: new Date().toISOString().slice(0, 10) });
      let frame: { system: string; tools: readonly ToolSpec[] } | undefined;
      task.summarizer.target = await this.summarizerFor(settings, model, footer, say, controller.signal, () => frame);
      const tools = this.toolRunner(task, root.fsPath, settings, stream, request.toolInvocationToken, edits, otherToolsFor(request, settings));
      frame = { system, tools: tools.specs };
      const io: TurnIO = {
        markdown: (text) => stream.markdown(text),
        progress: (message) => stream.progress(message),
        toolCall: (name, input) => {
          stream.progress(`${describeToolCall(name, input)}…`);
          // The files a turn reads or changes are listed with the response, as Copilot lists its references.
          const file = (input as { path?: unknown } | null)?.path;
          if (typeof file === 'string' && FILE_TOOLS.has(name)) stream.reference(vscode.Uri.joinPath(root, file));
        },
        // Said while the turn goes on; the lasting line is written when it ends (see finally).
        compacted: (report, folded) => {
          compactions.push({ report, folded });
          stream.progress(describeCompaction(report, folded));
        },
        sent: (info) => {
          this._onDidSend.fire({ ...info, taskId });
          this._onDidChangeTask.fire(taskId);
        },
      };
      const result = await runTurn(task, prompt, chatModel, tools, io, {
          system,
          maxSteps: settings.maxStepsPerTurn,
          attachments: await attachmentsOf(request.references, root, settings.toolOutputMaxChars),
          onRetry: (attempt, delayMs, error) => this.log?.warn(`task ${taskId}: model ${model.id} failed (${describeModelError(error)}); retry ${attempt} in ${delayMs} ms`),
        }, controller.signal);
      this._onDidEndTurn.fire({ taskId, outcome: result.stoppedAt });
      return { metadata: result.stoppedAt === 'max-steps' ? { ...metadata, stopped: 'max-steps' } : metadata };
    } catch (error) {
      if (isAbort(error) || token.isCancellationRequested) {
        this._onDidEndTurn.fire({ taskId, outcome: 'cancelled' });
        return { metadata: { ...metadata, cancelled: true } };
      }
      const message = error instanceof ModelCallError ? error.message : `@keeper stopped: ${describeModelError(error)}`;
      this.log?.error(`task ${taskId}: ${message}`, error instanceof ModelCallError ? error.cause : error);
      this._onDidEndTurn.fire({ taskId, outcome: 'error', error: message });
      return { errorDetails: { message: `${message} The turn so far is kept in the task's record; send a message to continue.` }, metadata: { ...metadata, stopped: 'error' } };
    } finally {
      // A lasting line at the end of the response (Copilot leaves "Summarized conversation history", Roo "Context
      // condensed"), with the way to what was folded. Written between tool calls, VS Code would fold it under
      // "Completed N steps" with them once the turn ends.
      if (compactions.length > 0) {
        const folded = [...compactions].reverse().find((c) => c.report.tier >= 2)?.report.compactions.at(-1)?.atRecord;
        footer.push({ markdown: `> ${describeTurnCompactions(compactions)}`, ...(folded !== undefined ? { button: { command: OPEN_PANEL_COMMAND, arguments: [taskId, folded], title: 'Show the Task Context' } } : {}) });
      }
      writeNotices(stream, footer);
      if (edits.length > 0) {
        const key = this.keepEdits(taskId, metadata.turn ?? 0, edits);
        const files = new Set(edits.map((e) => e.rel)).size;
        stream.button({ command: UNDO_TURN_COMMAND, arguments: [key], title: `Undo @keeper's edits (${files} ${files === 1 ? 'file' : 'files'})` });
      }
      open = false;
      cancellation.dispose();
      this.running.delete(controller);
      this.busy.delete(taskId);
      this._onDidChangeTask.fire(taskId);
    }
  };

  /** The task's session for this window and these settings (derived again when they changed). */
  private async task(taskId: string, prompt: string, modelWindow: number, settings: KeeperSettings): Promise<TaskSession> {
    // An inspection deriving the task from its store finishes first: one session per task.
    await this.opening.get(taskId);
    this.windows.set(taskId, modelWindow);
    this.used.set(taskId, Date.now());
    const options = sessionOptionsFor(settings, modelWindow);
    const open = this.tasks.get(taskId);
    if (open && open.fits(options)) return open;
    const title = redact(prompt).text.slice(0, 80);
    let task: TaskSession;
    if (open) task = open.rederive(options, this.counter);
    else {
      const store = await (await this.sessions.store()).task(taskId, title);
      // Opening the database and deriving the task from its records are two turns of the event loop, not one block.
      await nextTurn();
      task = TaskSession.open(store, taskId, title, options, this.counter, this.deterministic(settings));
    }
    this.tasks.set(taskId, task);
    return task;
  }

  /**
   * A slash command on the chat's task: `/compact` folds now, `/context` shows
   * what the model is sent next, `/facts` the protected facts, `/rebuild` the
   * drift against a rebuild from the raw record. None is recorded in the task:
   * they act on it, they do not ask the agent anything.
   */
  private async chatCommand(name: ChatCommandName, taskId: string, model: vscode.LanguageModelChat, stream: vscode.ChatResponseStream, token: vscode.CancellationToken): Promise<vscode.ChatResult> {
    const metadata: KeeperMetadata = { taskId };
    if (!this.tasks.has(taskId) && !(await this.sessions.store()).has(taskId)) {
      stream.markdown(NO_TASK_YET);
      return { metadata };
    }
    if (this.busy.has(taskId)) return { errorDetails: { message: `This task is still running a turn; use /${name} when it ends.` }, metadata };
    // The panel, at a compaction when one is named.
    const panelButton = (compactionAt?: number): void => stream.button({ command: OPEN_PANEL_COMMAND, arguments: compactionAt === undefined ? [taskId] : [taskId, compactionAt], title: 'Show the Task Context' });
    if (name === 'rebuild') {
      const rebuilt = await this.rebuild(taskId);
      stream.markdown(rebuildMarkdown(rebuilt.records, rebuilt.lines));
      panelButton();
      return { metadata };
    }
    const { settings } = readSettings();
    // The window of the model picked in this chat, as a turn would use it.
    const task = await this.task(taskId, '', new VsCodeChatModel(model, settings.windowTokens > 0 ? settings.windowTokens : undefined).maxInputTokens, settings);
    const session = task.session;
    if (name === 'facts') {
      stream.markdown(factsMarkdown(session.state.active(), session.state.pending()));
      panelButton();
      return { metadata };
    }
    this.busy.add(taskId);
    try {
      session.preflight();
      if (name === 'compact') {
        // Stop stops the summary (a model summarizer's call included), as it stops a turn.
        const controller = new AbortController();
        const cancellation = token.onCancellationRequested(() => {
          session.engine.cancelBackground();
          controller.abort();
        });
        let open = true;
        const say = (message: string): void => {
          if (open) stream.progress(message);
        };
        try {
          const notices: Notice[] = [];
          task.summarizer.target = await this.summarizerFor(settings, model, notices, say, controller.signal, () => undefined);
          writeNotices(stream, notices);
          say('Folding the older steps into the Task Context…');
          const report = await session.compactNow(task.nextIndex);
          if (token.isCancellationRequested) return { metadata: { ...metadata, cancelled: true } };
          if (report.tier === 0) stream.markdown(nothingToFold(session.engine.protectRecentSteps, session.engine.coverageEnd, report.outsideNearWindow));
          else {
            stream.markdown(`> ${describeCompaction(report, foldedSoFar(session))}\n\n`);
            panelButton(report.compactions.at(-1)?.atRecord);
          }
          return { metadata };
        } catch (error) {
          if (isAbort(error) || token.isCancellationRequested) return { metadata: { ...metadata, cancelled: true } };
          throw error;
        } finally {
          open = false;
          cancellation.dispose();
          // The next turn picks its summarizer again; until then, the deterministic one (no response to speak into).
          task.summarizer.target = this.deterministic(settings);
        }
      }
      const head = session.engine.project().find((m) => m.head !== undefined)?.content ?? '';
      stream.markdown(
        contextMarkdown({
          predicted: session.engine.predicted(),
          window: session.budget.window,
          reserve: session.budget.reserve,
          coverageEnd: session.engine.coverageEnd,
          records: task.records.length,
          head,
          headTokens: head ? this.counter.count(head) : 0,
          notLoaded: notLoadedTotals(session.engine.notLoaded()),
        }),
      );
      panelButton();
      stream.button({ command: SHOW_CONTEXT_COMMAND, arguments: [taskId], title: 'Show What the Model Saw Last' });
      return { metadata };
    } finally {
      this.busy.delete(taskId);
      this._onDidChangeTask.fire(taskId);
    }
  }

  /** The deterministic floor summarizer for these settings (the model one is chosen per turn). */
  private deterministic(settings: KeeperSettings): Summarizer {
    return new ExtractiveSummarizer(new SummaryLineCounter(this.counter), settings.summaryBudgetTokens || undefined);
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

  /** Inspections deriving a task from its store, so that two callers share one derivation. */
  private readonly opening = new Map<string, Promise<TaskSession | undefined>>();

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
    const task = TaskSession.open(await workspace.task(taskId), taskId, taskId, sessionOptionsFor(settings, this.windowOf(taskId, settings)), this.counter, this.deterministic(settings));
    // An imported session never had a model call: it is shown as its first one would be sent. A chat task is
    // shown as its turns left it (its next turn reduces it for the model it runs with).
    if (isImportedTask(taskId) && task.records.length > 0) await task.session.engine.reduceNow(task.nextIndex);
    // A turn that opened the task meanwhile keeps its session.
    const opened = this.tasks.get(taskId);
    if (opened) return opened;
    this.tasks.set(taskId, task);
    return task;
  }

  /**
   * Force rebuild: the task is derived again from its raw record (the drift
   * reset of every preflight included), and its summary is compared with one
   * rebuilt in a single pass. The command shows the lines as a document, the
   * panel in place.
   */
  async rebuild(taskId: string): Promise<{ records: number; lines: string[]; drift: SummaryDrift | undefined }> {
    if (this.isRunning(taskId)) throw new Error('The task is running a turn; rebuild it when the turn ends.');
    const { settings } = readSettings();
    const open = this.tasks.get(taskId);
    const options = sessionOptionsFor(settings, this.windowOf(taskId, settings));
    let task: TaskSession | undefined;
    if (open) task = open.rederive(options, this.counter);
    else {
      this.tasks.delete(taskId);
      task = await this.inspect(taskId);
    }
    if (!task) throw new Error(`task ${taskId} is not in this workspace's session store`);
    this.tasks.set(taskId, task);
    const result = rebuildDrift(task.session, this.counter);
    this._onDidChangeTask.fire(taskId);
    return {
      records: task.records.length,
      lines: result ? formatDrift(result.current, result.drift) : ['Nothing is folded in this task yet: the whole record fits in the window, so there is no summary to rebuild.'],
      drift: result?.drift,
    };
  }

  /** Forgets a deleted task: its live session and its undoable edits. */
  forget(taskId: string): void {
    this.tasks.delete(taskId);
    // A deleted task's edits are no longer offered for undo (here or after a reload).
    let dropped = false;
    for (const [key, t] of this.turnEdits) if (t.taskId === taskId) dropped = this.turnEdits.delete(key) || dropped;
    if (dropped) this.saveUndoable();
    if (this.lastTaskId === taskId) this.lastTaskId = undefined;
    this._onDidChangeTask.fire(taskId);
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

  /**
   * A user's act on a protected fact of a task (from the Task Context panel):
   * kept as an event in the task's store and applied now, so the next
   * projection carries it and every later derivation starts from it.
   */
  async applyStateEvent(taskId: string, event: Omit<StateEvent, 'record'>): Promise<Fact> {
    const task = await this.inspect(taskId);
    if (!task) throw new Error(`task ${taskId} is not in this workspace's session store`);
    const fact = task.session.applyStateEvent({ ...event, record: task.nextIndex });
    this._onDidChangeTask.fire(taskId);
    return fact;
  }

  isRunning(taskId: string): boolean {
    return this.busy.has(taskId);
  }

  changed(taskId: string): void {
    this._onDidChangeTask.fire(taskId);
  }

  private async summarizerFor(
    settings: KeeperSettings,
    chatModel: vscode.LanguageModelChat,
    notices: Notice[],
    say: (message: string) => void,
    signal: AbortSignal,
    chatFrame: () => { system: string; tools: readonly ToolSpec[] } | undefined,
  ): Promise<Summarizer> {
    const lines = new SummaryLineCounter(this.counter);
    const deterministic = new ExtractiveSummarizer(lines, settings.summaryBudgetTokens || undefined);
    if (settings.summarizerModel === 'none') return deterministic;
    let model = chatModel;
    if (settings.summarizerModel !== '') {
      const picked = (await vscode.lm.selectChatModels({ id: settings.summarizerModel }))[0] ?? (await vscode.lm.selectChatModels({ family: settings.summarizerModel }))[0];
      if (picked) model = picked;
      else notices.push({ markdown: `> ⚠ The summarizer model \`${settings.summarizerModel}\` is not available; summaries use the chat's model.` });
    }
    const port = new VsCodeChatModel(model);
    return new ModelSummarizer({
      complete: (request, signal) => port.complete(request, signal),
      base: deterministic,
      counter: lines,
      ...(settings.summaryBudgetTokens ? { cap: settings.summaryBudgetTokens } : {}),
      spanChars: Math.max(4_000, Math.min(60_000, model.maxInputTokens * 2)),
      timeoutMs: settings.summarizerTimeoutSeconds * 1000,
      signal,
      // The chat's own model is asked after the chat's context (its prompt cache serves it); another model gets a prompt of its own.
      ...(model.id === chatModel.id ? { chatFrame } : {}),
      onStart: () => say('Summarizing the oldest steps into the Task Context…'),
      onFallback: (reason) => say(`Summary written without the model (${reason}).`),
    });
  }

  /**
   * VS Code's Restore Checkpoint, Start Over and Retry take turns out of the
   * chat, not out of the files or the task: when the history shows fewer of the
   * task's turns than it holds, those turns are taken out of the task too (see
   * rewindTask), and the chat says so, names the files they changed that are
   * still as they left them, and offers to undo them.
   */
  private rewound(taskId: string, task: TaskSession, recorded: number, shown: number | undefined): Rewind | undefined {
    if (shown === undefined || recorded <= shown) return undefined;
    const fromRecord = task.turnStart(shown + 1);
    if (fromRecord === undefined) return undefined;
    const removed = recorded - shown;
    const keys = [...this.turnEdits].filter(([, t]) => t.taskId === taskId && t.turn > shown).map(([key]) => key);
    const files = this.filesOf(keys);
    const turns = `${removed} earlier ${removed === 1 ? 'turn' : 'turns'}`;
    this._onDidRewind.fire({ taskId, removed, files });
    const notices: Notice[] = [
      {
        markdown:
          `> ⚠ ${turns} of this task ${removed === 1 ? 'was' : 'were'} taken out of the chat (Retry, Restore Checkpoint or Start Over). ` +
          `@keeper leaves ${removed === 1 ? 'it' : 'them'} out of the task's context too (its record keeps ${removed === 1 ? 'it' : 'them'}), ` +
          (files.length ? `but ${removed === 1 ? 'its' : 'their'} changes are still in ${files.map((f) => `\`${f}\``).join(', ')}.` : `and any file ${removed === 1 ? 'it' : 'they'} changed is as ${removed === 1 ? 'it' : 'they'} left it.`),
        ...(files.length ? { button: { command: UNDO_TURN_COMMAND, arguments: [keys], title: `Undo the edits of the removed ${removed === 1 ? 'turn' : 'turns'}` } } : {}),
      },
    ];
    return { notices, fromRecord, turns: Array.from({ length: removed }, (_, i) => shown + 1 + i), files };
  }

  /**
   * Takes a rewind's turns out of the task: the rewind is appended to its record
   * (the record keeps the turns), and the task is derived again without them, so
   * neither the model nor a later fold sees them.
   */
  private async rewindTask(task: TaskSession, rewind: Rewind, modelWindow: number, settings: KeeperSettings): Promise<TaskSession> {
    await recordRewind(task, rewind.fromRecord, rewind.turns, rewind.files);
    const again = task.rederive(sessionOptionsFor(settings, modelWindow), this.counter);
    this.tasks.set(task.id, again);
    this._onDidChangeTask.fire(task.id);
    return again;
  }

  /** The files the kept turns `keys` changed, each once. */
  private filesOf(keys: readonly string[]): string[] {
    return [...new Set(keys.flatMap((key) => this.turnEdits.get(key)?.edits.map((e) => e.rel) ?? []))];
  }

  /**
   * A new task's first turn: the edits of the task this window ran before it
   * are still applied (VS Code's Start Over and a new chat revert only the edits
   * of its own editing session, not @keeper's). Said once, with their undo.
   */
  private leftEdits(taskId: string): Notice[] {
    const before = this.previousTaskId;
    if (before === undefined || before === taskId) return [];
    const keys = [...this.turnEdits].filter(([key, t]) => t.taskId === before && !this.leftEditsSaid.has(key)).map(([key]) => key);
    if (keys.length === 0) return [];
    for (const key of keys) this.leftEditsSaid.add(key);
    const files = this.filesOf(keys);
    return [
      {
        markdown: `> ⚠ The task @keeper worked on before this one left its edits in ${files.map((f) => `\`${f}\``).join(', ')}: Start Over and a new chat do not revert them. They stay unless you undo them.`,
        button: { command: UNDO_TURN_COMMAND, arguments: [keys], title: `Undo the earlier task's edits (${files.length} ${files.length === 1 ? 'file' : 'files'})` },
      },
    ];
  }

  /** Keeps a turn's edits for its Undo (the last MAX_UNDOABLE_TURNS turns); returns their key. */
  private keepEdits(taskId: string, turn: number, edits: readonly TurnEdit[]): string {
    // Unique across reloads: a button of an earlier window keeps pointing at its own turn.
    const key = `turn-${Date.now().toString(36)}-${++this.editedTurns}`;
    this.turnEdits.set(key, { taskId, turn, savedAt: Date.now(), edits });
    for (const old of this.turnEdits.keys()) {
      if (this.turnEdits.size <= MAX_UNDOABLE_TURNS) break;
      this.turnEdits.delete(old);
    }
    this.saveUndoable();
    return key;
  }

  /**
   * The undoable turns, kept in the workspace's state so that Undo still
   * works after a window reload: the newest turns up to UNDO_STATE_MAX_CHARS
   * of text in all (an older one stays undoable in this window only), for
   * UNDO_STATE_MAX_AGE_MS.
   */
  private saveUndoable(): void {
    if (!this.undoState) return;
    const saved: SavedTurn[] = [];
    let chars = 0;
    // Newest first, until the state's budget is spent: an older turn stays undoable in this window only.
    for (const [key, t] of [...this.turnEdits].reverse()) {
      const size = t.edits.reduce((n, e) => n + e.before.length + e.after.length, 0);
      if (chars + size > UNDO_STATE_MAX_CHARS) continue;
      chars += size;
      saved.unshift({ key, taskId: t.taskId, turn: t.turn, savedAt: t.savedAt, edits: t.edits.map((e) => ({ uri: e.uri.toString(), rel: e.rel, before: e.before, after: e.after, ...(e.created ? { created: true } : {}) })) });
    }
    this.undoState.update(UNDO_STATE_KEY, saved).then(undefined, (error: unknown) => this.log?.warn(`the undoable edits could not be kept for the next window: ${messageOf(error)}`));
  }

  private loadUndoable(): void {
    const saved = this.undoState?.get<unknown>(UNDO_STATE_KEY);
    if (!Array.isArray(saved)) return;
    for (const raw of saved) {
      const t = raw as Partial<SavedTurn> | null;
      if (!t || typeof t.key !== 'string' || typeof t.taskId !== 'string' || typeof t.turn !== 'number' || typeof t.savedAt !== 'number' || !Array.isArray(t.edits)) continue;
      // A week later the files have moved on: the turn is no longer offered.
      if (Date.now() - t.savedAt > UNDO_STATE_MAX_AGE_MS) continue;
      const edits: TurnEdit[] = [];
      for (const e of t.edits) {
        if (!e || typeof e.uri !== 'string' || typeof e.rel !== 'string' || typeof e.before !== 'string' || typeof e.after !== 'string') continue;
        edits.push({ uri: vscode.Uri.parse(e.uri), rel: e.rel, before: e.before, after: e.after, ...(e.created === true ? { created: true } : {}) });
      }
      if (edits.length) this.turnEdits.set(t.key, { taskId: t.taskId, turn: t.turn, savedAt: t.savedAt, edits });
    }
  }

  /**
   * Undoes the edits of a turn (`key`, from its Undo button; default the last
   * turn that edited), newest first, through the editor; a file changed since
   * is left alone and named. Returns a sentence for the user.
   */
  async undoTurn(key?: string | readonly string[]): Promise<string> {
    const last = [...this.turnEdits.keys()].pop();
    const chosen = key === undefined ? (last !== undefined ? [last] : []) : typeof key === 'string' ? [key] : key;
    const edits = chosen.flatMap((k) => this.turnEdits.get(k)?.edits ?? []);
    if (edits.length === 0) return 'There are no @keeper edits to undo in this window.';
    const { undone, changedSince } = await undoEdits(edits);
    // The task's record says so too: the next model call sees the files as they are again.
    const byTask = new Map<string, number[]>();
    for (const k of chosen) {
      const turn = this.turnEdits.get(k);
      if (turn) byTask.set(turn.taskId, [...(byTask.get(turn.taskId) ?? []), turn.turn]);
    }
    for (const [taskId, turns] of byTask) {
      // A task not open in this window (a turn undone after a reload) is opened to record it.
      const task = this.busy.has(taskId) ? undefined : (this.tasks.get(taskId) ?? (await this.inspect(taskId).catch(() => undefined)));
      const files = new Set(chosen.flatMap((k) => (this.turnEdits.get(k)?.taskId === taskId ? this.turnEdits.get(k)!.edits.map((e) => e.rel) : [])));
      if (task && !this.busy.has(taskId)) {
        await recordUndo(task, turns, undone.filter((f) => files.has(f)), changedSince.filter((f) => files.has(f))).catch((error: unknown) => this.log?.error(`task ${taskId}: the undo could not be recorded`, error));
      }
    }
    for (const k of chosen) this.turnEdits.delete(k);
    this.saveUndoable();
    const parts = [];
    if (undone.length) parts.push(`Undid @keeper's edits to ${undone.join(', ')}.`);
    if (changedSince.length) parts.push(`Left ${changedSince.join(', ')} as ${changedSince.length === 1 ? 'it is' : 'they are'}: changed since @keeper edited ${changedSince.length === 1 ? 'it' : 'them'}.`);
    return parts.join(' ');
  }

  private toolRunner(task: TaskSession, root: string, settings: KeeperSettings, stream: vscode.ChatResponseStream, token: vscode.ChatParticipantToolToken, edits: TurnEdit[], others: readonly vscode.LanguageModelToolInformation[]): ToolRunner {
    const other = new Map(others.map((t) => [t.name, t]));
    const run = (name: string, input: unknown, signal: AbortSignal): Promise<ToolOutcome> => {
      if (other.has(name)) return invokeOtherTool(name, input, token, signal, settings.toolOutputMaxChars);
      const ctx: ToolContext = {
        root,
        signal,
        // Only the workspace tools change anything, and they are approved by VS Code (or the tests' replacement).
        confirm: (request) => (this.confirm ? this.confirm(request) : Promise.resolve(false)),
        viewToolCall: (id) => {
          const view = task.session.viewToolCall(id);
          return view ? { name: view.name, input: view.input, output: view.output, isError: view.isError } : undefined;
        },
        progress: (message) => stream.progress(message),
        commandTimeoutMs: settings.commandTimeoutSeconds * 1000,
        maxOutputChars: settings.toolOutputMaxChars,
        files: editorFiles(edits),
        seen: task.seen,
        ...(settings.runCommandsInTerminal ? { terminal: this.terminals } : {}),
        ...ripgrepFor(),
      };
      // The workspace tools run as VS Code's language model tools: shown in the chat, approved inline.
      if (WORKSPACE_TOOLS[name] !== undefined) {
        const preapproved = (request: ConfirmRequest): boolean => request.kind === 'run' && allowListed(request.command ?? '', settings.allowedCommands);
        return this.workspaceTools.run(name, input, ctx, token, this.confirm, preapproved);
      }
      return runTool(name, input, ctx);
    };
    return {
      specs: [
        ...AGENT_TOOLS.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
        ...others.map((t) => ({ name: t.name, description: t.description, inputSchema: (t.inputSchema as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} } })),
      ],
      run: async (name, input, signal) => {
        const outcome = await run(name, input, signal);
        // A failed or declined call is logged (the "Context Keeper" output channel), as model errors are.
        if (outcome.isError) this.log?.warn(`task ${task.id}: ${name} ${/^The user declined\b/.test(outcome.output) ? 'declined by the user' : 'failed'}: ${redact(outcome.output.slice(0, 4096)).text.replace(/\s+/g, ' ').slice(0, 300)}`);
        return outcome;
      },
    };
  }

  dispose(): void {
    this.workspaceTools.dispose();
    this.terminals.dispose();
    for (const controller of this.running) controller.abort();
    this.running.clear();
    this._onDidSend.dispose();
    this._onDidEndTurn.dispose();
    this._onDidChangeTask.dispose();
    this.tasks.clear();
  }
}

/** Window assumed for a task inspected before any turn of it ran in this window (the model is not known yet). */
const INSPECT_DEFAULT_WINDOW = 128_000;

export function readSettings(): { settings: KeeperSettings; problems: string[] } {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
  return parseSettings((key) => config.get(key));
}

/**
 * The tools of other extensions and MCP servers offered to @keeper's model: the
 * ones the prompt references (`#tool`) and the ones `contextKeeper.otherTools`
 * names; never Context Keeper's own, nor one whose name an own tool has.
 */
function otherToolsFor(request: vscode.ChatRequest, settings: KeeperSettings): vscode.LanguageModelToolInformation[] {
  const referenced = new Set(request.toolReferences.map((r) => r.name));
  const own = new Set(AGENT_TOOLS.map((t) => t.name));
  return vscode.lm.tools.filter((t) => !t.name.startsWith('contextKeeper_') && !own.has(t.name) && (referenced.has(t.name) || matchesToolPattern(t.name, settings.otherTools)));
}

/**
 * Runs another extension's tool in the chat of the request (its own
 * confirmation, if it asks one, shows inline). Its text parts are the output;
 * a failure is an error result the model reads.
 */
async function invokeOtherTool(name: string, input: unknown, token: vscode.ChatParticipantToolToken, signal: AbortSignal, maxChars: number): Promise<{ output: string; isError: boolean }> {
  const cancellation = new vscode.CancellationTokenSource();
  const onAbort = (): void => cancellation.cancel();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const object = input && typeof input === 'object' && !Array.isArray(input) ? input : {};
    const result = await vscode.lm.invokeTool(name, { input: object, toolInvocationToken: token }, cancellation.token);
    const text = result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '[a part that is not text]')).join('\n');
    return { isError: false, output: text.length <= maxChars ? text : `${text.slice(0, maxChars)}\n[clipped: the output has ${text.length} characters]` };
  } catch (error) {
    if (signal.aborted) throw new AbortError();
    return { isError: true, output: `the tool ${name} failed: ${messageOf(error)}` };
  } finally {
    signal.removeEventListener('abort', onAbort);
    cancellation.dispose();
  }
}

/** VS Code's own ripgrep (its place changed between versions), if it can be found. */
let bundledRipgrep: string | null | undefined;
function ripgrepPath(): string | undefined {
  if (bundledRipgrep === undefined) {
    const exe = process.platform === 'win32' ? 'rg.exe' : 'rg';
    const roots = [path.join(vscode.env.appRoot, 'node_modules'), path.join(vscode.env.appRoot, 'node_modules.asar.unpacked')];
    const candidates = roots.flatMap((root) => [path.join(root, '@vscode', 'ripgrep', 'bin', exe), path.join(root, '@vscode', 'ripgrep-universal', 'bin', `${process.platform}-${process.arch}`, exe)]);
    bundledRipgrep = candidates.find((file) => existsSync(file)) ?? null;
  }
  return bundledRipgrep ?? undefined;
}

/** grep's ripgrep and the user's exclusions (`files.exclude`, `search.exclude`), when VS Code bundles ripgrep. */
function ripgrepFor(): { ripgrep?: { path: string; excludes: string[] } } {
  const rg = ripgrepPath();
  if (!rg) return {};
  const excludes = ['files', 'search'].flatMap((section) => {
    const value = vscode.workspace.getConfiguration(section).get<Record<string, unknown>>('exclude') ?? {};
    return Object.entries(value).filter(([, on]) => on === true).map(([glob]) => glob);
  });
  return { ripgrep: { path: rg, excludes: [...new Set(excludes)] } };
}

/** The tools whose `path` is a workspace file the response lists as a reference. */
const FILE_TOOLS: ReadonlySet<string> = new Set(['read_file', 'edit_file', 'write_file']);

/**
 * The files and selections the user attached to a request (`#file`, a
 * selection, a dragged file), as the loop records them: the text of the open
 * buffer when there is one (unsaved changes included), clipped like a read.
 */
async function attachmentsOf(references: readonly vscode.ChatPromptReference[], root: vscode.Uri, maxChars: number): Promise<Attachment[]> {
  const out: Attachment[] = [];
  const clip = (text: string): string => (text.length <= maxChars ? text : `${text.slice(0, maxChars)}\n[clipped: the attachment has ${text.length} characters]`);
  const relative = (uri: vscode.Uri): string => (uri.scheme === 'file' && uri.fsPath.startsWith(root.fsPath) ? vscode.workspace.asRelativePath(uri, false) : uri.toString());
  for (const reference of references) {
    const value = reference.value;
    const uri = value instanceof vscode.Uri ? value : value instanceof vscode.Location ? value.uri : undefined;
    try {
      if (uri) {
        const document = await vscode.workspace.openTextDocument(uri);
        const range = value instanceof vscode.Location ? value.range : undefined;
        out.push({ path: relative(uri), ...(range ? { lines: { from: range.start.line + 1, to: range.end.line + 1 } } : {}), text: clip(document.getText(range)) });
      } else if (typeof value === 'string') out.push({ path: reference.id, text: clip(value) });
    } catch (error) {
      out.push({ path: uri ? relative(uri) : reference.id, text: `(the attachment could not be read: ${messageOf(error)})` });
    }
  }
  return out;
}

export { messageOf };
