import { strict as assert } from 'node:assert';
import type { ToolInvocation } from '../../src/core/types';
import {
  PRECOMPACT_MIN_CHARS,
  classifyTool,
  exitCode,
  fileTouches,
  isBinary,
  onlyLooks,
  reduceTool,
  renderToolInput,
  shellCommand,
  shellMoves,
  shellRemovals,
  shellRestores,
  type ToolFamily,
} from '../../src/core/tools';
import { agentOutputText } from '../../src/core/toolInput';
import { SessionRecord } from '../../src/core/parts';

function inv(name: string, input: unknown, output: string | undefined, callId = 'toolu_1', isError = false): ToolInvocation {
  return { callId, name, input, output, isError, callRecord: 0, resultRecord: output === undefined ? undefined : 1 };
}

/** n lines "prefix(i)" joined by '\n', 1-based i. */
function lines(n: number, f: (i: number) => string): string {
  const out: string[] = [];
  for (let i = 1; i <= n; i++) out.push(f(i));
  return out.join('\n');
}

const catN = (i: number): string => `${String(i).padStart(6, ' ')}→const value${i} = compute(${i});`;

describe('tools: classifyTool', () => {
  const table: Array<[string, unknown, ToolFamily]> = [
    // Cursor / SpecStory
    ['run_terminal_cmd', { command: 'ls' }, 'shell'],
    ['run_terminal_command_v2', 'Run command: npm test', 'shell'],
    ['edit_file', { path: 'a.py' }, 'edit'],
    ['edit_file_v2', 'Edit file: c:\\x\\a.ts', 'edit'],
    ['read_file', { path: 'scripts/manage_docker.sh' }, 'read'],
    ['read_file_v2', 'Read file: c:\\x\\a.ts', 'read'],
    ['codebase_search', { query: 'DocumentProcessor' }, 'search'],
    ['grep_search', { query: 'session' }, 'search'],
    ['glob_file_search', 'Searched codebase "" • **6463** results', 'search'],
    ['ripgrep_raw_search', '', 'search'],
    ['list_dir', { path: '• **26** results' }, 'list'],
    ['todo_write', '', 'todo'],
    ['web_search', { query: 'bun test mock' }, 'web'],
    ['mcp:write_file', '* path: /x/a.toml\n  * content: [x]', 'write'],
    ['mcp:read_file', '* path: /x/a.toml', 'read'],
    ['mcp:edit_file', '* path: /x/a.toml\n  * edits: [object Object]', 'edit'],
    ['mcp:fetch', '* url: https://qdrant.tech/documentation/', 'web'],
    ['mcp:create_directory', '* path: /x/src', 'other'],
    ['mcp:list_directory', '* path: .', 'list'],
    ['mcp:list_allowed_directories', '* random_string: check', 'list'],
    ['mcp:TodoWrite', '* todos: [object Object]', 'todo'],
    // Claude Code
    ['Bash', { command: 'ls', description: 'list' }, 'shell'],
    // Codex CLI
    ['shell_command', { command: 'ls', workdir: '/repo' }, 'shell'],
    ['exec_command', { cmd: 'ls' }, 'shell'],
    ['Read', { file_path: '/a.ts' }, 'read'],
    ['Write', { file_path: '/a.ts', content: 'x' }, 'write'],
    ['Edit', { file_path: '/a.ts', old_string: 'a', new_string: 'b' }, 'edit'],
    ['Grep', { pattern: 'x', path: '/' }, 'search'],
    ['Glob', { pattern: '**/*.ts' }, 'search'],
    ['TodoWrite', { todos: [] }, 'todo'],
    ['TaskOutput', { task_id: 'a', block: false }, 'task'],
    ['Task', { description: 'd', prompt: 'p', subagent_type: 'x' }, 'task'],
    ['WebSearch', { query: 'q' }, 'web'],
    ['WebFetch', { url: 'https://x', prompt: 'p' }, 'web'],
    ['AskUserQuestion', { questions: [] }, 'other'],
    ['Skill', { skill: 'x' }, 'other'],
    ['mcp__task-master__get_tasks', '', 'todo'],
    // Copilot
    ['copilot_readFile', 'Reading [](file:///Users/j/README.md)', 'read'],
    ['copilot_listDirectory', '', 'list'],
    ['copilot_replaceString', '', 'edit'],
    ['run_in_terminal', '', 'shell'],
    ['get_terminal_output', '', 'shell'],
    // OpenHands
    ['execute_bash', { command: 'mkdir -p /w' }, 'shell'],
    ['str_replace_editor', { command: 'view', path: '/w/a' }, 'read'],
    ['str_replace_editor', { command: 'str_replace', path: '/w/a' }, 'edit'],
    ['str_replace_editor', { path: '/w/a', translated_ipython_code: "print(file_editor(**{'command': 'create', 'path': '/w/a'}))" }, 'write'],
    // SWE-agent (function calling) and mini-swe-agent
    ['open', { path: 'setup.py' }, 'read'],
    ['create', { filename: 'reproduce.py' }, 'write'],
    ['insert', { text: 'x' }, 'edit'],
    ['edit', { search: 'a', replace: 'b' }, 'edit'],
    ['find_file', { file_name: 'fields.py', dir: 'src' }, 'search'],
    ['submit', {}, 'other'],
    ['bash', { command: 'ls -F' }, 'shell'],
    // SWE-agent commands logged as the raw input of `bash`
    ['bash', 'open pydicom/pixel_data_handlers/numpy_handler.py 293', 'read'],
    ['bash', 'create printenv.pl', 'write'],
    ['bash', 'edit 1:1\n#!/usr/bin/perl\nend_of_edit', 'edit'],
    ['bash', 'find_file "numpy_handler.py"', 'search'],
    ['bash', 'search_dir foo', 'search'],
    ['bash', 'submit', 'other'],
    ['bash', 'python reproduce.py', 'shell'],
    ['bash', 'cat tests/missing_colon.py', 'shell'],
    // aider's console records
    ['aider', undefined, 'other'],
    // our own agent tools
    ['read_file', { path: 'src/a.ts' }, 'read'],
    ['search', { query: 'foo' }, 'search'],
    ['list_files', { path: 'src' }, 'list'],
    ['edit_file', { path: 'src/a.ts', old: 'a', new: 'b' }, 'edit'],
    ['write_file', { path: 'src/a.ts', content: 'x' }, 'write'],
    ['run_command', { command: 'npm test' }, 'shell'],
    ['view_tool_call', { callId: 'toolu_1' }, 'other'],
  ];
  for (const [name, input, family] of table) {
    it(`${name} ${typeof input === 'string' ? JSON.stringify(input.slice(0, 30)) : ''} → ${family}`, () => {
      const k = classifyTool(name, input);
      assert.equal(k.family, family);
      assert.equal(k.disposable, false);
    });
  }

  it('Claude Code Bash is never reinterpreted as an SWE-agent command', () => {
    assert.equal(classifyTool('Bash', { command: 'open .' }).family, 'shell');
  });

  it('declares reflect and sequential thinking disposable', () => {
    assert.deepEqual(classifyTool('reflect', { note: 'x' }), { family: 'other', disposable: true });
    assert.deepEqual(classifyTool('mcp:sequentialthinking', '* thought: x'), { family: 'other', disposable: true });
    assert.equal(classifyTool('mcp__sequential-thinking__sequentialthinking', {}).disposable, true);
  });

  it('never throws on odd names', () => {
    assert.equal(classifyTool(undefined as unknown as string, null).family, 'other');
    assert.equal(classifyTool('', 42).family, 'other');
    assert.equal(classifyTool('totally_unknown_tool', { a: 1 }).family, 'other');
  });
});

describe('tools: fileTouches', () => {
  it('reads a call once: the same invocation gives the same frozen list, one input under two names two kinds', () => {
    const call = inv('Read', { file_path: '/u/a.ts' }, 'x');
    const first = fileTouches(call);
    assert.equal(fileTouches(call), first);
    assert.ok(Object.isFrozen(first));
    assert.throws(() => (first as unknown as { push(t: unknown): void }).push({ path: 'b', access: 'read' }), TypeError);
    // Its result is a new invocation, read again: the output can name the file when the input does not.
    assert.deepEqual(fileTouches(inv('Read', '', '`./b.md`\n```\n     1→# B\n```')), [{ path: './b.md', access: 'read' }]);
    const input = { file_path: '/u/a.ts', content: 'x' };
    assert.equal(classifyTool('Read', input).family, 'read');
    assert.equal(classifyTool('Write', input).family, 'write');
    assert.equal(classifyTool('Read', input).family, 'read');
  });

  it("aider's console: the files it added to the chat are read, at a yes, under an all, by /add; a no, a skip or don't-ask adds none", () => {
    const ask = (answer: string) => `Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: ${answer}`;
    const log = ['Tokens: 4.1k sent, 1.3k received.', 'src/main.ts', ask('y'), 'src/skip.ts', ask('n'), 'src/a.ts', ask('a'), 'src/b.ts', 'src/c.ts', 'Repo-map can not include x', 'src/later.ts'].join('\n');
    assert.deepEqual(fileTouches(inv('aider', null, log)), ['src/main.ts', 'src/a.ts', 'src/b.ts', 'src/c.ts'].map((path) => ({ path, access: 'read' })));
    assert.deepEqual(fileTouches(inv('aider', null, ['src/x.ts', ask('s'), 'src/y.ts', ask('d')].join('\n'))), []);
    const added = 'Added .afi-codex to the chat\nAdded cli/run.ts to the chat\n/repo/cli/run.ts is already in the chat as an editable file';
    assert.deepEqual(fileTouches(inv('aider', null, added)), ['.afi-codex', 'cli/run.ts'].map((path) => ({ path, access: 'read' })));
  });

  it('Claude Code Read / Edit / Write', () => {
    assert.deepEqual(fileTouches(inv('Read', { file_path: '/u/a.ts', offset: 10, limit: 5 }, 'x')), [{ path: '/u/a.ts', access: 'read' }]);
    assert.deepEqual(fileTouches(inv('Edit', { file_path: '/u/a.ts', old_string: 'a', new_string: 'b' }, 'ok')), [
      { path: '/u/a.ts', access: 'modify' },
    ]);
    assert.deepEqual(fileTouches(inv('Write', { file_path: '/u/new.ts', content: 'x' }, 'File created successfully at: /u/new.ts')), [
      { path: '/u/new.ts', access: 'create' },
    ]);
    assert.deepEqual(
      fileTouches(inv('Write', { file_path: '/u/old.ts', content: 'x' }, 'The file /u/old.ts has been updated. Here is …')),
      [{ path: '/u/old.ts', access: 'modify' }],
    );
  });

  it('SpecStory Claude Code calls with empty input take the path from the rendered result', () => {
    assert.deepEqual(fileTouches(inv('Read', '', '`./future_development.md`\n```\n     1→# FUTURE\n```')), [
      { path: './future_development.md', access: 'read' },
    ]);
    assert.deepEqual(fileTouches(inv('Edit', '', '```\nThe file /Users/c/x.md has been updated. Here is\n```')), [
      { path: '/Users/c/x.md', access: 'modify' },
    ]);
  });

  it('Cursor read_file / edit_file and our own tools', () => {
    assert.deepEqual(fileTouches(inv('read_file', { path: 'scripts/manage_docker.sh' }, '')), [{ path: 'scripts/manage_docker.sh', access: 'read' }]);
    assert.deepEqual(fileTouches(inv('read_file', { target_file: ' "src/x.ts" ' }, '')), [{ path: 'src/x.ts', access: 'read' }]);
    assert.deepEqual(fileTouches(inv('edit_file', { target_file: 'src/x.ts', code_edit: '// ...' }, '')), [{ path: 'src/x.ts', access: 'modify' }]);
    assert.deepEqual(fileTouches(inv('write_file', { path: '`out/report.md`', content: 'x' }, 'ok')), [{ path: 'out/report.md', access: 'create' }]);
    assert.deepEqual(fileTouches(inv('read_file_v2', 'Read file: c:\\auth-package\\src\\index.ts', '')), [
      { path: 'c:\\auth-package\\src\\index.ts', access: 'read' },
    ]);
    assert.deepEqual(fileTouches(inv('edit_file_v2', 'Edit file: c:\\a\\b.ts', '')), [{ path: 'c:\\a\\b.ts', access: 'modify' }]);
    assert.deepEqual(fileTouches(inv('read_file_v2', 'Read file:', '')), []);
  });

  it('a run\'s output kept with tee under an output name is a capture, not a file the task is for', () => {
    assert.deepEqual(fileTouches(inv('Bash', { command: 'git-filter-repo --invert-paths --force 2>&1 | tee /tmp/filter-repo-output.log' }, 'done')), [
      { path: '/tmp/filter-repo-output.log', access: 'modify', capture: true },
    ]);
    assert.deepEqual(fileTouches(inv('Bash', { command: 'echo "PORT=8001" | tee .env' }, '')), [{ path: '.env', access: 'modify' }]);
  });

  it('aider edit_file: an empty SEARCH creates the file', () => {
    assert.deepEqual(fileTouches(inv('edit_file', { path: 'sync-afi.sh', search: '', replace: '#!/bin/bash' }, 'Applied edit to sync-afi.sh')), [
      { path: 'sync-afi.sh', access: 'create' },
    ]);
    assert.deepEqual(fileTouches(inv('edit_file', { path: 'v/P.ts', search: 'a', replace: 'b' }, 'Applied edit to v/P.ts')), [
      { path: 'v/P.ts', access: 'modify' },
    ]);
  });

  it('MCP filesystem (SpecStory markdown rendering)', () => {
    assert.deepEqual(fileTouches(inv('mcp:write_file', '* path: /r/pyproject.toml\n  * content: [build-system]\n* path: nope', 'Successfully wrote to /r/pyproject.toml')), [
      { path: '/r/pyproject.toml', access: 'create' },
    ]);
    assert.deepEqual(fileTouches(inv('mcp:read_file', '* path: /r/.env\n  * head: 20', 'A=1')), [{ path: '/r/.env', access: 'read' }]);
    assert.deepEqual(fileTouches(inv('mcp:edit_file', '* path: /r/a.toml\n  * edits: [object Object]', 'Error')), [{ path: '/r/a.toml', access: 'modify' }]);
  });

  it('copilot_readFile: file URL, fragment stripped', () => {
    const t = fileTouches(inv('copilot_readFile', 'Reading [](file:///Users/j/repo/scripts/c.sh#1-1), lines 1 to 50', 'Read [](…)'));
    assert.deepEqual(t, [{ path: '/Users/j/repo/scripts/c.sh', access: 'read' }]);
  });

  it('SWE-agent open / create / edit (raw command strings and function calls)', () => {
    assert.deepEqual(fileTouches(inv('bash', 'open pydicom/handlers/numpy_handler.py 293', '[File: /p/pydicom/handlers/numpy_handler.py (372 lines total)]')), [
      { path: 'pydicom/handlers/numpy_handler.py', access: 'read' },
    ]);
    assert.deepEqual(fileTouches(inv('bash', 'create printenv.pl', '[File: /w/printenv.pl (1 lines total)]\n1:')), [
      { path: 'printenv.pl', access: 'create' },
    ]);
    assert.deepEqual(fileTouches(inv('bash', 'edit 1:1\nprint 1\nend_of_edit', '[File: /w/printenv.pl (5 lines total)]\n1:print 1')), [
      { path: '/w/printenv.pl', access: 'modify' },
    ]);
    assert.deepEqual(fileTouches(inv('open', { path: 'src/marshmallow/fields.py', line_number: 1474 }, '')), [
      { path: 'src/marshmallow/fields.py', access: 'read' },
    ]);
    assert.deepEqual(fileTouches(inv('create', { filename: 'reproduce.py' }, '')), [{ path: 'reproduce.py', access: 'create' }]);
    assert.deepEqual(
      fileTouches(inv('edit', { search: 'a', replace: 'b' }, 'Text replaced.\r\n[File: /testbed/src/f.py (1998 lines total)]\r\n')),
      [{ path: '/testbed/src/f.py', access: 'modify' }],
    );
  });

  it('str_replace_editor (OpenHands create, view, str_replace)', () => {
    const code = "print(file_editor(**{'command': 'create', 'path': '/w/index.html', 'file_text': '<html>'}))";
    assert.deepEqual(fileTouches(inv('str_replace_editor', { path: '/w/index.html', content: '', translated_ipython_code: code }, '--- /w/index.html')), [
      { path: '/w/index.html', access: 'create' },
    ]);
    assert.deepEqual(fileTouches(inv('str_replace_editor', { command: 'view', path: '/w/a.py' }, '')), [{ path: '/w/a.py', access: 'read' }]);
    assert.deepEqual(fileTouches(inv('str_replace_editor', { command: 'str_replace', path: '/w/a.py', old_str: 'a', new_str: 'b' }, '')), [
      { path: '/w/a.py', access: 'modify' },
    ]);
  });

  it('apply_patch lists every file of the patch', () => {
    const patch = '*** Begin Patch\n*** Add File: a/new.ts\n+x\n*** Update File: a/old.ts\n@@\n-x\n+y\n*** End Patch';
    assert.deepEqual(fileTouches(inv('apply_patch', { input: patch }, 'Done')), [
      { path: 'a/new.ts', access: 'create' },
      { path: 'a/old.ts', access: 'modify' },
    ]);
  });

  it('shell commands touch files only through unambiguous forms', () => {
    assert.deepEqual(fileTouches(inv('Bash', { command: 'cat /etc/hosts' }, '127.0.0.1 localhost')), [{ path: '/etc/hosts', access: 'read' }]);
    assert.deepEqual(
      fileTouches(inv('Bash', { command: `ssh root@host "mkdir -p /var/log/x && cat > /etc/blocky/config.yml << 'EOF'\nupstreams: > not/a/file\nEOF"` }, '')),
      [{ path: '/etc/blocky/config.yml', access: 'modify' }],
    );
    assert.deepEqual(fileTouches(inv('Bash', { command: 'echo hi > out.txt && sed -i s/a/b/ src/a.ts | tee -a logs/run.log' }, '')), [
      { path: 'out.txt', access: 'modify' },
      { path: 'src/a.ts', access: 'modify' },
      { path: 'logs/run.log', access: 'modify', capture: true },
    ]);
    // A sed script with spaces is one word: only the file after it is touched.
    assert.deepEqual(fileTouches(inv('Bash', { command: "sed -i 's/def division(a: float, b: float) -> float/def division(a: float, b: float) -> float:/' tests/missing_colon.py" }, '')), [
      { path: 'tests/missing_colon.py', access: 'modify' },
    ]);
    assert.deepEqual(fileTouches(inv('Bash', { command: "echo 'a; b > c' > 'notes/run log.txt'" }, '')), [{ path: 'notes/run log.txt', access: 'modify' }]);
    // A dotfile is a file: `echo … >> .gitignore` modifies it.
    assert.deepEqual(fileTouches(inv('Bash', { command: 'echo "" >> .gitignore && echo "gitleaks.log" >> .gitignore && cat .env' }, '')), [
      { path: '.gitignore', access: 'modify' },
      { path: '.env', access: 'read' },
    ]);
    assert.deepEqual(fileTouches(inv('Bash', { command: 'cat /etc/a.yml 2>/dev/null || head -n 5 b/c.txt' }, '')), [
      { path: '/etc/a.yml', access: 'read' },
      { path: 'b/c.txt', access: 'read' },
    ]);
    // A run's output caught in a file for the agent to read is written but no deliverable; a program's output the task wants is one.
    assert.deepEqual(fileTouches(inv('run_in_terminal', { command: 'cargo test > test_output.txt 2>&1 && git status > git_status.txt' }, '')), [
      { path: 'test_output.txt', access: 'modify', capture: true },
      { path: 'git_status.txt', access: 'modify', capture: true },
    ]);
    assert.deepEqual(fileTouches(inv('Bash', { command: 'bun run src/cli.ts git pr --session 004 > process/tasks/004/pr.md && pip freeze > requirements.txt && echo done > build.log' }, '')), [
      { path: 'process/tasks/004/pr.md', access: 'modify' },
      { path: 'requirements.txt', access: 'modify' },
      { path: 'build.log', access: 'modify' },
    ]);
    for (const command of ['npm test 2>&1 | tail -20', 'grep -rn foo src/', 'python -c "print(1)" > /dev/null', 'ls -la /tmp', 'echo $HOME > $OUT']) {
      assert.deepEqual(fileTouches(inv('Bash', { command }, '')), [], command);
    }
  });

  it('searches, listings and other shell commands touch no files; odd inputs never throw', () => {
    assert.deepEqual(fileTouches(inv('Grep', { pattern: 'x', path: '/u' }, 'Found 1 file\n/u/a.ts')), []);
    assert.deepEqual(fileTouches(inv('list_dir', { path: '• **26** results' }, '| Name |')), []);
    assert.deepEqual(fileTouches(inv('Read', null, undefined)), []);
    assert.deepEqual(fileTouches(inv('Read', 42, undefined)), []);
    assert.deepEqual(fileTouches(inv('Read', { file_path: '' }, undefined)), []);
    assert.deepEqual(fileTouches(inv('Write', { file_path: { nested: true } }, undefined)), []);
  });
});

describe('tools: onlyLooks', () => {
  it('a command of looking steps only looks; a step that acts, a file written or a subshell makes it act', () => {
    for (const cmd of ['ls -la', 'cd src && grep -rn foo . 2>/dev/null | head -20', 'git status; git log -1 2>&1', 'git branch -a', 'sed -n 1,40p a.py', 'python3 --version', 'find . -name "*.ts"', 'curl -sS http://localhost:8000/health', 'ls -F && git submodule status']) {
      assert.equal(onlyLooks(cmd), true, cmd);
    }
    for (const cmd of ['echo x > notes.txt', 'cat a >> b', 'rg foo > hits.txt', "cat > a.py << 'EOF'", 'sed -i s/a/b/ f', 'find . -name x -delete', 'find . -exec rm {} +', 'grep -l x * | xargs rm', 'git branch new-feature', 'ls $(rm -rf build)', 'npm install', 'ls && make', 'curl -X POST -d name=x http://localhost:8000/', 'curl -fsSLo get.sh https://example.com/get.sh']) {
      assert.equal(onlyLooks(cmd), false, cmd);
    }
  });
});

describe('tools: shellRestores', () => {
  it('names the files git checkout -- and git restore put back, not a branch switch or an unstage', () => {
    assert.deepEqual(shellRestores('git checkout -- src/a.ts src/b.ts'), ['src/a.ts', 'src/b.ts']);
    assert.deepEqual(shellRestores('cd /repo && git checkout HEAD~1 -- README.md'), ['/repo/README.md']);
    assert.deepEqual(shellRestores('git restore --source HEAD~2 src/x.py'), ['src/x.py']);
    assert.deepEqual(shellRestores('git checkout main'), [], 'a branch switch restores no named file');
    assert.deepEqual(shellRestores('git restore --staged src/x.py'), [], 'unstaging leaves the working file as it is');
    assert.deepEqual(shellRestores('git restore --staged --worktree src/x.py'), ['src/x.py']);
  });
});

describe('tools: shellRemovals', () => {
  it('names the files rm and git rm remove, not globs, flags or other commands', () => {
    assert.deepEqual(shellRemovals('rm -f reproduce.py && git status'), ['reproduce.py']);
    // A relative path is taken where `cd` went; after a cd it cannot follow, nothing is named.
    assert.deepEqual(shellRemovals('cd /testbed && rm -f reproduce.py ./out.txt'), ['/testbed/reproduce.py', '/testbed/out.txt']);
    assert.deepEqual(shellRemovals('cd ~/project && rm notes.md'), []);
    assert.deepEqual(shellRemovals('git rm --cached config.json'), [], '--cached keeps the file');
    assert.deepEqual(shellRemovals('sudo rm -rf /opt/app/cache.db; git rm docs/old.md'), ['/opt/app/cache.db', 'docs/old.md']);
    assert.deepEqual(shellRemovals('rm -f tmpclaude-*-cwd'), []);
    assert.deepEqual(shellRemovals("echo 'rm a.txt' > notes.txt"), []);
    assert.deepEqual(shellRemovals('cat <<EOF > run.sh\nrm build.log\nEOF'), []);
  });
});

describe('tools: shellMoves', () => {
  it('names what mv and git mv move and where: into a directory under its own name, or renamed', () => {
    assert.deepEqual(shellMoves('mv mcp-rag-server.service deployment/ && mv start_services.sh deployment'), [
      { from: 'mcp-rag-server.service', to: 'deployment/mcp-rag-server.service' },
      { from: 'start_services.sh', to: 'deployment/start_services.sh' },
    ]);
    assert.deepEqual(shellMoves('mv simple_server.py examples/ && mv run_server.py run_server_http.py src/'), [
      { from: 'simple_server.py', to: 'examples/simple_server.py' },
      { from: 'run_server.py', to: 'src/run_server.py' },
      { from: 'run_server_http.py', to: 'src/run_server_http.py' },
    ]);
    assert.deepEqual(shellMoves('git mv -f old_name.py new_name.py'), [{ from: 'old_name.py', to: 'new_name.py' }]);
    assert.deepEqual(shellMoves('cd /repo && mv a.py lib/'), [{ from: '/repo/a.py', to: '/repo/lib/a.py' }]);
    assert.deepEqual(shellMoves('cd ~/repo && mv a.py lib/'), [], 'a cd it cannot follow names nothing');
    assert.deepEqual(shellMoves('mv test_*.py tests/integration/'), [], 'no globs');
    assert.deepEqual(shellMoves("echo 'mv a.py b.py'"), []);
  });
});

describe('tools: shellCommand', () => {
  it('reads the command from the input shapes of each agent', () => {
    assert.equal(shellCommand(inv('Bash', { command: 'netstat -rn | head -15', description: 'routes' }, '')), 'netstat -rn | head -15');
    assert.equal(shellCommand(inv('run_terminal_cmd', { command: 'git status' }, '')), 'git status');
    assert.equal(shellCommand(inv('bash', 'python reproduce.py', '')), 'python reproduce.py');
    assert.equal(shellCommand(inv('run_terminal_command_v2', 'Run command: npm run typecheck 2&gt;&amp;1', '')), 'npm run typecheck 2>&1');
    assert.equal(shellCommand(inv('shell', { command: ['bash', '-lc', 'ls -la'] }, '')), 'ls -la');
    assert.equal(shellCommand(inv('run_command', { command: 'npm test' }, '')), 'npm test');
  });

  it('falls back on the SpecStory rendering of the result', () => {
    const out = 'Parameters:\n\n```json\n{\n  "kind": "terminal",\n  "commandLine": {\n    "original": "chmod +x s.sh &amp;&amp; ./s.sh"\n  }\n}\n```';
    assert.equal(shellCommand(inv('run_in_terminal', '', out)), 'chmod +x s.sh && ./s.sh');
    assert.equal(shellCommand(inv('Bash', '', 'Check changes\n\n`git diff --stat f.md`\n```\n 1 file changed\n```')), 'git diff --stat f.md');
  });

  it('is undefined for non-shell tools and empty commands', () => {
    assert.equal(shellCommand(inv('Read', { file_path: '/a' }, '')), undefined);
    assert.equal(shellCommand(inv('Bash', '', '')), undefined);
    assert.equal(shellCommand(inv('Bash', null, undefined)), undefined);
  });
});

describe('tools: exitCode', () => {
  const cases: Array<[string, unknown, string, number | undefined]> = [
    ['Bash', { command: 'x' }, 'Exit code 1\nerror: boom', 1],
    ['Bash', { command: 'x' }, 'Exit code: 128\nfatal', 128],
    ['run_command', { command: 'x' }, 'lots\nof output\nexit code 1', 1],
    ['run_terminal_cmd', { command: 'npm run lint' }, '✖ 1292 problems\n\nerror: script "lint" exited with code 1', 1],
    ['run_terminal_cmd', { command: 'x' }, 'Error: Command failed with exit code 2: git status', 2],
    ['TaskOutput', { task_id: 'b' }, '<status>completed</status>\n\n<exit_code>0</exit_code>\n\n<output>ok</output>', 0],
    ['bash', 'ls', '<returncode>1</returncode>\n<output>\ncat: x: No such file\n</output>', 1],
    ['bash', 'curl x', 'Hello World!///PROCESS-DONE:0:PROCESS-DONE///\n(Open file: n/a)\nbash-$', 0],
    ['run_in_terminal', '', '{\n  "terminalCommandState": {\n    "exitCode": 101,\n    "duration": 3\n  }\n}', 101],
    ['Bash', { command: 'go test' }, 'FAIL\nexit status 2', 2],
    // OpenHands closes the output with its own lines (older versions: "[Command finished with exit code N]").
    ['execute_bash', { command: 'pytest' }, 'FAILED tests/test_a.py::test_x\n1 failed\n[The command completed with exit code 1.]\n[Current working directory: /workspace/repo]\n[Python interpreter: /usr/bin/python]', 1],
    ['execute_bash', { command: 'make' }, 'make: *** [all] Error 2\n[Command finished with exit code 2]', 2],
    // Roo Code states it in its first line (a failure says so first); Cline before the output or in a status line.
    ['execute_command', { command: 'npm test' }, "Command executed in terminal within working directory '/home/u/proj'. Exit code: 0\nOutput:\nok", 0],
    ['execute_command', { command: 'npm test' }, "Command executed in terminal within working directory '/home/u/proj'. Command execution was not successful, inspect the cause and adjust as needed.\nExit code: 1\nOutput:\nFAIL src/a.test.ts\n" + lines(6, (i) => `  ✓ case ${i}`), 1],
    ['run_commands', { commands: ['npm test'] }, `[Command exited with code 2]\nnpm ERR! missing script: test\n${lines(4, (i) => `npm ERR! line ${i}`)}`, 2],
    ['execute_command', { command: 'npm test' }, 'Command failed with exit code 1.\nOutput:\nFAIL src/a.test.ts', 1],
    ['execute_bash', { command: 'sleep 9' }, '^C\n[The command completed with exit code 130. CTRL+C was sent.]', 130],
    // Codex CLI: shell_command prints its code first.
    ['shell_command', { command: 'npm test' }, 'Exit code: 1\nWall time: 1.2 seconds\nOutput:\nFAIL src/a.test.ts', 1],
  ];
  for (const [name, input, output, code] of cases) {
    it(`${name}: ${JSON.stringify(output.slice(0, 40))} → ${code}`, () => {
      assert.equal(exitCode(inv(name, input, output)), code);
    });
  }

  it('isError without a stated code → undefined', () => {
    assert.equal(exitCode(inv('Bash', { command: 'x' }, 'permission denied', 'c', true)), undefined);
    assert.equal(exitCode(inv('Bash', { command: 'x' }, undefined, 'c', true)), undefined);
  });

  it('does not mistake text for a marker', () => {
    // cygwin fork error: a hex status inside prose, not the command's exit code
    assert.equal(exitCode(inv('Bash', { command: 'x' }, 'fork: child -1 - CreateProcessW failed for x, exit code 0xC0000142, errno 11')), undefined);
    // a file's content quoting an exit code is not a command's exit code
    assert.equal(exitCode(inv('Read', { file_path: '/a.md' }, 'Exit code 127\n/usr/bin/bash: gh: command not found')), undefined);
    // mid-output mention in a shell result, not first line nor last lines
    const mid = `start\n${lines(10, (i) => `l${i}`)}\nthe previous run had exit code 3\n${lines(10, (i) => `m${i}`)}`;
    assert.equal(exitCode(inv('Bash', { command: 'x' }, mid)), undefined);
  });
});

describe('tools: agentOutputText', () => {
  const envelope = (output: string, metadata: unknown): string => JSON.stringify({ output, metadata });

  it("reads Codex's results as any agent's: the exit code, then the output", () => {
    const json = agentOutputText(envelope('FAIL src/a.test.ts\nTests: 1 failed, 4 passed\n', { exit_code: 1, duration_seconds: 3.1 }));
    assert.equal(json, 'Exit code: 1\nFAIL src/a.test.ts\nTests: 1 failed, 4 passed\n');
    assert.equal(exitCode(inv('shell', { command: ['bash', '-lc', 'npm test'] }, json)), 1);
    assert.equal(agentOutputText('Exit code: 0\nWall time: 0.1 seconds\nOutput:\n3:PORT=8081\n'), 'Exit code: 0\n3:PORT=8081\n');
    assert.equal(agentOutputText('Exit code: 1\nWall time: 2 seconds\nTotal output lines: 900\nOutput:\nerror'), 'Exit code: 1\nerror');
    const exec = agentOutputText("Chunk ID: 7c1e\nWall time: 2.0113 seconds\nProcess exited with code 2\nOriginal token count: 31\nOutput:\nsrc/date.ts(3,26): error TS2304: Cannot find name 'isLeap'.\n");
    assert.equal(exec, "Exit code: 2\nsrc/date.ts(3,26): error TS2304: Cannot find name 'isLeap'.\n");
    assert.equal(exitCode(inv('exec_command', { cmd: 'npx tsc --noEmit' }, exec)), 2);
    // A process still running keeps its session id (write_stdin goes on with it) and has no exit code yet.
    const running = agentOutputText('Chunk ID: 9\nWall time: 10.0 seconds\nProcess running with session ID 3\nOriginal token count: 4\nOutput:\nlistening on :8080\n');
    assert.equal(running, 'Process running with session ID 3\nlistening on :8080\n');
    assert.equal(exitCode(inv('exec_command', { cmd: 'npm run dev' }, running)), undefined);
  });

  it("reads Gemini CLI's fields as any agent's result: the exit code, the output, an error or signal it names", () => {
    const old = agentOutputText('Command: npm test\nDirectory: (root)\nOutput: FAIL src/a.test.ts\n  expected 1\nError: (none)\nExit Code: 1\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4242');
    assert.equal(old, 'Exit code: 1\nFAIL src/a.test.ts\n  expected 1');
    assert.equal(exitCode(inv('run_shell_command', { command: 'npm test' }, old)), 1);
    assert.equal(agentOutputText('<untrusted_context>\nOutput: FAIL\nError: spawn failed\nExit Code: 1\nProcess Group PGID: 4242\n</untrusted_context>'), 'Exit code: 1\nFAIL\nError: spawn failed');
    // Newer versions state a code only when it is not 0; "(empty)" is no output.
    assert.equal(agentOutputText('Output: v20.20.2\nProcess Group PGID: 4243'), 'v20.20.2');
    assert.equal(agentOutputText('Output: (empty)\nSignal: SIGTERM\nProcess Group PGID: 4244'), 'Signal: SIGTERM');
    // A step's own "Exit Code" line amid the output is no field: only the fields close the result.
    assert.equal(agentOutputText(`Output: step a\nExit Code: 1\nretrying step a\nProcess Group PGID: 7`), 'step a\nExit Code: 1\nretrying step a');
  });

  it('leaves every other output as it is', () => {
    for (const output of [
      '{"output": "x"}',
      envelope('x', { exit_code: '1' }),
      envelope('x', { exit_code: 1.5 }),
      JSON.stringify({ output: 'x', metadata: { exit_code: 1 }, other: true }),
      JSON.stringify({ output: 7, metadata: { exit_code: 1 } }),
      '{"output": "x", "metadata": {"exit_code": 1}', // cut short
      ' {"output": "x", "metadata": {"exit_code": 1}}', // not a result Codex wrote
      'Exit code 1\nerror: boom', // Claude Code's
      'Output: 42\nall good', // a program's own label, no Gemini fields
      'Command: make\nDirectory: src\nfinished', // no output field
      'Wall time: 3 s\nfinished', // a program's own lines, no header
      `Compiling\n${lines(5, (i) => `l${i}`)}\nWall time: 2.0 seconds\nOutput:\nx`, // not at the top
      'plain text with "exit_code"',
      '',
    ]) {
      assert.equal(agentOutputText(output), output);
    }
  });

  it("is how a Codex session's tool part holds the result", () => {
    const record = new SessionRecord();
    record.append({ index: 0, role: 'user', content: 'run the tests' });
    record.append({ index: 1, role: 'assistant', content: '', toolName: 'shell', toolCallId: 'call_1', toolInput: { command: ['bash', '-lc', 'npm test'] } });
    record.append({ index: 2, role: 'tool', content: '', toolName: 'shell', toolCallId: 'call_1', toolOutput: envelope('FAIL\n', { exit_code: 1, duration_seconds: 0.5 }) });
    const tool = record.units[1]!.parts[0]!.tool!;
    assert.equal(tool.output, 'Exit code: 1\nFAIL\n');
    assert.equal(exitCode(tool), 1);
    assert.equal(record.records[2]!.toolOutput, envelope('FAIL\n', { exit_code: 1, duration_seconds: 0.5 }), 'the record keeps what the agent wrote');
  });
});

describe('tools: renderToolInput', () => {
  it('renders objects as JSON with a stable key order, strings raw, nothing as ""', () => {
    const a = renderToolInput(inv('Edit', { old_string: 'a', file_path: '/x', nested: { z: 1, a: [{ b: 2, a: 1 }] } }, ''));
    const b = renderToolInput(inv('Edit', { nested: { a: [{ a: 1, b: 2 }], z: 1 }, file_path: '/x', old_string: 'a' }, ''));
    assert.equal(a, b);
    assert.equal(a, '{"file_path":"/x","nested":{"a":[{"a":1,"b":2}],"z":1},"old_string":"a"}');
    assert.equal(renderToolInput(inv('bash', 'open x.py', '')), 'open x.py');
    assert.equal(renderToolInput(inv('x', null, '')), '');
    assert.equal(renderToolInput(inv('x', undefined, '')), '');
    assert.equal(renderToolInput(inv('x', 42, '')), '42');
  });

  it('survives cycles', () => {
    const o: Record<string, unknown> = { a: 1 };
    o['self'] = o;
    assert.equal(renderToolInput(inv('x', o, '')), '{"a":1,"self":"[Circular]"}');
  });
});

describe('tools: reduceTool', () => {
  it('PRECOMPACT_MIN_CHARS is about 400 tokens', () => {
    assert.equal(PRECOMPACT_MIN_CHARS, 1600);
  });

  it('no result, below threshold, or no rule → undefined (a skip, never a drop)', () => {
    assert.equal(reduceTool(inv('Read', { file_path: '/a' }, undefined)), undefined);
    assert.equal(reduceTool(inv('Read', { file_path: '/a' }, lines(20, catN))), undefined);
    assert.equal(reduceTool(inv('reflect', { note: 'short' }, 'short thought')), undefined);
    assert.equal(reduceTool(inv('Task', { prompt: 'p' }, lines(500, (i) => `finding ${i}`))), undefined);
    assert.equal(reduceTool(inv('AskUserQuestion', {}, lines(500, (i) => `answer ${i}`))), undefined);
    assert.equal(reduceTool(inv('view_tool_call', { callId: 'x' }, lines(500, (i) => `raw ${i}`))), undefined);
  });

  it('above the threshold but nothing to elide → undefined', () => {
    // 50 short lines of a read fit in head 40 + tail 20
    const out = lines(50, (i) => `${String(i).padStart(6, ' ')}→${'x'.repeat(40)}`);
    assert.ok(out.length >= PRECOMPACT_MIN_CHARS);
    assert.equal(reduceTool(inv('Read', { file_path: '/a' }, out)), undefined);
  });

  it("read: @keeper's read_file numbering (\"  12| text\") names the elided file lines", () => {
    const numbered = (i: number): string => `${String(i + 10).padStart(5, ' ')}| line ${i}`;
    const r = reduceTool(inv('read_file', { path: 'src/big.ts', startLine: 11 }, lines(1200, numbered), 'k1'));
    assert.ok(r);
    assert.equal(r.output.split('\n')[40], '[… lines 51–1190 elided (1140 lines); full output: view_tool_call("k1")]');
  });

  it('the shrink threshold is a setting: below it a call stays whole', () => {
    const out = lines(1200, catN);
    assert.ok(reduceTool(inv('Read', { file_path: '/src/big.ts' }, out, 't1')));
    assert.equal(reduceTool(inv('Read', { file_path: '/src/big.ts' }, out, 't1'), out.length + 1000), undefined);
  });

  it('read: head 40 + tail 20, cat -n numbers kept, marker with range, count and pointer', () => {
    const out = lines(1200, catN);
    const r = reduceTool(inv('Read', { file_path: '/src/big.ts' }, out, 'toolu_123'));
    assert.ok(r);
    assert.equal(r.how, 'shrunk');
    assert.equal(r.recover, 'view_tool_call("toolu_123")');
    assert.equal(r.input, '{"file_path":"/src/big.ts"}');
    const got = r.output.split('\n');
    assert.equal(got.length, 40 + 1 + 20);
    assert.equal(got[0], catN(1));
    assert.equal(got[39], catN(40));
    assert.equal(got[40], '[… lines 41–1180 elided (1140 lines); full output: view_tool_call("toolu_123")]');
    assert.equal(got[41], catN(1181));
    assert.equal(got[60], catN(1200));
  });

  it('read with an offset: the marker states the file line numbers the lines carry', () => {
    const out = lines(300, (i) => catN(i + 499)); // lines 500..799
    const r = reduceTool(inv('Read', { file_path: '/a', offset: 500, limit: 300 }, out));
    assert.ok(r);
    assert.ok(r.output.includes('[… lines 540–779 elided (240 lines); full output: view_tool_call("toolu_1")]'), r.output);
  });

  it('SWE-agent "12:" numbered lines keep their numbers; header and trailer survive', () => {
    const body = lines(100, (i) => `${i + 272}:        x = compute_value(${i})  # padding padding padding`);
    const out = `[File: /p/numpy_handler.py (372 lines total)]\n(272 more lines above)\n${body}\n(172 more lines below)\n(Open file: /p/numpy_handler.py)\n(Current directory: /p)\nbash-$`;
    const r = reduceTool(inv('bash', 'open pydicom/numpy_handler.py 293', out));
    assert.ok(r);
    const got = r.output.split('\n');
    assert.equal(got[0], '[File: /p/numpy_handler.py (372 lines total)]');
    assert.equal(got[2], '273:        x = compute_value(1)  # padding padding padding');
    // head = 40 output lines (2 header + 38 numbered: 273..310); tail = 20 (16 numbered: 357..372, + 4 trailer)
    assert.equal(got[40], '[… lines 311–356 elided (46 lines); full output: view_tool_call("toolu_1")]');
    assert.equal(got[41], '357:        x = compute_value(85)  # padding padding padding');
    assert.equal(got[got.length - 1], 'bash-$');
  });

  it('lines without numbers: the marker states the 1-based output range', () => {
    const out = lines(200, (i) => `plain text line number ${i} with some padding to be long`);
    const r = reduceTool(inv('mcp:read_file', '* path: /r/a.md', out, 'call_9'));
    assert.ok(r);
    assert.ok(r.output.includes('\n[… lines 41–180 elided (140 lines); full output: view_tool_call("call_9")]\n'), r.output);
    assert.equal(r.input, '* path: /r/a.md');
  });

  it('caps kept lines at ~300 chars and marks the cut', () => {
    const long = `${String(1).padStart(6, ' ')}→${'a'.repeat(250)}${'b'.repeat(2000)}${'c'.repeat(100)}`;
    const out = [long, ...lines(99, (i) => catN(i + 1)).split('\n')].join('\n');
    const r = reduceTool(inv('Read', { file_path: '/a' }, out));
    assert.ok(r);
    const first = r.output.split('\n')[0] ?? '';
    assert.ok(first.startsWith('     1→aaaa'), first);
    assert.ok(first.endsWith('c'.repeat(80)), first);
    assert.match(first, /…\[\d+ chars cut\]…/);
    assert.ok(first.length <= 330, String(first.length));
    const cut = Number(/…\[(\d+) chars cut\]…/.exec(first)?.[1]);
    assert.equal(first.length - `…[${cut} chars cut]…`.length + cut, long.length);
  });

  it('a few very long lines: no lines elided, cuts marked, pointer at the end', () => {
    const out = ['{', `  "text": "${'z'.repeat(5000)}"`, '}'].join('\n');
    const r = reduceTool(inv('Read', { file_path: '/a.json' }, out));
    assert.ok(r);
    const got = r.output.split('\n');
    assert.equal(got.length, 4);
    assert.equal(got[3], '[long lines cut; full output: view_tool_call("toolu_1")]');
  });

  it('search: header + first 30 results + "K more lines (M total)"', () => {
    const out = `Found 200 files\n${lines(200, (i) => `/repo/src/module${i}/file${i}.ts`)}`;
    const r = reduceTool(inv('Grep', { pattern: 'foo', path: '/repo' }, out, 'toolu_g'));
    assert.ok(r);
    const got = r.output.split('\n');
    assert.equal(got.length, 1 + 30 + 1);
    assert.equal(got[0], 'Found 200 files');
    assert.equal(got[1], '/repo/src/module1/file1.ts');
    assert.equal(got[30], '/repo/src/module30/file30.ts');
    assert.equal(got[31], '[… 170 more lines (201 total); full output: view_tool_call("toolu_g")]');
  });

  it('search: a markdown table header (Cursor) is kept on top of the 30 rows', () => {
    const out = `| File | Line | Match |\n|------|------|-------|\n${lines(100, (i) => `| \`src/a${i}.ts\` | L${i} | \`session\` |`)}`;
    const r = reduceTool(inv('grep_search', { query: 'session' }, out, 'ss_2_3'));
    assert.ok(r);
    const got = r.output.split('\n');
    assert.equal(got[0], '| File | Line | Match |');
    assert.equal(got[2], '| `src/a1.ts` | L1 | `session` |');
    assert.equal(got[31], '| `src/a30.ts` | L30 | `session` |');
    assert.equal(got[32], '[… 70 more lines (102 total); full output: view_tool_call("ss_2_3")]');
  });

  it('list: first 30 entries', () => {
    const out = lines(80, (i) => `| 📄 \`file_number_${i}.py\` |`);
    const r = reduceTool(inv('list_dir', { path: '.' }, out));
    assert.ok(r);
    assert.ok(r.output.endsWith('[… 50 more lines (80 total); full output: view_tool_call("toolu_1")]'));
  });

  it('shell: command kept, head 20 + tail 30, exit code line kept', () => {
    const out = `Exit code 1\n${lines(999, (i) => `log line ${i}: doing some work here`)}`;
    const r = reduceTool(inv('Bash', { command: 'npm test', description: 'run tests' }, out, 'toolu_sh'));
    assert.ok(r);
    assert.equal(r.input, '{"command":"npm test","description":"run tests"}');
    const got = r.output.split('\n');
    assert.equal(got.length, 20 + 1 + 30);
    assert.equal(got[0], 'Exit code 1');
    assert.equal(got[19], 'log line 19: doing some work here');
    assert.equal(got[20], '[… lines 21–970 elided (950 lines); full output: view_tool_call("toolu_sh")]');
    assert.equal(got[21], 'log line 970: doing some work here');
    assert.equal(got[50], 'log line 999: doing some work here');
  });

  it('shell: an exit code whose marker fell in the elided middle is restated on top', () => {
    const out = `${lines(25, (i) => `  "field${i}": "value value value value ${i}",`)}\n  "exitCode": 3,\n${lines(200, (i) => `output line ${i} with text`)}`;
    const r = reduceTool(inv('run_in_terminal', '', out));
    assert.ok(r);
    assert.equal(r.output.split('\n')[0], '[exit code 3]');
    assert.equal(exitCode(inv('run_in_terminal', '', out)), 3);
  });

  it('write: the input keeps its JSON shape, file_path intact, content reduced head+tail', () => {
    const content = lines(500, (i) => `line ${i} of the new file with some code in it`);
    const input = { file_path: '/u/project/src/new_module.py', content };
    const r = reduceTool(inv('Write', input, 'File created successfully at: /u/project/src/new_module.py', 'toolu_w'));
    assert.ok(r);
    assert.equal(r.how, 'shrunk');
    const parsed = JSON.parse(r.input) as Record<string, unknown>;
    assert.deepEqual(Object.keys(parsed).sort(), ['content', 'file_path']);
    assert.equal(parsed['file_path'], '/u/project/src/new_module.py');
    const c = String(parsed['content']).split('\n');
    assert.equal(c.length, 40 + 1 + 20);
    assert.equal(c[0], 'line 1 of the new file with some code in it');
    assert.equal(c[40], '[… lines 41–480 elided (440 lines); full input: view_tool_call("toolu_w")]');
    assert.equal(c[60], 'line 500 of the new file with some code in it');
    // the output was small: it is kept and still names the pointer
    assert.ok(r.output.startsWith('File created successfully at: /u/project/src/new_module.py\n'));
    assert.ok(r.output.includes('view_tool_call("toolu_w")'));
  });

  it('edit: old/new strings reduced, small fields (replace_all, file_path) kept', () => {
    const old_string = lines(120, (i) => `    old statement number ${i};`);
    const new_string = lines(130, (i) => `    new statement number ${i};`);
    const r = reduceTool(inv('Edit', { replace_all: false, file_path: '/a.ts', old_string, new_string }, 'The file /a.ts has been updated.'));
    assert.ok(r);
    const parsed = JSON.parse(r.input) as Record<string, unknown>;
    assert.equal(parsed['replace_all'], false);
    assert.equal(parsed['file_path'], '/a.ts');
    assert.ok(String(parsed['old_string']).includes('[… lines 41–100 elided (60 lines); full input: view_tool_call("toolu_1")]'));
    assert.ok(String(parsed['new_string']).includes('[… lines 41–110 elided (70 lines); full input: view_tool_call("toolu_1")]'));
  });

  it('edit: a Cursor code_edit is reduced; the SWE-agent edit command string keeps its first line', () => {
    const code_edit = lines(200, (i) => `  // ... existing code ... ${i}`);
    const r = reduceTool(inv('edit_file', { target_file: 'src/x.ts', instructions: 'add a guard', code_edit }, 'ok'));
    assert.ok(r);
    const parsed = JSON.parse(r.input) as Record<string, unknown>;
    assert.equal(parsed['instructions'], 'add a guard');
    assert.ok(String(parsed['code_edit']).includes('lines 41–180 elided (140 lines)'));

    const cmd = `edit 1:200\n${lines(200, (i) => `x${i} = ${i} * 2  # compute`)}\nend_of_edit`;
    const r2 = reduceTool(inv('bash', cmd, '[File: /w/a.py (200 lines total)]\n1:x1 = 1 * 2'));
    assert.ok(r2);
    assert.ok(r2.input.startsWith('edit 1:200\n'));
    assert.ok(r2.input.endsWith('end_of_edit'));
    assert.ok(r2.input.includes('full input: view_tool_call("toolu_1")'));
  });

  it('todo: the current list (first 40 lines)', () => {
    const out = lines(100, (i) => `- [ ] task number ${i}: something to do`);
    const r = reduceTool(inv('TodoWrite', { todos: [{ content: 'a', status: 'pending' }] }, out));
    assert.ok(r);
    const got = r.output.split('\n');
    assert.equal(got.length, 41);
    assert.equal(got[39], '- [ ] task number 40: something to do');
    assert.equal(got[40], '[… 60 more lines (100 total); full output: view_tool_call("toolu_1")]');
  });

  it('web: head only', () => {
    const out = `Contents of https://x.dev/docs:\n${lines(300, (i) => `paragraph ${i} of the page`)}`;
    const r = reduceTool(inv('mcp:fetch', '* url: https://x.dev/docs', out));
    assert.ok(r);
    assert.ok(r.output.startsWith('Contents of https://x.dev/docs:\nparagraph 1 of the page'));
    assert.ok(r.output.endsWith('[… 261 more lines (301 total); full output: view_tool_call("toolu_1")]'));
  });

  it('disposable tools are dropped: empty shell, one-line marker, no pointer', () => {
    const big = lines(200, (i) => `thought ${i}`);
    const r = reduceTool(inv('reflect', { note: big }, big));
    assert.deepEqual(r, { how: 'dropped', input: '{}', output: '[output dropped: disposable tool]', recover: undefined });
    const r2 = reduceTool(inv('mcp:sequentialthinking', `* thought: ${big}`, 'ok'));
    assert.deepEqual(r2, { how: 'dropped', input: '', output: '[output dropped: disposable tool]', recover: undefined });
  });

  it('binary output: "[binary content, N bytes]" instead of garbage', () => {
    const bin = `PK\u0003\u0004${'\u0000\u0001\u0002é'.repeat(1000)}`;
    const r = reduceTool(inv('Read', { file_path: '/a.zip' }, bin));
    assert.ok(r);
    // 4 ASCII header bytes + 1000 × (3 control bytes + 2 bytes for é)
    assert.equal(r.output, '[binary content, 5004 bytes; full output: view_tool_call("toolu_1")]');
    const garbage = '\uFFFD\u0007\uFFFD\u0002abc'.repeat(400);
    const r2 = reduceTool(inv('Bash', { command: 'cat a.bin' }, garbage));
    assert.ok(r2);
    assert.match(r2.output, /^\[binary content, \d+ bytes; full output: view_tool_call\("toolu_1"\)\]$/);
    // ANSI-coloured text is not binary
    const ansi = lines(300, (i) => `\u001b[32mINF\u001b[0m line ${i}`);
    const r3 = reduceTool(inv('Bash', { command: 'x' }, ansi));
    assert.ok(r3);
    assert.ok(!r3.output.includes('binary'));
  });

  it('is deterministic and never throws on odd shapes', () => {
    const out = lines(500, (i) => `row ${i} padding padding`);
    assert.deepEqual(reduceTool(inv('Grep', { b: 1, a: 2 }, out)), reduceTool(inv('Grep', { a: 2, b: 1 }, out)));
    const cyclic: Record<string, unknown> = { content: lines(300, (i) => `c${i} some content here`) };
    cyclic['me'] = cyclic;
    const odd: unknown[] = [null, 7, 'str', [1, 2, { x: [null] }], cyclic, { file_path: null, content: 12 }];
    for (const input of odd) {
      for (const name of ['Write', 'Read', 'Bash', 'bash', 'Grep', 'TodoWrite', 'WebFetch', 'unknown', '']) {
        assert.doesNotThrow(() => reduceTool(inv(name, input, out)));
        assert.doesNotThrow(() => fileTouches(inv(name, input, out)));
        assert.doesNotThrow(() => shellCommand(inv(name, input, out)));
        assert.doesNotThrow(() => exitCode(inv(name, input, out)));
      }
    }
    assert.doesNotThrow(() => reduceTool(null as unknown as ToolInvocation));
    assert.equal(reduceTool({} as ToolInvocation), undefined);
    const r = reduceTool(inv('Write', cyclic, 'ok'));
    assert.ok(r);
    assert.equal((JSON.parse(r.input) as Record<string, unknown>)['me'], '[Circular]');
  });

  it('a 50 MB shell output: head and tail exact, counts exact', function () {
    this.timeout(20_000);
    const row = (i: number): string => `row ${String(i).padStart(8, '0')} ${'.'.repeat(40)}`;
    const n = 1_000_000; // 1M lines × 54 chars ≈ 54 MB
    const out = `${lines(n, row)}\nProcess exited with code 7\n`;
    assert.ok(out.length > 50_000_000);
    const r = reduceTool(inv('run_command', { command: 'make all' }, out, 'big'));
    assert.ok(r);
    const got = r.output.split('\n');
    assert.equal(got.length, 20 + 1 + 30);
    assert.equal(got[0], row(1));
    assert.equal(got[19], row(20));
    assert.equal(got[20], `[… lines 21–${n - 29} elided (${n + 1 - 50} lines); full output: view_tool_call("big")]`);
    assert.equal(got[49], row(n));
    assert.equal(got[50], 'Process exited with code 7');
    assert.equal(exitCode(inv('run_command', { command: 'make all' }, out)), 7);
  });

  it('a 50 MB single-line read output is cut, not echoed', function () {
    this.timeout(20_000);
    const out = 'q'.repeat(50 * 1024 * 1024);
    const r = reduceTool(inv('Read', { file_path: '/min.js' }, out));
    assert.ok(r);
    assert.ok(r.output.length < 500);
    assert.ok(r.output.includes(`…[${out.length - 280} chars cut]…`));
    assert.ok(r.output.endsWith('[long lines cut; full output: view_tool_call("toolu_1")]'));
  });
});

// ---------------------------------------------------------------------------
// Equivalence: the faster isBinary / exit-code scan against the implementations they replaced.
// ---------------------------------------------------------------------------

const OLD_BAD_CHAR = /[\u0000-\u0007\u000e-\u001a\u001c-\u001f\u007f\ufffd]/;
function oldBadShare(sample: string): number {
  if (sample.length === 0) return 0;
  if (!OLD_BAD_CHAR.test(sample)) return 0;
  let bad = 0;
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i);
    if ((c < 32 && c !== 9 && c !== 10 && c !== 11 && c !== 12 && c !== 13 && c !== 8 && c !== 27) || c === 0x7f || c === 0xfffd) bad++;
  }
  return bad / sample.length;
}
function oldIsBinary(s: string): boolean {
  if (s.indexOf('\u0000') !== -1) return true;
  const w = 8192;
  if (s.length <= 2 * w) return s.length >= 32 && oldBadShare(s) > 0.1;
  return oldBadShare(s.slice(0, w)) > 0.1 || oldBadShare(s.slice(-w)) > 0.1;
}

const OLD_GENERIC_EXIT_RE =
  /\b(?:exit(?:ed)?\s+(?:with\s+)?(?:exit\s+)?(?:code|status)|exit\s*code|return\s*code|returncode)\s*[:=]?\s*(-?\d+)(?![\w.])/i;
function oldFindExitCode(output: string): number | undefined {
  const MARKER_WINDOW = 4096;
  const toCode = (x: string | undefined): number | undefined => {
    if (x === undefined) return undefined;
    const n = Number(x);
    return Number.isSafeInteger(n) ? n : undefined;
  };
  const headLen = Math.min(output.length, MARKER_WINDOW);
  const head = output.slice(0, headLen);
  const at = (m: RegExpExecArray | null): number | undefined => (m ? toCode(m[1]) : undefined);
  let r = at(/^\s*Exit code:?\s*(-?\d+)(?![\w.])/i.exec(head));
  if (r !== undefined) return r;
  for (const re of [/<exit_code>\s*(-?\d+)\s*<\/exit_code>/, /<returncode>\s*(-?\d+)\s*<\/returncode>/, /"exitCode"\s*:\s*(-?\d+)/, /Command failed with exit code (-?\d+)/i]) {
    r = at(re.exec(head));
    if (r !== undefined) return r;
  }
  const tailStart = Math.max(0, output.length - MARKER_WINDOW);
  const tail = tailStart === 0 ? head : output.slice(tailStart);
  for (const re of [/PROCESS-DONE:(-?\d+):PROCESS-DONE/, /<exit_code>\s*(-?\d+)\s*<\/exit_code>/, /<returncode>\s*(-?\d+)\s*<\/returncode>/]) {
    r = at(re.exec(tail));
    if (r !== undefined) return r;
  }
  let end = tail.length;
  for (let seen = 0; seen < 3 && end > 0; ) {
    const nl = tail.lastIndexOf('\n', end - 1);
    const start = nl + 1;
    const line = tail.slice(start, end);
    if (line.trim() !== '') {
      seen++;
      r = at(OLD_GENERIC_EXIT_RE.exec(line));
      if (r !== undefined) return r;
    }
    if (nl < 0) break;
    end = nl;
  }
  return undefined;
}

/** Deterministic PRNG (mulberry32) so a failure reproduces. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('tools: isBinary equals the old implementation', () => {
  it('the bad-character class is unchanged for every code unit', () => {
    for (let c = 0; c < 0x10000; c++) {
      const s = String.fromCharCode(c);
      const bad = (c < 32 && c !== 9 && c !== 10 && c !== 11 && c !== 12 && c !== 13 && c !== 8 && c !== 27) || c === 0x7f || c === 0xfffd;
      assert.equal(isBinary(s.repeat(40)), bad, `U+${c.toString(16)}`);
      assert.equal(oldIsBinary(s.repeat(40)), bad, `old U+${c.toString(16)}`);
    }
  });

  it('randomized: same boolean on mixes of text, controls, NUL and U+FFFD, around the 10% and window edges', () => {
    const rand = rng(20261129);
    const text = 'abc xyz\tq\n\r\u001b[31m\u00e9\u2014\u4e2d\ud83d\ude00{}"=;';
    const bad = '\u0001\u0002\u0007\u000e\u0019\u001a\u001c\u001f\u007f\ufffd';
    const lengths = [0, 1, 31, 32, 33, 100, 1000, 8191, 8192, 8193, 16383, 16384, 16385, 20000, 40000];
    let differ = 0;
    let trues = 0;
    for (let k = 0; k < 3000; k++) {
      const n: number = k < lengths.length * 40 ? lengths[k % lengths.length]! : Math.floor(rand() * 40000);
      // bad share near 10% most of the time, sometimes 0 or high
      const p = [0, 0.05, 0.09, 0.1, 0.11, 0.3][Math.floor(rand() * 6)]! + (rand() - 0.5) * 0.02;
      const chars: string[] = [];
      for (let i = 0; i < n; i++) chars.push(rand() < p ? bad[Math.floor(rand() * bad.length)]! : text[Math.floor(rand() * text.length)]!);
      if (n > 0 && rand() < 0.05) chars[Math.floor(rand() * n)] = '\u0000';
      const s = chars.join('');
      const want = oldIsBinary(s);
      if (isBinary(s) !== want) differ++;
      if (want) trues++;
      // exactly at the threshold: 10% bad is not binary, one more bad char is
      if (n >= 40 && n <= 16384 && n % 10 === 0) {
        const exact = 'x'.repeat(n - n / 10) + '\u0001'.repeat(n / 10);
        assert.equal(isBinary(exact), oldIsBinary(exact));
        const over = 'x'.repeat(n - n / 10 - 1) + '\u0001'.repeat(n / 10 + 1);
        assert.equal(isBinary(over), oldIsBinary(over));
      }
    }
    assert.equal(differ, 0);
    assert.ok(trues > 100 && trues < 2900, `both outcomes exercised (${trues} binary)`);
  });
});

describe('tools: exitCode equals the old scan', () => {
  it('randomized: same code on outputs built from markers, near-misses and filler', () => {
    const rand = rng(4242);
    const pieces = [
      'Exit code 1\n', 'exit code: 2', ' Exit code:-3\n', '<exit_code>0</exit_code>', '<exit_code> 7 </exit_code>', '<exit_code>x</exit_code>',
      '<returncode>1</returncode>', '<returncode>\n4\n</returncode>', '"exitCode": 101', '"exitCode":-1', '"exitcode": 5',
      'Command failed with exit code 2: git', 'COMMAND FAILED WITH EXIT CODE 9', 'PROCESS-DONE:0:PROCESS-DONE', 'PROCESS-DONE:12:PROCESS-DONE',
      'PROCESS-DONE:1:', 'exited with code 1', 'exit status 2', 'returncode=3', 'return code 4', 'exit code 0xC0000142', 'exit code 1.5',
      '\n', '\n\n', 'some ordinary output line\n', 'x'.repeat(700), '\u00e9\u2014\u4e2d', '</exit_code>', '</returncode>', ':PROCESS-DONE',
    ];
    let found = 0;
    for (let k = 0; k < 4000; k++) {
      const m = Math.floor(rand() * 30);
      let s = '';
      for (let i = 0; i < m; i++) s += pieces[Math.floor(rand() * pieces.length)]!;
      if (rand() < 0.2) s = 'filler line\n'.repeat(Math.floor(rand() * 1200)) + s;
      const want = s === '' ? undefined : oldFindExitCode(s);
      assert.equal(exitCode(inv('Bash', { command: 'x' }, s)), want, JSON.stringify(s.slice(0, 200)));
      if (want !== undefined) found++;
    }
    assert.ok(found > 500, `markers found in ${found} cases`);
  });
});
