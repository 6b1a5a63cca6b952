import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { parseTranscript, TranscriptError } from '../../src/core/transcript';
import type { RawRecord } from '../../src/core/types';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

// Tests run compiled from out/test/unit/: the project root is three levels up.
const PROJECT_ROOT = path.resolve(__dirname, '../../..');
const FIXTURES = path.join(PROJECT_ROOT, 'test/fixtures/transcripts');
const CORPUS = process.env.CONTEXT_KEEPER_CORPUS ?? path.resolve(__dirname, '../../../../shared/corpus');

/** Skip a corpus test, saying why in the test's title (mocha's skip() takes no reason). */
function skipWithoutCorpus(ctx: Mocha.Context, folder: string): never {
  if (ctx.test !== undefined) {
    ctx.test.title += ` (skipped: no corpus at ${folder}; set CONTEXT_KEEPER_CORPUS to the shared/corpus folder)`;
  }
  return ctx.skip();
}

function fixture(name: string): string {
  return fs.readFileSync(path.join(FIXTURES, name), 'utf8');
}

function lines(...values: unknown[]): string {
  return values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('\n');
}

/** The record without its index, for comparison. */
function strip(record: RawRecord): Omit<RawRecord, 'index'> {
  const { index: _index, ...rest } = record;
  return rest;
}

function assertIndexes(records: readonly RawRecord[]): void {
  records.forEach((r, i) => assert.equal(r.index, i, `record ${i} has index ${r.index}`));
}

function expectError(text: string, pattern: RegExp): TranscriptError {
  let caught: unknown;
  try {
    parseTranscript(text, redactor);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof TranscriptError, `expected a TranscriptError, got ${String(caught)}`);
  assert.match(caught.message, pattern);
  assert.ok(!caught.message.includes('\n'), 'the error message is one line');
  return caught;
}

describe('transcript: interchange format', () => {
  it('maps every line to one record with all fields', () => {
    const parsed = parseTranscript(fixture('interchange.jsonl'), redactor);
    assert.equal(parsed.format, 'interchange');
    assert.deepEqual(parsed.warnings, []);
    assertIndexes(parsed.records);
    assert.deepEqual(parsed.records.map(strip), [
      { role: 'system', content: 'Aider v0.85.1', sessionStart: true },
      {
        role: 'user',
        content: 'Add input validation to parse()\nIt must reject empty strings.',
        timestamp: '2026-01-10T10:00:00.000Z',
      },
      {
        role: 'assistant',
        content: 'The user wants validation; read the file first.',
        thinking: true,
        messageId: 'msg_A',
        timestamp: '2026-01-10T10:00:01.000Z',
      },
      {
        role: 'assistant',
        content: '',
        toolName: 'Read',
        toolCallId: 'call_1',
        toolInput: { file_path: 'src/parse.ts' },
        messageId: 'msg_A',
      },
      {
        role: 'tool',
        content: '',
        toolName: 'Read',
        toolCallId: 'call_1',
        toolOutput: '{"lines":2,"text":"export function parse() {}"}',
      },
      {
        role: 'assistant',
        content: '',
        toolName: 'Bash',
        toolCallId: 'call_2',
        toolInput: { command: 'npm test' },
        messageId: 'msg_B',
      },
      { role: 'tool', content: '', toolName: 'Bash', toolCallId: 'call_2', toolOutput: '1 failing', isError: true },
      {
        role: 'user',
        content: 'This session is being continued from a previous conversation.',
        compactSummary: true,
      },
      { role: 'assistant', content: 'Validation added.' },
    ]);
    assert.equal(parsed.title, 'Add input validation to parse()');
  });

  it('accepts missing optional keys and CRLF line endings and a BOM', () => {
    const text = '\uFEFF' + lines({ role: 'user', content: 'hi' }, { role: 'assistant' }).replace('\n', '\r\n') + '\r\n';
    const parsed = parseTranscript(text, redactor);
    assert.deepEqual(parsed.records.map(strip), [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '' },
    ]);
    assert.deepEqual(parsed.warnings, []);
  });
});

describe('transcript: Claude Code session JSONL', () => {
  it('produces one record per block and skips metadata lines silently', () => {
    const parsed = parseTranscript(fixture('claude-code.jsonl'), redactor);
    assert.equal(parsed.format, 'claude-code');
    assert.deepEqual(parsed.warnings, []);
    assertIndexes(parsed.records);
    assert.deepEqual(parsed.records.map(strip), [
      {
        role: 'user',
        content: 'Fix the failing test in parser.ts\nIt throws on empty input',
        timestamp: '2026-01-10T10:00:01.000Z',
      },
      {
        role: 'assistant',
        content: 'Look at the parser first.',
        thinking: true,
        messageId: 'msg_1',
        timestamp: '2026-01-10T10:00:02.000Z',
      },
      {
        role: 'assistant',
        content: 'Let me read the parser.',
        messageId: 'msg_1',
        timestamp: '2026-01-10T10:00:03.000Z',
      },
      {
        role: 'assistant',
        content: '',
        toolName: 'Read',
        toolCallId: 'toolu_1',
        toolInput: { file_path: '/repo/parser.ts' },
        messageId: 'msg_1',
        timestamp: '2026-01-10T10:00:04.000Z',
      },
      {
        role: 'tool',
        content: '',
        toolName: 'Read',
        toolCallId: 'toolu_1',
        toolOutput: '1→export function parse(s) {\n[image]\n2→}',
        timestamp: '2026-01-10T10:00:05.000Z',
      },
      {
        role: 'assistant',
        content: '',
        toolName: 'Bash',
        toolCallId: 'toolu_2',
        toolInput: { command: 'npm test' },
        messageId: 'msg_2',
        timestamp: '2026-01-10T10:00:06.000Z',
      },
      {
        role: 'tool',
        content: '',
        toolName: 'Bash',
        toolCallId: 'toolu_2',
        toolOutput: 'Exit code 1\n1 failing',
        isError: true,
        timestamp: '2026-01-10T10:00:07.000Z',
      },
      { role: 'system', content: 'Conversation compacted', timestamp: '2026-01-10T10:01:00.000Z' },
      {
        role: 'user',
        content:
          'This session is being continued from a previous conversation that ran out of context.\nSummary: fixing parser.',
        compactSummary: true,
        timestamp: '2026-01-10T10:01:01.000Z',
      },
      {
        role: 'user',
        content:
          '<local-command-caveat>Caveat: The messages below were generated by the user while running local commands.</local-command-caveat>',
        // isMeta: written by the harness, not the user
        harness: 'meta',
        timestamp: '2026-01-10T10:01:02.000Z',
      },
      { role: 'user', content: '[image]\nfix these issues too', timestamp: '2026-01-10T10:01:03.000Z' },
      { role: 'assistant', content: 'Sub-agent: done.', messageId: 'msg_3', timestamp: '2026-01-10T10:01:05.000Z' },
      // a result whose call is absent from the log: kept, with no tool name
      {
        role: 'tool',
        content: '',
        toolCallId: 'toolu_lost',
        toolOutput: 'orphan result',
        timestamp: '2026-01-10T10:01:06.000Z',
      },
    ]);
    assert.equal(parsed.title, 'Fix the failing test in parser.ts');
  });

  it('splits a multi-block assistant message into records sharing its message id', () => {
    const parsed = parseTranscript(
      lines({
        type: 'assistant',
        message: {
          id: 'msg_X',
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'plan' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'text', text: 'Running it.' },
            { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } },
            { type: 'tool_use', id: 't2', name: 'Read', input: { file_path: 'a' } },
          ],
        },
      }),
      redactor,
    );
    assert.deepEqual(
      parsed.records.map((r) => [r.role, r.thinking === true, r.toolName, r.messageId]),
      [
        ['assistant', true, undefined, 'msg_X'],
        ['assistant', false, undefined, 'msg_X'],
        ['assistant', false, 'Bash', 'msg_X'],
        ['assistant', false, 'Read', 'msg_X'],
      ],
    );
    assert.deepEqual(parsed.warnings, []);
  });

  it('reports broken blocks and lines and keeps the rest', () => {
    const parsed = parseTranscript(
      lines(
        { type: 'user', message: { role: 'user', content: 'start' } },
        { type: 'user' },
        { type: 'assistant', message: { role: 'assistant', content: 42 } },
        {
          type: 'assistant',
          message: {
            id: 'm',
            content: [
              { type: 'tool_use', name: 'Bash' },
              { type: 'mystery', x: 1 },
              'loose string',
              { type: 'text', text: 'still here' },
            ],
          },
        },
        { message: { role: 'user', content: 'no type' } },
        { type: 'user', message: { content: [{ type: 'tool_result', content: 'x' }] } },
      ),
      redactor,
    );
    assert.deepEqual(
      parsed.records.map((r) => r.content),
      ['start', 'still here'],
    );
    assert.deepEqual(
      parsed.warnings.map((w) => w.line),
      [2, 3, 4, 4, 4, 5, 6],
    );
    assert.match(parsed.warnings[0]?.message ?? '', /^line 2: user line without a "message" object/);
    assert.match(parsed.warnings[1]?.message ?? '', /^line 3: assistant message "content" must be a string or an array/);
    assert.match(parsed.warnings[2]?.message ?? '', /^line 4: block 0: tool_use block without string "id" and "name"/);
    assert.match(parsed.warnings[3]?.message ?? '', /^line 4: block 1: unknown content block type "mystery"/);
    assert.match(parsed.warnings[4]?.message ?? '', /^line 4: block 2: not an object/);
    assert.match(parsed.warnings[5]?.message ?? '', /^line 5: missing "type"/);
    assert.match(parsed.warnings[6]?.message ?? '', /^line 6: block 0: tool_result block without a "tool_use_id"/);
  });
});

describe('transcript: malformed lines', () => {
  it('skips bad lines with 1-based line numbers and keeps going', () => {
    const text = [
      JSON.stringify({ role: 'user', content: 'first' }), // 1
      '', // 2: blank, ignored silently
      '{not json', // 3
      '[1, 2]', // 4
      JSON.stringify({ role: 'bot', content: 'x' }), // 5
      JSON.stringify({ role: 'user', content: 42 }), // 6
      '   ', // 7: blank
      JSON.stringify({ role: 'assistant', content: 'second' }), // 8
      '"just a string"', // 9
      JSON.stringify({ content: 'no role' }), // 10
      JSON.stringify({ role: 'tool', tool_call_id: 7 }), // 11
      JSON.stringify({ role: 'user', content: 'x', meta: 'oops' }), // 12
      JSON.stringify({ role: 'assistant', content: 'third' }), // 13
    ].join('\n');
    const parsed = parseTranscript(text, redactor);
    assert.equal(parsed.format, 'interchange');
    assert.deepEqual(
      parsed.records.map((r) => [r.index, r.content]),
      [
        [0, 'first'],
        [1, 'second'],
        [2, 'third'],
      ],
    );
    assert.deepEqual(
      parsed.warnings.map((w) => w.line),
      [3, 4, 5, 6, 9, 10, 11, 12],
    );
    const messages = parsed.warnings.map((w) => w.message);
    assert.match(messages[0] ?? '', /^line 3: invalid JSON \(.+\)$/);
    assert.equal(messages[1], 'line 4: not a JSON object (got an array)');
    assert.equal(messages[2], 'line 5: unknown role "bot"');
    assert.equal(messages[3], 'line 6: "content" must be a string or null (got a number)');
    assert.equal(messages[4], 'line 9: not a JSON object (got a string)');
    assert.equal(messages[5], 'line 10: missing "role"');
    assert.equal(messages[6], 'line 11: "tool_call_id" must be a string or null (got a number)');
    assert.equal(messages[7], 'line 12: "meta" must be an object or null (got a string)');
  });

  it('reads content given as a list of parts and the "developer" role, and loses none of it', () => {
    const text = [
      JSON.stringify({ role: 'developer', content: 'Be terse.' }),
      JSON.stringify({ role: 'assistant', content: [{ type: 'text', text: 'The cause is `parse()`.' }, { type: 'image', source: {} }, 'Fixed.'] }),
      JSON.stringify({ role: 'user', content: [{ type: 'image' }] }),
    ].join('\n');
    const parsed = parseTranscript(text, redactor);
    assert.deepEqual(
      parsed.records.map((r) => [r.role, r.content]),
      [
        ['system', 'Be terse.'],
        ['assistant', 'The cause is `parse()`.\n\n[image part]\n\nFixed.'],
      ],
    );
    assert.deepEqual(parsed.warnings.map((w) => w.message), ['line 3: "content" is a list with no text part']);
  });

  it('survives NUL bytes and binary garbage', () => {
    const garbage = String.fromCharCode(...Array.from({ length: 64 }, (_, i) => (i * 37) % 256));
    const text = [
      JSON.stringify({ role: 'user', content: 'a\u0000b' }), // escaped NUL: valid JSON
      `{"role": "assistant", "content": "raw\u0000nul"}`, // raw NUL inside a string: invalid JSON
      garbage,
      '\u0000\u0000\u0000',
      JSON.stringify({ role: 'tool', tool_call_id: 'c', tool_output: '\uFFFD\uD800 lone surrogate' }),
    ].join('\n');
    const parsed = parseTranscript(text, redactor);
    assert.deepEqual(
      parsed.records.map((r) => r.role),
      ['user', 'tool'],
    );
    assert.equal(parsed.records[0]?.content, 'a\u0000b');
    assert.deepEqual(
      parsed.warnings.map((w) => w.line),
      [2, 3, 4],
    );
    for (const w of parsed.warnings) {
      assert.match(w.message, /^line \d+: invalid JSON/);
      // eslint-disable-next-line no-control-regex
      assert.doesNotMatch(w.message, /[\u0000-\u001f]/, 'warning is one clean line');
    }
    assert.equal(parsed.title, 'a b', 'control characters are not kept in the title');
  });

  it('throws TranscriptError on an empty or blank file', () => {
    expectError('', /^no usable record in transcript \(empty file\)$/);
    expectError('\n  \n\r\n', /^no usable record in transcript \(empty file\)$/);
  });

  it('throws TranscriptError naming the first problem when every line is bad', () => {
    const err = expectError(
      ['garbage', '{"role": "bot"}', '[]'].join('\n'),
      /^no usable record in transcript \(3 lines, 3 skipped: first problem at line 1: invalid JSON/,
    );
    assert.equal(err.name, 'TranscriptError');
    expectError('{"a": 1}\n{"b": 2}', /2 lines, 2 skipped: first problem at line 1: neither an interchange record/);
  });

  it('throws TranscriptError when a Claude Code file has only metadata lines', () => {
    expectError(
      lines(
        { type: 'file-history-snapshot', snapshot: {} },
        { type: 'summary', summary: 'x' },
        { type: 'system', subtype: 'turn_duration' },
      ),
      /^no usable record in transcript \(3 lines, Claude Code metadata only\)$/,
    );
  });
});

describe('transcript: format detection', () => {
  it('detects Claude Code from the content even when the first lines are metadata or broken', () => {
    const parsed = parseTranscript(
      lines('{broken', { type: 'file-history-snapshot', snapshot: {} }, {
        type: 'user',
        message: { role: 'user', content: 'hello' },
      }),
      redactor,
    );
    assert.equal(parsed.format, 'claude-code');
    assert.deepEqual(
      parsed.records.map((r) => r.content),
      ['hello'],
    );
    assert.deepEqual(
      parsed.warnings.map((w) => w.line),
      [1],
    );
  });

  it('detects interchange from a top-level role', () => {
    const parsed = parseTranscript(lines('', { role: 'system', content: 'banner' }, { role: 'user', content: 'q' }), redactor);
    assert.equal(parsed.format, 'interchange');
    assert.equal(parsed.records.length, 2);
  });

  it('reports lines of the other format as problems, not as records', () => {
    const parsed = parseTranscript(
      lines({ role: 'user', content: 'q' }, { type: 'user', message: { role: 'user', content: 'cc' } }),
      redactor,
    );
    assert.equal(parsed.format, 'interchange');
    assert.equal(parsed.records.length, 1);
    assert.equal(parsed.warnings[0]?.message, 'line 2: missing "role"');
  });
});

describe('transcript: title', () => {
  it('is the first non-blank line of the first user record, at most 80 characters', () => {
    const long = 'x'.repeat(200);
    const parsed = parseTranscript(
      lines({ role: 'system', content: 'banner' }, { role: 'user', content: `\n   ${long}\nsecond` }),
      redactor,
    );
    assert.equal(parsed.title?.length, 80);
    assert.ok(parsed.title?.endsWith('…'));
  });

  it('is undefined without a user record', () => {
    assert.equal(parseTranscript(lines({ role: 'assistant', content: 'hi' }), redactor).title, undefined);
  });
});

describe('transcript: size', () => {
  it('parses a line holding a 50 MB tool output', function () {
    this.timeout(30_000);
    const big = 'y'.repeat(50 * 1024 * 1024);
    const text = lines(
      { role: 'user', content: 'dump it' },
      `{"role":"tool","tool_call_id":"c1","tool_output":"${big}"}`,
      { role: 'assistant', content: 'done' },
    );
    const parsed = parseTranscript(text, redactor);
    assert.equal(parsed.records.length, 3);
    assert.equal(parsed.records[1]?.toolOutput?.length, big.length);
  });

  it('parses 200k lines in linear time', function () {
    this.timeout(30_000);
    const line = JSON.stringify({ role: 'assistant', content: 'ok' });
    const text = Array.from({ length: 200_000 }, () => line).join('\n');
    const started = Date.now();
    const parsed = parseTranscript(text, redactor);
    assert.equal(parsed.records.length, 200_000);
    assert.equal(parsed.records[199_999]?.index, 199_999);
    assert.ok(Date.now() - started < 10_000, 'well under 10 s');
  });
});

describe('transcript: real corpus', () => {
  it('yields records from every interchange session and every raw Claude Code file', function () {
    this.timeout(60_000);
    if (!fs.existsSync(CORPUS)) skipWithoutCorpus(this, CORPUS);
    const files: string[] = [];
    const sessions = path.join(CORPUS, 'sessions');
    for (const name of fs.readdirSync(sessions).sort()) {
      if (name.endsWith('.jsonl')) files.push(path.join(sessions, name));
    }
    const rawRoot = path.join(CORPUS, 'raw', 'claude-code-jsonl');
    for (const dir of fs.readdirSync(rawRoot).sort()) {
      for (const name of fs.readdirSync(path.join(rawRoot, dir)).sort()) {
        if (name.endsWith('.jsonl')) files.push(path.join(rawRoot, dir, name));
      }
    }
    assert.ok(files.length > 0, `no transcript found under ${CORPUS}`);
    let rawCount = 0;
    for (const file of files) {
      const parsed = parseTranscript(fs.readFileSync(file, 'utf8'), redactor);
      const label = path.relative(CORPUS, file);
      assert.ok(parsed.records.length > 0, `${label}: no record`);
      assertIndexes(parsed.records);
      if (file.startsWith(rawRoot)) {
        rawCount++;
        assert.equal(parsed.format, 'claude-code', label);
      } else {
        assert.equal(parsed.format, 'interchange', label);
        // A reused tool-call id is reported but the line is read (SWE-agent reuses them): clean means nothing skipped.
        assert.deepEqual(parsed.warnings.filter((w) => !w.kept), [], `${label}: converted sessions are clean`);
      }
    }
    assert.ok(rawCount > 0, 'no raw Claude Code file found');
  });

  it('reads raw Claude Code files into the same records as their converted sessions (system telemetry aside)', function () {
    this.timeout(60_000);
    const rawRoot = path.join(CORPUS, 'raw', 'claude-code-jsonl');
    if (!fs.existsSync(rawRoot)) skipWithoutCorpus(this, rawRoot);
    const comparable = (r: RawRecord): string =>
      JSON.stringify(
        // The converter dropped Claude Code's isSidechain / isMeta flags (read here as `harness`).
        Object.entries({ ...strip(r), isError: r.isError === true, harness: undefined }).sort(([a], [b]) => (a < b ? -1 : 1)),
      );
    let compared = 0;
    for (const dir of fs.readdirSync(rawRoot)) {
      for (const name of fs.readdirSync(path.join(rawRoot, dir))) {
        const converted = path.join(CORPUS, 'sessions', `claude-code-jsonl__${dir}__${name}`);
        if (!fs.existsSync(converted)) continue;
        const fromRaw = parseTranscript(fs.readFileSync(path.join(rawRoot, dir, name), 'utf8'), redactor).records;
        // The converter also kept turn_duration / stop_hook_summary / summary lines as system records.
        const fromConverted = parseTranscript(fs.readFileSync(converted, 'utf8'), redactor).records.filter(
          (r) => r.role !== 'system' || r.content === 'Conversation compacted',
        );
        assert.deepEqual(fromRaw.map(comparable), fromConverted.map(comparable), `${dir}/${name}`);
        compared++;
      }
    }
    assert.ok(compared > 0, 'no raw file has a converted session');
  });
});
