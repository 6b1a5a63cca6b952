/**
 * "Run Probes": the evaluation's probes asked of the user's model, with the
 * full history and with the projected context, reported as Δtask in a
 * read-only document. Takes a transcript and its probe file
 * (`<name>.probes.json` beside it is picked up when present).
 */
import * as vscode from 'vscode';
import type { Redactor } from '../core/redact';
import type { TokenCounter } from '../core/tokens';
import { parseTranscript } from '../core/transcript';
import { formatAnswerReport, parseProbeFile, runAnswerProbes } from '../eval';
import type { EvidenceDocuments } from '../agent/documents';
import { readSettings } from '../agent/vscodeSettings';
import { formatCount } from '../core/formatCount';
import { windowFor } from '../agent/settings';
import { VsCodeChatModel } from '../agent/vscodeModel';

type Handler = (...args: unknown[]) => unknown;

async function readText(uri: vscode.Uri): Promise<string> {
  return new TextDecoder('utf-8').decode(await vscode.workspace.fs.readFile(uri));
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

export function runProbesCommand(documents: EvidenceDocuments, counter: TokenCounter, redactor: Redactor): Handler {
  return async (transcriptArg?: unknown, probesArg?: unknown, modelArg?: unknown) => {
    const transcriptUri =
      transcriptArg instanceof vscode.Uri
        ? transcriptArg
        : (await vscode.window.showOpenDialog({ title: 'Run probes: the session transcript', canSelectMany: false, filters: { 'Transcripts (JSONL)': ['jsonl'] } }))?.[0];
    if (!transcriptUri) return undefined;
    const besides = transcriptUri.with({ path: transcriptUri.path.replace(/\.jsonl$/i, '.probes.json') });
    const probesUri =
      probesArg instanceof vscode.Uri
        ? probesArg
        : (await exists(besides))
          ? besides
          : (await vscode.window.showOpenDialog({ title: 'Run probes: the probe file', canSelectMany: false, filters: { 'Probe files': ['json'] } }))?.[0];
    if (!probesUri) return undefined;

    const transcript = parseTranscript(await readText(transcriptUri), redactor);
    const probes = parseProbeFile(await readText(probesUri), probesUri.path);
    const models = typeof modelArg === 'string' ? await vscode.lm.selectChatModels({ id: modelArg }) : await vscode.lm.selectChatModels();
    if (models.length === 0) throw new Error('no language model is available to answer the probes');
    const model =
      models.length === 1 || typeof modelArg === 'string'
        ? models[0]!
        : (await vscode.window.showQuickPick(models.map((m) => ({ label: m.name, description: `${m.vendor} · ${formatCount(m.maxInputTokens)} tokens`, model: m })), { title: 'Answer the probes with' }))?.model;
    if (!model) return undefined;

    const { settings } = readSettings();
    const port = new VsCodeChatModel(model, settings.windowTokens > 0 ? settings.windowTokens : undefined);
    const { window, reserve } = windowFor(settings, port.maxInputTokens);
    const report = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Context Keeper: asking ${probes.probes.length} probes twice`, cancellable: true },
      async (progress, token) => {
        const controller = new AbortController();
        token.onCancellationRequested(() => controller.abort());
        return runAnswerProbes(transcript.records, probes, {
          window,
          reserve,
          counter,
          redactor,
          signal: controller.signal,
          onProgress: (done, total) => progress.report({ message: `${done}/${total}`, increment: 100 / total }),
          ask: async (messages, question, signal) => {
            let text = '';
            for await (const event of port.send({ system: '', messages: [...messages, { role: 'user', content: question }], tools: [] }, signal)) {
              if (event.type === 'text') text += event.text;
            }
            return text;
          },
        });
      },
    );
    const name = transcriptUri.path.slice(transcriptUri.path.lastIndexOf('/') + 1);
    const uri = documents.set(`/probes/${encodeURIComponent(name)}.md`, formatAnswerReport(`${name} with ${model.name}`, report, window));
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: false });
    return report;
  };
}
