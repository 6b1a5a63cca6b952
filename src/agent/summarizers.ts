/**
 * Which summarizer folds a task's older steps: the deterministic floor, or a
 * model (the chat's own, or the one the settings name) that falls back to it.
 */
import * as vscode from 'vscode';
import type { Redactor } from '../core/redact';
import { ExtractiveSummarizer, type Summarizer } from '../core/summarizer';
import { SummaryLineCounter } from '../core/summary';
import type { TokenCounter } from '../core/tokens';
import type { ToolSpec } from './model';
import { ModelSummarizer } from './modelSummarizer';
import type { Notice } from './notices';
import type { KeeperSettings } from './settings';
import { VsCodeChatModel } from './vscodeModel';

/** The deterministic floor summarizer for these settings (the model one is chosen per turn). */
export function deterministicSummarizer(counter: TokenCounter, redactor: Redactor, settings: KeeperSettings): Summarizer {
  return new ExtractiveSummarizer(new SummaryLineCounter(counter), redactor, settings.summaryBudgetTokens || undefined);
}

export async function summarizerFor(
  counter: TokenCounter,
  redactor: Redactor,
  settings: KeeperSettings,
  chatModel: vscode.LanguageModelChat,
  notices: Notice[],
  say: (message: string) => void,
  signal: AbortSignal,
  chatFrame: () => { system: string; tools: readonly ToolSpec[] } | undefined,
): Promise<Summarizer> {
  const lines = new SummaryLineCounter(counter);
  const deterministic = new ExtractiveSummarizer(lines, redactor, settings.summaryBudgetTokens || undefined);
  if (settings.summarizerModel === 'none') return deterministic;
  let model = chatModel;
  if (settings.summarizerModel !== '') {
    const picked = (await vscode.lm.selectChatModels({ id: settings.summarizerModel }))[0] ?? (await vscode.lm.selectChatModels({ family: settings.summarizerModel }))[0];
    if (picked) model = picked;
    else notices.push({ markdown: `> ⚠ The summarizer model \`${settings.summarizerModel}\` is not available; summaries use the chat's model.` });
  }
  const port = new VsCodeChatModel(model);
  return new ModelSummarizer({
    complete: (request, signal) => port.complete(request, signal),
    base: deterministic,
    counter: lines,
    redactor,
    ...(settings.summaryBudgetTokens ? { cap: settings.summaryBudgetTokens } : {}),
    spanChars: Math.max(4_000, Math.min(60_000, model.maxInputTokens * 2)),
    timeoutMs: settings.summarizerTimeoutSeconds * 1000,
    signal,
    // The chat's own model is asked after the chat's context (its prompt cache serves it); another model gets a prompt of its own.
    ...(model.id === chatModel.id ? { chatFrame } : {}),
    onStart: () => say('Summarizing the oldest steps into the Task Context…'),
    onFallback: (reason) => say(`Summary written without the model (${reason}).`),
  });
}
