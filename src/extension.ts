/**
 * The composition root: `activate` builds every service once, owns them through
 * one root disposable store, and registers the commands from a table.
 */
import * as vscode from 'vscode';
import { projectTranscriptReport } from './cli/report';
import { DEFAULT_CONTEXT_WINDOW, OUTPUT_RESERVED_TOKENS } from './core/budget';
import { WorkspaceStoreHost } from './store/workspaceStore';

export const CommandIds = {
  projectTranscript: 'contextKeeper.projectTranscript',
} as const;

export type CommandId = (typeof CommandIds)[keyof typeof CommandIds];

/** What command factories get: the services `activate` built. */
interface Ctx {
  readonly extensionContext: vscode.ExtensionContext;
  readonly reports: ReportDocuments;
  /** The durable session store in this workspace's storage folder. */
  readonly sessions: WorkspaceStoreHost;
}

type CommandHandler = (...args: unknown[]) => unknown;
type CommandFactory = (ctx: Ctx) => CommandHandler;

/** Every command, id → factory. Each id is also contributed in package.json. */
const COMMANDS: Readonly<Record<CommandId, CommandFactory>> = {
  [CommandIds.projectTranscript]: projectTranscriptCommand,
};

export function activate(context: vscode.ExtensionContext): void {
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
    const ctx: Ctx = { extensionContext: context, reports, sessions };
    for (const [id, factory] of Object.entries(COMMANDS)) {
      root.add(vscode.commands.registerCommand(id, reportingFailures(id, factory(ctx))));
    }
  } catch (error) {
    root.dispose();
    console.error('Context Keeper failed to activate', error);
    void vscode.window.showErrorMessage(`Context Keeper failed to activate: ${messageOf(error)}`);
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

async function pickTranscript(): Promise<vscode.Uri | undefined> {
  const picked = await vscode.window.showOpenDialog({
    title: 'Project a Transcript',
    openLabel: 'Project',
    canSelectFiles: true,
    canSelectFolders: false,
    canSelectMany: false,
    filters: { 'Transcripts (JSONL)': ['jsonl'], 'All files': ['*'] },
  });
  return picked?.[0];
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
class ReportDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly _onDidChange = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this._onDidChange.event;
  private readonly closeListener = vscode.workspace.onDidCloseTextDocument((document) => {
    this.contents.delete(document.uri.toString());
  });

  /** Stores a report and returns its URI; an open document of it is refreshed. */
  set(request: ReportRequest, content: string): vscode.Uri {
    const uri = buildReportUri(request);
    this.contents.set(uri.toString(), content);
    this._onDidChange.fire(uri);
    return uri;
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const stored = this.contents.get(uri.toString());
    if (stored !== undefined) return stored;
    const request = parseReportUri(uri);
    if (!request) return `Context Keeper: ${uri.toString()} is not a report address.`;
    try {
      const text = new TextDecoder('utf-8').decode(await vscode.workspace.fs.readFile(request.source));
      return await projectTranscriptReport(text, { window: request.window, reserve: request.reserve });
    } catch (error) {
      return `Context Keeper could not project ${request.source.fsPath}: ${messageOf(error)}`;
    }
  }

  dispose(): void {
    this.closeListener.dispose();
    this._onDidChange.dispose();
    this.contents.clear();
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
