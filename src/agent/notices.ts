/** The lines a @keeper response keeps after its answer (warnings, the compaction line), each with its button. */
import type * as vscode from 'vscode';

/** A line the response keeps after its answer, with its button. */
export interface Notice {
  readonly markdown: string;
  readonly button?: vscode.Command;
}

/** Writes notices into a response, each a paragraph of its own with its button. */
export function writeNotices(stream: vscode.ChatResponseStream, notices: readonly Notice[]): void {
  for (const notice of notices) {
    stream.markdown(`\n\n${notice.markdown}\n\n`);
    if (notice.button) stream.button(notice.button);
  }
}
