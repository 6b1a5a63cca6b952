/** @keeper's settings as VS Code holds them (the `contextKeeper` section), read and validated. */
import * as vscode from 'vscode';
import { nextTurn } from '../core/turns';
import { parseSettings, SETTINGS_SECTION, type KeeperSettings } from './settings';

export function readSettings(): { settings: KeeperSettings; problems: string[] } {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
  return parseSettings((key) => config.get(key));
}

/**
 * Reads the settings once on a later turn: the first validation builds the
 * settings' schemas (about 10 ms), which the first @keeper turn did in its own
 * block. The extension runs this after activation; a problem is the turn's to report.
 */
export async function warmSettings(): Promise<void> {
  await nextTurn();
  readSettings();
}
