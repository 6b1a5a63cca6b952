/**
 * The Task Context panel's host side: a webview view in its own view
 * container. It shows the task of the active @keeper chat (or the one the
 * open-panel command names), answers the webview's `ready` with the whole
 * snapshot, then patches only the parts that changed after each step of a turn
 * (coalesced, so a burst of steps costs one snapshot: see panelUpdates.ts; the
 * state itself is built by panelStateBuilder.ts). Webview messages are
 * untrusted: the router parses each one; one that does not parse is logged and
 * never answered.
 *
 * No `retainContextWhenHidden`: a hidden view's webview is torn down, restores
 * what it showed from `getState`, and says `ready` again, which gets a full
 * snapshot.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LastSent, PanelAgent, PanelDocuments } from './ports';
import type { TokenCounter } from '../core/tokens';
import { parseWebviewMessage } from '../protocol/messages';
import { makeNonce, panelHtml } from './html';
import { handleWebviewMessage, type PanelPorts } from './router';
import { PanelStateBuilder } from './panelStateBuilder';
import { PanelUpdates } from './panelUpdates';
import { messageOf } from '../core/errors';

export const PANEL_VIEW_ID = 'contextKeeper.taskContext';
/** The command VS Code generates for every view: reveals and focuses it. */
const FOCUS_COMMAND = `${PANEL_VIEW_ID}.focus`;

export interface TaskContextDeps {
  readonly agent: PanelAgent;
  readonly documents: PanelDocuments;
  /** The window's token counter. */
  readonly counter: TokenCounter;
  /** What the model was sent at the task's last call in this window. */
  readonly lastSent: (taskId: string) => LastSent | undefined;
  /** Tells the user something outside the panel (a warning message). */
  notify(message: string): void;
}

export class TaskContextViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private viewDisposables: vscode.Disposable[] = [];
  /** The task shown: set by `showTask`, or by the chat when its active task changes. */
  private shown: string | undefined;
  /** The agent's active task when last seen (the panel follows it when it changes). */
  private lastActive: string | undefined;
  private rejectedOnce = false;
  private disposed = false;
  /** The state of the task shown, with the host's notices and drift reports and the pages the webview asked for. */
  private readonly state: PanelStateBuilder;
  /** What the webview was sent, and the next update to send it. */
  private readonly updates: PanelUpdates;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly deps: TaskContextDeps,
  ) {
    this.state = new PanelStateBuilder(deps);
    this.updates = new PanelUpdates(() => this.state.build(this.taskId));
    this.disposables.push(
      deps.agent.onDidChangeTask((taskId) => this.onTaskEvent(taskId)),
      deps.agent.onDidSend((event) => this.onTaskEvent(event.taskId)),
    );
  }

  /** The task the panel shows, or is about to show (its next snapshot is of this task). */
  get taskId(): string | undefined {
    return this.shown ?? this.deps.agent.activeTaskId;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    for (const d of this.viewDisposables.splice(0)) d.dispose();
    this.updates.attach(view);
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const webview = view.webview;
    webview.options = { enableScripts: true, localResourceRoots: [dist] };
    const asset = (file: string): string => webview.asWebviewUri(vscode.Uri.joinPath(dist, file)).toString();
    webview.html = panelHtml({
      nonce: makeNonce(),
      cspSource: webview.cspSource,
      scriptUri: asset('webview.js'),
      styleUri: asset('webview.css'),
      codiconUri: asset('codicon.css'),
    });
    this.viewDisposables.push(
      webview.onDidReceiveMessage((raw: unknown) => this.updates.enqueue(() => this.receive(raw))),
      view.onDidChangeVisibility(() => {
        // Hidden, the webview is torn down; shown again, it loads, restores and says `ready`
        // (answered with the full state). The update scheduled here is full too, in case it was kept.
        this.updates.forgetPosted();
        if (view.visible) this.updates.schedule();
      }),
      view.onDidDispose(() => {
        this.updates.detach(view);
        for (const d of this.viewDisposables.splice(0)) d.dispose();
      }),
    );
  }

  /**
   * Shows a task in the panel (the open-panel command) and reveals the panel;
   * `compactionAt` (a chat's compaction line) also shows the compaction made
   * before that record, once the panel has the task's state.
   */
  async showTask(taskId?: string, compactionAt?: number): Promise<void> {
    if (taskId !== undefined) this.shown = taskId;
    this.updates.revealAfterState(compactionAt !== undefined && this.taskId !== undefined ? { taskId: this.taskId, atRecord: compactionAt } : undefined);
    await vscode.commands.executeCommand(FOCUS_COMMAND);
    this.updates.schedule();
  }

  // ---------------------------------------------------------------- inbound

  private async receive(raw: unknown): Promise<void> {
    try {
      const reply = await handleWebviewMessage(raw, this.ports);
      if (reply) await this.updates.post(reply);
      const parsed = parseWebviewMessage(raw);
      if (parsed.ok && parsed.message.type === 'ready') await this.updates.postState(true);
    } catch (error) {
      console.error('Context Keeper: a panel action failed', error);
      this.deps.notify(`Context Keeper: ${messageOf(error)}`);
    }
  }

  private readonly ports: PanelPorts = {
    // What the webview shows, not the task merely scheduled: the message's task must be this one.
    taskId: () => this.updates.shownTask,
    applyStateEvent: (taskId, event) => this.deps.agent.applyStateEvent(taskId, event),
    openRecord: async (taskId, index) => {
      const task = await this.deps.agent.inspect(taskId);
      if (!task?.records[index]) {
        this.deps.notify(`Context Keeper: task ${taskId} has no record r${index}.`);
        return;
      }
      await showReadOnly(this.deps.documents.recordUri(taskId, index));
    },
    openToolCall: async (taskId, toolCallId) => {
      const task = await this.deps.agent.inspect(taskId);
      if (!task?.session.viewToolCall(toolCallId)) {
        this.deps.notify(`Context Keeper: task ${taskId} has no tool call ${toolCallId}.`);
        return;
      }
      await showReadOnly(this.deps.documents.callUri(taskId, toolCallId));
    },
    openFile: (file) => this.openWorkspaceFile(file),
    rebuild: (taskId) => this.rebuild(taskId),
    showMore: (_taskId, list) => {
      this.state.showMore(list);
      this.updates.schedule();
    },
    setFilter: (text) => {
      if (this.state.setFilter(text)) this.updates.schedule();
    },
    reject: (error) => this.rejected(error),
  };

  /**
   * Force rebuild from the panel: the task is derived again from its raw
   * record and its summary compared with one rebuilt in a single pass; the
   * drift lines go to the panel (the command opens them as a document instead).
   */
  private async rebuild(taskId: string): Promise<string> {
    // The panel keeps showing this task whatever the chat does meanwhile.
    this.shown = taskId;
    const { records, lines, drift } = await this.deps.agent.rebuild(taskId);
    this.state.setDrift(taskId, lines);
    this.updates.schedule();
    if (!drift) return `Derived again from ${records} raw records; nothing is folded yet.`;
    return `Derived again from ${records} raw records. ${lines[0] ?? ''}`.trim();
  }

  /** Opens a file of the workspace folder; a path that leads outside it (`..`, a symlink) is refused. */
  private async openWorkspaceFile(file: string): Promise<void> {
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
    const root = folders[0];
    if (!root) {
      this.deps.notify('Context Keeper: open a folder to open its files from the panel.');
      return;
    }
    const target = path.resolve(root.uri.fsPath, file);
    let real: string;
    try {
      real = await fs.realpath(target);
    } catch {
      this.deps.notify(`Context Keeper: ${file} does not exist in the workspace (any more).`);
      return;
    }
    const inside = await Promise.all(folders.map(async (f) => isInside(await fs.realpath(f.uri.fsPath).catch(() => f.uri.fsPath), real)));
    if (!inside.some(Boolean)) {
      this.deps.notify(`Context Keeper: ${file} is outside the workspace folder; the panel opens only workspace files.`);
      return;
    }
    await vscode.window.showTextDocument(vscode.Uri.file(real), { preview: true });
  }

  /** A message the panel should never send: logged every time, told once per session. */
  private rejected(error: string): void {
    console.warn(`Context Keeper: ${error}`);
    if (this.rejectedOnce) return;
    this.rejectedOnce = true;
    this.deps.notify('Context Keeper: the Task Context panel sent a message the extension does not accept; it was ignored (details in the log).');
    this.addNotice('A panel message was ignored because the extension does not accept it (details in the log).');
  }

  private addNotice(notice: string): void {
    this.state.addNotice(notice);
    this.updates.schedule();
  }

  // ---------------------------------------------------------------- outbound

  private onTaskEvent(taskId: string): void {
    const active = this.deps.agent.activeTaskId;
    // Follow the chat: a turn on another task moves the panel to it.
    if (active !== undefined && active !== this.lastActive) {
      this.lastActive = active;
      if (this.shown !== active) {
        this.shown = active;
        this.updates.schedule();
        return;
      }
    }
    if (taskId === this.taskId) this.updates.schedule();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.updates.dispose();
    for (const d of [...this.viewDisposables.splice(0), ...this.disposables.splice(0)]) d.dispose();
  }
}

async function showReadOnly(uri: vscode.Uri): Promise<void> {
  const document = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(document, { preview: true });
}

function isInside(root: string, file: string): boolean {
  const relative = path.relative(root, file);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}
