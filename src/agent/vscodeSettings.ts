/** @keeper's settings as VS Code holds them (the `contextKeeper` section), read and validated. */
import * as vscode from 'vscode';
import { parseSettings, SETTINGS_SECTION, type KeeperSettings } from './settings';

export function readSettings(): { settings: KeeperSettings; problems: string[] } {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
  return parseSettings((key) => config.get(key));
}
