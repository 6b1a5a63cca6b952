/**
 * Project a Transcript: the CLI's report of a transcript file, as a read-only
 * virtual document (context-keeper:/<file>.projection.md?source=…&window=…&reserve=…),
 * at the window the user set (contextKeeper.windowTokens) or the default one.
 */
import * as vscode from 'vscode';
import { KeptDocuments } from '../agent/documents';
import { readSettings } from '../agent/vscodeSettings';
import { windowFor } from '../agent/settings';
import { DEFAULT_CONTEXT_WINDOW } from '../core/budget';
import { messageOf } from '../core/errors';
import type { Redactor } from '../core/redact';
import type { TokenCounter } from '../core/tokens';
import { projectTranscriptReport } from '../report/report';
import { fileNameOf, pickTranscript, type CommandHandler, type Ctx } from './context';

/** Context Keeper: Project a Transcript. Takes an optional file URI (used by tests). */
export function projectTranscriptCommand(ctx: Ctx): CommandHandler {
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

    const request: ReportRequest = { source, ...windowFor(readSettings().settings, DEFAULT_CONTEXT_WINDOW) };
    let report: string;
    try {
      report = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Context Keeper: projecting ${name}…` },
        async () => projectTranscriptReport(text, { window: request.window, reserve: request.reserve, counter: ctx.counter, redactor: ctx.redactor }),
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
export class ReportDocuments extends KeptDocuments {
  constructor(
    private readonly counter: TokenCounter,
    private readonly redactor: Redactor,
  ) {
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
      return await projectTranscriptReport(text, { window: request.window, reserve: request.reserve, counter: this.counter, redactor: this.redactor });
    } catch (error) {
      return `Context Keeper could not project ${request.source.fsPath}: ${messageOf(error)}`;
    }
  }
}

