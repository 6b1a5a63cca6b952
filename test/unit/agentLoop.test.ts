import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AbortError, type ChatModelPort, type ModelEvent, type ModelRequest } from '../../src/agent/model';
import { describeCompaction, describeTurnCompactions, ModelCallError, recordRewind, runTurn, type FoldedSoFar, type SentInfo, type ToolRunner, type TurnIO } from '../../src/agent/loop';
import type { StepReport } from '../../src/core/engine';
import { isTransientModelError, retryDelayMs } from '../../src/agent/retry';
import { matchesToolPattern } from '../../src/agent/settings';
import { mergeModelFold, ModelSummarizer, parseModelFold, type CompletionRequest } from '../../src/agent/modelSummarizer';
import { parseSettings, sessionOptionsFor, windowFor } from '../../src/agent/settings';
import { budgetFor, TaskSession } from '../../src/agent/taskSession';
import { AGENT_TOOLS, runTool } from '../../src/agent/tools';
import { O200kTokenCounter } from '../../src/adapters/o200kTokenCounter';
import { ExtractiveSummarizer } from '../../src/core/summarizer';
import { emptySummary, SummaryLineCounter } from '../../src/core/summary';
import { formatInterchange, parseTranscript } from '../../src/core/transcript';
import { SessionRecord } from '../../src/core/parts';
import { continuationRest } from '../../src/core/continuation';
import { runAnswerProbes } from '../../src/eval/answers';
import { SessionStore } from '../../src/store/sessionStore';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

const counter = new O200kTokenCounter();

type Step = { text?: string; calls?: { name: string; input: unknown }[]; error?: string; hang?: boolean };

/** A scripted model: one step per call; records what every call was sent. */
class ScriptedModel implements ChatModelPort {
  readonly id = 'scripted';
  readonly requests: ModelRequest[] = [];
  private calls = 0;
  constructor(private readonly script: Step[], readonly maxInputTokens = 128_000) {}

  async *send(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    this.requests.push(request);
    const step = this.script.shift() ?? { text: 'done' };
    const n = this.calls++;
    if (step.text) {
      const half = Math.ceil(step.text.length / 2);
      yield { type: 'text', text: step.text.slice(0, half) };
      if (step.hang) {
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        throw new AbortError();
      }
      if (step.error) throw new Error(step.error);
      yield { type: 'text', text: step.text.slice(half) };
    } else if (step.error) throw new Error(step.error);
    for (const [i, c] of (step.calls ?? []).entries()) yield { type: 'call', callId: `c${n}-${i}`, name: c.name, input: c.input };
  }

  async countTokens(request: ModelRequest): Promise<number> {
    return sentTokens(request);
  }
}

function sentTokens(request: ModelRequest): number {
  return counter.count(request.system) + request.messages.reduce((n, m) => n + counter.count(m.content) + 4, 0) + counter.count(JSON.stringify(request.tools));
}

function workspace(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'ck-agent-'));
  mkdirSync(path.join(root, 'src'));
  writeFileSync(path.join(root, 'src', 'math.js'), 'function add(a, b) {\n  return a - b;\n}\nmodule.exports = { add };\n');
  writeFileSync(path.join(root, 'package.json'), '{"scripts":{"test":"node -e \\"process.exit(require(\'./src/math.js\').add(2,2)===4?0:1)\\""}}\n');
  return root;
}

function tools(root: string, task: () => TaskSession, confirmAnswer = true): ToolRunner & { confirms: string[] } {
  const confirms: string[] = [];
  return {
    confirms,
    specs: AGENT_TOOLS.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
    run: (name, input, signal) =>
      runTool(name, input, {
        root,
        signal,
        confirm: async (r) => {
          confirms.push(r.title);
          return confirmAnswer;
        },
        viewToolCall: (id) => {
          const v = task().session.viewToolCall(id);
          return v ? { name: v.name, input: v.input, output: v.output, isError: v.isError } : undefined;
        },
      }),
  };
}

class Io implements TurnIO {
  text = '';
  progressLines: string[] = [];
  sentInfo: SentInfo[] = [];
  compactions = 0;
  markdown(t: string): void {
    this.text += t;
  }
  progress(message: string): void {
    this.progressLines.push(message);
  }
  toolCall(name: string): void {
    this.progressLines.push(name);
  }
  readonly compactionLines: string[] = [];
  readonly compacted_: { report: StepReport; folded: FoldedSoFar }[] = [];
  compacted(report: StepReport, folded: FoldedSoFar): void {
    this.compactions++;
    this.compactionLines.push(describeCompaction(report, folded));
    this.compacted_.push({ report, folded });
  }
  sent(info: SentInfo): void {
    this.sentInfo.push(info);
  }
}

async function openStore(): Promise<{ store: SessionStore; file: string }> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'ck-agent-db-')), 'sessions.db');
  return { store: await SessionStore.open(file, { checkpointDelayMs: 0, redactor }), file };
}

const SYSTEM = 'You are a test agent.';

describe('@keeper agent loop (scripted model)', function () {
  this.timeout(60_000);

  it('runs a multi-step turn: reads, searches, edits after confirmation, runs a command; everything is recorded and survives a reopen', async () => {
    const root = workspace();
    const { store, file } = await openStore();
    let task = TaskSession.open(store, 't1', 'fix add', { window: 64_000, reserve: 4_000 }, counter, redactor, new ExtractiveSummarizer(counter, redactor));
    const runner = tools(root, () => task);
    const model = new ScriptedModel([
      { text: 'Let me look.', calls: [{ name: 'read_file', input: { path: 'src/math.js' } }, { name: 'grep', input: { pattern: 'add' } }] },
      { calls: [{ name: 'edit_file', input: { path: 'src/math.js', oldText: 'return a - b;', newText: 'return a + b;' } }] },
      { calls: [{ name: 'run_command', input: { command: 'npm test --silent' } }] },
      { text: 'Fixed `add` and the tests pass.' },
    ]);
    const io = new Io();
    const result = await runTurn(task, 'Fix add in src/math.js. Never touch package.json.', model, runner, io, { system: SYSTEM, maxSteps: 10 }, new AbortController().signal);
    assert.equal(result.stoppedAt, 'answer');
    assert.equal(result.steps, 4);
    assert.match(readFileSync(path.join(root, 'src', 'math.js'), 'utf8'), /return a \+ b;/);
    assert.deepEqual(runner.confirms.length, 2, 'the edit and the command were confirmed');
    assert.match(io.text, /Let me look\.Fixed `add`/);
    const roles = task.records.map((r) => `${r.role}${r.toolName ? `:${r.toolName}` : ''}`);
    assert.deepEqual(roles, ['user', 'assistant', 'assistant:read_file', 'assistant:grep', 'tool:read_file', 'tool:grep', 'assistant:edit_file', 'tool:edit_file', 'assistant:run_command', 'tool:run_command', 'assistant']);
    assert.match(task.records[9]!.toolOutput!, /exit code: 0/);
    // The second call saw the first call's results as structured parts.
    const second = model.requests[1]!.messages;
    const results = second.filter((m) => m.role === 'tool');
    assert.equal(results.length, 2);
    assert.match(results[0]!.result!.output, /return a - b/);
    assert.deepEqual(second.find((m) => m.calls?.length)!.calls!.map((c) => c.name), ['read_file', 'grep']);
    // Calibrated from the model's count after each call.
    assert.ok(io.sentInfo.every((s) => s.tokens !== undefined && s.tokens > 0));
    // The artifact index knows the files.
    const artifacts = store.artifacts('t1').map((a) => `${a.path}:${a.reads}r${a.modifications}m`);
    assert.ok(artifacts.some((a) => a.startsWith('src/math.js:') && /1m$/.test(a)), artifacts.join(', '));
    store.close();

    // A reload: the task continues from the store, the next turn sees the whole record.
    const again = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    task = TaskSession.open(again, 't1', 'fix add', { window: 64_000, reserve: 4_000 }, counter, redactor, new ExtractiveSummarizer(counter, redactor));
    assert.equal(task.nextIndex, 11);
    const model2 = new ScriptedModel([{ text: 'Still here.' }]);
    await runTurn(task, 'Thanks. What did you change?', model2, tools(root, () => task), new Io(), { system: SYSTEM, maxSteps: 3 }, new AbortController().signal);
    const seen = model2.requests[0]!.messages.map((m) => m.content).join('\n');
    assert.match(seen, /Never touch package\.json/);
    assert.match(seen, /return a \+ b/);
    again.close();
  });

  it('a rewind takes turns out of the task: recorded, derived again without them, the next request never sees them', async () => {
    const root = workspace();
    const { store } = await openStore();
    const options = { window: 64_000, reserve: 4_000 };
    let task = TaskSession.open(store, 'tr', 'rewind', options, counter, redactor, new ExtractiveSummarizer(counter, redactor));
    const turn = async (prompt: string, answer: string): Promise<ScriptedModel> => {
      const model = new ScriptedModel([{ text: answer }]);
      await runTurn(task, prompt, model, tools(root, () => task), new Io(), { system: SYSTEM, maxSteps: 3 }, new AbortController().signal);
      return model;
    };
    await turn('Look at src/math.js first.', 'It holds add and multiply.');
    await turn('Always use CoffeeScript from now on. Rename add to zebraSum.', 'Renamed add to zebraSum.');
    assert.equal(task.turns, 2);
    const from = task.turnStart(2)!;
    await recordRewind(task, from, [2], ['src/math.js']);
    task = task.rederive(options, counter);
    assert.equal(task.turns, 1, 'the task holds one turn once the second is taken out');
    assert.equal(task.records.filter((r) => r.role === 'user').length, 2, 'its record keeps both');
    const model = await turn('What is left to do?', 'Nothing.');
    const seen = model.requests[0]!.messages.map((m) => m.content).join('\n');
    assert.ok(!/CoffeeScript|zebraSum/.test(seen), seen);
    assert.match(seen, /took turn 2 \(records r\d+–r\d+\) out of the chat .* src\/math\.js/);
    assert.match(seen, /Look at src\/math\.js first\./);
    assert.ok(!task.session.state.active().some((f) => /CoffeeScript/.test(f.value)), 'the rule of the rewound turn is no protected fact');
    store.close();
  });

  it('a long session crosses the trigger many times: every request fits the window, keeps the first constraint, and a shrunk output is recovered with view_tool_call', async () => {
    const root = workspace();
    for (let i = 0; i < 30; i++) writeFileSync(path.join(root, 'src', `big${i}.txt`), Array.from({ length: 300 }, (_, l) => `file ${i} line ${l}: ${'lorem ipsum dolor sit amet '.repeat(2)}`).join('\n'));
    const window = 12_000;
    let task = TaskSession.open(undefined, 't2', 'long', { window, reserve: 1_500 }, counter, redactor, new ExtractiveSummarizer(counter, redactor));
    const script: Step[] = [];
    for (let i = 0; i < 30; i++) script.push({ text: `Reading big${i}.`, calls: [{ name: 'read_file', input: { path: `src/big${i}.txt` } }] });
    script.push({ calls: [{ name: 'view_tool_call', input: { toolCallId: 'c0-0' } }] });
    script.push({ text: 'Done reading.' });
    const model = new ScriptedModel(script, window);
    const io = new Io();
    await runTurn(task, 'Summarise every file. The constraint: never print line 299 of any file.', model, tools(root, () => task), io, { system: SYSTEM, maxSteps: 40 }, new AbortController().signal);
    assert.ok(io.compactions >= 3, `compacted ${io.compactions} times`);
    // Each compaction leaves a line in the response: tokens before → after, and, for a fold, what it stands for.
    const fold = io.compactionLines.find((l) => /tool calls?\) folded into the Task Context/.test(l));
    assert.ok(fold, io.compactionLines.join('\n'));
    assert.match(fold, /^🗜 Compacted the context: [\d,]+ → [\d,]+ tokens; records 0–\d+ \(\d+ tool calls?\) folded into the Task Context/);
    // The response keeps one line for the turn: how many compactions, the last one's tokens, what is folded after them.
    const lastFold = io.compacted_.at(-1)!;
    const turnLine = describeTurnCompactions(io.compacted_);
    assert.ok(turnLine.startsWith(`🗜 Compacted the context ${io.compactions} times in this turn, the last time ${lastFold.report.predicted.toLocaleString('en-US')} → ${lastFold.report.after.toLocaleString('en-US')} tokens; records 0–${lastFold.folded.records - 1} (${lastFold.folded.toolCalls} tool calls) folded into the Task Context`), turnLine);
    assert.equal(describeTurnCompactions(io.compacted_.slice(0, 1)), io.compactionLines[0]);
    assert.equal(describeTurnCompactions([]), '');
    for (const [i, request] of model.requests.entries()) {
      const tokens = sentTokens(request);
      assert.ok(tokens <= window, `request ${i}: ${tokens} tokens > window ${window}`);
      assert.match(request.messages.map((m) => m.content).join('\n'), /never print line 299 of any file/, `request ${i} lost the constraint`);
    }
    // The first read was shrunk or folded in the later requests, and view_tool_call brought the full output back.
    const last = model.requests.at(-1)!.messages.map((m) => m.content).join('\n');
    assert.ok(!/file 0 line 150:/.test(model.requests[25]!.messages.map((m) => m.content).join('\n')), 'the first output is no longer whole in view');
    assert.match(last, /file 0 line 150:/, 'recovered through view_tool_call');
    void task;
  });

  it('a model error mid-stream keeps the partial answer in the record and reports the error', async () => {
    const root = workspace();
    const task = TaskSession.open(undefined, 't3', 'err', { window: 64_000, reserve: 4_000 }, counter, redactor, new ExtractiveSummarizer(counter, redactor));
    const model = new ScriptedModel([{ text: 'I will start by reading the file now', error: 'network reset by peer' }]);
    await assert.rejects(runTurn(task, 'Read math.js', model, tools(root, () => task), new Io(), { system: SYSTEM, maxSteps: 5 }, new AbortController().signal), (e: unknown) => e instanceof ModelCallError && /network reset by peer/.test(e.message));
    assert.deepEqual(task.records.map((r) => r.role), ['user', 'assistant']);
    assert.equal(task.records[1]!.content, 'I will start by re');
  });

  it('retries a transient model failure before anything streamed, with growing delays, and says so; a refusal is not retried', async () => {
    const root = workspace();
    const task = TaskSession.open(undefined, 't3r', 'retry', { window: 64_000, reserve: 4_000 }, counter, redactor, new ExtractiveSummarizer(counter, redactor));
    const model = new ScriptedModel([{ error: '429 Too Many Requests' }, { error: 'Service overloaded (529)' }, { text: 'Read it.' }]);
    const waited: number[] = [];
    const retried: number[] = [];
    const io = new Io();
    // A fixed jitter: the delays are the same on every run (the default draws it at random).
    const options = { system: SYSTEM, maxSteps: 5, sleep: async (ms: number) => void waited.push(ms), random: () => 0.5, onRetry: (attempt: number) => void retried.push(attempt) };
    const result = await runTurn(task, 'Read math.js', model, tools(root, () => task), io, options, new AbortController().signal);
    assert.equal(result.stoppedAt, 'answer');
    assert.equal(model.requests.length, 3, 'the same request, sent three times');
    assert.deepEqual(retried, [1, 2]);
    assert.ok(waited[0]! >= 500 && waited[0]! < 1000 && waited[1]! >= 1000 && waited[1]! < 2000, `delays ${waited.join(', ')}`);
    assert.equal(io.progressLines.filter((l) => /trying again in \d+ s \(retry \d of 3\)/.test(l)).length, 2);
    assert.deepEqual(task.records.map((r) => r.role), ['user', 'assistant'], 'a failed attempt leaves nothing in the record');

    // Always failing: three retries, then the error as usual.
    const failing = new ScriptedModel([{ error: '503 unavailable' }, { error: '503 unavailable' }, { error: '503 unavailable' }, { error: '503 unavailable' }]);
    const t2 = TaskSession.open(undefined, 't3s', 'retry', { window: 64_000, reserve: 4_000 }, counter, redactor, new ExtractiveSummarizer(counter, redactor));
    await assert.rejects(runTurn(t2, 'Read math.js', failing, tools(root, () => t2), new Io(), { ...options, onRetry: undefined }, new AbortController().signal), (e: unknown) => e instanceof ModelCallError && /503/.test(e.message));
    assert.equal(failing.requests.length, 4);

    // A refusal fails at once.
    const refused = new ScriptedModel([{ error: 'Context Keeper is not allowed to use this model (the permission was declined)' }]);
    const t3 = TaskSession.open(undefined, 't3t', 'retry', { window: 64_000, reserve: 4_000 }, counter, redactor, new ExtractiveSummarizer(counter, redactor));
    await assert.rejects(runTurn(t3, 'Read math.js', refused, tools(root, () => t3), new Io(), options, new AbortController().signal), ModelCallError);
    assert.equal(refused.requests.length, 1);
  });

  it('records what the user attached as reads the user made, before the first model call sees them', async () => {
    const root = workspace();
    const task = TaskSession.open(undefined, 't3a', 'attach', { window: 64_000, reserve: 4_000 }, counter, redactor, new ExtractiveSummarizer(counter, redactor));
    const model = new ScriptedModel([{ text: 'It subtracts.' }]);
    const attachments = [{ path: 'src/math.js', text: 'function add(a, b) {\n  return a - b;\n}' }, { path: 'src/other.js', lines: { from: 3, to: 4 }, text: 'const x = 1;\nconst y = 2;' }];
    await runTurn(task, 'What does this do?', model, tools(root, () => task), new Io(), { system: SYSTEM, maxSteps: 3, attachments }, new AbortController().signal);
    assert.deepEqual(task.records.map((r) => [r.role, r.toolName ?? '']), [['user', ''], ['assistant', 'read_file'], ['assistant', 'read_file'], ['tool', 'read_file'], ['tool', 'read_file'], ['assistant', '']]);
    assert.deepEqual(task.records[2]!.toolInput, { path: 'src/other.js', offset: 3, limit: 2, attachedBy: 'user' });
    assert.equal(task.records[3]!.toolOutput, attachments[0]!.text);
    const sent = model.requests[0]!.messages.map((m) => m.content).join('\n');
    assert.ok(sent.includes('return a - b;') && sent.includes('const y = 2;'), 'the first model call sees the attachments');
    assert.equal(task.records[0]!.content, 'What does this do?', "the request keeps the user's own words only");
  });

  it("other extensions' tools: offered by name patterns", () => {
    assert.equal(matchesToolPattern('mcp_github_search', ['mcp_github_*']), true);
    assert.equal(matchesToolPattern('mcp_gitlab_search', ['mcp_github_*']), false);
    assert.equal(matchesToolPattern('anything', ['*']), true);
    assert.equal(matchesToolPattern('a.b', ['a.b']), true);
    assert.equal(matchesToolPattern('axb', ['a.b']), false, 'a dot is a dot');
    assert.equal(matchesToolPattern('tool', []), false, 'none by default');
  });

  it('the retry policy: transient failures only, delays doubling to a cap with jitter', () => {
    for (const transient of ['429 Too Many Requests', 'rate limit exceeded', 'Request failed with status 503', 'fetch failed', 'read ECONNRESET', 'socket hang up', 'The model is overloaded, try again later']) {
      assert.equal(isTransientModelError(new Error(transient)), true, transient);
    }
    for (const permanent of ['Context Keeper is not allowed to use this model (the permission was declined)', 'the request was blocked (quota or policy)', 'the model is no longer available', '400 invalid request: prompt is too long', 'syntax error']) {
      assert.equal(isTransientModelError(new Error(permanent)), false, permanent);
    }
    assert.deepEqual([1, 2, 3, 4, 5, 6].map((a) => retryDelayMs(a, () => 0.999999)), [1000, 2000, 4000, 8000, 15000, 15000]);
    assert.deepEqual([1, 2, 3].map((a) => retryDelayMs(a, () => 0)), [500, 1000, 2000]);
  });

  it('cancellation mid-stream stops the turn with an AbortError and keeps what was said', async () => {
    const root = workspace();
    const task = TaskSession.open(undefined, 't4', 'cancel', { window: 64_000, reserve: 4_000 }, counter, redactor, new ExtractiveSummarizer(counter, redactor));
    const model = new ScriptedModel([{ text: 'Thinking about it a lot', hang: true }]);
    const controller = new AbortController();
    const io = new Io();
    const turn = runTurn(task, 'Do it', model, tools(root, () => task), io, { system: SYSTEM, maxSteps: 5 }, controller.signal);
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(turn, (e: unknown) => e instanceof Error && e.name === 'AbortError');
    assert.equal(task.records.at(-1)!.content, 'Thinking abo');
  });

  it('Stop while the model counts the request still closes every recorded call with a result', async () => {
    const root = workspace();
    const task = TaskSession.open(undefined, 't8', 'count', { window: 64_000, reserve: 4_000 }, counter, redactor, new ExtractiveSummarizer(counter, redactor));
    const controller = new AbortController();
    const model = new ScriptedModel([{ calls: [{ name: 'read_file', input: { path: 'src/math.js' } }] }]);
    model.countTokens = () => {
      controller.abort();
      return new Promise<number>(() => undefined);
    };
    await assert.rejects(runTurn(task, 'Read', model, tools(root, () => task), new Io(), { system: SYSTEM, maxSteps: 3 }, controller.signal), (e: unknown) => e instanceof Error && e.name === 'AbortError');
    assert.deepEqual(task.records.map((r) => `${r.role}${r.toolCallId ? `:${r.toolCallId}` : ''}`), ['user', 'assistant:c0-0', 'tool:c0-0']);
    assert.match(task.records[2]!.toolOutput!, /cancelled/);
  });

  it('a tool input that fails validation goes back to the model as an error result, and the turn goes on', async () => {
    const root = workspace();
    const task = TaskSession.open(undefined, 't5', 'bad', { window: 64_000, reserve: 4_000 }, counter, redactor, new ExtractiveSummarizer(counter, redactor));
    const model = new ScriptedModel([{ calls: [{ name: 'read_file', input: { file: 'src/math.js' } }] }, { calls: [{ name: 'read_file', input: { path: '../../etc/passwd' } }] }, { text: 'ok' }]);
    await runTurn(task, 'Read it', model, tools(root, () => task), new Io(), { system: SYSTEM, maxSteps: 5 }, new AbortController().signal);
    const results = task.records.filter((r) => r.role === 'tool');
    assert.equal(results.length, 2);
    assert.ok(results.every((r) => r.isError));
    assert.match(results[0]!.toolOutput!, /path/);
    assert.match(results[1]!.toolOutput!, /outside the workspace/);
  });

  it('a declined edit is an error result and leaves the file alone', async () => {
    const root = workspace();
    const task = TaskSession.open(undefined, 't6', 'declined', { window: 64_000, reserve: 4_000 }, counter, redactor, new ExtractiveSummarizer(counter, redactor));
    const model = new ScriptedModel([{ calls: [{ name: 'write_file', input: { path: 'src/math.js', content: 'gone' } }] }, { text: 'ok' }]);
    await runTurn(task, 'Rewrite', model, tools(root, () => task, false), new Io(), { system: SYSTEM, maxSteps: 5 }, new AbortController().signal);
    assert.match(readFileSync(path.join(root, 'src', 'math.js'), 'utf8'), /return a - b/);
    assert.match(task.records.find((r) => r.role === 'tool')!.toolOutput!, /declined/);
  });

  it('a task kept in memory (no writable store) is derived again from its own records, user acts included', async () => {
    const root = workspace();
    const task = TaskSession.open(undefined, 't9', 'memory', { window: 64_000, reserve: 4_000 }, counter, redactor, new ExtractiveSummarizer(counter, redactor));
    await runTurn(task, 'Port it. Always use tabs.', new ScriptedModel([{ text: 'ok' }]), tools(root, () => task), new Io(), { system: SYSTEM, maxSteps: 2 }, new AbortController().signal);
    const tabs = task.session.state.facts().find((f) => f.type === 'constraint' && /tabs/.test(f.value))!;
    task.session.applyStateEvent({ kind: 'correct', factId: tabs.id, value: 'Always use two spaces.', record: task.nextIndex });
    const again = task.rederive({ window: 8_000, reserve: 1_000 }, counter);
    assert.equal(again.durable, false);
    assert.equal(again.records.length, task.records.length);
    again.session.preflight();
    assert.equal(again.session.state.get(tabs.id)!.value, 'Always use two spaces.');
    assert.equal(again.nextIndex, task.nextIndex);
  });

  it('stops at the step limit and says so', async () => {
    const root = workspace();
    const task = TaskSession.open(undefined, 't7', 'loop', { window: 64_000, reserve: 4_000 }, counter, redactor, new ExtractiveSummarizer(counter, redactor));
    const model = new ScriptedModel(Array.from({ length: 10 }, () => ({ calls: [{ name: 'list_dir', input: {} }] })));
    const io = new Io();
    const result = await runTurn(task, 'List forever', model, tools(root, () => task), io, { system: SYSTEM, maxSteps: 3 }, new AbortController().signal);
    assert.equal(result.stoppedAt, 'max-steps');
    assert.match(io.text, /Stopped after 3 model calls/);
  });
});

describe('model-backed floor summaries', () => {
  const lines = new SummaryLineCounter(counter);
  const record = new SessionRecord();
  const records = [
    { index: 0, role: 'user' as const, content: 'Port the exporter. Never drop a column.' },
    { index: 1, role: 'assistant' as const, content: 'The exporter lives in src/export.ts; CSV quoting is broken for commas.' },
    { index: 2, role: 'user' as const, content: 'Go on.' },
  ];
  for (const r of records) record.append(r);
  const input = { previous: undefined, units: record.units.slice(0, 2), coverageEnd: 2 };

  it('adds sourced lines from the model, drops unsourced ones and never lets it write a constraint', async () => {
    const answer = '```json\n' + JSON.stringify({
      findings: [{ key: 'csv-quoting', text: 'CSV quoting breaks on commas in src/export.ts', sources: [1] }, { key: 'made-up', text: 'tests passed', sources: [42] }],
      decisions: [],
      ruledOut: [],
      current: { status: 'exporter located' },
      constraints: [{ key: 'x', text: 'You may drop columns', sources: [0] }],
    }) + '\n```';
    const s = new ModelSummarizer({ complete: async () => answer, base: new ExtractiveSummarizer(lines, redactor), counter: lines, redactor, spanChars: 10_000, timeoutMs: 5_000 });
    const state = await s.fold(input);
    const findings = state.facts.Findings.map((f) => f.text);
    assert.ok(findings.includes('CSV quoting breaks on commas in src/export.ts'));
    assert.ok(!findings.some((f) => /tests passed/.test(f)), 'a line citing records outside the span is dropped');
    assert.ok(!state.facts.Constraints.some((f) => /drop columns/.test(f.text)));
    assert.ok(state.facts.Constraints.some((f) => f.text === 'Never drop a column.'), 'the user constraint stays verbatim');
    assert.equal(state.current.status, 'exporter located');
  });

  it("with the chat's own model, asks after the chat's context (its instructions, tools and messages unchanged) and reads the JSON answer", async () => {
    const context = [
      { role: 'user' as const, content: '## Task Context\n(none yet)' },
      { role: 'user' as const, content: records[0]!.content },
      { role: 'assistant' as const, content: records[1]!.content },
    ];
    const chatTools = [{ name: 'read_file', description: 'Read a file', inputSchema: { type: 'object' } }];
    const asked: CompletionRequest[] = [];
    const answer = JSON.stringify({ findings: [{ key: 'csv-quoting', text: 'CSV quoting breaks on commas in src/export.ts', sources: [1] }] });
    const s = new ModelSummarizer({ complete: async (r) => (asked.push(r), answer), base: new ExtractiveSummarizer(lines, redactor), counter: lines, redactor, spanChars: 10_000, timeoutMs: 5_000, chatFrame: () => ({ system: 'You are @keeper.', tools: chatTools }) });
    const state = await s.fold({ ...input, context });
    assert.equal(asked.length, 1);
    const r = asked[0]!;
    assert.equal(r.tool, undefined, 'no tool of its own: the chat\'s tools stay as the chat sent them');
    assert.deepEqual(r.after, { system: 'You are @keeper.', messages: context, tools: chatTools });
    assert.match(r.prompt, /^Stop the task for one answer: this message is from Context Keeper, not the user\./);
    assert.match(r.prompt, /Do not call a tool: answer with only a JSON object/);
    assert.match(r.prompt, /^\[record 0\] user: Port the exporter\. Never drop a column\.$/m, 'the span is named record by record: its lines must cite them');
    assert.match(r.prompt, /^\[record 1\] agent: The exporter lives in src\/export\.ts; CSV quoting is broken for commas\.$/m);
    assert.ok(state.facts.Findings.some((f) => f.key === 'model-csv-quoting'));
    // Another model (or no context passed) gets a prompt of its own, with the span and the required tool.
    const other = new ModelSummarizer({ complete: async (q) => (asked.push(q), answer), base: new ExtractiveSummarizer(lines, redactor), counter: lines, redactor, spanChars: 10_000, timeoutMs: 5_000 });
    await other.fold({ ...input, context });
    assert.equal(asked[1]!.after, undefined);
    assert.equal(asked[1]!.tool?.name, 'record_task_context');
  });

  it("with a context that holds only the span's oldest records, gives the rest in the question, clipped to its room", async () => {
    const context = [
      { role: 'user' as const, content: '## Task Context\n(none yet)' },
      { role: 'user' as const, content: records[0]!.content },
    ];
    const asked: CompletionRequest[] = [];
    const answer = JSON.stringify({ findings: [{ key: 'csv-quoting', text: 'CSV quoting breaks on commas in src/export.ts', sources: [1] }] });
    const s = new ModelSummarizer({ complete: async (r) => (asked.push(r), answer), base: new ExtractiveSummarizer(lines, redactor), counter: lines, redactor, spanChars: 10_000, timeoutMs: 5_000, chatFrame: () => ({ system: 'You are @keeper.', tools: [] }) });
    const state = await s.fold({ ...input, context, contextUnits: 1, restTokens: 24 });
    const prompt = asked[0]!.prompt;
    assert.deepEqual(asked[0]!.after?.messages, context, 'the context goes as sent');
    assert.match(prompt, /^\[record 0\] user: Port the exporter/m, 'the record in the context is named in the index');
    assert.match(prompt, /The conversation above stops before record 1; these records, leaving too, are not in it:\n\[record 1\] agent: /);
    // The left-out record's text, clipped to 24 tokens as counted: its start and its end.
    const rest = prompt.slice(prompt.lastIndexOf('\n\n') + 2);
    assert.match(rest, /^\[record 1\] assistant: \S[\s\S]*\n\[… \d+ characters not shown …\]\n[\s\S]*commas\.$/);
    assert.ok(lines.count(rest) <= 24, `${lines.count(rest)} tokens: ${rest}`);
    // Dense text (hex, about two characters a token) is clipped to its room too, as counted, not by characters alone.
    const dense = new SessionRecord();
    dense.append({ index: 0, role: 'assistant', content: Array.from({ length: 400 }, (_, i) => ((i * 2654435761) >>> 0).toString(16)).join('') });
    const clipped = continuationRest({ previous: undefined, units: dense.units, coverageEnd: 1, contextUnits: 0, restTokens: 300 }, redactor, counter);
    assert.ok(clipped.includes('characters not shown') && counter.count(clipped) <= 300, `${counter.count(clipped)} tokens`);
    assert.equal(continuationRest({ previous: undefined, units: dense.units, coverageEnd: 1 }, redactor, counter), '', 'no rest when the context holds the span');
    assert.ok(prompt.length < 2_500, `the rest is clipped: ${prompt.length} characters`);
    assert.ok(state.facts.Findings.some((f) => f.key === 'model-csv-quoting'), 'a line citing the left-out record is kept');
  });

  it('falls back to the deterministic summary on an error, a timeout or invalid JSON, and says why', async () => {
    const base = await new ExtractiveSummarizer(lines, redactor).fold(input);
    for (const complete of [async () => 'not json at all', async () => { throw new Error('quota'); }, () => new Promise<string>(() => undefined)]) {
      const reasons: string[] = [];
      const s = new ModelSummarizer({ complete, base: new ExtractiveSummarizer(lines, redactor), counter: lines, redactor, spanChars: 10_000, timeoutMs: 100, onFallback: (r) => reasons.push(r) });
      assert.deepEqual(await s.fold(input), base);
      assert.equal(reasons.length, 1);
    }
  });

  it('a stopped turn stops waiting for the model summary and keeps the deterministic one', async () => {
    const base = await new ExtractiveSummarizer(lines, redactor).fold(input);
    const controller = new AbortController();
    const s = new ModelSummarizer({ complete: () => new Promise<string>(() => undefined), base: new ExtractiveSummarizer(lines, redactor), counter: lines, redactor, spanChars: 10_000, timeoutMs: 60_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    const started = Date.now();
    assert.deepEqual(await s.fold(input), base);
    assert.ok(Date.now() - started < 5_000, 'did not wait for the 60 s timeout');
  });

  it("asks for the structure through a required tool call, and the model's lines replace the deterministic narrative of the span", async () => {
    const seq = new SessionRecord();
    const prose = 'The root cause is that `quote()` in src/export.ts never escapes commas. I will use the csv-stringify package instead of hand-written quoting because it handles newlines too.';
    for (const r of [
      { index: 0, role: 'user' as const, content: 'Fix the CSV export. Never drop a column.' },
      { index: 1, role: 'assistant' as const, content: prose },
      { index: 2, role: 'assistant' as const, content: '', toolName: 'Bash', toolCallId: 't1', toolInput: { command: 'npm test' }, messageId: 'm1' },
      { index: 3, role: 'tool' as const, content: '', toolName: 'Bash', toolCallId: 't1', toolOutput: 'FAIL test/export.test.ts\nError: expected "a,b" got a,b\nExit code: 1', isError: true },
      { index: 4, role: 'user' as const, content: 'Go on.' },
    ]) seq.append(r);
    const span = { previous: undefined, units: seq.units.slice(0, seq.units.length - 1), coverageEnd: 4 };
    const deterministic = await new ExtractiveSummarizer(lines, redactor).fold(span);
    assert.ok(deterministic.facts.Findings.some((f) => f.origin === 'narrative' && /quote\(\)/.test(f.text)), 'the deterministic pass found the cause in the prose');
    const asked: CompletionRequest[] = [];
    const answer = JSON.stringify({
      findings: [{ key: 'csv-quoting', text: '`quote()` in src/export.ts does not escape commas', sources: [1] }],
      decisions: [{ key: 'csv-library', text: 'use csv-stringify instead of hand-written quoting: it also handles newlines', sources: [1] }],
    });
    const s = new ModelSummarizer({ complete: async (request) => (asked.push(request), answer), base: new ExtractiveSummarizer(lines, redactor), counter: lines, redactor, spanChars: 10_000, timeoutMs: 5_000 });
    const state = await s.fold(span);
    assert.equal(asked.length, 1);
    assert.equal(asked[0]!.tool?.name, 'record_task_context');
    assert.deepEqual(Object.keys((asked[0]!.tool!.inputSchema as { properties: object }).properties), ['findings', 'decisions', 'ruledOut', 'current']);
    assert.match(asked[0]!.prompt, /append-only/);
    assert.match(asked[0]!.prompt, /\(as of rN\)/);
    // The model's lines stand where the deterministic narrative lines of the span stood: not both.
    assert.deepEqual(state.facts.Findings.map((f) => [f.key, f.origin]), [['model-csv-quoting', 'model']]);
    assert.deepEqual(state.facts.Decisions.filter((d) => d.origin !== 'exact').map((d) => d.key), ['model-csv-library']);
    // The exact lines stay: the failed command with its verbatim error, the user's rule, the request.
    assert.ok(state.facts['Ruled out'].some((l) => l.origin === 'exact' && /`npm test` failed \(exit 1\).*expected "a,b" got a,b/.test(l.text)), JSON.stringify(state.facts['Ruled out']));
    assert.ok(state.facts.Constraints.some((c) => c.text === 'Never drop a column.'));
    assert.equal(state.requests[0]!.text, 'Fix the CSV export. Never drop a column.');
  });

  it('keeps the deterministic narrative of a section the model left empty', async () => {
    const s = new ModelSummarizer({ complete: async () => '{"decisions":[{"key":"x","text":"a choice","sources":[1]}]}', base: new ExtractiveSummarizer(lines, redactor), counter: lines, redactor, spanChars: 10_000, timeoutMs: 5_000 });
    const state = await s.fold(input);
    const base = await new ExtractiveSummarizer(lines, redactor).fold(input);
    assert.deepEqual(state.facts.Findings, base.facts.Findings, 'no finding from the model: the extracted ones stay');
  });

  it('validates the shape of the model answer', () => {
    assert.throws(() => parseModelFold('{"findings":[{"key":"Bad Key","text":"x","sources":[1]}]}'), /findings\.0\.key/);
    const merged = mergeModelFold(emptySummary(), parseModelFold('{"decisions":[{"key":"use-zod","text":"use zod","sources":[3,4]}]}'), 0, 4, redactor);
    assert.deepEqual(merged.facts.Decisions.map((d) => [d.key, d.sources]), [['model-use-zod', [3]]]);
  });
});

describe('agent settings', () => {
  it('defaults, validation by field, and the window/reserve rule', () => {
    const { settings, problems } = parseSettings((key) => ({ triggerRatio: 2, nearWindowSteps: 'x', windowTokens: 32_000 })[key as 'triggerRatio']);
    // 0 = automatic: the budget's defaults for the window.
    assert.equal(settings.triggerRatio, 0);
    assert.equal(settings.nearWindowSteps, 0);
    assert.equal(problems.length, 2);
    assert.match(problems[0]!, /contextKeeper\.triggerRatio/);
    assert.deepEqual(windowFor(settings, 128_000), { window: 32_000, reserve: 4_000 });
    const swapped = parseSettings((key) => ({ triggerRatio: 0.5, stopRatio: 0.6 })[key as 'triggerRatio']);
    assert.deepEqual([swapped.settings.triggerRatio, swapped.settings.stopRatio], [0, 0]);
    assert.match(swapped.problems[0]!, /must be below/);
    // The automatic budget: the seed's ratios on a large window, the small-window defaults up to 32k.
    const auto = { ...settings, windowTokens: 0 };
    const large = budgetFor(sessionOptionsFor(auto, 200_000));
    assert.deepEqual([large.trigger, large.stop, large.protectRecentSteps], [Math.floor(192_000 * 0.65), 96_000, undefined]);
    const small = budgetFor(sessionOptionsFor(auto, 16_000));
    assert.deepEqual([small.trigger, small.stop, small.protectRecentSteps], [Math.floor(14_000 * 0.9), 7_000, 3]);
    const chosen = budgetFor(sessionOptionsFor({ ...auto, triggerRatio: 0.65, stopRatio: 0.5 }, 16_000));
    assert.deepEqual([chosen.trigger, chosen.stop, chosen.protectRecentSteps], [9_100, 7_000, undefined], 'ratios set by the user are kept');
  });
});

describe('session export and probes against a model', () => {
  it('exports records as interchange JSONL that parses back to the same records', () => {
    const records = [
      { index: 0, role: 'user' as const, content: 'hi' },
      { index: 1, role: 'assistant' as const, content: '', toolName: 'read_file', toolCallId: 'c1', toolInput: { path: 'a' }, messageId: 'm1' },
      { index: 2, role: 'tool' as const, content: '', toolName: 'read_file', toolCallId: 'c1', toolOutput: 'boom', isError: true },
    ];
    const parsed = parseTranscript(formatInterchange(records), redactor);
    assert.deepEqual(parsed.records, records);
  });

  it('Δtask compares answers from the full history and from the projected context', async () => {
    const records = [{ index: 0, role: 'user' as const, content: 'Use port 8443, never 80.' }, { index: 1, role: 'assistant' as const, content: 'ok' }];
    const file = { session: 'x.jsonl', records: 2, artifacts: { modified: [], read: [] }, probes: [{ id: 'p1', kind: 'constraint' as const, record: 0, question: 'Which port?', all: ['8443'] }] };
    const asked: number[] = [];
    const report = await runAnswerProbes(records, file, {
      window: 8_000,
      reserve: 1_000,
      counter,
      signal: new AbortController().signal,
      ask: async (messages) => {
        asked.push(messages.length);
        return asked.length === 1 ? 'port 8443' : 'I do not know';
      },
      redactor,
    });
    assert.equal(report.fullAccuracy, 100);
    assert.equal(report.compactedAccuracy, 0);
    assert.equal(report.deltaTask, -100);
    assert.equal(asked.length, 2);
  });
});
