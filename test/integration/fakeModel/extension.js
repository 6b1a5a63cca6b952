'use strict';
/**
 * A scripted language model for the integration tests (vendor `ck-fake`).
 *
 * Two models, `ck-fake-large` (128k input) and `ck-fake-small` (8k input), answer
 * from one FIFO script of steps shared by both; each request takes the next step:
 *
 *   { text?, toolCalls?: [{ callId?, name, input }], error?, errorCode?, waitForCancel?, chunks?, model?, summary? }
 *
 * - `model` keeps a step for requests to that model; a floor summary Context Keeper asks takes only a step
 *   that names its model or says `summary: true` (a step with `summary: true` is never an agent's).
 *
 * - `text` is streamed in `chunks` parts (default 3), then each tool call is reported.
 * - `error` throws a LanguageModelError with that message (`errorCode` may name one
 *   of its factories: NotFound, NoPermissions, Blocked) before anything is streamed.
 * - `waitForCancel` streams the text, then waits for the request's cancellation and
 *   throws a CancellationError.
 * - With the script empty the answer is `fake model: no script left`.
 *
 * Every request is recorded: model id, messages (role and flattened parts), the
 * tool names offered, the tool mode, the token count of the messages, what has
 * been answered so far (`answered`: text, and tool calls as `[call name id input]`)
 * and the outcome (`streaming`, then `done`, `error` or `cancelled`).
 *
 * Two ways to drive it:
 * - inside the extension host, the API `activate` returns:
 *     const fake = await vscode.extensions.getExtension('context-keeper-test.fake-model').activate();
 *     fake.script([{ text: 'hello' }]); … fake.requests(); fake.reset();
 * - from outside (UI tests), through the folder named by $CK_FAKE_MODEL_DIR: a
 *   `script.json` (an array of steps) found there is appended to the script, then
 *   deleted, before each request is answered; `requests.json` is rewritten after
 *   every request. The command `ckFake.script` takes a JSON string (or an array) of steps.
 *
 * The chat participant `@fake` sends its prompt to the model picked in the chat
 * view and renders the answer.
 */
const fs = require('node:fs');
const path = require('node:path');
const vscode = require('vscode');

const VENDOR = 'ck-fake';
const NO_SCRIPT_LEFT = 'fake model: no script left';
const DEFAULT_CHUNKS = 3;

/** @type {vscode.LanguageModelChatInformation[]} */
const MODELS = [
  {
    id: 'ck-fake-large',
    name: 'Fake Large',
    family: 'ck-fake',
    version: '0.0.1',
    detail: 'Fake (tests)',
    tooltip: 'Scripted model of the Context Keeper integration tests (128k input)',
    maxInputTokens: 128000,
    maxOutputTokens: 4096,
    capabilities: { toolCalling: true },
  },
  {
    id: 'ck-fake-small',
    name: 'Fake Small',
    family: 'ck-fake',
    version: '0.0.1',
    detail: 'Fake (tests)',
    tooltip: 'Scripted model of the Context Keeper integration tests (8k input)',
    maxInputTokens: 8000,
    maxOutputTokens: 4096,
    capabilities: { toolCalling: true },
  },
];

/** Roles by the value of vscode.LanguageModelChatMessageRole (System is 3 in the proposed API). */
const ROLE_NAMES = { 1: 'user', 2: 'assistant', 3: 'system' };

/** Deterministic stand-in for a tokenizer: about four characters a token. */
function countTokens(text) {
  return Math.ceil(text.length / 4);
}

function stringify(value) {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** One part of a message as text: text as is, `[call name id input]`, `[result id text]`. */
function flattenPart(part) {
  if (typeof part === 'string') return part;
  if (part instanceof vscode.LanguageModelTextPart) return part.value;
  if (part instanceof vscode.LanguageModelToolCallPart) return `[call ${part.name} ${part.callId} ${stringify(part.input)}]`;
  if (part instanceof vscode.LanguageModelToolResultPart) {
    return `[result ${part.callId} ${part.content.map(flattenPart).join('')}]`;
  }
  // Parts converted by another API layer, or kinds newer than these typings: by shape.
  if (part && typeof part === 'object') {
    if (typeof part.value === 'string') return part.value;
    if (typeof part.callId === 'string' && typeof part.name === 'string') return `[call ${part.name} ${part.callId} ${stringify(part.input)}]`;
    if (typeof part.callId === 'string' && Array.isArray(part.content)) return `[result ${part.callId} ${part.content.map(flattenPart).join('')}]`;
    if (typeof part.mimeType === 'string') return `[data ${part.mimeType}]`;
  }
  return `[part ${stringify(part)}]`;
}

function flattenMessage(message) {
  const parts = (message.content ?? []).map(flattenPart);
  return { role: ROLE_NAMES[message.role] ?? String(message.role), name: message.name, parts, content: parts.join('\n') };
}

/**
 * A floor summary Context Keeper asks: its own prompt with the `record_task_context` tool, or its question after
 * the chat's context. It may be asked in the background at any step (the planner decides when), so it never takes
 * a step scripted for the agent: only one that names its model or says `summary: true`. Unscripted, it is answered
 * "no script left" and the summary falls back to the deterministic one.
 */
const SUMMARY_QUESTION = 'this message is from Context Keeper, not the user.';

function isSummaryRequest(record) {
  const last = record.messages[record.messages.length - 1];
  return record.tools.includes('record_task_context') || (last !== undefined && last.content.includes(SUMMARY_QUESTION));
}

function validateSteps(steps) {
  if (!Array.isArray(steps)) throw new Error(`fake model: a script is an array of steps, got ${stringify(steps)}`);
  for (const step of steps) {
    if (!step || typeof step !== 'object') throw new Error(`fake model: a step is an object, got ${stringify(step)}`);
    for (const call of step.toolCalls ?? []) {
      if (typeof call.name !== 'string') throw new Error(`fake model: a tool call needs a name, got ${stringify(call)}`);
    }
  }
  return steps;
}

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Splits `text` into `count` pieces of about the same length (never empty ones). */
function split(text, count) {
  const n = Math.max(1, Math.min(count, text.length));
  const size = Math.ceil(text.length / n);
  const pieces = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

class FakeModel {
  constructor(channelDir) {
    /** @type {object[]} */
    this.steps = [];
    /** @type {object[]} */
    this.recorded = [];
    this.channelDir = channelDir;
    this.callCounter = 0;
  }

  script(steps) {
    this.steps.push(...validateSteps(steps).map((step) => ({ ...step })));
  }

  requests() {
    return JSON.parse(JSON.stringify(this.recorded));
  }

  reset() {
    this.steps = [];
    this.recorded = [];
    this.writeRequests();
  }

  /** Appends the steps of `<channel>/script.json`, if there is one, and deletes it. */
  readScriptFile() {
    if (!this.channelDir) return;
    const file = path.join(this.channelDir, 'script.json');
    const taken = `${file}.${process.pid}.taken`;
    try {
      fs.renameSync(file, taken);
    } catch {
      return; // no script waiting
    }
    try {
      this.script(JSON.parse(fs.readFileSync(taken, 'utf8')));
    } finally {
      fs.rmSync(taken, { force: true });
    }
  }

  writeRequests() {
    if (!this.channelDir) return;
    fs.mkdirSync(this.channelDir, { recursive: true });
    const file = path.join(this.channelDir, 'requests.json');
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(this.recorded, null, 2));
    fs.renameSync(`${file}.tmp`, file);
  }

  /** @type {vscode.LanguageModelChatProvider['provideLanguageModelChatInformation']} */
  provideLanguageModelChatInformation() {
    return MODELS;
  }

  /** @type {vscode.LanguageModelChatProvider['provideLanguageModelChatResponse']} */
  async provideLanguageModelChatResponse(model, messages, options, progress, token) {
    this.readScriptFile();
    const flattened = messages.map(flattenMessage);
    const record = {
      model: model.id,
      messages: flattened,
      tools: (options.tools ?? []).map((tool) => tool.name),
      toolMode: options.toolMode === vscode.LanguageModelChatToolMode.Required ? 'required' : 'auto',
      tokenCount: flattened.reduce((sum, message) => sum + countTokens(message.content), 0),
      outcome: 'streaming',
      answered: '',
    };
    this.recorded.push(record);
    this.writeRequests();
    try {
      // A step may name the model it is for (e.g. a summarizer model beside the chat's model). A floor summary
      // Context Keeper asks takes only a step scripted for it (see SUMMARY_QUESTION).
      const summary = isSummaryRequest(record);
      const at = this.steps.findIndex((step) => (summary ? step.model === model.id || step.summary === true : step.summary !== true && (step.model === undefined || step.model === model.id)));
      const step = at < 0 ? { text: NO_SCRIPT_LEFT } : this.steps.splice(at, 1)[0];
      await this.answer(step, record, progress, token);
      record.outcome = 'done';
    } catch (error) {
      record.outcome = error instanceof vscode.CancellationError ? 'cancelled' : 'error';
      throw error;
    } finally {
      this.writeRequests();
    }
  }

  /** Streams one step; `record.answered` follows what has been reported so far. */
  async answer(step, record, progress, token) {
    if (step.error !== undefined) {
      const factory = step.errorCode && vscode.LanguageModelError[step.errorCode];
      throw typeof factory === 'function' ? factory(step.error) : new vscode.LanguageModelError(step.error);
    }
    for (const piece of split(step.text ?? '', step.chunks ?? DEFAULT_CHUNKS)) {
      // A step that waits for cancellation always gets its text out first.
      if (token.isCancellationRequested && !step.waitForCancel) throw new vscode.CancellationError();
      progress.report(new vscode.LanguageModelTextPart(piece));
      record.answered += piece;
      await delay(5);
    }
    for (const call of step.toolCalls ?? []) {
      const callId = call.callId ?? `fake-call-${++this.callCounter}`;
      progress.report(new vscode.LanguageModelToolCallPart(callId, call.name, call.input ?? {}));
      record.answered += `[call ${call.name} ${callId} ${stringify(call.input ?? {})}]`;
    }
    if (step.waitForCancel) {
      if (!token.isCancellationRequested) {
        await new Promise((resolve) => {
          const listener = token.onCancellationRequested(() => {
            listener.dispose();
            resolve();
          });
        });
      }
      throw new vscode.CancellationError();
    }
  }

  /** @type {vscode.LanguageModelChatProvider['provideTokenCount']} */
  async provideTokenCount(_model, text) {
    return countTokens(typeof text === 'string' ? text : flattenMessage(text).content);
  }
}

/** What `@fake invoke` got back, oldest first. */
const toolResults = [];

/**
 * `@fake`: sends the prompt to the model picked in the chat view (request.model)
 * and renders its answer, so UI tests can see a scripted answer in the chat list
 * without any other participant (the default one needs a Copilot sign-in).
 */
async function answerInChat(request, _context, stream, token) {
  // `@fake invoke <tool> <json input>`: calls a language model tool as an agent would (with the
  // request's invocation token, so a confirmation shows in this chat) and shows what it returned.
  const invoke = /^invoke\s+(\S+)\s*([\s\S]*)$/.exec(request.prompt.trim());
  if (invoke) {
    let text;
    try {
      const result = await vscode.lm.invokeTool(invoke[1], { input: invoke[2] ? JSON.parse(invoke[2]) : {}, toolInvocationToken: request.toolInvocationToken }, token);
      text = result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
    } catch (error) {
      text = `error: ${error instanceof Error ? error.message : String(error)}`;
    }
    toolResults.push({ tool: invoke[1], text });
    stream.markdown(text);
    return { metadata: { invoked: invoke[1] } };
  }
  const response = await request.model.sendRequest([vscode.LanguageModelChatMessage.User(request.prompt)], {}, token);
  for await (const part of response.stream) {
    if (part instanceof vscode.LanguageModelTextPart) stream.markdown(part.value);
    else if (part instanceof vscode.LanguageModelToolCallPart) stream.markdown(`\n\n[tool call ${part.name} ${stringify(part.input)}]`);
  }
  return { metadata: { model: request.model.id } };
}

function activate(context) {
  const fake = new FakeModel(process.env.CK_FAKE_MODEL_DIR || undefined);
  context.subscriptions.push(
    vscode.lm.registerLanguageModelChatProvider(VENDOR, fake),
    vscode.commands.registerCommand('ckFake.script', async (steps) => {
      const json = steps ?? (await vscode.window.showInputBox({ prompt: 'Steps of the fake model, as a JSON array' }));
      if (json === undefined) return;
      fake.script(typeof json === 'string' ? JSON.parse(json) : json);
    }),
    vscode.commands.registerCommand('ckFake.reset', () => fake.reset()),
    vscode.chat.createChatParticipant('context-keeper-test.fake', answerInChat),
    // A tool of "another extension" (an MCP server's, say) that @keeper may be allowed to offer its model.
    vscode.lm.registerTool('ckFake_lookup', {
      invoke: async (options) => new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(`fake dictionary: ${options.input.word} means a word of the tests`)]),
    }),
  );
  // The chat view lists only the models of vendors resolved so far, and nothing
  // resolves this vendor until someone asks for models: ask once at start-up.
  void vscode.lm.selectChatModels({ vendor: VENDOR });
  return {
    script: (steps) => fake.script(steps),
    requests: () => fake.requests(),
    reset: () => fake.reset(),
    toolResults: () => toolResults.slice(),
    // Where VS Code keeps this extension's workspace storage: every extension's is a sibling folder.
    storagePath: context.storageUri ? context.storageUri.fsPath : undefined,
  };
}

function deactivate() {}

module.exports = { activate, deactivate, countTokens, NO_SCRIPT_LEFT };
