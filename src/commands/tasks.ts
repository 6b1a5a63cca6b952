/** The commands that act on a task: rebuild, open in the panel, view a tool call, delete, export, import, show what the model saw. */
import * as vscode from 'vscode';
import { callUri } from '../agent/documents';
import { messageOf } from '../core/errors';
import { formatInterchange, parseTranscript } from '../core/transcript';
import { sessionIdFor } from '../report/sessionId';
import { fileNameOf, pickTask, pickTranscript, requireTask, showDocument, type CommandHandler, type Ctx } from './context';
import { formatCount } from '../core/formatCount';

/** Force rebuild: the task is derived again from its raw record (drift reset), and the drift of its summary is shown. */
export function rebuildCommand(ctx: Ctx): CommandHandler {
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
export function openPanelCommand(ctx: Ctx): CommandHandler {
  return async (arg?: unknown, compactionAt?: unknown) => {
    const id = typeof arg === 'string' && arg !== '' ? arg : (ctx.agent.activeTaskId ?? (await pickTask(ctx, undefined, 'Show a task in the Task Context panel')));
    // From a chat's compaction line: the panel shows that compaction.
    await ctx.panel.showTask(id, typeof compactionAt === 'number' && Number.isInteger(compactionAt) && compactionAt >= 0 ? compactionAt : undefined);
  };
}

/**
 * The panel's task picker (its title bar): any stored task — chat tasks and
 * imported sessions, newest first — shown in the panel. Returns the id shown.
 */
export function switchTaskCommand(ctx: Ctx): CommandHandler {
  return async (arg?: unknown) => {
    const id = await pickTask(ctx, arg, 'Show a task in the Task Context panel');
    if (!id) return undefined;
    await ctx.panel.showTask(id);
    return id;
  };
}

/** View a tool call: its raw input and output, whatever form the model saw. */
export function viewToolCallCommand(ctx: Ctx): CommandHandler {
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
export function deleteSessionCommand(ctx: Ctx): CommandHandler {
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
export function exportSessionCommand(ctx: Ctx): CommandHandler {
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
export function importSessionCommand(ctx: Ctx): CommandHandler {
  return async (target?: unknown) => {
    const source = target instanceof vscode.Uri ? target : await pickTranscript('Import a session');
    if (!source) return undefined;
    const text = new TextDecoder('utf-8').decode(await vscode.workspace.fs.readFile(source));
    let transcript;
    try {
      transcript = parseTranscript(text, ctx.redactor);
    } catch (error) {
      void vscode.window.showErrorMessage(`Context Keeper could not import ${fileNameOf(source)}: ${messageOf(error)}`);
      return undefined;
    }
    const id = `import-${sessionIdFor(source.fsPath, transcript)}`; // isImportedTask knows this prefix
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
export function showContextCommand(ctx: Ctx): CommandHandler {
  return async (arg?: unknown) => {
    const id = typeof arg === 'string' ? arg : (ctx.agent.activeTaskId ?? (await pickTask(ctx, undefined, 'Show what the model saw')));
    if (!id) return undefined;
    const sent = ctx.lastSent.get(id);
    if (!sent) {
      void vscode.window.showInformationMessage(`Context Keeper: no model call of task ${id} in this window yet.`);
      return undefined;
    }
    const body = sent.messages.map((m, i) => `### ${i + 1}. ${m.role}\n\n${m.content}`).join('\n\n');
    const head = `# What the model saw — task ${id}, step ${sent.step + 1}\n\n${sent.tokens !== undefined ? `${formatCount(sent.tokens)} tokens counted by the model` : 'the model could not count'}, window ${formatCount(sent.window)}, engine prediction ${formatCount(sent.predicted)}.\n\n`;
    const uri = ctx.documents.set(`/task/${encodeURIComponent(id)}/context.md`, head + body + '\n');
    await showDocument(uri);
    return uri;
  };
}

