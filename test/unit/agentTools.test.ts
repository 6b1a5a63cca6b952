import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { compileGlob, expandBraces } from '../../src/agent/glob';
import { AGENT_TOOLS, describeToolCall, prepareToolSchemas, runTool } from '../../src/agent/tools';
import type { ConfirmRequest, ToolContext, ToolOutcome } from '../../src/agent/tools/contract';
import { SeenFiles } from '../../src/agent/tools/seenFiles';
import { shellInvocation } from '../../src/agent/tools/shellProcess';

interface Harness {
  readonly ctx: ToolContext;
  readonly requests: ConfirmRequest[];
  readonly progress: string[];
}

type CallView = { name: string; input: string; output: string | undefined; isError: boolean };

function harness(
  root: string,
  options: { answer?: boolean; signal?: AbortSignal; maxOutputChars?: number; calls?: Record<string, CallView> } = {},
): Harness {
  const requests: ConfirmRequest[] = [];
  const progress: string[] = [];
  const ctx: ToolContext = {
    root,
    signal: options.signal ?? new AbortController().signal,
    confirm: async (request) => {
      requests.push(request);
      return options.answer ?? true;
    },
    viewToolCall: (id) => options.calls?.[id],
    progress: (message) => progress.push(message),
    ...(options.maxOutputChars !== undefined ? { maxOutputChars: options.maxOutputChars } : {}),
  };
  return { ctx, requests, progress };
}

/** Write `files` (path → content) under `root`, creating folders. */
function populate(root: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(root, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
}

function ok(outcome: ToolOutcome): string {
  assert.equal(outcome.isError, false, `expected success, got: ${outcome.output}`);
  return outcome.output;
}

function failed(outcome: ToolOutcome): string {
  assert.equal(outcome.isError, true, `expected an error, got: ${outcome.output}`);
  return outcome.output;
}

/** Whether `pid` is a live (non-zombie) process. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z /.test(stat);
  } catch {
    return true;
  }
}

async function waitFor(condition: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return condition();
}

describe('agent tools', function () {
  this.timeout(15_000);

  let base: string;
  let root: string;
  let n = 0;

  before(() => {
    base = fs.mkdtempSync(path.join(tmpdir(), 'ck-agent-tools-'));
  });
  after(() => {
    fs.rmSync(base, { recursive: true, force: true });
  });
  beforeEach(() => {
    root = path.join(base, `ws${++n}`);
    fs.mkdirSync(root);
  });
  afterEach(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('describes a call as one line for the chat: what it does, to what, a read\'s lines', () => {
    assert.equal(describeToolCall('read_file', { path: 'src/api.ts', startLine: 1, endLine: 80 }), 'Reading src/api.ts, lines 1–80');
    assert.equal(describeToolCall('read_file', { path: 'src/api.ts', startLine: 200 }), 'Reading src/api.ts, lines 200–end');
    assert.equal(describeToolCall('read_file', { path: 'src/api.ts' }), 'Reading src/api.ts');
    assert.equal(describeToolCall('run_command', { command: 'npm test' }), 'Running npm test');
    assert.equal(describeToolCall('grep', { pattern: 'x'.repeat(100) }), `Searching for ${'x'.repeat(79)}…`);
    assert.equal(describeToolCall('mcp_fetch', null), 'Calling mcp_fetch');
  });

  describe('the table and dispatch', () => {
    it('exports the nine tools by their fixed names with strict object schemas', () => {
      assert.deepEqual(
        AGENT_TOOLS.map((t) => t.name),
        ['read_file', 'list_dir', 'glob', 'grep', 'edit_file', 'write_file', 'run_command', 'view_tool_call', 'todo'],
      );
      for (const tool of AGENT_TOOLS) {
        assert.ok(tool.description.length > 80, `${tool.name} has a real description`);
        assert.equal(tool.inputSchema.type, 'object', tool.name);
        assert.equal(tool.inputSchema.additionalProperties, false, tool.name);
        assert.equal(tool.inputSchema.$schema, undefined, tool.name);
        assert.equal(typeof tool.inputSchema.properties, 'object', tool.name);
        assert.ok(!JSON.stringify(tool.inputSchema).includes(String(Number.MAX_SAFE_INTEGER)), tool.name);
      }
      const read = AGENT_TOOLS.find((t) => t.name === 'read_file')!;
      assert.deepEqual(read.inputSchema.required, ['path']);
      const grep = AGENT_TOOLS.find((t) => t.name === 'grep')!.inputSchema.properties as Record<string, Record<string, unknown>>;
      assert.equal(grep.maxResults?.maximum, 2000);
      assert.equal(grep.regex?.default, false);
    });

    it('makes each JSON Schema once: what the warm-up at activation built is what the turns offer', async () => {
      await prepareToolSchemas();
      for (const tool of AGENT_TOOLS) assert.equal(tool.inputSchema, tool.inputSchema, tool.name);
    });

    it('an unknown tool is an error outcome naming the known ones', async () => {
      const out = failed(await runTool('delete_everything', {}, harness(root).ctx));
      assert.match(out, /^Unknown tool "delete_everything"\. The tools are: read_file, list_dir, .*todo\.$/);
    });

    it('zod problems become one sentence per problem, naming the field', async () => {
      const { ctx } = harness(root);
      assert.equal(failed(await runTool('read_file', {}, ctx)), 'Invalid input for read_file:\n- Missing required field "path" (a string).');
      const many = failed(await runTool('read_file', { path: 3, startLine: 0, bogus: true }, ctx)).split('\n');
      assert.equal(many[0], 'Invalid input for read_file:');
      assert.ok(many.includes('- Field "path" must be a string, but got the number 3.'), many.join('\n'));
      assert.ok(many.includes('- Field "startLine" must be at least 1, but got 0.'), many.join('\n'));
      assert.ok(many.includes('- Unknown field "bogus" (known fields: path, startLine, endLine).'), many.join('\n'));
      assert.match(failed(await runTool('read_file', { path: 'a', startLine: 1.5 }, ctx)), /Field "startLine" must be a whole number, but got the number 1\.5\./);
      assert.match(failed(await runTool('read_file', { path: 'a', startLine: 5, endLine: 2 }, ctx)), /Field "endLine" \(2\) must not be less than startLine \(5\)\./);
      assert.match(failed(await runTool('grep', { pattern: 'x', maxResults: 5000 }, ctx)), /Field "maxResults" must be at most 2000, but got 5000\./);
      assert.match(failed(await runTool('list_dir', 'src', ctx)), /The input must be a JSON object, but got the string "src"\./);
      const todo = failed(await runTool('todo', { todos: [{ content: 'a', status: 'done' }] }, ctx));
      assert.match(todo, /Field "todos\[0\]\.status" must be one of "pending", "in_progress", "completed", but got "done"\./);
    });

    it('a signal aborted before the call rejects with an AbortError', async () => {
      const controller = new AbortController();
      controller.abort();
      await assert.rejects(runTool('list_dir', {}, harness(root, { signal: controller.signal }).ctx), (e: Error) => e.name === 'AbortError');
    });
  });

  describe('paths', () => {
    it('refuses "..", absolute paths elsewhere and symlinks that escape, for reads and writes', async () => {
      const outsideDir = path.join(base, `outside${n}`);
      populate(outsideDir, { 'secret.txt': 'top secret\n' });
      fs.symlinkSync(outsideDir, path.join(root, 'escape'));
      fs.symlinkSync(path.join(outsideDir, 'secret.txt'), path.join(root, 'secret-link.txt'));
      const h = harness(root);
      const refused = new RegExp(`is outside the workspace folder ${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; refused$`);
      for (const [tool, input] of [
        ['read_file', { path: `../outside${n}/secret.txt` }],
        ['read_file', { path: path.join(outsideDir, 'secret.txt') }],
        ['read_file', { path: 'escape/secret.txt' }],
        ['read_file', { path: 'secret-link.txt' }],
        ['list_dir', { path: 'escape' }],
        ['write_file', { path: 'escape/new.txt', content: 'x' }],
        ['edit_file', { path: 'secret-link.txt', oldText: 'top', newText: 'no' }],
        ['grep', { pattern: 'secret', path: '..' }],
        ['run_command', { command: 'pwd', cwd: '..' }],
      ] as const) {
        const out = failed(await runTool(tool, input, h.ctx));
        assert.match(out, refused, `${tool} ${JSON.stringify(input)}`);
      }
      assert.equal(h.requests.length, 0, 'nothing refused reached the confirmation');
      assert.ok(!fs.existsSync(path.join(outsideDir, 'new.txt')));
      assert.equal(fs.readFileSync(path.join(outsideDir, 'secret.txt'), 'utf8'), 'top secret\n');
    });

    it('accepts an absolute path inside the root and a symlink that stays inside; skips escaping links in walks', async () => {
      const outsideDir = path.join(base, `outside${n}`);
      populate(outsideDir, { 'secret.txt': 'needle outside\n' });
      populate(root, { 'src/a.txt': 'needle inside\n' });
      fs.symlinkSync(path.join(root, 'src/a.txt'), path.join(root, 'inner-link.txt'));
      fs.symlinkSync(path.join(outsideDir, 'secret.txt'), path.join(root, 'outer-link.txt'));
      const { ctx } = harness(root);
      assert.match(ok(await runTool('read_file', { path: path.join(root, 'src/a.txt') }, ctx)), /^ {3}1\| needle inside$/m);
      assert.match(ok(await runTool('read_file', { path: 'inner-link.txt' }, ctx)), /needle inside/);
      const grep = ok(await runTool('grep', { pattern: 'needle' }, ctx));
      assert.ok(!grep.includes('outside'), grep);
      assert.match(grep, /^inner-link\.txt:1: needle inside$/m);
      assert.match(grep, /^src\/a\.txt:1: needle inside$/m);
    });
  });

  describe('read_file', () => {
    it('numbers the lines and reports the total; reads a range; strips CR', async () => {
      populate(root, { 'a.js': 'one\r\ntwo\r\nthree\r\n' });
      const { ctx } = harness(root);
      assert.equal(ok(await runTool('read_file', { path: 'a.js' }, ctx)), '   1| one\n   2| two\n   3| three\n[lines 1-3 of 3; end of file]');
      assert.equal(ok(await runTool('read_file', { path: './a.js', startLine: 2, endLine: 2 }, ctx)), '   2| two\n[lines 2-2 of 3]');
      assert.equal(ok(await runTool('read_file', { path: 'a.js', startLine: 2, endLine: 99 }, ctx)), '   2| two\n   3| three\n[lines 2-3 of 3; end of file]');
      assert.match(failed(await runTool('read_file', { path: 'a.js', startLine: 9 }, ctx)), /startLine 9 is past the end of a\.js, which has 3 lines/);
      populate(root, { 'empty.txt': '', 'last.txt': 'no newline at end' });
      assert.equal(ok(await runTool('read_file', { path: 'empty.txt' }, ctx)), '[empty.txt is empty: 0 lines]');
      assert.equal(ok(await runTool('read_file', { path: 'last.txt' }, ctx)), '   1| no newline at end\n[lines 1-1 of 1; end of file]');
    });

    it('stops at 2,000 lines and says which startLine reads further', async () => {
      const lines = Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`);
      populate(root, { 'big.txt': `${lines.join('\n')}\n` });
      const { ctx } = harness(root);
      const first = ok(await runTool('read_file', { path: 'big.txt' }, ctx)).split('\n');
      assert.equal(first.length, 2001);
      assert.equal(first[0], '   1| line 1');
      assert.equal(first[1999], '2000| line 2000');
      assert.equal(first[2000], '[lines 1-2000 of 2500 shown (the 2000-line limit); to read further, call read_file with startLine 2001]');
      const rest = ok(await runTool('read_file', { path: 'big.txt', startLine: 2001 }, ctx)).split('\n');
      assert.equal(rest[0], '2001| line 2001');
      assert.equal(rest.at(-1), '[lines 2001-2500 of 2500; end of file]');
    });

    it('stops at maxOutputChars with the same continuation note, and clips a single huge line', async () => {
      const lines = Array.from({ length: 100 }, (_, i) => `${String(i + 1).padStart(3, '0')} ${'x'.repeat(96)}`);
      populate(root, { 'wide.txt': `${lines.join('\n')}\n`, 'min.js': 'y'.repeat(50_000) });
      const { ctx } = harness(root, { maxOutputChars: 2_000 });
      const out = ok(await runTool('read_file', { path: 'wide.txt' }, ctx));
      assert.ok(out.length <= 2_000, String(out.length));
      const shown = out.split('\n').filter((l) => /^ *\d+\| /.test(l)).length;
      assert.ok(shown >= 10 && shown < 100, String(shown));
      assert.ok(out.endsWith(`to read further, call read_file with startLine ${shown + 1}]`), out.slice(-200));
      const min = ok(await runTool('read_file', { path: 'min.js' }, ctx));
      assert.ok(min.length <= 2_000, String(min.length));
      assert.match(min, /^ {3}1\| y+ … \[line clipped\]\n\[lines 1-1 of 1; end of file\]\n\[line 1 is longer than the limit and was clipped\]$/);
    });

    it('refuses binary files, folders and missing files clearly', async () => {
      populate(root, { 'img.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]), 'dir/x.txt': 'x' });
      const { ctx } = harness(root);
      assert.equal(failed(await runTool('read_file', { path: 'img.png' }, ctx)), 'img.png is a binary file (7 bytes); not shown');
      assert.match(failed(await runTool('read_file', { path: 'dir' }, ctx)), /^dir is a folder, not a file; use list_dir/);
      assert.match(failed(await runTool('read_file', { path: 'nope.txt' }, ctx)), /^nope\.txt does not exist/);
    });
  });

  describe('list_dir', () => {
    it('lists sorted entries, folders with a slash, files with sizes', async () => {
      populate(root, { 'b.txt': 'hello', 'a/inner.txt': '', 'c.md': '12345678' });
      fs.symlinkSync('b.txt', path.join(root, 'link'));
      const { ctx } = harness(root);
      assert.equal(ok(await runTool('list_dir', {}, ctx)), 'a/\nb.txt (5 bytes)\nc.md (8 bytes)\nlink -> b.txt');
      assert.equal(ok(await runTool('list_dir', { path: 'a' }, ctx)), 'inner.txt (0 bytes)');
      assert.match(failed(await runTool('list_dir', { path: 'b.txt' }, ctx)), /b\.txt is a file, not a folder/);
    });

    it('caps at 1,000 entries with a note', async () => {
      for (let i = 0; i < 1003; i++) fs.writeFileSync(path.join(root, `f${String(i).padStart(4, '0')}`), '');
      const lines = ok(await runTool('list_dir', { path: '.' }, harness(root).ctx)).split('\n');
      assert.equal(lines.length, 1001);
      assert.equal(lines[999], 'f0999 (0 bytes)');
      assert.equal(lines[1000], '[1000 of 1003 entries shown; list a subfolder or use glob to narrow]');
    });
  });

  describe('glob', () => {
    beforeEach(() => {
      populate(root, {
        'index.js': '',
        'src/a.js': '',
        'src/b.ts': '',
        'src/deep/c.js': '',
        'test/a.test.js': '',
        'lib/x1.js': '',
        'lib/xy.js': '',
        'node_modules/pkg/index.js': '',
        '.git/hooks/pre-commit.js': '',
        '.github/workflow.yml': '',
      });
    });

    it('"**/*.js" finds every depth but skips node_modules and .git; output is sorted, workspace-relative', async () => {
      const { ctx } = harness(root);
      assert.equal(
        ok(await runTool('glob', { pattern: '**/*.js' }, ctx)),
        ['index.js', 'lib/x1.js', 'lib/xy.js', 'src/a.js', 'src/deep/c.js', 'test/a.test.js'].join('\n'),
      );
      assert.equal(ok(await runTool('glob', { pattern: '*.js' }, ctx)), 'index.js');
      assert.equal(ok(await runTool('glob', { pattern: 'node_modules/**/*.js' }, ctx)), 'node_modules/pkg/index.js');
      assert.equal(ok(await runTool('glob', { pattern: '**/*.yml' }, ctx)), '.github/workflow.yml');
    });

    it('supports {a,b}, ?, classes and a base path', async () => {
      const { ctx } = harness(root);
      assert.equal(ok(await runTool('glob', { pattern: '{src,test}/*.{js,ts}' }, ctx)), 'src/a.js\nsrc/b.ts\ntest/a.test.js');
      assert.equal(ok(await runTool('glob', { pattern: 'lib/x?.js' }, ctx)), 'lib/x1.js\nlib/xy.js');
      assert.equal(ok(await runTool('glob', { pattern: 'lib/x[0-9].js' }, ctx)), 'lib/x1.js');
      assert.equal(ok(await runTool('glob', { pattern: 'lib/x[!0-9].js' }, ctx)), 'lib/xy.js');
      assert.equal(ok(await runTool('glob', { pattern: '**/*.js', path: 'src' }, ctx)), 'src/a.js\nsrc/deep/c.js');
      assert.match(ok(await runTool('glob', { pattern: '**/*.rs' }, ctx)), /^No files match "\*\*\/\*\.rs"/);
      assert.match(failed(await runTool('glob', { pattern: '../**' }, ctx)), /may not contain "\.\." segments/);
    });

    it('the matcher itself: globstar, braces, escapes, matchBase, pruning', () => {
      assert.deepEqual(expandBraces('a{b,c{d,e}}f'), ['abf', 'acdf', 'acef']);
      assert.deepEqual(expandBraces('{x}'), ['{x}']);
      const m = compileGlob('src/**/test/*.ts');
      assert.ok(m.matches('src/test/a.ts'));
      assert.ok(m.matches('src/a/b/test/a.ts'));
      assert.ok(!m.matches('src/a/b/test/x/a.ts'));
      assert.ok(!m.matches('lib/test/a.ts'));
      assert.ok(m.mayContain('src/a'));
      assert.ok(!m.mayContain('lib'));
      assert.ok(compileGlob('\\*.md').matches('*.md'));
      assert.ok(!compileGlob('\\*.md').matches('a.md'));
      assert.ok(compileGlob('*.ts', { matchBase: true }).matches('a/b/c.ts'));
      assert.ok(!compileGlob('*.ts').matches('a/b/c.ts'));
      assert.ok(compileGlob('[]]x').matches(']x'));
      assert.ok(compileGlob('a.(b)+').matches('a.(b)+'), 'regex characters are literal');
    });

    it('caps at 1,000 paths with a note', async () => {
      for (let i = 0; i < 1010; i++) fs.writeFileSync(path.join(root, 'lib', `m${String(i).padStart(4, '0')}.md`), '');
      const lines = ok(await runTool('glob', { pattern: 'lib/*.md' }, harness(root).ctx)).split('\n');
      assert.equal(lines.length, 1001);
      assert.equal(lines[0], 'lib/m0000.md');
      assert.equal(lines[1000], '[1000 of 1010 matching files shown; narrow the pattern or the path]');
    });
  });

  describe('grep', () => {
    beforeEach(() => {
      populate(root, {
        'src/a.ts': 'const total = price * 2;\nconsole.log(Total);\n',
        'src/b.js': 'let x = a.b(1);\r\nfunction Foo() {}\n',
        'docs/readme.md': 'Total: see a.b(1)\n',
        'node_modules/dep/index.js': 'total\n',
        '.git/config': 'total\n',
        'bin/tool': Buffer.concat([Buffer.from('total'), Buffer.from([0, 1, 2])]),
      });
    });

    it('a regular expression runs off the thread with a deadline and matches the head of a very long line; literal search sees it all', async () => {
      populate(root, { 'min.js': `${'x'.repeat(5000)}needle\n` });
      const { ctx } = harness(root);
      assert.match(ok(await runTool('grep', { pattern: 'needle', path: 'min.js' }, ctx)), /min\.js:1:/);
      assert.doesNotMatch(ok(await runTool('grep', { pattern: 'ne+dle', regex: true, path: 'min.js' }, ctx)), /min\.js:1:/);
      // A catastrophically backtracking pattern is stopped at its deadline, with a clear error, and the thread stays free.
      const started = Date.now();
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 100);
      const outcome = await runTool('grep', { pattern: '(x+x+)+y', regex: true, path: 'min.js' }, ctx);
      clearInterval(ticker);
      assert.match(failed(outcome), /took over 5 s on min\.js and was stopped/);
      assert.ok(Date.now() - started < 9_000);
      assert.ok(ticks >= 30, `the event loop kept running (${ticks} ticks)`);
    });

    it('literal, case-insensitive by default; case-sensitive on request; skips node_modules, .git and binaries', async () => {
      const { ctx } = harness(root);
      assert.equal(
        ok(await runTool('grep', { pattern: 'total' }, ctx)),
        'docs/readme.md:1: Total: see a.b(1)\nsrc/a.ts:1: const total = price * 2;\nsrc/a.ts:2: console.log(Total);\n[3 matches in 2 files; 3 files searched; 1 binary file skipped]',
      );
      assert.equal(
        ok(await runTool('grep', { pattern: 'Total', caseSensitive: true, path: 'src' }, ctx)),
        'src/a.ts:2: console.log(Total);\n[1 match in 1 file; 2 files searched]',
      );
      assert.match(ok(await runTool('grep', { pattern: 'a.b(1)' }, ctx)), /^docs\/readme\.md:1: .*\nsrc\/b\.js:1: let x = a\.b\(1\);\n\[2 matches/);
      assert.match(ok(await runTool('grep', { pattern: 'zebra' }, ctx)), /^No matches for "zebra" in the workspace \(3 files searched; 1 binary file skipped\)$/);
      assert.match(ok(await runTool('grep', { pattern: 'total', path: 'src/a.ts' }, ctx)), /^src\/a\.ts:1: /);
    });

    it('regex and include', async () => {
      const { ctx } = harness(root);
      assert.equal(
        ok(await runTool('grep', { pattern: '^function \\w+\\(\\)', regex: true, caseSensitive: true }, ctx)),
        'src/b.js:2: function Foo() {}\n[1 match in 1 file; 3 files searched; 1 binary file skipped]',
      );
      assert.match(ok(await runTool('grep', { pattern: 'b\\(1\\);$', regex: true }, ctx)), /^src\/b\.js:1: let x = a\.b\(1\);\n/, 'CR is not part of the line');
      const included = ok(await runTool('grep', { pattern: 'total', include: '*.{ts,md}' }, ctx));
      assert.match(included, /^docs\/readme\.md:1: .*\nsrc\/a\.ts:1: .*\nsrc\/a\.ts:2: .*\n\[3 matches in 2 files; 2 files searched\]$/);
      assert.equal(ok(await runTool('grep', { pattern: 'total', include: 'src/**/*.ts' }, ctx)).split('\n').length, 3);
      assert.equal(
        ok(await runTool('grep', { pattern: 'total', include: 'node_modules/**' }, ctx)),
        'node_modules/dep/index.js:1: total\n[1 match in 1 file; 1 file searched]',
      );
    });

    it('an invalid regex is a clear error', async () => {
      const out = failed(await runTool('grep', { pattern: 'foo(', regex: true }, harness(root).ctx));
      assert.match(out, /^Invalid regular expression "foo\(": Unterminated group\. Fix it, or set regex to false/);
    });

    it('stops at maxResults, clips long lines around the match, skips files over 2 MB', async () => {
      populate(root, {
        'many.txt': Array.from({ length: 30 }, (_, i) => `hit ${i}`).join('\n'),
        'long.txt': `${'a'.repeat(1000)}NEEDLE${'b'.repeat(1000)}\n`,
        'huge.txt': `hit\n${'z'.repeat(2 * 1024 * 1024)}`,
      });
      const { ctx } = harness(root);
      const out = ok(await runTool('grep', { pattern: 'hit', maxResults: 5 }, ctx)).split('\n');
      assert.equal(out.length, 6);
      assert.equal(out[4], 'many.txt:5: hit 4');
      assert.match(out[5]!, /^\[5 matches in 1 file; .*stopped after 5 matches; there are more/);
      const long = ok(await runTool('grep', { pattern: 'needle', path: 'long.txt' }, ctx)).split('\n')[0]!;
      assert.ok(long.includes('NEEDLE'), long);
      assert.ok(long.length <= 'long.txt:1: '.length + 302, String(long.length));
      assert.match(ok(await runTool('grep', { pattern: 'hit', path: 'huge.txt' }, ctx)), /1 file over 2 MB skipped/);
    });

    it('honours cancellation', async () => {
      for (let i = 0; i < 300; i++) populate(root, { [`gen/f${i}.txt`]: 'needle\n' });
      const controller = new AbortController();
      const pending = runTool('grep', { pattern: 'needle', maxResults: 2000 }, harness(root, { signal: controller.signal }).ctx);
      controller.abort();
      await assert.rejects(pending, (e: Error) => e.name === 'AbortError');
    });
  });

  describe('edit_file', () => {
    it('refuses to edit a file changed since the model read it (on disk, or its open buffer typed in); its own edits and writes keep it known', async () => {
      populate(root, { 'c.js': 'const x = 1;\nconst y = 2;\n' });
      const seen = new SeenFiles();
      const h = harness(root);
      const ctx = { ...h.ctx, seen };
      ok(await runTool('read_file', { path: 'c.js' }, ctx));
      ok(await runTool('edit_file', { path: 'c.js', oldText: 'const x = 1;', newText: 'const x = 10;' }, ctx));
      // Its own edit is what it knows: a second edit goes through.
      ok(await runTool('edit_file', { path: 'c.js', oldText: 'const y = 2;', newText: 'const y = 20;' }, ctx));
      // Someone else changes the file (a later mtime and another size).
      const file = path.join(root, 'c.js');
      fs.writeFileSync(file, 'const x = 10;\nconst y = 20;\nconst z = 3; // added by the user\n');
      fs.utimesSync(file, new Date(), new Date(Date.now() + 5000));
      assert.match(failed(await runTool('edit_file', { path: 'c.js', oldText: 'const y = 20;', newText: 'const y = 2;' }, ctx)), /c\.js changed since you last read it .*nothing was written\. Read it again/);
      assert.match(fs.readFileSync(file, 'utf8'), /const y = 20;/, 'not edited');
      ok(await runTool('read_file', { path: 'c.js' }, ctx));
      ok(await runTool('edit_file', { path: 'c.js', oldText: 'const y = 20;', newText: 'const y = 2;' }, ctx));
      // An open buffer typed in after the read is a change too.
      const real = fs.realpathSync(file);
      const buffers = new Map<string, string>([[real, fs.readFileSync(file, 'utf8')]]);
      const files = {
        openText: async (f: string) => buffers.get(f),
        replace: async (f: string, _rel: string, before: string, after: string) => (buffers.get(f) === before ? (buffers.set(f, after), {}) : undefined),
      };
      const editor = { ...ctx, files };
      // Opening the file the model read (its buffer holds the same text) changes nothing.
      ok(await runTool('edit_file', { path: 'c.js', oldText: 'const y = 2;', newText: 'const y = 22;' }, editor));
      // Its edit is in the unsaved buffer: a read shows the buffer, and the next edit goes through.
      assert.match(ok(await runTool('read_file', { path: 'c.js' }, editor)), /const y = 22;/);
      ok(await runTool('edit_file', { path: 'c.js', oldText: 'const y = 22;', newText: 'const y = 23;' }, editor));
      buffers.set(real, `${buffers.get(real)}// typed, unsaved\n`);
      assert.match(failed(await runTool('edit_file', { path: 'c.js', oldText: 'const x = 10;', newText: 'const x = 1;' }, editor)), /changed since you last read it/);
      // A file the model wrote whole is known without a read.
      ok(await runTool('write_file', { path: 'd.js', content: 'one\n' }, ctx));
      ok(await runTool('edit_file', { path: 'd.js', oldText: 'one', newText: 'two' }, ctx));
      // Without a record of what was seen (another agent's call), nothing is refused.
      fs.writeFileSync(path.join(root, 'd.js'), 'three\n');
      ok(await runTool('edit_file', { path: 'd.js', oldText: 'three', newText: 'four' }, h.ctx));
    });

    it('through the editor: the open buffer (unsaved changes included) is what is edited; a buffer changed meanwhile is a conflict', async () => {
      populate(root, { 'b.js': 'let a = 1;\n' });
      const buffers = new Map<string, string>([[fs.realpathSync(path.join(root, 'b.js')), 'let a = 1;\nlet unsaved = true;\n']]);
      const replaced: [string, string, string][] = [];
      const files = {
        openText: async (file: string) => buffers.get(file),
        replace: async (file: string, rel: string, before: string, after: string) => {
          if (buffers.get(file) !== before) return undefined;
          buffers.set(file, after);
          replaced.push([rel, before, after]);
          return { note: 'applied to the open, unsaved buffer' };
        },
      };
      const h = harness(root);
      const out = ok(await runTool('edit_file', { path: 'b.js', oldText: 'let unsaved = true;', newText: 'let unsaved = false;' }, { ...h.ctx, files }));
      assert.match(out, /^Edited b\.js: 1 replacement, -1 line \+1 line \(applied to the open, unsaved buffer\)/);
      assert.deepEqual(replaced, [['b.js', 'let a = 1;\nlet unsaved = true;\n', 'let a = 1;\nlet unsaved = false;\n']]);
      assert.equal(fs.readFileSync(path.join(root, 'b.js'), 'utf8'), 'let a = 1;\n', 'the disk is the editor\'s business');
      // The buffer changes between the approval and the write: nothing is written, the model is told.
      const racing = { ...files, replace: async () => undefined };
      assert.match(failed(await runTool('edit_file', { path: 'b.js', oldText: 'let a = 1;', newText: 'let a = 2;' }, { ...h.ctx, files: racing })), /b\.js changed while the change waited for approval; nothing was written/);
      // write_file over an open file goes through the editor too.
      assert.match(ok(await runTool('write_file', { path: 'b.js', content: 'new\n' }, { ...h.ctx, files })), /^Overwrote b\.js \(4 bytes, 1 line; was 11 bytes\) \(applied to the open, unsaved buffer\)\.$/);
    });

    it('not found, ambiguous, declined: the file is untouched', async () => {
      populate(root, { 'm.js': 'let a = 1;\nlet b = 1;\n' });
      const h = harness(root, { answer: false });
      assert.match(failed(await runTool('edit_file', { path: 'm.js', oldText: 'let c', newText: 'x' }, h.ctx)), /^oldText not found in m\.js\./);
      assert.match(
        failed(await runTool('edit_file', { path: 'm.js', oldText: '= 1;', newText: '= 2;' }, h.ctx)),
        /^oldText found 2 times in m\.js; give more context/,
      );
      assert.equal(h.requests.length, 0);
      assert.equal(failed(await runTool('edit_file', { path: 'm.js', oldText: 'let a = 1;', newText: 'let a = 2;' }, h.ctx)), 'The user declined the edit to m.js.');
      assert.equal(h.requests.length, 1);
      assert.deepEqual(h.requests[0], {
        kind: 'edit',
        title: 'Edit m.js',
        path: 'm.js',
        before: 'let a = 1;\nlet b = 1;\n',
        after: 'let a = 2;\nlet b = 1;\n',
      });
      assert.equal(fs.readFileSync(path.join(root, 'm.js'), 'utf8'), 'let a = 1;\nlet b = 1;\n');
    });

    it('applies after approval, atomically, with a unified-style summary', async () => {
      populate(root, { 'src/math.js': 'function add(a, b) {\n  return a - b;\n}\n' });
      fs.chmodSync(path.join(root, 'src/math.js'), 0o755);
      const h = harness(root);
      const out = ok(await runTool('edit_file', { path: 'src/math.js', oldText: '  return a - b;', newText: '  // fixed\n  return a + b;' }, h.ctx));
      assert.equal(out, 'Edited src/math.js: 1 replacement, -1 line +2 lines\n@@ -2,1 +2,2 @@\n-  return a - b;\n+  // fixed\n+  return a + b;');
      assert.equal(fs.readFileSync(path.join(root, 'src/math.js'), 'utf8'), 'function add(a, b) {\n  // fixed\n  return a + b;\n}\n');
      assert.equal(fs.statSync(path.join(root, 'src/math.js')).mode & 0o777, 0o755, 'mode kept');
      assert.deepEqual(fs.readdirSync(path.join(root, 'src')), ['math.js'], 'no temp file left');
      assert.equal(h.requests[0]?.kind, 'edit');
    });

    it('keeps CRLF line endings, whatever endings oldText/newText use; replaceAll', async () => {
      populate(root, { 'w.txt': 'a = 1\r\nb = 1\r\nc = 2\r\n' });
      const h = harness(root);
      ok(await runTool('edit_file', { path: 'w.txt', oldText: 'a = 1\nb = 1', newText: 'a = 10\nb = 10\nb2 = 10' }, h.ctx));
      assert.equal(fs.readFileSync(path.join(root, 'w.txt'), 'utf8'), 'a = 10\r\nb = 10\r\nb2 = 10\r\nc = 2\r\n');
      assert.equal(h.requests[0]?.after, 'a = 10\r\nb = 10\r\nb2 = 10\r\nc = 2\r\n');
      const out = ok(await runTool('edit_file', { path: 'w.txt', oldText: '10', newText: '11', replaceAll: true }, h.ctx));
      assert.match(out, /^Edited w\.txt: 3 replacements, -3 lines \+3 lines\n@@ -1,3 \+1,3 @@/);
      assert.equal(fs.readFileSync(path.join(root, 'w.txt'), 'utf8'), 'a = 11\r\nb = 11\r\nb2 = 11\r\nc = 2\r\n');
    });

    it('refuses a binary file and an edit that changes nothing; replacement text with $ is literal', async () => {
      populate(root, { 'b.bin': Buffer.from([1, 0, 2]), 't.txt': 'price\n' });
      const { ctx } = harness(root);
      assert.match(failed(await runTool('edit_file', { path: 'b.bin', oldText: 'x', newText: 'y' }, ctx)), /binary file/);
      assert.match(failed(await runTool('edit_file', { path: 't.txt', oldText: 'price', newText: 'price' }, ctx)), /the same/);
      ok(await runTool('edit_file', { path: 't.txt', oldText: 'price', newText: "$& $1 $'" }, ctx));
      assert.equal(fs.readFileSync(path.join(root, 't.txt'), 'utf8'), "$& $1 $'\n");
    });
  });

  describe('write_file', () => {
    it('creates a file with its parent folders, then overwrites it, asking each time', async () => {
      const h = harness(root);
      assert.equal(ok(await runTool('write_file', { path: 'a/b/new.txt', content: 'héllo\nworld\n' }, h.ctx)), 'Created a/b/new.txt (13 bytes, 2 lines).');
      assert.deepEqual(h.requests[0], { kind: 'write', title: 'Create a/b/new.txt', path: 'a/b/new.txt', after: 'héllo\nworld\n' });
      assert.equal(fs.readFileSync(path.join(root, 'a/b/new.txt'), 'utf8'), 'héllo\nworld\n');
      assert.equal(ok(await runTool('write_file', { path: 'a/b/new.txt', content: 'x' }, h.ctx)), 'Overwrote a/b/new.txt (1 bytes, 1 line; was 13 bytes).');
      assert.deepEqual(h.requests[1], { kind: 'write', title: 'Overwrite a/b/new.txt', path: 'a/b/new.txt', before: 'héllo\nworld\n', after: 'x' });
      assert.equal(fs.readFileSync(path.join(root, 'a/b/new.txt'), 'utf8'), 'x');
    });

    it('declined: nothing is written', async () => {
      const h = harness(root, { answer: false });
      assert.equal(failed(await runTool('write_file', { path: 'sub/x.txt', content: 'x' }, h.ctx)), 'The user declined the write to sub/x.txt.');
      assert.ok(!fs.existsSync(path.join(root, 'sub')));
      populate(root, { 'dir/keep.txt': 'k' });
      assert.match(failed(await runTool('write_file', { path: 'dir', content: 'x' }, h.ctx)), /dir is a folder/);
    });
  });

  describe('run_command', () => {
    it('exit 0 and non-zero end with "exit code: N"; stdout and stderr interleave; asks first', async () => {
      const h = harness(root);
      const good = await runTool('run_command', { command: 'echo one; echo two >&2; echo three' }, h.ctx);
      assert.deepEqual(good, { isError: false, output: 'one\ntwo\nthree\nexit code: 0' });
      assert.deepEqual(h.requests[0], { kind: 'run', title: 'Run `echo one; echo two >&2; echo three`', command: 'echo one; echo two >&2; echo three', cwd: '.' });
      const bad = await runTool('run_command', { command: 'echo failing >&2; exit 3' }, h.ctx);
      assert.deepEqual(bad, { isError: true, output: 'failing\nexit code: 3' });
      populate(root, { 'sub/marker.txt': '' });
      assert.equal(ok(await runTool('run_command', { command: 'ls', cwd: 'sub' }, h.ctx)), 'marker.txt\nexit code: 0');
      assert.equal(ok(await runTool('run_command', { command: 'true' }, h.ctx)), '(no output)\nexit code: 0');
    });

    it('without a terminal, the platform shell runs it: /bin/sh in its own group on POSIX, %ComSpec% /d /s /c on Windows', () => {
      assert.deepEqual(shellInvocation('npm test', 'linux'), { file: '/bin/sh', args: ['-c', 'exec 2>&1; npm test'], group: true, verbatim: false });
      assert.deepEqual(shellInvocation('npm test && echo "done"', 'win32', 'C:\\Windows\\system32\\cmd.exe'), {
        file: 'C:\\Windows\\system32\\cmd.exe',
        args: ['/d', '/s', '/c', '"npm test && echo "done""'],
        group: false,
        verbatim: true,
      });
      assert.equal(shellInvocation('dir', 'win32', undefined).file, 'cmd.exe');
    });

    it('declined: nothing runs', async () => {
      const h = harness(root, { answer: false });
      assert.equal(failed(await runTool('run_command', { command: 'touch ran.txt' }, h.ctx)), 'The user declined to run `touch ran.txt`.');
      assert.ok(!fs.existsSync(path.join(root, 'ran.txt')));
    });

    it('a timeout kills the whole process group', async () => {
      const started = Date.now();
      const out = failed(await runTool('run_command', { command: 'echo started; sleep 5 & echo $! > child.pid; sleep 5', timeoutSeconds: 1 }, harness(root).ctx));
      const elapsed = Date.now() - started;
      assert.equal(out, 'started\nkilled: timeout after 1s');
      assert.ok(elapsed < 4_500, `took ${elapsed} ms (an unkilled run takes 5 s)`);
      const child = Number(fs.readFileSync(path.join(root, 'child.pid'), 'utf8'));
      assert.ok(await waitFor(() => !alive(child), 1_000), 'the background sleep died with the group');
    });

    it('cancellation kills the group and rejects with an AbortError', async () => {
      const controller = new AbortController();
      const started = Date.now();
      const pending = runTool('run_command', { command: 'sleep 30 & echo $! > child.pid; wait' }, harness(root, { signal: controller.signal }).ctx);
      const pidFile = path.join(root, 'child.pid');
      assert.ok(await waitFor(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() !== '', 3_000));
      const child = Number(fs.readFileSync(pidFile, 'utf8'));
      assert.ok(alive(child));
      controller.abort();
      await assert.rejects(pending, (e: Error & { outcome?: ToolOutcome }) => {
        assert.equal(e.name, 'AbortError');
        assert.match(e.outcome?.output ?? '', /killed: cancelled$/);
        return true;
      });
      assert.ok(Date.now() - started < 4_000);
      assert.ok(await waitFor(() => !alive(child), 1_000), 'the background sleep died with the group');
    });

    it('50 MB of output is clipped to head and tail while memory stays bounded', async () => {
      const maxOutputChars = 20_000;
      const before = process.memoryUsage().heapUsed;
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().heapUsed);
      }, 5);
      let outcome: ToolOutcome;
      try {
        outcome = await runTool('run_command', { command: 'echo FIRST; yes | head -c 50000000; echo; echo LAST' }, harness(root, { maxOutputChars }).ctx);
      } finally {
        clearInterval(sampler);
      }
      const out = ok(outcome);
      assert.ok(out.length <= maxOutputChars, String(out.length));
      assert.ok(out.startsWith('FIRST\ny\ny\n'), out.slice(0, 20));
      assert.ok(out.endsWith('y\ny\n\nLAST\nexit code: 0'), out.slice(-40));
      const marker = /\n\[\.\.\. (\d+) characters cut from the middle of the output \.\.\.\]\n/.exec(out);
      assert.ok(marker, 'marker present');
      const total = 'FIRST\n'.length + 50_000_000 + '\nLAST\n'.length;
      const kept = out.length - marker[0].length - 'exit code: 0'.length + 1;
      assert.equal(Number(marker[1]) + kept, total, 'the marker counts exactly the characters cut');
      assert.ok(peak - before < 40 * 1024 * 1024, `heap grew by ${Math.round((peak - before) / 1024 / 1024)} MB`);
    });
  });

  describe('view_tool_call', () => {
    it('shows an earlier call in full, clips a long one, and reports an unknown id', async () => {
      const calls: Record<string, CallView> = {
        t1: { name: 'read_file', input: '{"path":"a.ts"}', output: '   1| hello', isError: false },
        t2: { name: 'run_command', input: '{"command":"x"}', output: `${'a'.repeat(3000)}MIDDLE${'z'.repeat(3000)}`, isError: true },
      };
      const { ctx } = harness(root, { calls, maxOutputChars: 1_500 });
      assert.equal(ok(await runTool('view_tool_call', { toolCallId: 't1' }, ctx)), 'Tool call t1: read_file\nInput:\n{"path":"a.ts"}\nOutput:\n   1| hello');
      const long = ok(await runTool('view_tool_call', { toolCallId: 't2' }, ctx));
      assert.ok(long.length <= 1_500, String(long.length));
      assert.ok(long.startsWith('Tool call t2: run_command (failed)\nInput:\n{"command":"x"}\nOutput:\naaa'));
      assert.ok(!long.includes('MIDDLE'));
      assert.match(long, /characters cut from the middle/);
      assert.match(long, /zzz\n\[clipped: the full text has 6\d{3} characters\]$/);
      assert.equal(failed(await runTool('view_tool_call', { toolCallId: 'nope' }, ctx)), 'No tool call with id "nope" in this session');
    });
  });

  describe('todo', () => {
    it('renders the plan as a checklist', async () => {
      const out = ok(
        await runTool(
          'todo',
          {
            todos: [
              { content: 'Write the failing test', status: 'completed' },
              { content: 'Fix the parser', status: 'in_progress' },
              { content: 'Update the docs', status: 'pending' },
            ],
          },
          harness(root).ctx,
        ),
      );
      assert.equal(out, 'Plan (1/3 completed):\n- [x] Write the failing test\n- [~] Fix the parser\n- [ ] Update the docs');
      assert.equal(ok(await runTool('todo', { todos: [] }, harness(root).ctx)), 'Plan cleared (no items).');
    });

    it('allows at most one item in progress', async () => {
      const out = failed(
        await runTool(
          'todo',
          {
            todos: [
              { content: 'a', status: 'in_progress' },
              { content: 'b', status: 'pending' },
              { content: 'c', status: 'in_progress' },
            ],
          },
          harness(root).ctx,
        ),
      );
      assert.equal(out, 'Invalid input for todo:\n- Field "todos" may have at most one item in_progress, but items 1, 3 are in_progress.');
    });
  });
});
