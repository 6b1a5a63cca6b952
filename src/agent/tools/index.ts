/**
 * The @keeper agent's own tools: read, list, find, search, edit, write, run,
 * recover an earlier call, and keep a plan — one file each in this folder,
 * declared with `defineTool` (./defineTool.ts); this file is their table, the
 * dispatch by name and the one-line description of a call.
 *
 * Plain Node (no `vscode`): the chat glue passes a `ToolContext` in — the
 * workspace root, a confirmation port for anything that changes the disk or runs
 * a command, the turn's cancellation signal and the `view_tool_call` lookup.
 * Every input is validated with zod first; every path is resolved inside the
 * workspace root (symlinks included) or refused. The names are fixed: the
 * compaction engine (`src/core/tools.ts`) recognises them and reduces their
 * outputs by family.
 */
import { nextTurn } from '../../core/turns';
import type { AgentTool, ToolContext, ToolOutcome } from './contract';
import { editFileTool } from './editFile';
import { abortError, describeError, isAbortError, throwIfAborted } from './errors';
import { globTool } from './glob';
import { grepTool } from './grep';
import { listDirTool } from './listDir';
import { readFileTool } from './readFile';
import { runCommandTool } from './runCommand';
import { todoTool } from './todo';
import { viewToolCallTool } from './viewToolCall';
import { writeFileTool } from './writeFile';

/**
 * A tool call as one line for the chat: what it does and to what ("Reading
 * src/api.ts, lines 1–80", "Running npm test"). VS Code shows it as the call's
 * line in the response; the turn's progress uses it too.
 */
export function describeToolCall(name: string, raw: unknown): string {
  const input = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const what = typeof input.path === 'string' ? input.path : typeof input.pattern === 'string' ? input.pattern : typeof input.command === 'string' ? input.command : '';
  const verb: Record<string, string> = { read_file: 'Reading', list_dir: 'Listing', glob: 'Finding files', grep: 'Searching for', edit_file: 'Editing', write_file: 'Writing', run_command: 'Running', view_tool_call: 'Recovering tool output', todo: 'Updating the plan' };
  const shown = what.length > 80 ? `${what.slice(0, 79)}…` : what;
  const from = typeof input.startLine === 'number' ? input.startLine : undefined;
  const to = typeof input.endLine === 'number' ? input.endLine : undefined;
  const lines = name === 'read_file' && (from !== undefined || to !== undefined) ? `, lines ${from ?? 1}–${to ?? 'end'}` : '';
  return `${verb[name] ?? `Calling ${name}`}${shown ? ` ${shown}` : ''}${lines}`;
}

/** Dispatch by name. Never throws except when `ctx.signal` is aborted (an Error named 'AbortError'). */
export async function runTool(name: string, input: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  throwIfAborted(ctx.signal);
  const tool = TOOLS_BY_NAME.get(name);
  if (tool === undefined) {
    return {
      isError: true,
      output: `Unknown tool ${JSON.stringify(String(name))}. The tools are: ${AGENT_TOOLS.map((t) => t.name).join(', ')}.`,
    };
  }
  try {
    return await tool.run(input, ctx);
  } catch (error) {
    if (ctx.signal.aborted) throw isAbortError(error) ? error : abortError();
    return { isError: true, output: describeError(name, error) };
  }
}

export const AGENT_TOOLS: readonly AgentTool[] = [
  readFileTool,
  listDirTool,
  globTool,
  grepTool,
  editFileTool,
  writeFileTool,
  runCommandTool,
  viewToolCallTool,
  todoTool,
];

/**
 * Builds every tool's input schema and the JSON Schema the model reads, one
 * tool a turn of the event loop: the extension starts it at activation, so
 * the first turn, which offers them all, finds them made.
 */
export async function prepareToolSchemas(): Promise<void> {
  for (const tool of AGENT_TOOLS) {
    await nextTurn();
    void tool.inputSchema;
  }
}

const TOOLS_BY_NAME: ReadonlyMap<string, AgentTool> = new Map(AGENT_TOOLS.map((tool) => [tool.name, tool]));

/**
 * @keeper's workspace tools by their name in its model requests, and the
 * VS Code language model tool each runs as (package.json contributes them with
 * these names, descriptions and schemas; a unit test keeps the two the same).
 */
export const WORKSPACE_TOOLS: Readonly<Record<string, string>> = {
  read_file: 'contextKeeper_readFile',
  list_dir: 'contextKeeper_listDir',
  glob: 'contextKeeper_glob',
  grep: 'contextKeeper_grep',
  edit_file: 'contextKeeper_editFile',
  write_file: 'contextKeeper_writeFile',
  run_command: 'contextKeeper_runCommand',
};
