/**
 * Smoke test of the integration harness: inside a real VS Code, the extension
 * under test loads and activates, and the scripted fake model answers through
 * the public language model API.
 */
import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import { FAKE_LARGE, FAKE_SMALL, FAKE_VENDOR, FakeModelApi, NO_SCRIPT_LEFT, fakeModel } from './fakeModelApi';

const EXTENSION_ID = 'context-keeper.context-keeper';

interface Collected {
  text: string[];
  toolCalls: vscode.LanguageModelToolCallPart[];
}

/** Reads a whole response stream. */
async function collect(response: vscode.LanguageModelChatResponse): Promise<Collected> {
  const collected: Collected = { text: [], toolCalls: [] };
  for await (const part of response.stream) {
    if (part instanceof vscode.LanguageModelTextPart) collected.text.push(part.value);
    else if (part instanceof vscode.LanguageModelToolCallPart) collected.toolCalls.push(part);
  }
  return collected;
}

async function selectFake(id: string): Promise<vscode.LanguageModelChat> {
  const [model] = await vscode.lm.selectChatModels({ vendor: FAKE_VENDOR, id });
  assert.ok(model, `the fake model ${id} is not available`);
  return model;
}

describe('smoke', () => {
  let fake: FakeModelApi;

  before(async () => {
    fake = await fakeModel();
  });

  beforeEach(() => fake.reset());

  it('loads and activates the Context Keeper extension', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is not loaded`);
    await extension.activate();
    assert.equal(extension.isActive, true);
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('contextKeeper.projectTranscript'), 'contextKeeper.projectTranscript is not registered');
  });

  it('offers both fake models through vscode.lm', async () => {
    const models = await vscode.lm.selectChatModels({ vendor: FAKE_VENDOR });
    const byId = new Map(models.map((model) => [model.id, model]));
    assert.deepEqual([...byId.keys()].sort(), [FAKE_LARGE, FAKE_SMALL]);
    assert.equal(byId.get(FAKE_LARGE)?.maxInputTokens, 128_000);
    assert.equal(byId.get(FAKE_SMALL)?.maxInputTokens, 8_000);
  });

  it('streams the scripted text and tool call, and records the request', async () => {
    const model = await selectFake(FAKE_SMALL);
    fake.script([
      {
        text: 'I will read the file first.',
        chunks: 3,
        toolCalls: [{ callId: 'call-1', name: 'read_file', input: { path: 'src/math.js' } }],
      },
    ]);
    const tool: vscode.LanguageModelChatTool = {
      name: 'read_file',
      description: 'Reads a file of the workspace',
      inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    };
    const response = await model.sendRequest(
      [vscode.LanguageModelChatMessage.User('What does src/math.js export?')],
      { tools: [tool], justification: 'integration test' },
    );
    const { text, toolCalls } = await collect(response);

    assert.equal(text.join(''), 'I will read the file first.');
    assert.ok(text.length >= 2, `the text arrived in ${text.length} part(s), expected it streamed in several`);
    assert.equal(toolCalls.length, 1);
    assert.equal(toolCalls[0]?.callId, 'call-1');
    assert.equal(toolCalls[0]?.name, 'read_file');
    assert.deepEqual(toolCalls[0]?.input, { path: 'src/math.js' });

    const requests = fake.requests();
    assert.equal(requests.length, 1);
    const [request] = requests;
    assert.equal(request?.model, FAKE_SMALL);
    assert.deepEqual(request?.tools, ['read_file']);
    assert.equal(request?.outcome, 'done');
    assert.equal(request?.answered, 'I will read the file first.[call read_file call-1 {"path":"src/math.js"}]');
    assert.deepEqual(
      request?.messages.map((message) => [message.role, message.content]),
      [['user', 'What does src/math.js export?']],
    );
    assert.equal(request?.tokenCount, await model.countTokens('What does src/math.js export?'));
  });

  it('flattens tool calls and results in the recorded messages', async () => {
    const model = await selectFake(FAKE_LARGE);
    fake.script([{ text: 'It exports add and multiply.' }]);
    const response = await model.sendRequest([
      vscode.LanguageModelChatMessage.User('What does src/math.js export?'),
      vscode.LanguageModelChatMessage.Assistant([
        new vscode.LanguageModelToolCallPart('call-1', 'read_file', { path: 'src/math.js' }),
      ]),
      vscode.LanguageModelChatMessage.User([
        new vscode.LanguageModelToolResultPart('call-1', [new vscode.LanguageModelTextPart('module.exports = { add, multiply };')]),
      ]),
    ]);
    assert.equal((await collect(response)).text.join(''), 'It exports add and multiply.');
    const messages = fake.requests()[0]?.messages.map((message) => [message.role, message.content]);
    assert.deepEqual(messages, [
      ['user', 'What does src/math.js export?'],
      ['assistant', '[call read_file call-1 {"path":"src/math.js"}]'],
      ['user', '[result call-1 module.exports = { add, multiply };]'],
    ]);
  });

  it('answers "no script left" once the script is used up', async () => {
    const model = await selectFake(FAKE_SMALL);
    const response = await model.sendRequest([vscode.LanguageModelChatMessage.User('hello')]);
    assert.equal((await collect(response)).text.join(''), NO_SCRIPT_LEFT);
  });

  it('fails a request with the scripted error', async () => {
    const model = await selectFake(FAKE_SMALL);
    fake.script([{ error: 'scripted failure: rate limited' }]);
    await assert.rejects(
      async () => collect(await model.sendRequest([vscode.LanguageModelChatMessage.User('hello')])),
      (error: unknown) => error instanceof Error && error.message.includes('scripted failure: rate limited'),
    );
    assert.equal(fake.requests()[0]?.outcome, 'error');
  });

  it('stops a request that waits for cancellation when it is cancelled', async () => {
    const model = await selectFake(FAKE_SMALL);
    fake.script([{ text: 'partial answer', chunks: 1, waitForCancel: true }]);
    const source = new vscode.CancellationTokenSource();
    const response = await model.sendRequest([vscode.LanguageModelChatMessage.User('hello')], {}, source.token);
    const text: string[] = [];
    const reading = (async () => {
      for await (const part of response.stream) {
        if (part instanceof vscode.LanguageModelTextPart) {
          text.push(part.value);
          source.cancel();
        }
      }
    })();
    // However the stream ends (quietly or with a cancellation error), it must end.
    await reading.catch(() => undefined);
    source.dispose();
    assert.equal(text.join(''), 'partial answer');
    await waitFor(() => fake.requests()[0]?.outcome === 'cancelled', 'the fake model to see the cancellation');
  });
});

async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
