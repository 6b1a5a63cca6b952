/**
 * The tools a @keeper turn offers its model and how each call runs: its own
 * tools (the workspace ones as VS Code's language model tools, approved
 * inline), the tools of other extensions and MCP servers the user picked, and
 * the terminals commands run in.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ToolRunner } from './loop';
import { AbortError, messageOf } from './model';
import { matchesToolPattern, type KeeperSettings } from './settings';
import type { TaskSession } from './taskSession';
import { KeeperTerminals } from './terminal';
import { AGENT_TOOLS, runTool } from './tools';
import { allowListed } from './tools/confirmation';
import type { ConfirmRequest, ToolContext, ToolOutcome } from './tools/contract';
import { readSettings } from './vscodeSettings';
import { editorFiles, WORKSPACE_TOOLS, WorkspaceTools, type TurnEdit } from './workspaceTools';

export type Confirm = (request: ConfirmRequest) => Promise<boolean>;

export class TurnTools implements vscode.Disposable {
  /** @keeper's workspace tools, run as language model tools (their confirmations are inline). */
  private readonly workspaceTools: WorkspaceTools;
  /** Where run_command runs: a terminal with shell integration, the user's shell. */
  private readonly terminals = new KeeperTerminals();

  constructor(
    /** How edits, writes and commands are approved (the agent's `confirm`, read at each call). */
    private readonly confirm: () => Confirm | undefined,
    /** Where failed and declined tool calls are logged (the "Context Keeper" output channel). */
    private readonly log?: vscode.LogOutputChannel,
  ) {
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

  /** The tools of a turn of `task`: their specs for the model, and how each call runs (its edits collected in `edits`). */
  runner(task: TaskSession, root: string, settings: KeeperSettings, stream: vscode.ChatResponseStream, token: vscode.ChatParticipantToolToken, edits: TurnEdit[], others: readonly vscode.LanguageModelToolInformation[]): ToolRunner {
    const other = new Map(others.map((t) => [t.name, t]));
    const run = (name: string, input: unknown, signal: AbortSignal): Promise<ToolOutcome> => {
      if (other.has(name)) return invokeOtherTool(name, input, token, signal, settings.toolOutputMaxChars);
      const ctx: ToolContext = {
        root,
        signal,
        // Only the workspace tools change anything, and they are approved by VS Code (or the tests' replacement).
        confirm: (request) => {
          const confirm = this.confirm();
          return confirm ? confirm(request) : Promise.resolve(false);
        },
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
        return this.workspaceTools.run(name, input, ctx, token, this.confirm(), preapproved);
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
        if (outcome.isError) this.log?.warn(`task ${task.id}: ${name} ${/^The user declined\b/.test(outcome.output) ? 'declined by the user' : 'failed'}: ${task.session.redactor.redact(outcome.output.slice(0, 4096)).text.replace(/\s+/g, ' ').slice(0, 300)}`);
        return outcome;
      },
    };
  }

  dispose(): void {
    this.workspaceTools.dispose();
    this.terminals.dispose();
  }
}

/**
 * The tools of other extensions and MCP servers offered to @keeper's model: the
 * ones the prompt references (`#tool`) and the ones `contextKeeper.otherTools`
 * names; never Context Keeper's own, nor one whose name an own tool has.
 */
export function otherToolsFor(request: vscode.ChatRequest, settings: KeeperSettings): vscode.LanguageModelToolInformation[] {
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
