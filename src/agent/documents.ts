/**
 * Read-only virtual documents for stored evidence (copilot-chat's request
 * logger, rust-analyzer's status document): a tool call's raw input and output,
 * a raw record, a drift report, an edit's proposed content. Addresses name what
 * they show, so a document reopened after a reload is derived again from the
 * session store instead of being lost.
 *
 *   context-keeper-doc:/task/<taskId>/call/<toolCallId>.txt
 *   context-keeper-doc:/task/<taskId>/record/<n>.txt
 *   context-keeper-doc:/<anything else>   (content set by the extension)
 *
 * Records and tool calls are shown with secrets and personal data redacted, as
 * everywhere else; the query `reveal=1` (only set by the Reveal command, after
 * the user confirms) shows the raw record's original text.
 */
import * as vscode from 'vscode';
import type { Redactor } from '../core/redact';
import type { TaskSession } from './taskSession';

export const DOC_SCHEME = 'context-keeper-doc';

export function callUri(taskId: string, toolCallId: string, reveal = false): vscode.Uri {
  return vscode.Uri.from({ scheme: DOC_SCHEME, path: `/task/${encodeURIComponent(taskId)}/call/${encodeURIComponent(toolCallId)}.txt`, ...(reveal ? { query: 'reveal=1' } : {}) });
}

export function recordUri(taskId: string, index: number, reveal = false): vscode.Uri {
  return vscode.Uri.from({ scheme: DOC_SCHEME, path: `/task/${encodeURIComponent(taskId)}/record/${index}.txt`, ...(reveal ? { query: 'reveal=1' } : {}) });
}

export function parseDocUri(uri: vscode.Uri): { taskId: string; kind: 'call' | 'record'; key: string; reveal: boolean } | undefined {
  const m = /^\/task\/([^/]+)\/(call|record)\/([^/]+)\.txt$/.exec(uri.path);
  if (!m) return undefined;
  try {
    return { taskId: decodeURIComponent(m[1]!), kind: m[2] as 'call' | 'record', key: decodeURIComponent(m[3]!), reveal: uri.query === 'reveal=1' };
  } catch {
    return undefined;
  }
}

/** The text as shown: redacted unless revealed, with a first line saying what was hidden and how to see it. */
export function guarded(text: string, reveal: boolean, redactor: Redactor): string {
  if (reveal) return `⚠ Revealed: this document shows secrets and personal data from the raw record.\n\n${text}`;
  const { text: clean, redactions } = redactor.redact(text);
  if (redactions.length === 0) return text;
  return `${redactions.length} secret(s) or personal data hidden. To see the original: "Context Keeper: Reveal Secrets in This Document".\n\n${clean}`;
}

/** The text of a tool call as the view_tool_call command shows it. */
export function renderCallDocument(task: TaskSession, toolCallId: string): string | undefined {
  const view = task.session.viewToolCall(toolCallId);
  if (!view) return undefined;
  return [
    `Tool call ${view.toolCallId}: ${view.name}${view.isError ? ' (failed)' : ''}`,
    `task ${task.id}, call at record r${view.callRecord}${view.resultRecord !== undefined ? `, result at r${view.resultRecord}` : ''}`,
    '',
    '--- input ---',
    view.input,
    '',
    '--- output ---',
    view.output ?? '(no result in the record)',
    '',
  ].join('\n');
}

export function renderRecordDocument(task: TaskSession, index: number): string | undefined {
  const r = task.records[index];
  if (!r) return undefined;
  const head = `Record r${r.index} of task ${task.id}: ${r.role}${r.toolName ? ` · ${r.toolName}` : ''}${r.toolCallId ? ` · ${r.toolCallId}` : ''}${r.isError ? ' · error' : ''}`;
  const body = [r.content];
  if (r.toolInput !== undefined) body.push('--- input ---', JSON.stringify(r.toolInput, null, 2));
  if (r.toolOutput !== undefined) body.push('--- output ---', r.toolOutput);
  return [head, '', ...body.filter((b) => b !== ''), ''].join('\n');
}

/**
 * A read-only document scheme whose contents are kept while their documents are
 * open (an open document is refreshed when its content is set again); an
 * address opened with nothing kept — a link followed, or a tab restored after
 * a window reload — is derived again from what the address names.
 */
export abstract class KeptDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly _onDidChange = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this._onDidChange.event;
  private readonly closeListener: vscode.Disposable;

  constructor(scheme: string) {
    this.closeListener = vscode.workspace.onDidCloseTextDocument((d) => {
      if (d.uri.scheme === scheme) this.contents.delete(d.uri.toString());
    });
  }

  /** Keeps a document's content and returns its address. */
  protected keep(uri: vscode.Uri, content: string): vscode.Uri {
    this.contents.set(uri.toString(), content);
    this._onDidChange.fire(uri);
    return uri;
  }

  /** The content of an address nothing is kept for. */
  protected abstract derive(uri: vscode.Uri): Promise<string>;

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    return this.contents.get(uri.toString()) ?? this.derive(uri);
  }

  dispose(): void {
    this.closeListener.dispose();
    this._onDidChange.dispose();
    this.contents.clear();
  }
}

export class EvidenceDocuments extends KeptDocuments {
  constructor(private readonly inspect: (taskId: string) => Promise<TaskSession | undefined>) {
    super(DOC_SCHEME);
  }

  /** Keeps a document's content and returns its address. */
  set(path: string, content: string): vscode.Uri {
    return this.keep(vscode.Uri.from({ scheme: DOC_SCHEME, path }), content);
  }

  protected async derive(uri: vscode.Uri): Promise<string> {
    const address = parseDocUri(uri);
    if (!address) return `Context Keeper: ${uri.path} is no longer available (it was not kept after the window closed).`;
    const task = await this.inspect(address.taskId);
    if (!task) return `Context Keeper: task ${address.taskId} is not in this workspace's session store (deleted?).`;
    const text = address.kind === 'call' ? renderCallDocument(task, address.key) : renderRecordDocument(task, Number(address.key));
    return text === undefined ? `Context Keeper: task ${address.taskId} has no ${address.kind} ${address.key}.` : guarded(text, address.reveal, task.session.redactor);
  }
}
