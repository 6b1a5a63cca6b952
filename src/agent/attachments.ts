/** The files and selections the user attached to a @keeper request, read as the loop records them. */
import * as vscode from 'vscode';
import type { Attachment } from './loop';
import { messageOf } from './model';

/**
 * The files and selections the user attached to a request (`#file`, a
 * selection, a dragged file), as the loop records them: the text of the open
 * buffer when there is one (unsaved changes included), clipped like a read.
 */
export async function attachmentsOf(references: readonly vscode.ChatPromptReference[], root: vscode.Uri, maxChars: number): Promise<Attachment[]> {
  const out: Attachment[] = [];
  const clip = (text: string): string => (text.length <= maxChars ? text : `${text.slice(0, maxChars)}\n[clipped: the attachment has ${text.length} characters]`);
  const relative = (uri: vscode.Uri): string => (uri.scheme === 'file' && uri.fsPath.startsWith(root.fsPath) ? vscode.workspace.asRelativePath(uri, false) : uri.toString());
  for (const reference of references) {
    const value = reference.value;
    const uri = value instanceof vscode.Uri ? value : value instanceof vscode.Location ? value.uri : undefined;
    try {
      if (uri) {
        const document = await vscode.workspace.openTextDocument(uri);
        const range = value instanceof vscode.Location ? value.range : undefined;
        out.push({ path: relative(uri), ...(range ? { lines: { from: range.start.line + 1, to: range.end.line + 1 } } : {}), text: clip(document.getText(range)) });
      } else if (typeof value === 'string') out.push({ path: reference.id, text: clip(value) });
    } catch (error) {
      out.push({ path: uri ? relative(uri) : reference.id, text: `(the attachment could not be read: ${messageOf(error)})` });
    }
  }
  return out;
}
