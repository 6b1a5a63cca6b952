/**
 * @keeper, the chat participant: maps a chat session to its task (through
 * `ChatResult.metadata`, which survives window reloads; the history carries no
 * tool calls, the store does), runs a turn of the agent loop with the model the
 * user picked, streams the answer, and reports what was sent (the status-bar
 * gauge and the Task Context panel listen).
 */
import * as os from 'node:os';
import * as vscode from 'vscode';
import { formatDrift, rebuildDrift, type SummaryDrift } from '../core/drift';
import { notLoadedTotals, type StepReport } from '../core/engine';
import type { Redactor } from '../core/redact';
import type { Fact } from '../core/state';
import type { StateEvent } from '../core/store';
import type { TokenCounter } from '../core/tokens';
import { attachmentsOf } from './attachments';
import type { TaskStoreHost } from './ports';
import { contextMarkdown, factsMarkdown, isChatCommand, NO_TASK_YET, nothingToFold, rebuildMarkdown, type ChatCommandName } from './chatCommands';
import { describeCompaction, describeTurnCompactions, foldedSoFar, ModelCallError, recordRewind, recordUndo, runTurn, type FoldedSoFar, type SentInfo, type TurnIO } from './loop';
import { isAbort, messageOf, type ToolSpec } from './model';
import { writeNotices, type Notice } from './notices';
import { OpenTasks } from './openTasks';
import { systemPrompt } from './prompt';
import { sessionOptionsFor, type KeeperSettings } from './settings';
import { deterministicSummarizer, summarizerFor } from './summarizers';
import type { TaskSession } from './taskSession';
import { describeToolCall } from './tools';
import { otherToolsFor, TurnTools, type Confirm } from './turnTools';
import { UndoableTurns } from './undoableTurns';
import { describeModelError, VsCodeChatModel } from './vscodeModel';
import { readSettings } from './vscodeSettings';
import { undoEdits, type TurnEdit } from './workspaceTools';

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

/** The command a turn's Undo button runs (contributed in package.json). */
export const UNDO_TURN_COMMAND = 'contextKeeper.undoTurnEdits';
/** Opens the Task Context panel on a task (registered by the extension; a button in a response that compacted). */
export const OPEN_PANEL_COMMAND = 'contextKeeper.openPanel';
/** Opens the messages of a task's last model call as a document. */
const SHOW_CONTEXT_COMMAND = 'contextKeeper.showContext';

export function newTaskId(now = new Date()): string {
  return `task-${now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')}-${Math.random().toString(36).slice(2, 8)}`;
}

export class KeeperAgent implements vscode.Disposable {
  /** The tasks open in this window and the ones running a turn. */
  private readonly tasks: OpenTasks;
  /** The edits of the last turns that changed files, for their Undo buttons. */
  private readonly undoable: UndoableTurns;
  /** The tools a turn offers its model, and the terminals its commands run in. */
  private readonly tools: TurnTools;
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

  /**
   * How edits, writes and commands are approved: undefined (the default) asks
   * the user inline in the chat, through VS Code's tool confirmation; tests
   * install a function that decides instead.
   */
  confirm: Confirm | undefined;

  constructor(
    sessions: TaskStoreHost,
    /** The token counter every task of this window measures with (one, built at the composition root). */
    private readonly counter: TokenCounter,
    /** The redactor every task of this window hides secrets with (one, built at the composition root; each task's session keeps it). */
    redactor: Redactor,
    /** Where model errors, retries and tool failures are logged (the "Context Keeper" output channel). */
    private readonly log?: vscode.LogOutputChannel,
    /** Where the undoable turns are kept across window reloads (the workspace's state). */
    undoState?: vscode.Memento,
  ) {
    this.tasks = new OpenTasks(sessions, counter, redactor);
    this.undoable = new UndoableTurns(undoState, log);
    this.tools = new TurnTools(() => this.confirm, log);
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
    if (this.tasks.isRunning(taskId)) {
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
    this.tasks.started(taskId);
    this.previousTaskId = this.lastTaskId === taskId ? this.previousTaskId : this.lastTaskId;
    this.lastTaskId = taskId;
    /** The files this turn changed, for its Undo button. */
    const edits: TurnEdit[] = [];
    /** The compactions of this turn, for the line its response keeps. */
    const compactions: { report: StepReport; folded: FoldedSoFar }[] = [];
    try {
      const chatModel = new VsCodeChatModel(model, settings.windowTokens > 0 ? settings.windowTokens : undefined);
      let task = await this.tasks.open(taskId, prompt, chatModel.maxInputTokens, settings);
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
      task.summarizer.target = await summarizerFor(this.counter, task.session.redactor, settings, model, footer, say, controller.signal, () => frame);
      const tools = this.tools.runner(task, root.fsPath, settings, stream, request.toolInvocationToken, edits, otherToolsFor(request, settings));
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
        const key = this.undoable.keep(taskId, metadata.turn ?? 0, edits);
        const files = new Set(edits.map((e) => e.rel)).size;
        stream.button({ command: UNDO_TURN_COMMAND, arguments: [key], title: `Undo @keeper's edits (${files} ${files === 1 ? 'file' : 'files'})` });
      }
      open = false;
      cancellation.dispose();
      this.running.delete(controller);
      this.tasks.finished(taskId);
      this._onDidChangeTask.fire(taskId);
    }
  };

  /**
   * A slash command on the chat's task: `/compact` folds now, `/context` shows
   * what the model is sent next, `/facts` the protected facts, `/rebuild` the
   * drift against a rebuild from the raw record. None is recorded in the task:
   * they act on it, they do not ask the agent anything.
   */
  private async chatCommand(name: ChatCommandName, taskId: string, model: vscode.LanguageModelChat, stream: vscode.ChatResponseStream, token: vscode.CancellationToken): Promise<vscode.ChatResult> {
    const metadata: KeeperMetadata = { taskId };
    if (!(await this.tasks.exists(taskId))) {
      stream.markdown(NO_TASK_YET);
      return { metadata };
    }
    if (this.tasks.isRunning(taskId)) return { errorDetails: { message: `This task is still running a turn; use /${name} when it ends.` }, metadata };
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
    const task = await this.tasks.open(taskId, '', new VsCodeChatModel(model, settings.windowTokens > 0 ? settings.windowTokens : undefined).maxInputTokens, settings);
    const session = task.session;
    if (name === 'facts') {
      stream.markdown(factsMarkdown(session.state.active(), session.state.pending()));
      panelButton();
      return { metadata };
    }
    this.tasks.started(taskId);
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
          task.summarizer.target = await summarizerFor(this.counter, task.session.redactor, settings, model, notices, say, controller.signal, () => undefined);
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
          task.summarizer.target = deterministicSummarizer(this.counter, task.session.redactor, settings);
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
      this.tasks.finished(taskId);
      this._onDidChangeTask.fire(taskId);
    }
  }

  /** A task opened for inspection (commands, panel): see OpenTasks.inspect. */
  async inspect(taskId: string): Promise<TaskSession | undefined> {
    return this.tasks.inspect(taskId);
  }

  /**
   * Force rebuild: the task is derived again from its raw record (the drift
   * reset of every preflight included), and its summary is compared with one
   * rebuilt in a single pass. The command shows the lines as a document, the
   * panel in place.
   */
  async rebuild(taskId: string): Promise<{ records: number; lines: string[]; drift: SummaryDrift | undefined }> {
    if (this.isRunning(taskId)) throw new Error('The task is running a turn; rebuild it when the turn ends.');
    const task = await this.tasks.rederived(taskId);
    if (!task) throw new Error(`task ${taskId} is not in this workspace's session store`);
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
    this.tasks.forget(taskId);
    this.undoable.forgetTask(taskId);
    if (this.lastTaskId === taskId) this.lastTaskId = undefined;
    this._onDidChangeTask.fire(taskId);
  }

  /** Lets go of the tasks not used for `idleMs` (see OpenTasks.releaseIdle); returns the ids whose stores were closed. */
  async releaseIdle(idleMs: number, now = Date.now()): Promise<string[]> {
    return this.tasks.releaseIdle(idleMs, now);
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
    return this.tasks.isRunning(taskId);
  }

  changed(taskId: string): void {
    this._onDidChangeTask.fire(taskId);
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
    const keys = this.undoable.keysAfter(taskId, shown);
    const files = this.undoable.filesOf(keys);
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
    this.tasks.replace(again);
    this._onDidChangeTask.fire(task.id);
    return again;
  }

  /**
   * A new task's first turn: the edits of the task this window ran before it
   * are still applied (VS Code's Start Over and a new chat revert only the edits
   * of its own editing session, not @keeper's). Said once, with their undo.
   */
  private leftEdits(taskId: string): Notice[] {
    const before = this.previousTaskId;
    if (before === undefined || before === taskId) return [];
    const keys = this.undoable.takeUnsaid(before);
    if (keys.length === 0) return [];
    const files = this.undoable.filesOf(keys);
    return [
      {
        markdown: `> ⚠ The task @keeper worked on before this one left its edits in ${files.map((f) => `\`${f}\``).join(', ')}: Start Over and a new chat do not revert them. They stay unless you undo them.`,
        button: { command: UNDO_TURN_COMMAND, arguments: [keys], title: `Undo the earlier task's edits (${files.length} ${files.length === 1 ? 'file' : 'files'})` },
      },
    ];
  }

  /**
   * Undoes the edits of a turn (`key`, from its Undo button; default the last
   * turn that edited), newest first, through the editor; a file changed since
   * is left alone and named. Returns a sentence for the user.
   */
  async undoTurn(key?: string | readonly string[]): Promise<string> {
    const chosen = this.undoable.chosen(key);
    const edits = chosen.flatMap((k) => this.undoable.turn(k)?.edits ?? []);
    if (edits.length === 0) return 'There are no @keeper edits to undo in this window.';
    const { undone, changedSince } = await undoEdits(edits);
    // The task's record says so too: the next model call sees the files as they are again.
    const byTask = new Map<string, number[]>();
    for (const k of chosen) {
      const turn = this.undoable.turn(k);
      if (turn) byTask.set(turn.taskId, [...(byTask.get(turn.taskId) ?? []), turn.turn]);
    }
    for (const [taskId, turns] of byTask) {
      // A task not open in this window (a turn undone after a reload) is opened to record it.
      const task = this.tasks.isRunning(taskId) ? undefined : (this.tasks.get(taskId) ?? (await this.inspect(taskId).catch(() => undefined)));
      const files = new Set(chosen.flatMap((k) => (this.undoable.turn(k)?.taskId === taskId ? this.undoable.turn(k)!.edits.map((e) => e.rel) : [])));
      if (task && !this.tasks.isRunning(taskId)) {
        await recordUndo(task, turns, undone.filter((f) => files.has(f)), changedSince.filter((f) => files.has(f))).catch((error: unknown) => this.log?.error(`task ${taskId}: the undo could not be recorded`, error));
      }
    }
    this.undoable.drop(chosen);
    const parts = [];
    if (undone.length) parts.push(`Undid @keeper's edits to ${undone.join(', ')}.`);
    if (changedSince.length) parts.push(`Left ${changedSince.join(', ')} as ${changedSince.length === 1 ? 'it is' : 'they are'}: changed since @keeper edited ${changedSince.length === 1 ? 'it' : 'them'}.`);
    return parts.join(' ');
  }

  dispose(): void {
    this.tools.dispose();
    for (const controller of this.running) controller.abort();
    this.running.clear();
    this._onDidSend.dispose();
    this._onDidEndTurn.dispose();
    this._onDidChangeTask.dispose();
    this.tasks.clear();
  }
}

/** The tools whose `path` is a workspace file the response lists as a reference. */
const FILE_TOOLS: ReadonlySet<string> = new Set(['read_file', 'edit_file', 'write_file']);

export { messageOf };
