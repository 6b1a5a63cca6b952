import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { main } from '../../src/cli/main';
import { RecordBuilder } from './engineHarness';

function interchange(b: RecordBuilder): string {
  return (
    b.records
      .map((r) =>
        JSON.stringify({
          role: r.role,
          content: r.content,
          tool_name: r.toolName ?? null,
          tool_call_id: r.toolCallId ?? null,
          tool_input: r.toolInput ?? null,
          tool_output: r.toolOutput ?? null,
          meta: r.messageId ? { message_id: r.messageId } : r.isError ? { is_error: true } : null,
        }),
      )
      .join('\n') + '\n'
  );
}

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('context-keeper CLI', function () {
  this.timeout(60_000);
  const dir = mkdtempSync(path.join(tmpdir(), 'ck-cli-'));
  const b = new RecordBuilder().user('Port the parser to TypeScript. Never change the public API.');
  for (let i = 0; i < 40; i++) b.read(`src/part${i}.ts`, 120, `Reading part ${i}.`);
  b.step('', [{ name: 'Bash', input: { command: 'npm test' }, output: 'FAIL\nExit code: 1', isError: true }]);
  const file = path.join(dir, 'session.jsonl');
  writeFileSync(file, interchange(b));

  it('project --json prints the contract fields, within window − reserve', async () => {
    const r = await cli('project', file, '--window', '16000', '--reserve', '2000', '--json');
    assert.equal(r.code, 0, r.err);
    const json = JSON.parse(r.out);
    // the contract's fields, in order, then the extensions (state channel, loss ledger)
    assert.deepEqual(Object.keys(json).slice(0, 10), ['window', 'reserve', 'trigger', 'stop', 'tokens', 'messages', 'notLoaded', 'summary', 'artifacts', 'compactions']);
    assert.deepEqual(Object.keys(json).slice(10), ['state', 'pending', 'conflicts', 'ledger', 'redactions', 'notices', 'milestones']);
    assert.deepEqual(json.redactions, { count: 0, kinds: {} });
    assert.ok(json.state.some((f: { type: string; value: string; status: string }) => f.type === 'constraint' && f.value === 'Never change the public API.' && f.status === 'active'));
    assert.ok(json.ledger.boundaries.length >= 2);
    assert.deepEqual(json.ledger.defects, []);
    // A 16k window is a small window: the user gets the small-window ratios (0.9 / 0.5 of wEff 14,000).
    assert.equal(json.trigger, 12600);
    assert.equal(json.stop, 7000);
    const large = JSON.parse((await cli('project', file, '--window', '64000', '--reserve', '4000', '--json')).out);
    assert.equal(large.trigger, 39000, 'large windows keep the seed ratio 0.65');
    assert.equal(large.stop, 30000);
    assert.ok(json.tokens <= 14000, `${json.tokens}`);
    assert.ok(json.compactions.length >= 2);
    assert.deepEqual(Object.keys(json.summary), ['Requests', 'Deliverables', 'Decisions', 'Constraints', 'Ruled out', 'Findings', 'Archived', 'Current state']);
    assert.match(json.summary.Requests[0], /Port the parser to TypeScript\. Never change the public API\./);
    // A short rule stays in the protected block: a line pointing to its copy under Constraints would be the longer.
    assert.match(json.messages[0].content, /### Constraints\n- Never change the public API\. \(r0\)[\s\S]*## Protected state\n[\s\S]*### constraint\n- Never change the public API\. \(r0\)/);
    assert.match(json.messages[0].content, /## Evidence not loaded\n[\s\S]*view_tool_call\("call_\d+"\): Read src\/part\d+\.ts \(folded, r\d+\)/);
    assert.ok(json.messages.every((m: { role: string }) => ['system', 'user', 'assistant', 'tool'].includes(m.role)));
    assert.ok(json.notLoaded.some((n: { how: string; recover: string }) => n.how === 'folded' || /view_tool_call/.test(n.recover)));
    assert.deepEqual(json.artifacts[0], { path: 'src/part0.ts', reads: 1, writes: 0 });
  });

  it('is byte-identical across runs', async () => {
    const a = await cli('project', file, '--window', '16000', '--reserve', '2000', '--json');
    const c = await cli('project', file, '--window', '16000', '--reserve', '2000', '--json');
    assert.equal(a.out, c.out);
    const text1 = await cli('project', file, '--window', '12000', '--reserve', '1000');
    const text2 = await cli('project', file, '--window', '12000', '--reserve', '1000');
    assert.equal(text1.out, text2.out);
    assert.match(text1.out, /## Task Context/);
    assert.match(text1.out, /## Budget/);
    // The result comes first, in plain words, before any detail.
    const [head, result] = text1.out.split('\n');
    assert.match(head!, /^Context Keeper replayed .*: \d+ records, \d+ model calls, a 12,000-token window \(11,000 usable after 1,000 kept for the answer\)\.$/);
    const [, history, sent] = /^Result: the whole history is ([\d,]+) tokens; the model would be sent ([\d,]+) tokens next/.exec(result!) ?? [];
    assert.ok(history && sent && Number(sent.replace(/,/g, '')) < Number(history.replace(/,/g, '')), result);
    assert.ok(text1.out.indexOf('Kept word for word') < text1.out.indexOf('## Task Context'));
    // The requests it counts are the ones the head lists.
    const counted = Number(/the user's (\d+) requests?/.exec(text1.out)?.[1]);
    const head1 = text1.out.slice(text1.out.indexOf('## Task Context'), text1.out.indexOf('## Protected state'));
    assert.equal(counted, (head1.match(/^- (?:\[Request\] )?#\d+ \(r\d+\)/gm) ?? []).length);
    // What it says is kept word for word is below: the head as sent (protected state included), then the recent messages.
    assert.match(text1.out, /## Protected state\n[\s\S]*- Never change the public API\. \(r0\)/);
    const recent = /## Recent messages, as they happened \((\d+); whole in --json\)\n((?:- \[.*\n?)+)/.exec(text1.out);
    assert.ok(recent, 'the recent messages are listed');
    const json1 = JSON.parse((await cli('project', file, '--window', '12000', '--reserve', '1000', '--json')).out);
    assert.equal(Number(recent[1]), json1.messages.length - 1, 'every message after the head, one line each');
    assert.match(recent[2]!, /^- \[(?:user|assistant|tool)[^\]]*\] \S/);
    assert.match(text1.out, /trigger \d+ \(90%\), stop \d+ \(50%\)/, 'the budget line states the ratios in use');
  });

  it('--at N projects just before record N', async () => {
    const r = await cli('project', file, '--at', '1', '--json');
    const json = JSON.parse(r.out);
    const conversation = json.messages.filter((m: { content: string }) => !m.content.startsWith('## '));
    assert.equal(conversation.length, 1);
    assert.equal(conversation[0].content, b.records[0]!.content);
    assert.equal(json.messages.length, 1, 'nothing folded yet: no head message');
    const bad = await cli('project', file, '--at', 'x');
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--at needs a non-negative whole number/);
  });

  it('replay prints one JSON line per model call and a summary line', async () => {
    const r = await cli('replay', file, '--window', '16000', '--reserve', '2000');
    assert.equal(r.code, 0, r.err);
    const lines = r.out.split('\n').map((l) => JSON.parse(l));
    const summary = lines.pop();
    assert.ok(summary.summary);
    assert.equal(summary.summary.steps, lines.length);
    assert.equal(lines.length, 42);
    for (const line of lines) for (const k of ['step', 'record', 'predicted', 'tokens', 'tier', 'ms', 'prefixReused']) assert.ok(k in line, k);
    assert.ok(lines.some((l) => l.tier > 0));
    assert.ok(lines.some((l) => l.prefixReused > 0));
    assert.ok(summary.summary.compactionsPerTier['1'] + summary.summary.compactionsPerTier['2'] > 0);
  });

  it('view-tool-call prints the full raw output, exit 2 when unknown', async () => {
    const r = await cli('view-tool-call', file, 'call_3');
    assert.equal(r.code, 0);
    assert.ok(r.out.includes(b.records.find((x) => x.role === 'tool' && x.toolCallId === 'call_3')!.toolOutput!));
    const missing = await cli('view-tool-call', file, 'nope');
    assert.equal(missing.code, 2);
    assert.match(missing.err, /no tool call with id "nope"/);
  });

  it('--db keeps the session: sessions lists it, a rerun resumes, view-tool-call reads it, delete removes it', async () => {
    const db = path.join(dir, 'store.db');
    const first = await cli('replay', file, '--window', '16000', '--reserve', '2000', '--db', db);
    assert.equal(first.code, 0, first.err);
    const listed = await cli('sessions', '--db', db, '--json');
    const sessions = JSON.parse(listed.out) as { id: string; records: number; title: string }[];
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0]!.records, b.records.length);
    assert.match(sessions[0]!.id, /^session-[0-9a-f]{8}$/);
    const again = await cli('replay', file, '--window', '16000', '--reserve', '2000', '--db', db);
    const againLines = again.out.trim().split('\n');
    const summary = JSON.parse(againLines.pop()!) as { summary: { resumedFrom: number; steps: number; tokensSent: number } };
    const whole = JSON.parse(first.out.trim().split('\n').pop()!) as { summary: { steps: number; tokensSent: number } };
    assert.equal(summary.summary.resumedFrom, b.records.length);
    assert.equal(againLines.length, 1, 'only the final call is replayed (one step line)');
    // The totals are the whole session's, as the uninterrupted run gave them.
    assert.equal(summary.summary.steps, whole.summary.steps);
    assert.equal(summary.summary.tokensSent, whole.summary.tokensSent);
    const plain = await cli('project', file, '--window', '16000', '--reserve', '2000', '--json');
    const stored = await cli('project', file, '--window', '16000', '--reserve', '2000', '--json', '--db', db);
    assert.deepEqual(JSON.parse(stored.out).messages, JSON.parse(plain.out).messages);
    const storedAgain = await cli('project', file, '--window', '16000', '--reserve', '2000', '--json', '--db', db);
    assert.equal(storedAgain.out, stored.out, 'project --db is byte-identical run after run');
    assert.deepEqual(JSON.parse(stored.out).compactions, JSON.parse(plain.out).compactions, 'the compaction log survives in the store');
    const early = await cli('project', file, '--at', '5', '--json', '--db', db);
    assert.match(early.err, /store already holds records past --at 5/);
    assert.deepEqual(JSON.parse(early.out).messages, JSON.parse((await cli('project', file, '--at', '5', '--json')).out).messages);
    const other = path.join(dir, 'other.jsonl');
    writeFileSync(other, interchange(b).replace('Reading part 3.', 'Reading part three.'));
    const { renameSync } = await import('node:fs');
    const otherSameName = path.join(dir, 'copy', 'session.jsonl');
    (await import('node:fs')).mkdirSync(path.dirname(otherSameName), { recursive: true });
    renameSync(other, otherSameName);
    const mismatch = await cli('project', otherSameName, '--db', db);
    assert.equal(mismatch.code, 2);
    assert.match(mismatch.err, /differs from the transcript at record/);
    const view = await cli('view-tool-call', '--db', db, 'call_3');
    assert.equal(view.code, 0, view.err);
    assert.ok(view.out.includes(b.records.find((x) => x.role === 'tool' && x.toolCallId === 'call_3')!.toolOutput!));
    const deleted = await cli('delete', '--db', db, '--session', sessions[0]!.id);
    assert.equal(deleted.code, 0, deleted.err);
    assert.deepEqual(JSON.parse((await cli('sessions', '--db', db, '--json')).out), []);
    assert.equal((await cli('delete', '--db', db, '--session', 'nope')).code, 2);
  });

  it('rebuild compares the incremental summary with one rebuilt from the raw record', async () => {
    const r = await cli('rebuild', file, '--window', '16000', '--reserve', '2000', '--json');
    assert.equal(r.code, 0, r.err);
    const report = JSON.parse(r.out) as { folded: number; folds: number; protectedIdentical: boolean; sections: Record<string, { shared: number }> };
    assert.ok(report.folds >= 2);
    assert.equal(report.protectedIdentical, true);
    assert.ok(report.sections.Requests!.shared >= 1);
    const text = await cli('rebuild', file, '--window', '16000', '--reserve', '2000');
    assert.match(text.out, /^(No drift|\d+ lines? differs?)\b.*the request log and the safety rules are identical\./m);
  });

  it('skips malformed lines with their line numbers and keeps going', async () => {
    const bad = path.join(dir, 'bad.jsonl');
    writeFileSync(bad, `{"role":"user","content":"hello there"}\n{not json\n{"role":"bot","content":"x"}\n{"role":"assistant","content":"hi"}\n`);
    const r = await cli('project', bad, '--json');
    assert.equal(r.code, 0);
    assert.match(r.err, /line 2: invalid JSON/);
    assert.match(r.err, /line 3: unknown role "bot"/);
    assert.equal(JSON.parse(r.out).messages.filter((m: { content: string }) => !m.content.startsWith('## ')).length, 2);
  });

  it('--db refuses a directory and a file that is not one of its stores, and leaves them as they are', async () => {
    const folder = path.join(dir, 'a-folder');
    (await import('node:fs')).mkdirSync(folder, { recursive: true });
    const asDir = await cli('sessions', '--db', folder);
    assert.equal(asDir.code, 2);
    assert.match(asDir.err, /^context-keeper: --db .*a-folder is a directory, not a session store/);
    const foreign = path.join(dir, 'notes.txt');
    writeFileSync(foreign, 'my notes, not a database\n');
    for (const args of [['sessions', '--db', foreign], ['project', file, '--db', foreign]]) {
      const r = await cli(...args);
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, /is not a Context Keeper session store \(it is not an SQLite database\); it was left as it is/);
    }
    assert.equal(readFileSync(foreign, 'utf8'), 'my notes, not a database\n');
    assert.deepEqual((await import('node:fs')).readdirSync(dir).filter((n) => n.startsWith('notes.txt')), ['notes.txt'], 'nothing moved aside or written beside it');
  });

  it('describes a binary transcript instead of echoing its bytes; --version', async () => {
    const binary = path.join(dir, 'binary.jsonl');
    writeFileSync(binary, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00, 0x1b, 0x5b, 0x33, 0x31, 0x6d, 0x0a]));
    const r = await cli('project', binary);
    assert.equal(r.code, 2);
    assert.match(r.err, /^context-keeper: .*binary\.jsonl is a binary file \(2 NUL bytes in its first 64 KB\), not a JSONL transcript\n?$/);
    assert.doesNotMatch(r.err, /[\u0000-\u0008\u001b]/);
    const v = await cli('--version');
    assert.equal(v.code, 0);
    assert.match(v.out.trim(), /^context-keeper (?:\d+\.\d+\.\d+|dev)$/);
  });

  it('fails with one clear line on unusable input', async () => {
    const empty = path.join(dir, 'empty.jsonl');
    writeFileSync(empty, 'garbage\n\u0001binary\n');
    const r = await cli('project', empty);
    assert.equal(r.code, 2);
    assert.match(r.err, /^context-keeper: no usable record in transcript/);
    assert.equal(r.err.split('\n').filter((l) => l.startsWith('context-keeper: ') && !/warning/.test(l)).length, 1);
    assert.equal((await cli('project', path.join(dir, 'missing.jsonl'))).err, `context-keeper: no such file: ${path.join(dir, 'missing.jsonl')}`);
    assert.match((await cli('project', file, '--window', '100', '--reserve', '200')).err, /reserve \(200\) must be smaller than the window/);
    assert.match((await cli('project', file, '--at', '100000')).err, /--at must be a record number from 0 to \d+/);
    assert.match((await cli('sessions', '--db', path.join(dir, 'typo.db'))).err, /no session store at/);
    assert.equal((await cli('frobnicate')).code, 2);
  });
});
