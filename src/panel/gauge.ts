/** The budget gauge in the status bar: the last context sent against the model's window. */
import * as vscode from 'vscode';
import type { LastSent } from './ports';
import { formatCount } from '../core/formatCount';

/** Clicking it runs `command` (Show What the Model Saw). */
export class BudgetGauge implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('contextKeeper.budget', vscode.StatusBarAlignment.Right, 100);

  constructor(command: string) {
    this.item.name = 'Context Keeper budget';
    this.item.command = command;
  }

  show(event: LastSent & { readonly taskId: string }): void {
    const used = event.tokens ?? event.predicted;
    const share = event.window > 0 ? used / event.window : 0;
    const k = (n: number): string => (n >= 10_000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n));
    this.item.text = `$(layers) ${k(used)}/${k(event.window)}`;
    this.item.tooltip = `@keeper: the last model call of task ${event.taskId} sent ${formatCount(used)} tokens (${Math.round(share * 100)}% of the ${formatCount(event.window)}-token window). Click to see what the model saw.`;
    this.item.backgroundColor = share > 0.9 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}

