/**
 * Every command, id → factory, registered by `activate` from this one table.
 * Each id is also contributed in package.json.
 */
import * as vscode from 'vscode';
import { UNDO_TURN_COMMAND } from '../agent/participant';
import type { CommandFactory } from './context';
import { runProbesCommand } from './probes';
import { projectTranscriptCommand } from './reports';
import { revealSecretsCommand } from './secrets';
import { deleteSessionCommand, exportSessionCommand, importSessionCommand, openPanelCommand, rebuildCommand, showContextCommand, switchTaskCommand, viewToolCallCommand } from './tasks';

export { reportingFailures, type Ctx } from './context';
export { ReportDocuments, REPORT_SCHEME } from './reports';

export const CommandIds = {
  openPanel: 'contextKeeper.openPanel',
  switchTask: 'contextKeeper.switchTask',
  projectTranscript: 'contextKeeper.projectTranscript',
  rebuild: 'contextKeeper.rebuild',
  viewToolCall: 'contextKeeper.viewToolCall',
  deleteSession: 'contextKeeper.deleteSession',
  exportSession: 'contextKeeper.exportSession',
  importSession: 'contextKeeper.importSession',
  showContext: 'contextKeeper.showContext',
  runProbes: 'contextKeeper.runProbes',
  revealSecrets: 'contextKeeper.revealSecrets',
  undoTurnEdits: UNDO_TURN_COMMAND,
} as const;

export type CommandId = (typeof CommandIds)[keyof typeof CommandIds];

/** Every command, id → factory. Each id is also contributed in package.json. */
export const COMMANDS: Readonly<Record<CommandId, CommandFactory>> = {
  [CommandIds.openPanel]: openPanelCommand,
  [CommandIds.switchTask]: switchTaskCommand,
  [CommandIds.projectTranscript]: projectTranscriptCommand,
  [CommandIds.rebuild]: rebuildCommand,
  [CommandIds.viewToolCall]: viewToolCallCommand,
  [CommandIds.deleteSession]: deleteSessionCommand,
  [CommandIds.exportSession]: exportSessionCommand,
  [CommandIds.importSession]: importSessionCommand,
  [CommandIds.showContext]: showContextCommand,
  [CommandIds.runProbes]: (ctx) => runProbesCommand(ctx.documents, ctx.counter, ctx.redactor),
  [CommandIds.revealSecrets]: revealSecretsCommand,
  [CommandIds.undoTurnEdits]: (ctx) => async (key?: unknown) => {
    const keys = typeof key === 'string' ? key : Array.isArray(key) && key.every((k) => typeof k === 'string') ? (key as string[]) : undefined;
    void vscode.window.showInformationMessage(await ctx.agent.undoTurn(keys));
  },
};

