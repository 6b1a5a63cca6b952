/**
 * @keeper's workspace tools (read, list, find, search, edit, write, run) as
 * VS Code language model tools, so that VS Code shows each call in the chat
 * and asks for an edit, a write or a command inline. See `WorkspaceTools`.
 */
import * as vscode from 'vscode';
import { AbortError, messageOf } from './model';
import { describeToolCall, runTool, WORKSPACE_TOOLS } from './tools';
import { confirmationMarkdown, declinedMessage } from './tools/confirmation';
import type { ConfirmRequest, FilePort, ToolContext, ToolOutcome } from './tools/contract';

export { WORKSPACE_TOOLS };

/** The tools that change the disk or run something: the user approves each call. */
const APPROVED: ReadonlySet<string> = new Set(['edit_file', 'write_file', 'run_command']);

/** How a call is approved: in VS Code's inline confirmation, or by a replacement the tests install. */
export type Approve = (request: ConfirmRequest) => Promise<boolean>;

interface KeeperCall {
  readonly ctx: ToolContext;
  /** Runs without asking (a command on the user's allow-list). */
  readonly preapproved?: (request: ConfirmRequest) => boolean;
  /** What the user was asked to approve (computed without side effects before the call). */
  previewed?: ConfirmRequest;
  /** Decided without VS Code's confirmation (a replacement approver). */
  decided?: boolean;
  outcome?: ToolOutcome;
}

/**
 * @keeper's workspace tools (read, list, find, search, edit, write, run) as
 * language model tools. @keeper invokes them with its request's
 * `toolInvocationToken`, so VS Code shows each call in the chat and asks for an
 * edit, a write or a command inline, with the diff or the command line; other
 * agents can use them too. The tool code itself (src/agent/tools/) is the
 * same: before a call, it runs once with a confirmation that captures the
 * request and declines (no side effect), which is what the user is shown; then
 * the approved call runs, and writes only the change that was shown.
 */
export class WorkspaceTools implements vscode.Disposable {
  /**
   * @keeper's calls in flight, by tool and input: VS Code hands the tool the
   * input only, so that is how a call finds the turn's context (a second call
   * with the same input waits behind the first).
   */
  private readonly calls = new Map<string, KeeperCall[]>();
  private readonly registrations: vscode.Disposable[] = [];

  constructor(
    /** The context of a call from another agent (no @keeper turn): the workspace folder and the settings. */
    private readonly foreignContext: (signal: AbortSignal) => ToolContext | undefined,
  ) {
    for (const [name, lmName] of Object.entries(WORKSPACE_TOOLS)) {
      this.registrations.push(vscode.lm.registerTool<Record<string, unknown>>(lmName, this.tool(name)));
    }
  }

  /**
   * Runs one of @keeper's calls through VS Code, in the chat of `token`.
   * `approve`, when given, decides instead of VS Code's confirmation (tests).
   * A call the user declines (or skips) is declined for the model, never run.
   */
  async run(name: string, input: unknown, ctx: ToolContext, token: vscode.ChatParticipantToolToken | undefined, approve?: Approve, preapproved?: (request: ConfirmRequest) => boolean): Promise<ToolOutcome> {
    const object = input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : { input };
    const key = callKey(name, object);
    const call: KeeperCall = preapproved ? { ctx, preapproved } : { ctx };
    const queue = this.calls.get(key) ?? [];
    queue.push(call);
    this.calls.set(key, queue);
    const cancellation = new vscode.CancellationTokenSource();
    const onAbort = (): void => cancellation.cancel();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      if (approve && APPROVED.has(name)) call.decided = await this.decide(name, input, call, approve);
      await vscode.lm.invokeTool(WORKSPACE_TOOLS[name]!, { input: object, toolInvocationToken: token }, cancellation.token);
    } catch (error) {
      if (ctx.signal.aborted) throw new AbortError();
      if (call.outcome === undefined && call.previewed === undefined) return { isError: true, output: `the tool failed: ${messageOf(error)}` };
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      cancellation.dispose();
      const left = (this.calls.get(key) ?? []).filter((c) => c !== call);
      if (left.length) this.calls.set(key, left);
      else this.calls.delete(key);
    }
    if (call.outcome) return call.outcome;
    // VS Code did not run it: the user declined or skipped it in the chat.
    return { isError: true, output: declinedMessage(call.previewed ?? { kind: name === 'run_command' ? 'run' : name === 'write_file' ? 'write' : 'edit' }) };
  }

  private async decide(name: string, input: unknown, call: KeeperCall, approve: Approve): Promise<boolean> {
    const previewed = await this.preview(name, input, call.ctx);
    if (!previewed) return true;
    call.previewed = previewed;
    return call.preapproved?.(previewed) === true || approve(previewed);
  }

  /** What the call would ask the user, found by running it with a confirmation that declines (no side effect). */
  private async preview(name: string, input: unknown, ctx: ToolContext): Promise<ConfirmRequest | undefined> {
    let asked: ConfirmRequest | undefined;
    await runTool(name, input, { ...ctx, progress: () => undefined, confirm: async (request) => ((asked = request), false) });
    return asked;
  }

  private tool(name: string): vscode.LanguageModelTool<Record<string, unknown>> {
    const split = (raw: Record<string, unknown>): { call: KeeperCall | undefined; input: Record<string, unknown> } => {
      const input = raw ?? {};
      return { call: this.calls.get(callKey(name, input))?.[0], input };
    };
    const contextFor = (call: KeeperCall | undefined, token: vscode.CancellationToken): ToolContext => {
      if (call) return call.ctx;
      const controller = new AbortController();
      token.onCancellationRequested(() => controller.abort());
      const ctx = this.foreignContext(controller.signal);
      if (!ctx) throw new Error('Open a folder first: the workspace tools work on a folder on disk.');
      return ctx;
    };
    return {
      prepareInvocation: async (options, token) => {
        const { call, input } = split(options.input);
        const invocationMessage = describeToolCall(name, input);
        if (!APPROVED.has(name) || call?.decided !== undefined) return { invocationMessage };
        const previewed = await this.preview(name, input, contextFor(call, token));
        if (!previewed) return { invocationMessage };
        if (call) call.previewed = previewed;
        if (call?.preapproved?.(previewed)) {
          call.decided = true;
          return { invocationMessage: `${invocationMessage} (allowed by contextKeeper.allowedCommands)` };
        }
        return { invocationMessage, confirmationMessages: { title: previewed.title, message: new vscode.MarkdownString(confirmationMarkdown(previewed)) } };
      },
      invoke: async (options, token) => {
        const { call, input } = split(options.input);
        const ctx = contextFor(call, token);
        // Approved: the change that was shown, and only it (a file changed in between is declined, not overwritten).
        const shown = call?.previewed;
        const confirm = async (request: ConfirmRequest): Promise<boolean> =>
          call?.decided === false ? false : shown === undefined ? call?.decided === true || !call : request.after === shown.after && request.command === shown.command && request.path === shown.path;
        const outcome = await runTool(name, input, { ...ctx, confirm });
        if (call) call.outcome = outcome;
        else if (outcome.isError) throw new Error(outcome.output);
        return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(outcome.output)]);
      },
    };
  }

  dispose(): void {
    for (const d of this.registrations.splice(0)) d.dispose();
  }
}

function callKey(name: string, input: Record<string, unknown>): string {
  return `${name}\u0000${JSON.stringify(input)}`;
}

// ---------------------------------------------------------------- edits through the editor

/** One change @keeper made to a file in a turn, for the turn's Undo. */
export interface TurnEdit {
  readonly uri: vscode.Uri;
  readonly rel: string;
  readonly before: string;
  readonly after: string;
  /** The edit created the file: undoing it deletes the file. */
  readonly created?: boolean;
}

/**
 * The editor's files for edit_file and write_file: an open buffer is what is
 * read and changed (its unsaved changes included); a change is a
 * `WorkspaceEdit` of the changed range only, so it is on the editor's undo
 * stack, and it is saved unless the buffer held unsaved changes of the user.
 * Each change is added to `edits` (the turn's, for its Undo).
 */
export function editorFiles(edits: TurnEdit[]): FilePort {
  return {
    openText: async (file) => vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === file && !d.isClosed)?.getText(),
    replace: async (file, rel, before, after) => {
      const uri = vscode.Uri.file(file);
      const document = await vscode.workspace.openTextDocument(uri);
      if (document.getText() !== before) return undefined;
      const unsaved = document.isDirty;
      if (!(await changeTo(document, after))) throw new Error(`VS Code did not apply the change to ${rel}`);
      if (!unsaved) await document.save();
      edits.push({ uri, rel, before, after });
      return unsaved ? { note: 'applied to its open editor, which has unsaved changes of yours: not saved' } : {};
    },
    create: async (file, rel, text) => {
      const uri = vscode.Uri.file(file);
      const edit = new vscode.WorkspaceEdit();
      edit.createFile(uri, { contents: Buffer.from(text, 'utf8'), ignoreIfExists: false });
      if (!(await vscode.workspace.applyEdit(edit))) return false;
      edits.push({ uri, rel, before: '', after: text, created: true });
      return true;
    },
  };
}

/** Undoes a turn's edits, newest first; a file changed since is left as it is and named. */
export async function undoEdits(edits: readonly TurnEdit[]): Promise<{ undone: string[]; changedSince: string[] }> {
  const undone: string[] = [];
  const changedSince: string[] = [];
  for (const edit of [...edits].reverse()) {
    if (edit.created) {
      // A file the turn created goes, unless it was changed since.
      const now = await vscode.workspace.fs.readFile(edit.uri).then((b) => Buffer.from(b).toString('utf8'), () => undefined);
      const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === edit.uri.toString());
      if (now === undefined) continue;
      if (now !== edit.after || open?.isDirty) {
        changedSince.push(edit.rel);
        continue;
      }
      const removal = new vscode.WorkspaceEdit();
      removal.deleteFile(edit.uri, { ignoreIfNotExists: true });
      if (await vscode.workspace.applyEdit(removal)) undone.push(edit.rel);
      else changedSince.push(edit.rel);
      continue;
    }
    const document = await vscode.workspace.openTextDocument(edit.uri);
    if (document.getText() !== edit.after) {
      changedSince.push(edit.rel);
      continue;
    }
    const unsaved = document.isDirty;
    if (!(await changeTo(document, edit.before))) {
      changedSince.push(edit.rel);
      continue;
    }
    if (!unsaved) await document.save();
    undone.push(edit.rel);
  }
  return { undone: [...new Set(undone)], changedSince: [...new Set(changedSince)] };
}

/** Replaces only the range that differs between the document's text and `text` (cursors and folds elsewhere stay). */
async function changeTo(document: vscode.TextDocument, text: string): Promise<boolean> {
  const current = document.getText();
  let start = 0;
  while (start < current.length && start < text.length && current[start] === text[start]) start++;
  let end = 0;
  while (end < current.length - start && end < text.length - start && current[current.length - 1 - end] === text[text.length - 1 - end]) end++;
  const edit = new vscode.WorkspaceEdit();
  edit.replace(document.uri, new vscode.Range(document.positionAt(start), document.positionAt(current.length - end)), text.slice(start, text.length - end));
  return vscode.workspace.applyEdit(edit);
}
