/**
 * What every command gets (the services `activate` built) and the pickers
 * and helpers they share.
 */
import * as vscode from 'vscode';
import type { EvidenceDocuments } from '../agent/documents';
import { isImportedTask } from '../agent/openTasks';
import type { KeeperAgent, SentEvent } from '../agent/participant';
import type { TaskSession } from '../agent/taskSession';
import { messageOf } from '../core/errors';
import type { Redactor } from '../core/redact';
import type { TokenCounter } from '../core/tokens';
import type { TaskContextViewProvider } from '../panel/panelProvider';
import type { SessionSummary } from '../store/sessionStore';
import type { WorkspaceStoreHost } from '../store/workspaceStore';
import type { ReportDocuments } from './reports';

/** What command factories get: the services `activate` built. */
export interface Ctx {
  readonly extensionContext: vscode.ExtensionContext;
  readonly reports: ReportDocuments;
  readonly documents: EvidenceDocuments;
  /** The durable session store in this workspace's storage folder. */
  readonly sessions: WorkspaceStoreHost;
  readonly agent: KeeperAgent;
  /** The last context sent to the model, per task (what "Show What the Model Saw" opens). */
  readonly lastSent: Map<string, SentEvent>;
  /** The Task Context panel (a webview view in its own activity-bar container). */
  readonly panel: TaskContextViewProvider;
  /** The window's token counter. */
  readonly counter: TokenCounter;
  /** The window's redactor. */
  readonly redactor: Redactor;
}

export type CommandHandler = (...args: unknown[]) => unknown;
export type CommandFactory = (ctx: Ctx) => CommandHandler;

export async function pickTranscript(title = 'Project a Transcript'): Promise<vscode.Uri | undefined> {
  const picked = await vscode.window.showOpenDialog({
    title,
    openLabel: 'Open',
    canSelectFiles: true,
    canSelectFolders: false,
    canSelectMany: false,
    filters: { 'Transcripts (JSONL)': ['jsonl'], 'All files': ['*'] },
  });
  return picked?.[0];
}

/** The task a command acts on: its argument, the active task, or the user's pick among the stored ones. */
export async function pickTask(ctx: Ctx, arg: unknown, purpose: string): Promise<string | undefined> {
  if (typeof arg === 'string' && arg !== '') return arg;
  const store = await ctx.sessions.store();
  const stored = store.sessions();
  if (stored.length === 0) {
    void vscode.window.showInformationMessage('Context Keeper: there is no @keeper task in this workspace yet.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(taskPickItems(stored, ctx.agent.activeTaskId, ctx.panel.taskId), { title: purpose, placeHolder: 'Choose a task', matchOnDetail: true, matchOnDescription: true });
  return picked?.id;
}

/**
 * The stored tasks as quick-pick items, newest first (the chat's active task
 * on top): chat tasks and imported sessions, each with its size and kind.
 */
export function taskPickItems(stored: readonly SessionSummary[], active: string | undefined, shown?: string): (vscode.QuickPickItem & { id: string })[] {
  const newest = (s: SessionSummary): number => s.lastUsed ?? 0;
  return [...stored]
    .sort((a, b) => (a.id === active ? -1 : b.id === active ? 1 : newest(b) - newest(a) || b.id.localeCompare(a.id)))
    .map((s) => ({
      label: s.title || s.id,
      description: [isImportedTask(s.id) ? 'imported' : 'chat', `${s.records} records`, s.id === active ? 'active in the chat' : '', s.id === shown ? 'shown' : ''].filter(Boolean).join(' · '),
      detail: s.id,
      id: s.id,
    }));
}

export async function requireTask(ctx: Ctx, id: string): Promise<TaskSession | undefined> {
  const task = await ctx.agent.inspect(id);
  if (!task) void vscode.window.showErrorMessage(`Context Keeper: task ${id} is not in this workspace's session store.`);
  return task;
}

export async function showDocument(uri: vscode.Uri): Promise<void> {
  const document = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(document, { preview: false });
}

/** Turns an unexpected failure of a command into a message instead of a silent log entry. */
export function reportingFailures(id: string, handler: CommandHandler): CommandHandler {
  return async (...args: unknown[]) => {
    try {
      return await handler(...args);
    } catch (error) {
      console.error(`Context Keeper: command ${id} failed`, error);
      void vscode.window.showErrorMessage(`Context Keeper: ${id} failed: ${messageOf(error)}`);
      return undefined;
    }
  };
}

export function fileNameOf(uri: vscode.Uri): string {
  return uri.path.slice(uri.path.lastIndexOf('/') + 1) || uri.toString();
}
