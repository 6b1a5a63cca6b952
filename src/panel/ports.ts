/**
 * What the panel needs from the rest of the extension, as interfaces: the
 * composition root (src/extension.ts) passes in the agent and the documents
 * that show a record or a tool call, so the panel imports nothing of the agent.
 */
import type * as vscode from 'vscode';
import type { SummaryDrift } from '../core/drift';
import type { ProjectedMessage } from '../core/engine';
import type { LedgerCounts } from '../core/ledger';
import type { CompactionSession } from '../core/session';
import type { Fact } from '../core/state';
import type { StateEvent } from '../core/store';
import type { RawRecord } from '../core/types';

/** What the panel reads of a task: its raw record, its compaction session, its loss ledger. */
export interface PanelTask {
  readonly id: string;
  readonly records: readonly RawRecord[];
  readonly ledger: readonly LedgerCounts[];
  readonly session: CompactionSession;
}

/** What the model was sent at a task's last call in this window. */
export interface LastSent {
  readonly messages: readonly ProjectedMessage[];
  readonly tokens: number | undefined;
  readonly predicted: number;
  readonly window: number;
}

/** The agent as the panel sees it. */
export interface PanelAgent {
  readonly activeTaskId: string | undefined;
  readonly onDidChangeTask: vscode.Event<string>;
  readonly onDidSend: vscode.Event<{ readonly taskId: string }>;
  inspect(taskId: string): Promise<PanelTask | undefined>;
  isRunning(taskId: string): boolean;
  applyStateEvent(taskId: string, event: Omit<StateEvent, 'record'>): Promise<Fact>;
  rebuild(taskId: string): Promise<{ records: number; lines: string[]; drift: SummaryDrift | undefined }>;
}

/** The read-only documents a record and a tool call open in. */
export interface PanelDocuments {
  recordUri(taskId: string, index: number): vscode.Uri;
  callUri(taskId: string, toolCallId: string): vscode.Uri;
}
