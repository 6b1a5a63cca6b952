/** Reveal secrets: a record or tool-call document shown again with the raw text, after the user says so. */
import * as vscode from 'vscode';
import { callUri, parseDocUri, recordUri } from '../agent/documents';
import { showDocument, type CommandHandler } from './context';

/**
 * The explicit reveal: the active record or tool-call document opened again
 * with the raw record's original text, secrets included, after the user says so.
 */
export function revealSecretsCommand(): CommandHandler {
  return async (arg?: unknown, confirmed?: unknown) => {
    const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
    const address = uri ? parseDocUri(uri) : undefined;
    if (!uri || !address) {
      void vscode.window.showInformationMessage('Context Keeper: open a record or tool call (from the Task Context panel or View a Tool Call) first.');
      return undefined;
    }
    if (confirmed !== true) {
      const choice = await vscode.window.showWarningMessage('Show secrets and personal data?', { modal: true, detail: 'The document will show the raw record, including the keys, tokens, passwords and e-mail addresses that are hidden everywhere else.' }, 'Reveal');
      if (choice !== 'Reveal') return undefined;
    }
    const revealed = address.kind === 'call' ? callUri(address.taskId, address.key, true) : recordUri(address.taskId, Number(address.key), true);
    await showDocument(revealed);
    return revealed;
  };
}

