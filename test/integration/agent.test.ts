/**
 * @keeper inside a real VS Code: requests go through the chat view
 * (`workbench.action.chat.open` submits `@keeper …` exactly as typed), the
 * model is the scripted fake picked by the model selector, and the test reads
 * what the fake was sent and what the task recorded.
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { taskPickItems } from '../../src/commands/context';
import type { ContextKeeperApi } from '../../src/extension';
import type { TurnEndEvent } from '../../src/agent/participant';
import { FAKE_LARGE, FAKE_SMALL, FAKE_VENDOR, fakeModel, type FakeModelApi, type FakeStep } from './fakeModelApi';

const EXTENSION_ID = 'context-keeper.context-keeper';

function root(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'the tests need a workspace folder');
  return folder.uri.fsPath;
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('@keeper in the chat view', function () {
  this.timeout(120_000);
  let api: ContextKeeperApi;
  let fake: FakeModelApi;
  let restore: () => void;
  const confirmed: string[] = [];
  /** Runs while an edit, a write or a command waits for approval (a test may change the workspace there). */
  let whileAsked: ((title: string) => Promise<void>) | undefined;

  before(async () => {
    fake = await fakeModel();
    const extension = vscode.extensions.getExtension<ContextKeeperApi>(EXTENSION_ID);
    assert.ok(extension);
    const exported = await extension.activate();
    assert.ok(exported, 'the extension returned no API (activation failed?)');
    api = exported;
    restore = api.setConfirm(async (request) => {
      confirmed.push(request.title);
      await whileAsked?.(request.title);
      return true;
    });
  });

  after(() => restore?.());

  beforeEach(async () => {
    fake.reset();
    confirmed.length = 0;
    await vscode.commands.executeCommand('workbench.action.chat.newChat');
  });

  /** Sends `@keeper <query>` through the chat view and waits for the turn to end. */
  async function ask(query: string, steps: FakeStep[], model = FAKE_LARGE): Promise<TurnEndEvent> {
    fake.script(steps);
    const ended = new Promise<TurnEndEvent>((resolve) => {
      const sub = api.onDidEndTurn((event) => {
        sub.dispose();
        resolve(event);
      });
    });
    await vscode.commands.executeCommand('workbench.action.chat.open', { query: `@keeper ${query}`, modelSelector: { vendor: FAKE_VENDOR, id: model }, mode: 'ask' });
    return Promise.race([ended, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`@keeper did not finish: ${query}`)), 90_000))]);
  }

  async function records(taskId: string) {
    const task = await api.agent.inspect(taskId);
    assert.ok(task, `task ${taskId} is not in the store`);
    return task.records;
  }

  it('runs a multi-turn task that reads, greps, edits (confirmed) and runs a command', async () => {
    const first = await ask('Make multiply handle strings of digits. Never modify README.md.', [
      { text: 'Reading the code.', toolCalls: [{ callId: 'r1', name: 'read_file', input: { path: 'src/math.js' } }, { callId: 'g1', name: 'grep', input: { pattern: 'multiply' } }] },
      { toolCalls: [{ callId: 'e1', name: 'edit_file', input: { path: 'src/math.js', oldText: 'return a * b;', newText: 'return Number(a) * Number(b);' } }] },
      { toolCalls: [{ callId: 'c1', name: 'run_command', input: { command: 'npm test --silent' } }] },
      { text: 'multiply now converts its inputs; the tests pass.' },
    ]);
    assert.equal(first.outcome, 'answer', first.error);
    assert.match(readFileSync(path.join(root(), 'src', 'math.js'), 'utf8'), /Number\(a\) \* Number\(b\)/);
    assert.equal(confirmed.length, 2, `confirmations: ${confirmed.join(' | ')}`);
    const requests = fake.requests();
    assert.equal(requests.length, 4);
    assert.ok(requests.every((r) => r.model === FAKE_LARGE));
    assert.deepEqual(requests[0]!.tools.sort(), ['edit_file', 'glob', 'grep', 'list_dir', 'read_file', 'run_command', 'todo', 'view_tool_call', 'write_file']);
    const second = requests[1]!.messages.map((m) => m.content).join('\n');
    assert.match(second, /\[result r1 [^\]]*return a \* b;/s, 'the read result went back as a tool-result part');
    let log = await records(first.taskId);
    const commandResult = log.find((r) => r.role === 'tool' && r.toolName === 'run_command');
    assert.match(commandResult?.toolOutput ?? '', /2 passed, 0 failed[\s\S]*exit code: 0/);

    // The second turn in the same chat continues the same task (the id rides in ChatResult.metadata).
    const next = await ask('Which file did you change?', [{ text: 'src/math.js' }]);
    assert.equal(next.taskId, first.taskId);
    const context = fake.requests()[4]!.messages.map((m) => m.content).join('\n');
    assert.match(context, /Never modify README\.md/);
    assert.match(context, /\[call edit_file e1/);
    log = await records(first.taskId);
    assert.equal(log.filter((r) => r.role === 'user').length, 2);
  });

  it('offers the task to every agent: its language model tools are listed and another participant reads the context, the record and a call', async () => {
    const turn = await ask('Find why multiply fails. Never touch package.json.', [
      { toolCalls: [{ callId: 'lm-r1', name: 'read_file', input: { path: 'src/math.js' } }] },
      { text: 'multiply multiplies its inputs as they are.' },
    ]);
    assert.equal(turn.outcome, 'answer', turn.error);
    const names = vscode.lm.tools.map((t) => t.name);
    for (const name of ['contextKeeper_taskContext', 'contextKeeper_recordSearch', 'contextKeeper_viewToolCall']) assert.ok(names.includes(name), `${name} in vscode.lm.tools`);
    const viaFake = async (tool: string, input: object): Promise<string> => {
      const before = fake.toolResults().length;
      await vscode.commands.executeCommand('workbench.action.chat.newChat');
      await vscode.commands.executeCommand('workbench.action.chat.open', { query: `@fake invoke ${tool} ${JSON.stringify(input)}`, modelSelector: { vendor: FAKE_VENDOR, id: FAKE_LARGE }, mode: 'ask' });
      return waitFor(`${tool} to answer @fake`, () => fake.toolResults()[before]?.text);
    };
    const context = await viaFake('contextKeeper_taskContext', { taskId: turn.taskId });
    assert.match(context, new RegExp(`^# Task ${turn.taskId}`));
    assert.match(context, /- \[constraint\] Never touch package\.json\. — user, from r0/);
    assert.match(await viaFake('contextKeeper_taskContext', {}), new RegExp(`^# Task ${turn.taskId}`), 'the task of the last @keeper turn by default');
    assert.match(await viaFake('contextKeeper_recordSearch', { query: 'multiply' }), /\[r\d+\]\n[\s\S]*multiply/);
    assert.match(await viaFake('contextKeeper_viewToolCall', { toolCallId: 'lm-r1' }), /^Tool call lm-r1: read_file\nInput:\n[\s\S]*src\/math\.js[\s\S]*Output:\n[\s\S]*function multiply/);
    assert.match(await viaFake('contextKeeper_viewToolCall', { toolCallId: 'nope' }), /has no tool call with id "nope"/);
  });

  it('a long session crosses the trigger several times: every request fits the window, keeps the first constraint, and view_tool_call recovers a shrunk output', async () => {
    for (let i = 0; i < 16; i++) {
      writeFileSync(path.join(root(), `notes${i}.txt`), Array.from({ length: 60 }, (_, l) => `notes ${i} line ${l}: the quick brown fox jumps over the lazy dog`).join('\n'));
    }
    // Floor summaries go to a separate summarizer model (the large fake), scripted apart from the chat's model.
    const config = vscode.workspace.getConfiguration('contextKeeper');
    await config.update('summarizerModel', FAKE_LARGE, vscode.ConfigurationTarget.Global);
    const steps: FakeStep[] = [];
    for (let i = 0; i < 16; i++) steps.push({ model: FAKE_SMALL, text: `Reading notes${i}.`, toolCalls: [{ callId: `read-${i}`, name: 'read_file', input: { path: `notes${i}.txt` } }] });
    steps.push({ model: FAKE_SMALL, toolCalls: [{ callId: 'back', name: 'view_tool_call', input: { toolCallId: 'read-0' } }] });
    steps.push({ model: FAKE_SMALL, text: 'Read everything.' });
    const finding = { findings: [{ key: 'notes-shape', text: 'every notes file holds 60 numbered lines about a fox', sources: [1, 2, 3, 4, 5] }] };
    // The first summary answers with the required tool call, the later ones in JSON text (a model that ignores tools).
    // Each carries the finding: a summary computed ahead for a span the view then outgrew is not used, so which
    // answer lands in the context depends on the folds, not on the order of the script.
    steps.push({ model: FAKE_LARGE, toolCalls: [{ name: 'record_task_context', input: finding }] });
    for (let i = 1; i < 16; i++) steps.push({ model: FAKE_LARGE, text: JSON.stringify(finding) });
    let end: TurnEndEvent;
    try {
      end = await ask('Read every notes file. Constraint: never write to any notes file.', steps, FAKE_SMALL);
    } finally {
      await config.update('summarizerModel', undefined, vscode.ConfigurationTarget.Global);
    }
    assert.equal(end.outcome, 'answer', end.error);
    const summaries = fake.requests().filter((r) => r.model === FAKE_LARGE);
    assert.ok(summaries.length >= 1, 'the floor summary was asked of the summarizer model');
    assert.ok(summaries.every((r) => r.tools.length === 1 && r.tools[0] === 'record_task_context' && r.toolMode === 'required'), 'the structure is asked for through a required tool call');
    const all = fake.requests();
    const requests = all.filter((r) => r.model === FAKE_SMALL);
    assert.equal(requests.length, 18);
    assert.ok(requests.some((r) => r.messages.some((m) => m.content.includes('every notes file holds 60 numbered lines about a fox'))), "the summarizer model's finding reached the chat model's context");
    for (const [i, r] of requests.entries()) {
      assert.ok(r.tokenCount <= 8_000, `request ${i} sent ${r.tokenCount} tokens to an 8k model`);
      assert.match(r.messages.map((m) => m.content).join('\n'), /never write to any notes file/, `request ${i} lost the first message's constraint`);
    }
    const late = requests[15]!.messages.map((m) => m.content).join('\n');
    assert.ok(!late.includes('notes 0 line 59:'), 'the first read is no longer whole in view by the end');
    assert.ok(late.includes('Task Context') || late.includes('view_tool_call'), 'the context says how to recover what was compacted');
    const last = requests[17]!.messages.map((m) => m.content).join('\n');
    assert.ok(last.includes('notes 0 line 59:'), `view_tool_call brought the first read back; the last request ends with: ${last.slice(-1500)}`);
  });

  it('the background floor: each fold restores a summary asked for before the step that folds, none is asked for at the fold', async () => {
    for (let i = 0; i < 30; i++) {
      writeFileSync(path.join(root(), `part${i}.txt`), Array.from({ length: 14 }, (_, l) => `part ${i} line ${l}: a parser rule for node kind ${i * 100 + l}`).join('\n'));
    }
    const config = vscode.workspace.getConfiguration('contextKeeper');
    await config.update('summarizerModel', FAKE_LARGE, vscode.ConfigurationTarget.Global);
    await config.update('maxStepsPerTurn', 40, vscode.ConfigurationTarget.Global);
    const steps: FakeStep[] = [];
    for (let i = 0; i < 30; i++) steps.push({ model: FAKE_SMALL, text: `Reading part${i}.`, toolCalls: [{ callId: `part-${i}`, name: 'read_file', input: { path: `part${i}.txt` } }] });
    steps.push({ model: FAKE_SMALL, text: 'Read every part.' });
    for (let i = 0; i < 12; i++) steps.push({ model: FAKE_LARGE, text: '{}' });
    let end: TurnEndEvent;
    try {
      end = await ask('Read every part file in order. Never edit a part file.', steps, FAKE_SMALL);
    } finally {
      await config.update('summarizerModel', undefined, vscode.ConfigurationTarget.Global);
      await config.update('maxStepsPerTurn', undefined, vscode.ConfigurationTarget.Global);
    }
    assert.equal(end.outcome, 'answer', end.error);
    const all = fake.requests();
    const order = all.map((r) => (r.model === FAKE_LARGE ? 'S' : 'c')).join('');
    const firstFold = all.findIndex((r) => r.model === FAKE_SMALL && r.messages.some((m) => m.content.includes('### Current state as of r')));
    const firstSummary = all.findIndex((r) => r.model === FAKE_LARGE);
    assert.ok(firstFold > 0 && firstSummary >= 0, `the task folded (${order})`);
    assert.ok(firstSummary < firstFold - 1, `the summary request went out at least one step before the folding step (${order})`);
    const sources = (await api.agent.inspect(end.taskId))!.session.engine.floorSources;
    assert.ok(sources.precomputed + sources.awaited >= 1, `folds restored a background summary: ${JSON.stringify(sources)} (${order})`);
    assert.equal(sources.synchronous, 0, `no fold asked for a summary at its own step: ${JSON.stringify(sources)} (${order})`);
  });

  it('cancellation mid-stream ends the turn and keeps the partial answer in the record', async () => {
    const ended = ask('Explain the project.', [{ text: 'This project has two functions', waitForCancel: true }]);
    // Cancel once the first words have reached @keeper (the fake streams them, then waits to be cancelled).
    await waitFor('the fake model to stream its first words', () => fake.requests().some((r) => r.outcome === 'streaming' && r.answered.includes('This project')));
    await new Promise((r) => setTimeout(r, 500));
    await vscode.commands.executeCommand('workbench.action.chat.cancel');
    const end = await ended;
    assert.equal(end.outcome, 'cancelled');
    const log = await records(end.taskId);
    assert.match(log.at(-1)?.content ?? '', /This project/);
  });

  it("edits go through the editor: an open unsaved buffer is edited in place, the editor's undo takes it back, and the turn's Undo reverts a saved edit", async () => {
    const file = vscode.Uri.file(path.join(root(), 'src', 'undo-me.js'));
    writeFileSync(file.fsPath, 'const value = 1;\n');
    const document = await vscode.workspace.openTextDocument(file);
    const editor = await vscode.window.showTextDocument(document);
    // VS Code saves open files when a chat request is sent: the user's unsaved line is typed during the turn,
    // while an earlier change of the turn waits for approval.
    writeFileSync(path.join(root(), 'src', 'other.js'), 'let other = 0;\n');
    whileAsked = async (title) => {
      if (title === 'Edit src/other.js') await editor.edit((builder) => builder.insert(new vscode.Position(1, 0), '// an unsaved note\n'));
    };
    const first = await ask('Set value to 2.', [
      { toolCalls: [{ callId: 'undo-0', name: 'edit_file', input: { path: 'src/other.js', oldText: 'let other = 0;', newText: 'let other = 1;' } }] },
      { toolCalls: [{ callId: 'undo-1', name: 'edit_file', input: { path: 'src/undo-me.js', oldText: 'const value = 1;', newText: 'const value = 2;' } }] },
      { text: 'Done.' },
    ]).finally(() => (whileAsked = undefined));
    assert.equal(first.outcome, 'answer', first.error);
    assert.ok(document.isDirty);
    assert.equal(document.getText(), 'const value = 2;\n// an unsaved note\n', "the open buffer, with the user's unsaved line, is what was edited");
    assert.equal(readFileSync(file.fsPath, 'utf8'), 'const value = 1;\n', "nothing is saved over the user's unsaved changes");
    const result = (await records(first.taskId)).find((r) => r.role === 'tool' && r.toolCallId === 'undo-1');
    assert.match(result?.toolOutput ?? '', /unsaved changes of yours: not saved/);
    await vscode.window.showTextDocument(document);
    await vscode.commands.executeCommand('undo');
    assert.equal(document.getText(), 'const value = 1;\n// an unsaved note\n', "the editor's undo takes @keeper's edit back");
    await vscode.commands.executeCommand('workbench.action.files.revert');
    assert.equal(document.isDirty, false);

    // The user took the edit back since @keeper made it: an edit from the model's stale picture is refused
    // until it reads the file again.
    const second = await ask('Set value to 3.', [
      { toolCalls: [{ callId: 'undo-2', name: 'edit_file', input: { path: 'src/undo-me.js', oldText: 'const value = 1;', newText: 'const value = 3;' } }] },
      { toolCalls: [{ callId: 'undo-2-read', name: 'read_file', input: { path: 'src/undo-me.js' } }] },
      { toolCalls: [{ callId: 'undo-2-again', name: 'edit_file', input: { path: 'src/undo-me.js', oldText: 'const value = 1;', newText: 'const value = 3;' } }] },
      { text: 'Done.' },
    ]);
    assert.equal(second.outcome, 'answer', second.error);
    const refused = (await records(second.taskId)).find((r) => r.role === 'tool' && r.toolCallId === 'undo-2');
    assert.match(refused?.toolOutput ?? '', /src\/undo-me\.js changed since you last read it/);
    assert.equal(readFileSync(file.fsPath, 'utf8'), 'const value = 3;\n', 'a clean buffer is saved after the edit');
    await vscode.commands.executeCommand('contextKeeper.undoTurnEdits');
    assert.equal(readFileSync(file.fsPath, 'utf8'), 'const value = 1;\n', "the turn's Undo reverts its edits, saved");
    assert.equal(readFileSync(path.join(root(), 'src', 'other.js'), 'utf8'), 'let other = 1;\n', 'an earlier turn keeps its edit');
    // The task's record says so: the next model call sees that the file is back as it was.
    const undone = (await records(second.taskId)).filter((r) => r.toolName === 'undo_edits');
    assert.equal(undone.length, 2, JSON.stringify(undone));
    assert.match(undone[1]!.toolOutput ?? '', /^Undone by the user: @keeper's edits of turn \d+ to src\/undo-me\.js were reverted/);
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  it("a file @keeper created is on the editor's undo stack, and its turn's Undo removes it", async () => {
    const created = path.join(root(), 'src', 'made-by-keeper.js');
    const turn = await ask('Add a helper file.', [
      { toolCalls: [{ callId: 'mk-1', name: 'write_file', input: { path: 'src/made-by-keeper.js', content: 'export const made = true;\n' } }] },
      { text: 'Created it.' },
    ]);
    assert.equal(turn.outcome, 'answer', turn.error);
    assert.equal(readFileSync(created, 'utf8'), 'export const made = true;\n');
    await vscode.commands.executeCommand('contextKeeper.undoTurnEdits');
    assert.equal(existsSync(created), false, "the turn's Undo removes the file it created");
    const undone = (await records(turn.taskId)).filter((r) => r.toolName === 'undo_edits' && r.role === 'tool');
    assert.match(undone.at(-1)?.toolOutput ?? '', /src\/made-by-keeper\.js were reverted/);
  });

  it("offers another extension's tool that contextKeeper.otherTools names, runs it in the chat and records its call", async () => {
    const config = vscode.workspace.getConfiguration('contextKeeper');
    await config.update('otherTools', ['ckFake_*'], vscode.ConfigurationTarget.Workspace);
    try {
      const end = await ask('What does zyzzyva mean?', [
        { toolCalls: [{ callId: 'other-1', name: 'ckFake_lookup', input: { word: 'zyzzyva' } }] },
        { text: 'A word of the tests.' },
      ]);
      assert.equal(end.outcome, 'answer', end.error);
      assert.ok(fake.requests()[0]!.tools.includes('ckFake_lookup'), 'offered to the model');
      const result = (await records(end.taskId)).find((r) => r.role === 'tool' && r.toolCallId === 'other-1');
      assert.equal(result?.toolName, 'ckFake_lookup');
      assert.equal(result?.toolOutput, 'fake dictionary: zyzzyva means a word of the tests');
    } finally {
      await config.update('otherTools', undefined, vscode.ConfigurationTarget.Workspace);
    }
    const later = await ask('Anything else?', [{ text: 'No.' }]);
    assert.equal(later.outcome, 'answer');
    assert.ok(!fake.requests().at(-1)!.tools.includes('ckFake_lookup'), 'not offered once the setting is cleared');
  });

  it('grep and glob run VS Code\'s ripgrep: a .gitignore\'d file and files.exclude are skipped, everything else found', async () => {
    mkdirSync(path.join(root(), 'build-output'), { recursive: true });
    writeFileSync(path.join(root(), '.gitignore'), 'build-output/\n');
    writeFileSync(path.join(root(), 'build-output', 'bundle.js'), 'const quuxword = 1;\n');
    writeFileSync(path.join(root(), 'src', 'found.js'), 'const quuxword = 2;\n');
    mkdirSync(path.join(root(), 'generated'), { recursive: true });
    writeFileSync(path.join(root(), 'generated', 'api.js'), 'const quuxword = 3;\n');
    const files = vscode.workspace.getConfiguration('files');
    await files.update('exclude', { '**/generated': true }, vscode.ConfigurationTarget.Workspace);
    const end = await ask('Where is quuxword?', [
      { toolCalls: [{ callId: 'rg-1', name: 'grep', input: { pattern: 'quuxword' } }] },
      { toolCalls: [{ callId: 'rg-2', name: 'glob', input: { pattern: '**/*.js' } }] },
      { text: 'In src/found.js.' },
    ]).finally(() =>
      files.update('exclude', undefined, vscode.ConfigurationTarget.Workspace),
    );
    assert.equal(end.outcome, 'answer', end.error);
    const output = (await records(end.taskId)).find((r) => r.role === 'tool' && r.toolCallId === 'rg-1')?.toolOutput ?? '';
    assert.match(output, /^src\/found\.js:1: const quuxword = 2;\n\[1 match in 1 file; \d+ files? searched; ignored files skipped\]$/);
    assert.ok(!output.includes('build-output') && !output.includes('generated/'), 'the ignored and the excluded folders are not searched');
    const listed = ((await records(end.taskId)).find((r) => r.role === 'tool' && r.toolCallId === 'rg-2')?.toolOutput ?? '').split('\n');
    assert.ok(listed.includes('src/found.js') && listed.includes('src/math.js'), listed.join(' '));
    assert.ok(!listed.some((p) => p.startsWith('build-output/') || p.startsWith('generated/')), `glob skips them too: ${listed.join(' ')}`);
  });

  it('a command on contextKeeper.allowedCommands runs without asking; a chained one still asks', async () => {
    const config = vscode.workspace.getConfiguration('contextKeeper');
    await config.update('allowedCommands', ['node -e'], vscode.ConfigurationTarget.Workspace);
    try {
      const end = await ask('Print two numbers.', [
        { toolCalls: [{ callId: 'al-1', name: 'run_command', input: { command: 'node -e "console.log(1)"' } }] },
        { toolCalls: [{ callId: 'al-2', name: 'run_command', input: { command: 'node -e "console.log(2)" && echo chained' } }] },
        { text: 'Printed.' },
      ]);
      assert.equal(end.outcome, 'answer', end.error);
      assert.deepEqual(confirmed, ['Run `node -e "console.log(2)" && echo chained`'], 'only the chained command was asked');
      const outputs = (await records(end.taskId)).filter((r) => r.role === 'tool').map((r) => r.toolOutput ?? '');
      assert.match(outputs[0]!, /^1\n[\s\S]*exit code: 0/);
    } finally {
      await config.update('allowedCommands', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });

  it('run_command runs in a terminal with shell integration: the user sees it, its output and exit code come back', async () => {
    const config = vscode.workspace.getConfiguration('contextKeeper');
    await config.update('runCommandsInTerminal', true, vscode.ConfigurationTarget.Workspace);
    // The terminal's own shell integration reports the execution: the output came from there, not from the fallback.
    const executions: { terminal: string; command: string; exitCode: number | undefined }[] = [];
    const watch = vscode.window.onDidEndTerminalShellExecution((e) => executions.push({ terminal: e.terminal.name, command: e.execution.commandLine.value, exitCode: e.exitCode }));
    const end = await ask('Compute it in the shell.', [
      { toolCalls: [{ callId: 'term-1', name: 'run_command', input: { command: 'echo "from the terminal: $((6*7))"; sh -c "exit 3"' } }] },
      { text: 'Done.' },
    ]).finally(() => {
      watch.dispose();
      return config.update('runCommandsInTerminal', undefined, vscode.ConfigurationTarget.Workspace);
    });
    assert.equal(end.outcome, 'answer', end.error);
    // The execution is told by its terminal: the command line a shell integration reads back can be a part of the one
    // sent (a terminal still 80 columns wide when the command was echoed: only its last row; see terminal.ts).
    const ran = executions.filter((e) => e.terminal === '@keeper').pop();
    assert.ok(ran, `the terminal's shell integration ran the command (executions: ${JSON.stringify(executions)})`);
    assert.equal(ran.exitCode, 3);
    const output = (await records(end.taskId)).find((r) => r.role === 'tool' && r.toolCallId === 'term-1')?.toolOutput ?? '';
    assert.match(output, /from the terminal: 42/);
    assert.match(output, /exit code: 3$/);
    assert.ok(!/\x1b/.test(output), 'no escape sequences reach the record');
    assert.ok(vscode.window.terminals.some((t) => t.name === '@keeper'), 'the command ran in the @keeper terminal');
  });

  it('a file attached to the request (#file) reaches the record as a read the user made', async () => {
    fake.script([{ text: 'It multiplies.' }]);
    const ended = new Promise<TurnEndEvent>((resolve) => {
      const sub = api.onDidEndTurn((event) => {
        sub.dispose();
        resolve(event);
      });
    });
    const file = vscode.Uri.file(path.join(root(), 'src', 'math.js'));
    await vscode.commands.executeCommand('workbench.action.chat.open', { query: '@keeper What does the attached file do?', attachFiles: [file], modelSelector: { vendor: FAKE_VENDOR, id: FAKE_LARGE }, mode: 'ask' });
    const end = await Promise.race([ended, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('@keeper did not finish')), 90_000))]);
    assert.equal(end.outcome, 'answer', end.error);
    const log = await records(end.taskId);
    const attached = log.find((r) => r.role === 'assistant' && r.toolName === 'read_file' && (r.toolInput as { attachedBy?: string }).attachedBy === 'user');
    assert.ok(attached, `an attached read in ${JSON.stringify(log.map((r) => [r.role, r.toolName]))}`);
    assert.equal((attached.toolInput as { path: string }).path, 'src/math.js');
    const result = log.find((r) => r.role === 'tool' && r.toolCallId === attached.toolCallId);
    assert.match(result?.toolOutput ?? '', /function multiply/);
    assert.match(fake.requests()[0]!.messages.map((m) => m.content).join('\n'), /function multiply/, 'the model saw it');
  });

  it('a rate limit (429) from the model is retried after a short wait, and the turn answers', async () => {
    const end = await ask('Say hi.', [{ error: '429 Too Many Requests: rate limit reached' }, { text: 'Hi.' }]);
    assert.equal(end.outcome, 'answer', end.error);
    assert.equal(fake.requests().length, 2, 'the same request went again');
    assert.deepEqual((await records(end.taskId)).map((r) => [r.role, r.content]), [['user', 'Say hi.'], ['assistant', 'Hi.']]);
  });

  it('a model error is reported and the partial turn is kept', async () => {
    const end = await ask('List the files.', [{ error: 'quota exceeded', errorCode: 'Blocked' }]);
    assert.equal(end.outcome, 'error');
    assert.match(end.error ?? '', /blocked|quota exceeded/i);
    const log = await records(end.taskId);
    assert.deepEqual(log.map((r) => r.role), ['user']);
  });

  it('a tool input that fails validation goes back to the model as an error, and the turn goes on', async () => {
    const end = await ask('Read the readme.', [{ toolCalls: [{ callId: 'bad', name: 'read_file', input: { file: 'README.md' } }] }, { text: 'I used the wrong field.' }]);
    assert.equal(end.outcome, 'answer', end.error);
    const log = await records(end.taskId);
    const result = log.find((r) => r.role === 'tool');
    assert.equal(result?.isError, true);
    assert.match(result?.toolOutput ?? '', /path/);
    assert.match(fake.requests()[1]!.messages.map((m) => m.content).join('\n'), /\[result bad [^\]]*path/s);
  });

  it('the commands: view a tool call, show what the model saw, rebuild, export, import and delete a task', async () => {
    const end = await ask('Show me the readme.', [{ toolCalls: [{ callId: 'cmd-read', name: 'read_file', input: { path: 'README.md' } }] }, { text: 'Here it is.' }]);
    assert.equal(end.outcome, 'answer', end.error);
    const id = end.taskId;
    const editorText = (): string => vscode.window.activeTextEditor?.document.getText() ?? '';

    assert.equal(await vscode.commands.executeCommand('contextKeeper.viewToolCall', id, 'cmd-read'), 'cmd-read');
    await waitFor('the tool call document', () => editorText().includes('--- output ---') || undefined);
    assert.match(editorText(), /Tool call cmd-read: read_file[\s\S]*--- output ---[\s\S]*ck-fixture/i);

    await vscode.commands.executeCommand('contextKeeper.showContext', id);
    await waitFor('the context document', () => editorText().startsWith('# What the model saw') || undefined);
    assert.match(editorText(), /Show me the readme\./);

    await vscode.commands.executeCommand('contextKeeper.rebuild', id);
    await waitFor('the rebuild document', () => editorText().includes('derived again') || undefined);

    const exported = vscode.Uri.file(path.join(root(), 'exported.jsonl'));
    await vscode.commands.executeCommand('contextKeeper.exportSession', id, exported);
    const lines = readFileSync(exported.fsPath, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { role: string; tool_call_id: string | null });
    assert.deepEqual(lines.map((l) => l.role), ['user', 'assistant', 'tool', 'assistant']);
    assert.equal(lines[1]!.tool_call_id, 'cmd-read');

    const imported = await vscode.commands.executeCommand<string>('contextKeeper.importSession', exported);
    assert.match(imported ?? '', /^import-exported-/);
    assert.equal((await records(imported!)).length, 4);

    assert.equal(await vscode.commands.executeCommand('contextKeeper.deleteSession', id, true), true);
    assert.equal(await api.agent.inspect(id), undefined, 'the deleted task is gone from the store');
    const store = await api.sessions.store();
    assert.ok(!store.sessions().some((s) => s.id === id));
  });

  it('an imported session over the configured window is shown as its next call would send it: folded, under the window', async () => {
    const config = vscode.workspace.getConfiguration('contextKeeper');
    await config.update('windowTokens', 8000, vscode.ConfigurationTarget.Workspace);
    try {
      const lines = [JSON.stringify({ role: 'user', content: 'Port the parser to TypeScript. Never change the grammar file.', tool_name: null, tool_call_id: null, tool_input: null, tool_output: null, meta: null })];
      for (let i = 0; i < 24; i++) {
        const body = Array.from({ length: 40 }, (_, l) => `parser ${i} line ${l}: the quick brown fox jumps over the lazy dog`).join('\n');
        lines.push(JSON.stringify({ role: 'assistant', content: '', tool_name: 'read_file', tool_call_id: `imp-${i}`, tool_input: { path: `src/p${i}.js` }, tool_output: null, meta: { message_id: `m${i}` } }));
        lines.push(JSON.stringify({ role: 'tool', content: '', tool_name: 'read_file', tool_call_id: `imp-${i}`, tool_input: null, tool_output: body, meta: null }));
      }
      const file = vscode.Uri.file(path.join(root(), 'big-import.jsonl'));
      writeFileSync(file.fsPath, lines.join('\n') + '\n');
      const id = await vscode.commands.executeCommand<string>('contextKeeper.importSession', file);
      assert.ok(id);
      const task = await api.agent.inspect(id);
      assert.ok(task);
      assert.equal(task.session.budget.window, 8000, 'the configured window');
      assert.ok(task.session.engine.coverageEnd > 0, 'the Task Context stands for the older records');
      assert.ok(task.session.engine.predicted() <= 8000, `the view fits the window (${task.session.engine.predicted()})`);
      assert.match(task.session.engine.project()[0]!.content, /Never change the grammar file\./);
      // The panel's task picker lists it as imported, and shows it when picked (the quick pick itself: panel.ui.mjs).
      const items = taskPickItems((await api.sessions.store()).sessions(), api.agent.activeTaskId);
      assert.match(items.find((i) => i.id === id)?.description ?? '', /^imported · 49 records/);
      assert.equal(await vscode.commands.executeCommand('contextKeeper.switchTask', id), id);
    } finally {
      await config.update('windowTokens', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });

  it('Run Probes asks the probes of the picked model with the full history and with the projected context, and reports Δtask', async () => {
    const transcript = vscode.Uri.file(path.join(root(), 'probe-session.jsonl'));
    const lines = [
      { role: 'user', content: 'Set up the service. Use port 8443 for the API, never port 80.' },
      { role: 'assistant', content: 'Noted: port 8443.' },
    ];
    writeFileSync(transcript.fsPath, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    writeFileSync(
      path.join(root(), 'probe-session.probes.json'),
      JSON.stringify({ session: 'probe-session.jsonl', records: 2, artifacts: { modified: [], read: [] }, probes: [{ id: 'p1', kind: 'constraint', record: 0, question: 'Which port does the API use?', all: ['8443'] }] }),
    );
    // One answer per context: the full history first, then the projected one.
    fake.script([{ model: FAKE_LARGE, text: 'Port 8443.' }, { model: FAKE_LARGE, text: 'I am not sure.' }]);
    const report = await vscode.commands.executeCommand<{ fullAccuracy: number; compactedAccuracy: number; deltaTask: number }>('contextKeeper.runProbes', transcript, undefined, FAKE_LARGE);
    assert.ok(report);
    assert.equal(report.fullAccuracy, 100);
    assert.equal(report.compactedAccuracy, 0);
    assert.equal(report.deltaTask, -100);
    const asked = fake.requests();
    assert.equal(asked.length, 2);
    assert.ok(asked.every((r) => r.messages.at(-1)!.content.endsWith('Which port does the API use?')));
    await waitFor('the Δtask report', () => (vscode.window.activeTextEditor?.document.getText() ?? '').includes('Δtask') || undefined);
  });

  it('records and tool calls open with secrets hidden; the explicit reveal shows the original', async () => {
    const token = `ghp_${'a1B2c3D4e5'.repeat(3)}abcdef`;
    writeFileSync(path.join(root(), '.env'), `GITHUB_TOKEN=${token}\n`);
    const end = await ask('Check the env file.', [{ toolCalls: [{ callId: 'env-read', name: 'read_file', input: { path: '.env' } }] }, { text: 'It holds a token.' }]);
    assert.equal(end.outcome, 'answer', end.error);
    const sent = fake.requests()[1]!.messages.map((m) => m.content).join('\n');
    assert.ok(!sent.includes(token), 'the model never sees the token');
    const editorText = (): string => vscode.window.activeTextEditor?.document.getText() ?? '';
    await vscode.commands.executeCommand('contextKeeper.viewToolCall', end.taskId, 'env-read');
    await waitFor('the tool call document', () => editorText().includes('--- output ---') || undefined);
    assert.ok(!editorText().includes(token));
    assert.match(editorText(), /hidden\. To see the original/);
    await vscode.commands.executeCommand('contextKeeper.revealSecrets', vscode.window.activeTextEditor!.document.uri, true);
    await waitFor('the revealed document', () => editorText().includes(token) || undefined);
    assert.match(editorText(), /^⚠ Revealed/);
  });
});

