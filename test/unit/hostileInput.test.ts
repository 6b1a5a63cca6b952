/**
 * Malformed and hostile transcripts at the CLI (issue 13): each gets a clear
 * error or warning that names the line, and nothing is lost.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { main } from '../../src/cli/main';
import { parseTranscript } from '../../src/core/transcript';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const line = (o: object): string => JSON.stringify(o);

describe('hostile input at the CLI', function () {
  this.timeout(60_000);
  const dir = mkdtempSync(path.join(tmpdir(), 'ck-hostile-'));
  const write = (name: string, text: string | Buffer): string => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it('refuses a device, which would never end', async () => {
    const r = await cli('project', '/dev/zero');
    assert.equal(r.code, 2);
    assert.match(r.err, /\/dev\/zero is not a regular file/);
  });

  it('deep nesting is refused with its line, and the other lines are read', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const file = write('deep.jsonl', [line({ role: 'user', content: 'Fix the parser.' }), deep, line({ role: 'assistant', content: 'Done.' })].join('\n'));
    const r = await cli('project', file, '--json');
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /line 2: invalid JSON \(JSON nested deeper than 256 levels\)/);
    assert.ok((JSON.parse(r.out) as { messages: unknown[] }).messages.length >= 2);
  });

  it('invalid UTF-8 is read with a warning that names its line', async () => {
    const bytes = Buffer.concat([Buffer.from(`${line({ role: 'user', content: 'first' })}\n{"role":"assistant","content":"caf`), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]);
    const r = await cli('project', write('latin.jsonl', bytes), '--json');
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /line 2: invalid UTF-8/);
  });

  it('a reused tool-call id is reported and both calls stay addressable', async () => {
    const text = [
      line({ role: 'user', content: 'List twice.' }),
      line({ role: 'assistant', content: '', tool_name: 'Bash', tool_call_id: 'call_1', tool_input: { command: 'ls a' } }),
      line({ role: 'tool', content: '', tool_name: 'Bash', tool_call_id: 'call_1', tool_output: 'first listing' }),
      line({ role: 'assistant', content: '', tool_name: 'Bash', tool_call_id: 'call_1', tool_input: { command: 'ls b' } }),
      line({ role: 'tool', content: '', tool_name: 'Bash', tool_call_id: 'call_1', tool_output: 'second listing' }),
    ].join('\n');
    const file = write('dup.jsonl', text);
    const parsed = parseTranscript(text, redactor);
    assert.equal(parsed.records.length, 5);
    assert.match(parsed.warnings.map((w) => w.message).join('\n'), /line 4: tool call id "call_1" was already used by record 1; both calls are kept, this one as "call_1#r3"/);
    const first = await cli('view-tool-call', file, 'call_1');
    assert.match(first.out, /first listing/);
    assert.doesNotMatch(first.err, /line skipped/);
    const second = await cli('view-tool-call', file, 'call_1#r3');
    assert.match(second.out, /second listing/);
  });

  it('a binary tool output is stored losslessly: replaying into the same store again agrees', async () => {
    const binary = `PNG\u0000\u0001\u0002\u00ff\u0000 tail after the NUL bytes`;
    const text = [
      line({ role: 'user', content: 'Show the image bytes.' }),
      line({ role: 'assistant', content: '', tool_name: 'Bash', tool_call_id: 'cat1', tool_input: { command: 'cat logo.png' } }),
      line({ role: 'tool', content: '', tool_name: 'Bash', tool_call_id: 'cat1', tool_output: binary }),
      line({ role: 'assistant', content: 'It is a PNG.' }),
    ].join('\n');
    const file = write('binary.jsonl', text);
    const db = path.join(dir, 'binary.db');
    const first = await cli('replay', file, '--db', db);
    assert.equal(first.code, 0, first.err);
    const again = await cli('replay', file, '--db', db);
    assert.equal(again.code, 0, again.err);
    const view = await cli('view-tool-call', '--db', db, 'cat1', '--json');
    assert.equal(view.code, 0, view.err);
    assert.ok(view.out.includes('tail after the NUL bytes'), view.out);
  });

  it('the model is sent a note for binary bytes a tool printed, not the bytes; view_tool_call still has them', async () => {
    const png = `\u0089PNG\r\n\u001a\n\u0000\u0000\u0000\rIHDR${Array.from({ length: 4000 }, (_, i) => String.fromCharCode((i * 37) % 256)).join('')}`;
    const text = [
      line({ role: 'user', content: 'What is in logo.png?' }),
      line({ role: 'assistant', content: '', tool_name: 'Bash', tool_call_id: 'png1', tool_input: { command: 'cat logo.png' } }),
      line({ role: 'tool', content: '', tool_name: 'Bash', tool_call_id: 'png1', tool_output: png }),
      line({ role: 'tool', content: '', tool_name: 'Bash', tool_call_id: 'txt1', tool_output: 'plain \u001b[31mred\u001b[0m text' }),
    ].join('\n');
    const file = write('png.jsonl', text);
    const r = await cli('project', file, '--window', '200000', '--json');
    assert.equal(r.code, 0, r.err);
    const sent = (JSON.parse(r.out) as { messages: { role: string; content: string }[] }).messages.filter((m) => m.role === 'tool').map((m) => m.content);
    assert.equal(sent[0], `<tool_result id="png1">\n[binary content, ${Buffer.byteLength(png)} bytes; full output: view_tool_call("png1")]\n</tool_result>`);
    // Text with colour codes is text.
    assert.match(sent[1]!, /plain \u001b\[31mred/);
    const view = await cli('view-tool-call', file, 'png1', '--json');
    assert.ok(view.out.includes('IHDR'), view.out.slice(0, 200));
  });
});
