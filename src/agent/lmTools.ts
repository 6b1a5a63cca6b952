/**
 * Context Keeper's language model tools, for every agent in VS Code (Copilot's
 * agent mode, other participants, and a prompt's `#taskContext`): the Task
 * Context of a task with its protected facts, a word search of its raw record,
 * and a recorded tool call in full. Read-only, so they ask no confirmation.
 *
 * A call names its task (`taskId`) or gets the task of the last @keeper turn in
 * this window, else the task used last in this workspace. The texts are built in
 * src/agent/recordTools.ts (no `vscode` there).
 */
import * as vscode from 'vscode';
import type { TaskStoreHost } from './ports';
import type { KeeperAgent } from './participant';
import { recordSearchText, taskContextText, toolCallText } from './recordTools';
import type { TaskSession } from './taskSession';

/** The names contributed in package.json (`contributes.languageModelTools`). */
export const LM_TOOL_NAMES = {
  taskContext: 'contextKeeper_taskContext',
  recordSearch: 'contextKeeper_recordSearch',
  viewToolCall: 'contextKeeper_viewToolCall',
} as const;

interface TaskInput {
  readonly taskId?: string;
}

/** Registers the three tools; the returned disposable unregisters them. */
export function registerKeeperTools(agent: KeeperAgent, sessions: TaskStoreHost): vscode.Disposable {
  const taskOf = async (input: TaskInput): Promise<TaskSession> => {
    const workspace = await sessions.store();
    const id = typeof input.taskId === 'string' && input.taskId !== '' ? input.taskId : (agent.activeTaskId ?? workspace.lastUsedTask());
    if (id === undefined) throw new Error('There is no @keeper task in this workspace yet: ask @keeper something first.');
    const task = await agent.inspect(id);
    if (!task) throw new Error(`Task ${id} is not in this workspace's session store.`);
    return task;
  };
  const result = (text: string): vscode.LanguageModelToolResult => new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);

  const taskContext: vscode.LanguageModelTool<TaskInput> = {
    prepareInvocation: () => ({ invocationMessage: 'Reading the Task Context and protected facts' }),
    invoke: async (options) => result(taskContextText(await taskOf(options.input))),
  };
  const recordSearch: vscode.LanguageModelTool<TaskInput & { query: string }> = {
    prepareInvocation: (options) => ({ invocationMessage: `Searching the task's record for "${String(options.input.query).slice(0, 80)}"` }),
    invoke: async (options) => {
      if (typeof options.input.query !== 'string' || options.input.query.trim() === '') throw new Error('Give the words to search for in "query".');
      return result(recordSearchText(await taskOf(options.input), options.input.query));
    },
  };
  const viewToolCall: vscode.LanguageModelTool<TaskInput & { toolCallId: string }> = {
    prepareInvocation: (options) => ({ invocationMessage: `Reading tool call ${String(options.input.toolCallId).slice(0, 80)} in full` }),
    invoke: async (options) => {
      if (typeof options.input.toolCallId !== 'string' || options.input.toolCallId === '') throw new Error('Give the id of the tool call in "toolCallId".');
      return result(toolCallText(await taskOf(options.input), options.input.toolCallId).text);
    },
  };
  return vscode.Disposable.from(
    vscode.lm.registerTool(LM_TOOL_NAMES.taskContext, taskContext),
    vscode.lm.registerTool(LM_TOOL_NAMES.recordSearch, recordSearch),
    vscode.lm.registerTool(LM_TOOL_NAMES.viewToolCall, viewToolCall),
  );
}
