/**
 * The composition root: `activate` builds every service once, owns them through
 * one root disposable store, and registers the commands from a table.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { callUri, DOC_SCHEME, EvidenceDocuments, KeptDocuments, parseDocUri, recordUri } from './agent/documents';
import { KeeperAgent, PARTICIPANT_ID, UNDO_TURN_COMMAND, type Confirm, type SentEvent, type TurnEndEvent } from './agent/participant';
import { runProbesCommand } from './agent/probeCommand';
import type { TaskSession } from './agent/taskSession';
import { projectTranscriptReport } from './cli/report';
import { sessionIdFor } from './cli/storeRun';
import { DEFAULT_CONTEXT_WINDOW, OUTPUT_RESERVED_TOKENS } from './core/budget';
import { formatInterchange, parseTranscript } from './core/transcript';
import { PANEL_VIEW_ID, TaskContextViewProvider } from './panel/panelProvider';
import { WorkspaceStoreHost } from './store/workspaceStore';
import { registerKeeperTools } from './agent/lmTools';

export const CommandIds = {
  openPanel: 'contextKeeper.openPanel',
  projectTranscript: 'contextKeeper.projectTranscript',
  rebuild: 'contextKeeper.rebuild',
  viewToolCall: 'contextKeeper.viewToolCall',
  deleteSession: 'contextKeeper.deleteSession',
  exportSession: 'contextKeeper.exportSession',
  importSession: 'contextKeeper.importSession',
  showContext: 'contextKeeper.showContext',
  runProbes: 'contextKeeper.runProbes',
  revealSecrets: 'contextKeeper.revealSecrets',
  undoTurnEdits: UNDO_TURN_COMMAND,
} as const;

export type CommandId = (typeof CommandIds)[keyof typeof CommandIds];

/** What command factories get: the services `activate` built. */
interface Ctx {
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
}

type CommandHandler = (...args: unknown[]) => unknown;
type CommandFactory = (ctx: Ctx) => CommandHandler;

/** Every command, id → factory. Each id is also contributed in package.json. */
const COMMANDS: Readonly<Record<CommandId, CommandFactory>> = {
  [CommandIds.openPanel]: openPanelCommand,
  [CommandIds.projectTranscript]: projectTranscriptCommand,
  [CommandIds.rebuild]: rebuildCommand,
  [CommandIds.viewToolCall]: viewToolCallCommand,
  [CommandIds.deleteSession]: deleteSessionCommand,
  [CommandIds.exportSession]: exportSessionCommand,
  [CommandIds.importSession]: importSessionCommand,
  [CommandIds.showContext]: showContextCommand,
  [CommandIds.runProbes]: (ctx) => runProbesCommand(ctx.documents),
  [CommandIds.revealSecrets]: revealSecretsCommand,
  [CommandIds.undoTurnEdits]: (ctx) => async (key?: unknown) => {
    const keys = typeof key === 'string' ? key : Array.isArray(key) && key.every((k) => typeof k === 'string') ? (key as string[]) : undefined;
    void vscode.window.showInformationMessage(await ctx.agent.undoTurn(keys));
  },
};

/** What `activate` returns: the services integration tests drive (no other caller relies on it). */
export interface ContextKeeperApi {
  readonly agent: KeeperAgent;
  readonly sessions: WorkspaceStoreHost;
  /** Replaces how edits, writes and commands are confirmed; returns a function restoring the dialog. */
  setConfirm(confirm: Confirm): () => void;
  readonly onDidSend: vscode.Event<SentEvent>;
  readonly onDidEndTurn: vscode.Event<TurnEndEvent>;
}

/** A task not used for this long is let go (its store checkpointed and closed) … */
const TASK_IDLE_MS = 10 * 60_000;
/** … checked this often. */
const IDLE_SWEEP_MS = 60_000;

export function activate(context: vscode.ExtensionContext): ContextKeeperApi | undefined {
  const root = new DisposableStore();
  context.subscriptions.push(root);
  try {
    const reports = root.add(new ReportDocuments());
    root.add(vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, reports));
    const storage = (context.storageUri ?? context.globalStorageUri).fsPath;
    const sessions = root.add(
      new WorkspaceStoreHost(storage, (severity, message) => {
        if (severity === 'error') void vscode.window.showErrorMessage(message);
        else void vscode.window.showWarningMessage(message);
      }),
    );
    // Opened in the background: a damaged or unwritable store is reported, never fatal.
    void sessions.store();
    let agent: KeeperAgent | undefined;
    const documents = root.add(new EvidenceDocuments((id) => agent!.inspect(id)));
    root.add(vscode.workspace.registerTextDocumentContentProvider(DOC_SCHEME, documents));
    const workspaceRoot = (): vscode.Uri | undefined => vscode.workspace.workspaceFolders?.[0]?.uri;
    const log = root.add(vscode.window.createOutputChannel('Context Keeper', { log: true }));
    agent = root.add(new KeeperAgent(sessions, log));

    // A task nobody used for a while is let go and its store closed: memory stays bounded by the tasks in use.
    const sweep = setInterval(() => {
      agent!.releaseIdle(TASK_IDLE_MS).catch((error: unknown) => console.error('Context Keeper: closing idle tasks failed', error));
    }, IDLE_SWEEP_MS);
    root.add({ dispose: () => clearInterval(sweep) });

    const participant = root.add(vscode.chat.createChatParticipant(PARTICIPANT_ID, agent.handler));
    // The task's context, record and tool calls, for every agent in VS Code (#taskContext, Copilot's agent mode).
    root.add(registerKeeperTools(agent, sessions));
    participant.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'icon.png');

    const lastSent = new Map<string, SentEvent>();
    const gauge = root.add(new BudgetGauge());
    root.add(agent.onDidSend((event) => {
      lastSent.set(event.taskId, event);
      gauge.show(event);
    }));

    const panel = root.add(
      new TaskContextViewProvider(context.extensionUri, {
        agent,
        lastSent: (id) => lastSent.get(id),
        notify: (message) => void vscode.window.showWarningMessage(message),
      }),
    );
    root.add(vscode.window.registerWebviewViewProvider(PANEL_VIEW_ID, panel));
    const ctx: Ctx = { extensionContext: context, reports, documents, sessions, agent, lastSent, panel };
    for (const [id, factory] of Object.entries(COMMANDS)) {
      root.add(vscode.commands.registerCommand(id, reportingFailures(id, factory(ctx))));
    }
    const api: ContextKeeperApi = {
      agent,
      sessions,
      setConfirm: (confirm) => {
        agent!.confirm = confirm;
        return () => (agent!.confirm = undefined);
      },
      onDidSend: agent.onDidSend,
      onDidEndTurn: agent.onDidEndTurn,
    };
    return api;
  } catch (error) {
    root.dispose();
    console.error('Context Keeper failed to activate', error);
    void vscode.window.showErrorMessage(`Context Keeper failed to activate: ${messageOf(error)}`);
    return undefined;
  }
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}

// ---------------------------------------------------------------------------
// Commands

/** Context Keeper: Project a Transcript. Takes an optional file URI (used by tests). */
function projectTranscriptCommand(ctx: Ctx): CommandHandler {
  return async (target?: unknown) => {
    const source = target instanceof vscode.Uri ? target : await pickTranscript();
    if (!source) return;
    const name = fileNameOf(source);

    let text: string;
    try {
      text = new TextDecoder('utf-8').decode(await vscode.workspace.fs.readFile(source));
    } catch (error) {
      void vscode.window.showErrorMessage(`Context Keeper could not read the transcript ${name}: ${messageOf(error)}`);
      return;
    }

    const request: ReportRequest = { source, window: DEFAULT_CONTEXT_WINDOW, reserve: OUTPUT_RESERVED_TOKENS };
    let report: string;
    try {
      report = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Context Keeper: projecting ${name}…` },
        async () => projectTranscriptReport(text, { window: request.window, reserve: request.reserve }),
      );
    } catch (error) {
      void vscode.window.showErrorMessage(`Context Keeper could not project ${name}: ${messageOf(error)}`);
      return;
    }

    const uri = ctx.reports.set(request, report);
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document, { preview: false });
  };
}

async function pickTranscript(title = 'Project a Transcript'): Promise<vscode.Uri | undefined> {
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
async function pickTask(ctx: Ctx, arg: unknown, purpose: string): Promise<string | undefined> {
  if (typeof arg === 'string' && arg !== '') return arg;
  const store = await ctx.sessions.store();
  const stored = store.sessions();
  if (stored.length === 0) {
    void vscode.window.showInformationMessage('Context Keeper: there is no @keeper task in this workspace yet.');
    return undefined;
  }
  const active = ctx.agent.activeTaskId;
  const items = stored
    .map((s) => ({ label: s.title || s.id, description: `${s.records} records${s.id === active ? ' · active' : ''}`, detail: s.id, id: s.id }))
    .sort((a, b) => (a.id === active ? -1 : b.id === active ? 1 : b.id.localeCompare(a.id)));
  const picked = await vscode.window.showQuickPick(items, { title: purpose, placeHolder: 'Choose a task', matchOnDetail: true });
  return picked?.id;
}

async function requireTask(ctx: Ctx, id: string): Promise<TaskSession | undefined> {
  const task = await ctx.agent.inspect(id);
  if (!task) void vscode.window.showErrorMessage(`Context Keeper: task ${id} is not in this workspace's session store.`);
  return task;
}

async function showDocument(uri: vscode.Uri): Promise<void> {
  const document = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(document, { preview: false });
}

/** Force rebuild: the task is derived again from its raw record (drift reset), and the drift of its summary is shown. */
function rebuildCommand(ctx: Ctx): CommandHandler {
  return async (arg?: unknown) => {
    const id = await pickTask(ctx, arg, 'Rebuild the Task Context from the raw record');
    if (!id) return undefined;
    const { records, lines, drift } = await ctx.agent.rebuild(id);
    const uri = ctx.documents.set(`/task/${encodeURIComponent(id)}/rebuild.txt`, [`Task ${id}: derived again from ${records} raw records.`, '', ...lines, ''].join('\n'));
    await showDocument(uri);
    return drift;
  };
}

/** Opens the Task Context panel on a task: the argument, the active chat's task, or one the user picks. */
function openPanelCommand(ctx: Ctx): CommandHandler {
  return async (arg?: unknown) => {
    const id = typeof arg === 'string' && arg !== '' ? arg : (ctx.agent.activeTaskId ?? (await pickTask(ctx, undefined, 'Show a task in the Task Context panel')));
    await ctx.panel.showTask(id);
  };
}

/**
 * The explicit reveal: the active record or tool-call document opened again
 * with the raw record's original text, secrets included, after the user says so.
 */
function revealSecretsCommand(): CommandHandler {
  return async (arg?: unknown, confirmed?: unknown) => {
    const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
    const address = uri ? parseDocUri(uri) : undefined;
    if (!uri || !address) {
      void vscode.window.showInformationMessage('Context Keeper: open a record or tool call (from the Task Context panel or View a Tool Call) first.');
      return undefined;
    }
    if (confirmed !== true) {
      const choice = await vscode.window.showWarningMessage('Show secrets and personal data?', { modal: true, detail: 'The document will show the raw record, including the keys, tokens, passwords and e-mail addresses that are hidden everywhere else.' }, 'Reveal');
      if (choice !== 'Reveal') return undefined;
    }
    const revealed = address.kind === 'call' ? callUri(address.taskId, address.key, true) : recordUri(address.taskId, Number(address.key), true);
    await showDocument(revealed);
    return revealed;
  };
}

/** View a tool call: its raw input and output, whatever form the model saw. */
function viewToolCallCommand(ctx: Ctx): CommandHandler {
  return async (taskArg?: unknown, callArg?: unknown) => {
    const id = await pickTask(ctx, taskArg, 'View a tool call');
    if (!id) return undefined;
    const task = await requireTask(ctx, id);
    if (!task) return undefined;
    let callId = typeof callArg === 'string' ? callArg : undefined;
    if (!callId) {
      const calls = task.records.filter((r) => r.role === 'assistant' && r.toolCallId !== undefined);
      if (calls.length === 0) {
        void vscode.window.showInformationMessage(`Context Keeper: task ${id} has no tool calls.`);
        return undefined;
      }
      const picked = await vscode.window.showQuickPick(
        calls.reverse().map((r) => ({ label: `${r.toolName ?? 'tool'} ${r.toolCallId}`, description: `r${r.index}`, detail: JSON.stringify(r.toolInput ?? '').slice(0, 120), id: r.toolCallId! })),
        { title: 'View a tool call', matchOnDescription: true, matchOnDetail: true },
      );
      callId = picked?.id;
    }
    if (!callId) return undefined;
    if (!task.session.viewToolCall(callId)) {
      void vscode.window.showErrorMessage(`Context Keeper: task ${id} has no tool call ${callId}.`);
      return undefined;
    }
    await showDocument(callUri(id, callId));
    return callId;
  };
}

/** Delete a task everywhere: record, summaries, forms, facts, artifact index, payloads, and this window's caches. */
function deleteSessionCommand(ctx: Ctx): CommandHandler {
  return async (arg?: unknown, confirmed?: unknown) => {
    const id = await pickTask(ctx, arg, 'Delete a task');
    if (!id) return false;
    if (ctx.agent.isRunning(id)) {
      void vscode.window.showWarningMessage('Context Keeper: the task is running a turn; stop it before deleting it.');
      return false;
    }
    if (confirmed !== true) {
      const choice = await vscode.window.showWarningMessage(`Delete task ${id}?`, { modal: true, detail: 'Its record, summaries, protected facts, artifact index and stored outputs are erased from this workspace. This cannot be undone.' }, 'Delete');
      if (choice !== 'Delete') return false;
    }
    const store = await ctx.sessions.store();
    const deleted = await store.deleteSession(id);
    ctx.agent.forget(id);
    ctx.lastSent.delete(id);
    void vscode.window.showInformationMessage(deleted ? `Context Keeper: task ${id} was deleted.` : `Context Keeper: task ${id} was not in the store.`);
    return deleted;
  };
}

/** Export a task's raw record as interchange JSONL (the corpus format). */
function exportSessionCommand(ctx: Ctx): CommandHandler {
  return async (arg?: unknown, target?: unknown) => {
    const id = await pickTask(ctx, arg, 'Export a task');
    if (!id) return undefined;
    const workspace = await ctx.sessions.store();
    if (!workspace.has(id)) throw new Error(`there is no task ${id} in this workspace`);
    const records = (await workspace.task(id)).records(id, { loadPayloads: true });
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const uri =
      target instanceof vscode.Uri
        ? target
        : await vscode.window.showSaveDialog({ title: 'Export the task as JSONL', filters: { 'Transcripts (JSONL)': ['jsonl'] }, ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, `${id}.jsonl`) } : {}) });
    if (!uri) return undefined;
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(formatInterchange(records)));
    void vscode.window.showInformationMessage(`Context Keeper: exported ${records.length} records of ${id} to ${uri.fsPath}.`);
    return uri;
  };
}

/** Import a transcript (interchange or Claude Code JSONL) as a task, to inspect how it is compacted. */
function importSessionCommand(ctx: Ctx): CommandHandler {
  return async (target?: unknown) => {
    const source = target instanceof vscode.Uri ? target : await pickTranscript('Import a session');
    if (!source) return undefined;
    const text = new TextDecoder('utf-8').decode(await vscode.workspace.fs.readFile(source));
    let transcript;
    try {
      transcript = parseTranscript(text);
    } catch (error) {
      void vscode.window.showErrorMessage(`Context Keeper could not import ${fileNameOf(source)}: ${messageOf(error)}`);
      return undefined;
    }
    const id = `import-${sessionIdFor(path.basename(source.fsPath), transcript)}`;
    const store = await (await ctx.sessions.store()).task(id, transcript.title ?? fileNameOf(source));
    if (store.mode === 'reader') throw new Error(`the store of task ${id} is read-only in this window (another window writes it)`);
    const held = store.recordCount(id);
    if (held > 0) {
      void vscode.window.showInformationMessage(`Context Keeper: ${fileNameOf(source)} was imported before as ${id} (${held} records).`);
    } else {
      await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Context Keeper: importing ${fileNameOf(source)}…` }, async () => {
        for (const record of transcript.records) await store.appendRecord(id, record);
      });
      const skipped = transcript.warnings.filter((w) => !w.kept).length;
      void vscode.window.showInformationMessage(`Context Keeper: imported ${transcript.records.length} records of ${fileNameOf(source)} as ${id}${skipped ? ` (${skipped} malformed lines skipped)` : ''}.`);
    }
    ctx.agent.changed(id);
    return id;
  };
}

/** Show what the model saw at the last call of a task: every message of the projected context. */
function showContextCommand(ctx: Ctx): CommandHandler {
  return async (arg?: unknown) => {
    const id = typeof arg === 'string' ? arg : (ctx.agent.activeTaskId ?? (await pickTask(ctx, undefined, 'Show what the model saw')));
    if (!id) return undefined;
    const sent = ctx.lastSent.get(id);
    if (!sent) {
      void vscode.window.showInformationMessage(`Context Keeper: no model call of task ${id} in this window yet.`);
      return undefined;
    }
    const body = sent.messages.map((m, i) => `### ${i + 1}. ${m.role}\n\n${m.content}`).join('\n\n');
    const head = `# What the model saw — task ${id}, step ${sent.step + 1}\n\n${sent.tokens !== undefined ? `${sent.tokens.toLocaleString('en-US')} tokens counted by the model` : 'the model could not count'}, window ${sent.window.toLocaleString('en-US')}, engine prediction ${sent.predicted.toLocaleString('en-US')}.\n\n`;
    const uri = ctx.documents.set(`/task/${encodeURIComponent(id)}/context.md`, head + body + '\n');
    await showDocument(uri);
    return uri;
  };
}

/** The budget gauge in the status bar: the last context sent against the model's window. */
class BudgetGauge implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('contextKeeper.budget', vscode.StatusBarAlignment.Right, 100);

  constructor() {
    this.item.name = 'Context Keeper budget';
    this.item.command = CommandIds.showContext;
  }

  show(event: SentEvent): void {
    const used = event.tokens ?? event.predicted;
    const share = event.window > 0 ? used / event.window : 0;
    const k = (n: number): string => (n >= 10_000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n));
    this.item.text = `$(layers) ${k(used)}/${k(event.window)}`;
    this.item.tooltip = `@keeper: the last model call of task ${event.taskId} sent ${used.toLocaleString('en-US')} tokens (${Math.round(share * 100)}% of the ${event.window.toLocaleString('en-US')}-token window). Click to see what the model saw.`;
    this.item.backgroundColor = share > 0.9 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}

/** Turns an unexpected failure of a command into a message instead of a silent log entry. */
function reportingFailures(id: string, handler: CommandHandler): CommandHandler {
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

// ---------------------------------------------------------------------------
// Reports as read-only virtual documents: context-keeper:/<file>.projection.md?source=…&window=…&reserve=…

export const REPORT_SCHEME = 'context-keeper';

export interface ReportRequest {
  readonly source: vscode.Uri;
  readonly window: number;
  readonly reserve: number;
}

export function buildReportUri(request: ReportRequest): vscode.Uri {
  const query = new URLSearchParams({
    source: request.source.toString(),
    window: String(request.window),
    reserve: String(request.reserve),
  });
  return vscode.Uri.from({ scheme: REPORT_SCHEME, path: `/${fileNameOf(request.source)}.projection.md`, query: query.toString() });
}

export function parseReportUri(uri: vscode.Uri): ReportRequest | undefined {
  if (uri.scheme !== REPORT_SCHEME) return undefined;
  const query = new URLSearchParams(uri.query);
  const source = query.get('source');
  const window = Number(query.get('window'));
  const reserve = Number(query.get('reserve'));
  if (!source || !Number.isInteger(window) || !Number.isInteger(reserve)) return undefined;
  try {
    return { source: vscode.Uri.parse(source, true), window, reserve };
  } catch {
    return undefined;
  }
}

/**
 * Serves report documents. A report is kept while its document is open; a report
 * URI opened without one (a link followed after a window reload) is projected
 * again from the URI, which names the transcript and the options. package.json
 * activates the extension on `onFileSystem:context-keeper` for that case: VS Code
 * fires it when a document of a scheme without a provider is requested.
 */
class ReportDocuments extends KeptDocuments {
  constructor() {
    super(REPORT_SCHEME);
  }

  /** Keeps a report and returns its URI; an open document of it is refreshed. */
  set(request: ReportRequest, content: string): vscode.Uri {
    return this.keep(buildReportUri(request), content);
  }

  protected async derive(uri: vscode.Uri): Promise<string> {
    const request = parseReportUri(uri);
    if (!request) return `Context Keeper: ${uri.toString()} is not a report address.`;
    try {
      const text = new TextDecoder('utf-8').decode(await vscode.workspace.fs.readFile(request.source));
      return await projectTranscriptReport(text, { window: request.window, reserve: request.reserve });
    } catch (error) {
      return `Context Keeper could not project ${request.source.fsPath}: ${messageOf(error)}`;
    }
  }
}

// ---------------------------------------------------------------------------
// Helpers

/**
 * Owns disposables and disposes them together, most recent first. Disposing
 * twice is harmless; adding to a disposed store disposes the item at once.
 */
class DisposableStore implements vscode.Disposable {
  private readonly items: vscode.Disposable[] = [];
  private disposed = false;

  add<T extends vscode.Disposable>(item: T): T {
    if (this.disposed) item.dispose();
    else this.items.push(item);
    return item;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const errors: unknown[] = [];
    for (const item of this.items.splice(0).reverse()) {
      try {
        item.dispose();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, 'several disposables failed');
  }
}

function fileNameOf(uri: vscode.Uri): string {
  return uri.path.slice(uri.path.lastIndexOf('/') + 1) || uri.toString();
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
