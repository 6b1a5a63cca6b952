/**
 * The confirmation of an edit, a write or a command: the change is shown as a
 * diff (a command in the dialog itself), and only an explicit "Apply" / "Run"
 * lets it through. Closing the dialog declines.
 */
import * as vscode from 'vscode';
import type { EvidenceDocuments } from './documents';
import type { ConfirmRequest } from './tools';

export function confirmInEditor(documents: EvidenceDocuments, root: () => vscode.Uri | undefined): (request: ConfirmRequest) => Promise<boolean> {
  let n = 0;
  return async (request) => {
    if (request.kind === 'run') {
      const choice = await vscode.window.showWarningMessage(`@keeper wants to run a command`, { modal: true, detail: `${request.command ?? request.title}\n\nin ${root()?.fsPath ?? 'the workspace folder'}` }, 'Run');
      return choice === 'Run';
    }
    const id = ++n;
    const path = request.path ?? 'file';
    const before = documents.set(`/proposed/${id}/before/${path}`, request.before ?? '');
    const after = documents.set(`/proposed/${id}/after/${path}`, request.after ?? '');
    await vscode.commands.executeCommand('vscode.diff', before, after, `${request.title} (proposed by @keeper)`, { preview: true });
    const verb = request.kind === 'edit' ? 'Apply' : 'Write';
    const choice = await vscode.window.showWarningMessage(request.title, { modal: true, detail: `${request.title} (${path}). The proposed change is shown in the diff editor.` }, verb);
    return choice === verb;
  };
}
