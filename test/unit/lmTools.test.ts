/**
 * Context Keeper's language model tools as package.json contributes them: every
 * workspace tool @keeper runs through VS Code is contributed under its name,
 * with the description and input schema its model is given (one source: the
 * code), and activates the extension; the three tools for other agents are
 * there too, referable in a prompt.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { AGENT_TOOLS, WORKSPACE_TOOLS } from '../../src/agent/tools';
import { plainTerminalText } from '../../src/agent/tools/commandRunner';
import { allowListed, confirmationMarkdown, declinedMessage } from '../../src/agent/tools/confirmation';

interface Contributed {
  name: string;
  modelDescription: string;
  inputSchema: unknown;
  canBeReferencedInPrompt?: boolean;
  toolReferenceName?: string;
}

const root = path.resolve(__dirname, '../../..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { activationEvents: string[]; contributes: { languageModelTools: Contributed[] } };
const contributed = new Map(pkg.contributes.languageModelTools.map((t) => [t.name, t]));

describe('language model tools: package.json and the code agree', () => {
  it('contributes every workspace tool with the description and schema @keeper gives its model', () => {
    const workspace = AGENT_TOOLS.filter((t) => WORKSPACE_TOOLS[t.name] !== undefined);
    assert.deepEqual(workspace.map((t) => t.name).sort(), ['edit_file', 'glob', 'grep', 'list_dir', 'read_file', 'run_command', 'write_file']);
    for (const tool of workspace) {
      const entry = contributed.get(WORKSPACE_TOOLS[tool.name]!);
      assert.ok(entry, `${WORKSPACE_TOOLS[tool.name]} is contributed`);
      assert.equal(entry.modelDescription, tool.description, tool.name);
      assert.deepEqual(entry.inputSchema, tool.inputSchema, tool.name);
      assert.ok(pkg.activationEvents.includes(`onLanguageModelTool:${entry.name}`));
    }
  });

  it('contributes the task tools for other agents, referable as #taskContext, #recordSearch, #viewToolCall', () => {
    for (const [name, reference] of [['contextKeeper_taskContext', 'taskContext'], ['contextKeeper_recordSearch', 'recordSearch'], ['contextKeeper_viewToolCall', 'viewToolCall']] as const) {
      const entry = contributed.get(name);
      assert.ok(entry, name);
      assert.equal(entry.toolReferenceName, reference);
      assert.equal(entry.canBeReferencedInPrompt, true);
      assert.ok(pkg.activationEvents.includes(`onLanguageModelTool:${name}`));
    }
  });

  it('asks the user with the change itself: a diff, the start of a new file, the command and its folder', () => {
    const edit = confirmationMarkdown({ kind: 'edit', title: 'Edit src/a.js', path: 'src/a.js', before: 'a\nb\nc\n', after: 'a\nB\nc\n' });
    assert.equal(edit, '`src/a.js`: -1 line +1 line\n```diff\n@@ -2,1 +2,1 @@\n-b\n+B\n```');
    assert.match(confirmationMarkdown({ kind: 'write', title: 'Create n.txt', path: 'n.txt', after: 'hello\nworld' }), /^New file `n\.txt` \(2 lines\):\n```\nhello\nworld\n```$/);
    assert.equal(confirmationMarkdown({ kind: 'run', title: 'Run `npm test`', command: 'npm test', cwd: 'pkg' }), '```sh\nnpm test\n```\nin `pkg` of the workspace folder');
    // A fence inside the content cannot close the block early.
    const fenced = confirmationMarkdown({ kind: 'write', title: 'Create r.md', path: 'r.md', after: '```\nrm -rf /\n```' }).split('\n');
    assert.equal(fenced.filter((line) => line.startsWith('```')).length, 2, fenced.join('\n'));
    assert.equal(declinedMessage({ kind: 'run', command: 'npm test' }), 'The user declined to run `npm test`.');
    assert.equal(declinedMessage({ kind: 'edit', path: 'src/a.js' }), 'The user declined the edit to src/a.js.');
  });

  it('the command allow-list: a listed prefix as whole words, one simple command, nothing chained', () => {
    const allowed = ['npm test', 'git status'];
    for (const ok of ['npm test', 'npm test -- --grep parser', '  git status  ', 'git status --short']) assert.equal(allowListed(ok, allowed), true, ok);
    for (const no of ['npm testing', 'npm test; rm -rf /', 'npm test && curl x', 'npm test | tee log', 'npm test > out', 'npm test $(whoami)', 'npm test `id`', 'npm test\nrm x', 'git', 'rm -rf /', '']) {
      assert.equal(allowListed(no, allowed), false, no);
    }
    assert.equal(allowListed('npm test', []), false, 'nothing runs unasked by default');
  });

  it("a terminal's output as plain text: colours, shell-integration marks and CRLF removed", () => {
    const raw = '\x1b]633;C\x07\x1b[32m2 passed\x1b[0m, 0 failed\r\n\x1b]633;D;0\x07\x1b[?2004h';
    assert.equal(plainTerminalText(raw), '2 passed, 0 failed\n');
    assert.equal(plainTerminalText('plain\ttext\n'), 'plain\ttext\n');
  });
});
