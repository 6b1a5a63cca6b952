/**
 * The agent's model port over `vscode.LanguageModelChat` (the model the user
 * picked in the chat view, or the configured summarizer model).
 *
 * The projected context becomes chat messages: the instructions and any system
 * record go in as user text (the stable API has no system role), a step as an
 * assistant message with its text and tool-call parts, its results as one user
 * message of tool-result parts. A call whose result is not in the view gets a
 * result saying so, because providers reject a call without one.
 */
import * as vscode from 'vscode';
import type { ProjectedMessage } from '../core/engine';
import type { CompletionRequest } from './modelSummarizer';
import { AbortError, type ChatModelPort, type ModelEvent, type ModelRequest } from './model';
import { messageOf } from '../core/errors';

export function toChatMessages(request: Pick<ModelRequest, 'system' | 'messages'>): vscode.LanguageModelChatMessage[] {
  const out: vscode.LanguageModelChatMessage[] = [];
  if (request.system) out.push(vscode.LanguageModelChatMessage.User(request.system));
  const messages = request.messages;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'user' || m.role === 'system') {
      out.push(vscode.LanguageModelChatMessage.User(m.content));
      continue;
    }
    if (m.role === 'tool') {
      // A result without its call in view (cannot happen from renderUnit, but a provider would reject it): plain text.
      out.push(vscode.LanguageModelChatMessage.User(m.content));
      continue;
    }
    if (!m.calls || m.calls.length === 0) {
      out.push(vscode.LanguageModelChatMessage.Assistant(m.prose ?? m.content));
      continue;
    }
    const parts: (vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart)[] = [];
    if (m.prose && m.prose.trim() !== '') parts.push(new vscode.LanguageModelTextPart(m.prose));
    for (const call of m.calls) parts.push(new vscode.LanguageModelToolCallPart(call.callId, call.name, inputObject(call.input)));
    out.push(vscode.LanguageModelChatMessage.Assistant(parts));
    const results: vscode.LanguageModelToolResultPart[] = [];
    const answered = new Set<string>();
    while (messages[i + 1]?.role === 'tool' && messages[i + 1]!.result) {
      const r = messages[++i]!.result!;
      answered.add(r.callId);
      results.push(new vscode.LanguageModelToolResultPart(r.callId, [new vscode.LanguageModelTextPart(r.isError ? `error: ${r.output}` : r.output)]));
    }
    for (const call of m.calls) {
      if (!answered.has(call.callId)) results.push(new vscode.LanguageModelToolResultPart(call.callId, [new vscode.LanguageModelTextPart('(no result was recorded for this call)')]));
    }
    out.push(vscode.LanguageModelChatMessage.User(results));
  }
  return out;
}

/** A rendered (possibly reduced) input back to the object a tool-call part carries. */
function inputObject(input: string): object {
  try {
    const value: unknown = JSON.parse(input);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value;
  } catch {
    /* a reduced input is text */
  }
  return { input };
}

function tokenFor(signal: AbortSignal): { token: vscode.CancellationToken; dispose(): void } {
  const source = new vscode.CancellationTokenSource();
  const cancel = (): void => source.cancel();
  if (signal.aborted) source.cancel();
  else signal.addEventListener('abort', cancel, { once: true });
  return {
    token: source.token,
    dispose: () => {
      signal.removeEventListener('abort', cancel);
      source.dispose();
    },
  };
}

/** A clear sentence for a model failure (no permission, blocked, not found, network…). */
export function describeModelError(error: unknown): string {
  if (error instanceof vscode.LanguageModelError) {
    const why =
      error.code === vscode.LanguageModelError.NoPermissions().code
        ? 'Context Keeper is not allowed to use this model (the permission was declined)'
        : error.code === vscode.LanguageModelError.Blocked().code
          ? 'the request was blocked (quota or policy)'
          : error.code === vscode.LanguageModelError.NotFound().code
            ? 'the model is no longer available'
            : 'the model refused the request';
    return `${why}: ${error.message}`;
  }
  return messageOf(error);
}

export class VsCodeChatModel implements ChatModelPort {
  private readonly counts = new Map<string, number>();

  constructor(readonly model: vscode.LanguageModelChat, private readonly windowOverride?: number) {}

  get id(): string {
    return this.model.id;
  }

  get maxInputTokens(): number {
    return this.windowOverride ?? this.model.maxInputTokens;
  }

  async *send(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    const { token, dispose } = tokenFor(signal);
    try {
      const tools: vscode.LanguageModelChatTool[] = request.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
      const toolMode = request.toolMode === 'required' ? vscode.LanguageModelChatToolMode.Required : vscode.LanguageModelChatToolMode.Auto;
      const response = await this.model.sendRequest(toChatMessages(request), tools.length ? { tools, toolMode } : {}, token);
      for await (const part of response.stream) {
        if (signal.aborted) throw new AbortError();
        if (part instanceof vscode.LanguageModelTextPart) yield { type: 'text', text: part.value };
        else if (part instanceof vscode.LanguageModelToolCallPart) yield { type: 'call', callId: part.callId, name: part.name, input: part.input };
      }
      if (signal.aborted) throw new AbortError();
    } catch (error) {
      if (signal.aborted || (error instanceof Error && error.name === 'Canceled')) throw new AbortError();
      throw new Error(describeModelError(error));
    } finally {
      dispose();
    }
  }

  /** The model's count of a request, message by message (cached by content: a stable prefix is counted once). */
  async countTokens(request: ModelRequest, signal: AbortSignal): Promise<number> {
    const { token, dispose } = tokenFor(signal);
    try {
      const texts = [request.system, ...request.messages.map((m: ProjectedMessage) => m.content), JSON.stringify(request.tools)];
      let total = 0;
      for (const text of texts) {
        let n = this.counts.get(text);
        if (n === undefined) {
          n = await this.model.countTokens(text, token);
          if (this.counts.size > 5000) this.counts.clear();
          this.counts.set(text, n);
        }
        total += n + 4;
      }
      return total;
    } finally {
      dispose();
    }
  }

  /**
   * One question (the floor summarizer's use). After the chat's request
   * (`request.after`) it is the next message of that request, answered in
   * text. Otherwise, with a tool, the model is
   * required to call it and the call's input comes back as JSON text; a model
   * that answers in text anyway, or rejects tool calls, is read as text.
   */
  async complete(request: CompletionRequest, signal: AbortSignal): Promise<string> {
    if (request.after) {
      // After the chat's own request: its instructions, tools and messages unchanged (a cached prefix), the answer in text.
      const after = request.after;
      let text = '';
      for await (const event of this.send({ system: after.system, messages: [...after.messages, { role: 'user', content: request.prompt }], tools: after.tools }, signal)) {
        if (event.type === 'text') text += event.text;
      }
      return text;
    }
    const ask = async (tool: CompletionRequest['tool']): Promise<string> => {
      let text = '';
      const tools = tool ? [{ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }] : [];
      for await (const event of this.send({ system: '', messages: [{ role: 'user', content: request.prompt }], tools, ...(tool ? { toolMode: 'required' as const } : {}) }, signal)) {
        if (event.type === 'text') text += event.text;
        else if (tool && event.name === tool.name) return JSON.stringify(event.input ?? {});
      }
      return text;
    };
    if (!request.tool) return ask(undefined);
    try {
      return await ask(request.tool);
    } catch (error) {
      if (signal.aborted || error instanceof AbortError) throw error;
      // A model that cannot be made to call a tool still answers the same prompt in JSON text.
      return ask(undefined);
    }
  }
}
