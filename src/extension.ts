/**
 * The composition root: `activate` builds every service once, owns them through
 * one root disposable store, passes each part what it needs, and registers the
 * commands from their table (src/commands). It wires and does nothing else.
 */
import * as vscode from 'vscode';
import { DisposableStore } from './adapters/disposableStore';
import { O200kTokenCounter } from './adapters/o200kTokenCounter';
import { callUri, DOC_SCHEME, EvidenceDocuments, recordUri } from './agent/documents';
import { registerKeeperTools } from './agent/lmTools';
import { prepareToolSchemas } from './agent/tools';
import { warmSettings } from './agent/vscodeSettings';
import { warmClassifier, warmPatterns } from './agent/warmUp';
import { followupsFor } from './agent/chatCommands';
import { KeeperAgent, PARTICIPANT_ID, type KeeperMetadata, type SentEvent, type TurnEndEvent } from './agent/participant';
import type { Confirm } from './agent/turnTools';
import { CommandIds, COMMANDS, ReportDocuments, REPORT_SCHEME, reportingFailures, type Ctx } from './commands';
import { messageOf } from './core/errors';
import { SecretRedactor } from './core/redact';
import { BudgetGauge } from './panel/gauge';
import { PANEL_VIEW_ID, TaskContextViewProvider } from './panel/panelProvider';
import { warmSqlJs } from './store/sqljs';
import { SQLITE_WARM_UP } from './store/tables';
import { WorkspaceStoreHost } from './store/workspaceStore';

export { CommandIds, type CommandId } from './commands';

/** What `activate` returns: the services integration tests drive (no other caller relies on it). */
export interface ContextKeeperApi {
  readonly agent: KeeperAgent;
  readonly sessions: WorkspaceStoreHost;
  /** Replaces how edits, writes and commands are confirmed; returns a function restoring the dialog. */
  setConfirm(confirm: Confirm): () => void;
  readonly onDidSend: vscode.Event<SentEvent>;
  /** @keeper was asked: a turn begins (before it waits for the warm-ups). */
  readonly onDidStartTurn: vscode.Event<void>;
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
    // One token counter for the window. Its tables are built from here on in slices that give the event loop back
    // (about 300 ms of work in all); a count that comes first builds the rest at once.
    const counter = new O200kTokenCounter();
    void counter.prepare().catch((error: unknown) => console.error('Context Keeper: the tokenizer could not be prepared', error));
    // One redactor for the window: everything that hides secrets (sessions, store, panel, reports, probes) is given it.
    const redactor = new SecretRedactor();
    const reports = root.add(new ReportDocuments(counter, redactor));
    root.add(vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, reports));
    const storage = (context.storageUri ?? context.globalStorageUri).fsPath;
    const sessions = root.add(
      new WorkspaceStoreHost(
        storage,
        (severity, message) => {
          if (severity === 'error') void vscode.window.showErrorMessage(message);
          else void vscode.window.showWarningMessage(message);
        },
        { redactor },
      ),
    );
    // Opened in the background: a damaged or unwritable store is reported, never fatal. SQLite, the tools' schemas, the
    // classifier's patterns and the settings' schemas are made ready in small steps meanwhile, so that the first turn
    // does not build them in blocks of its own. Each step waits for a turn of the event loop of its own (core/turns),
    // the first one too: none runs in activation's block.
    const warmedUp = Promise.all([
      sessions.store(),
      warmSqlJs(SQLITE_WARM_UP),
      prepareToolSchemas(),
      warmPatterns().then(warmClassifier),
      warmSettings(),
    ]).then(
      () => undefined,
      () => undefined,
    );
    let agent: KeeperAgent | undefined;
    const documents = root.add(new EvidenceDocuments((id) => agent!.inspect(id)));
    root.add(vscode.workspace.registerTextDocumentContentProvider(DOC_SCHEME, documents));
    const log = root.add(vscode.window.createOutputChannel('Context Keeper', { log: true }));
    agent = root.add(new KeeperAgent(sessions, counter, redactor, log, context.workspaceState));

    // A task nobody used for a while is let go and its store closed: memory stays bounded by the tasks in use.
    const sweep = setInterval(() => {
      agent!.releaseIdle(TASK_IDLE_MS).catch((error: unknown) => console.error('Context Keeper: closing idle tasks failed', error));
    }, IDLE_SWEEP_MS);
    root.add({ dispose: () => clearInterval(sweep) });

    // A turn waits for the warm-ups (the first one only, in practice): run beside them, the turn's blocks and theirs
    // fell into the same turns of the event loop, one after the other.
    const handler = agent.handler;
    const turnStarts = root.add(new vscode.EventEmitter<void>());
    const participant = root.add(
      vscode.chat.createChatParticipant(PARTICIPANT_ID, async (request, chatContext, stream, token) => {
        turnStarts.fire();
        await warmedUp;
        return handler(request, chatContext, stream, token);
      }),
    );
    // The task's context, record and tool calls, for every agent in VS Code (#taskContext, Copilot's agent mode).
    root.add(registerKeeperTools(agent, sessions));
    participant.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'icon.png');
    participant.followupProvider = { provideFollowups: (result) => followupsFor(result.metadata as Partial<KeeperMetadata> | undefined) };

    const lastSent = new Map<string, SentEvent>();
    const gauge = root.add(new BudgetGauge(CommandIds.showContext));
    root.add(agent.onDidSend((event) => {
      lastSent.set(event.taskId, event);
      gauge.show(event);
    }));

    const panel = root.add(
      new TaskContextViewProvider(context.extensionUri, {
        agent,
        documents: { recordUri, callUri },
        counter,
        lastSent: (id) => lastSent.get(id),
        notify: (message) => void vscode.window.showWarningMessage(message),
      }),
    );
    root.add(vscode.window.registerWebviewViewProvider(PANEL_VIEW_ID, panel));
    const ctx: Ctx = { extensionContext: context, reports, documents, sessions, agent, lastSent, panel, counter, redactor };
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
      onDidStartTurn: turnStarts.event,
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

