import { strict as assert } from 'node:assert';
import { RevisedMap } from '../../src/core/memo';
import { SessionRecord } from '../../src/core/parts';
import { Projection, redactMessage, renderUnit } from '../../src/core/projection';
import type { Redactor } from '../../src/core/redact';
import type { ReducedForm } from '../../src/core/store';
import { RecordBuilder } from './engineHarness';

function recordOf(b: RecordBuilder): SessionRecord {
  const record = new SessionRecord();
  for (const r of b.records) record.append(r);
  return record;
}

const SECRET = 'ghp_0123456789abcdefghijABCDEFGHIJ012345';
/** A redactor that hides SECRET only: the projection applies whatever redactor it is given. */
const hide: Redactor = {
  redact: (text) => ({ text: text.split(SECRET).join('[hidden]'), redactions: [] }),
  containsSecret: (text) => text.includes(SECRET),
};

describe('projection: what the model is sent', () => {
  it('renders a step as one assistant message and a tool message per result, in its forms', () => {
    const record = recordOf(new RecordBuilder().user('go').step('Checking.', [{ name: 'Bash', input: { command: 'ls' }, output: 'a.ts\nb.ts', isError: true }]));
    const [user, step] = record.units;
    assert.deepEqual(renderUnit(user!), [{ role: 'user', content: 'go' }]);
    const messages = renderUnit(step!);
    assert.equal(messages.length, 2);
    assert.equal(messages[0]!.content, 'Checking.\n<tool_call id="call_1" name="Bash">\n{"command":"ls"}\n</tool_call>');
    assert.deepEqual(messages[0]!.calls, [{ callId: 'call_1', name: 'Bash', input: '{"command":"ls"}' }]);
    assert.equal(messages[0]!.prose, 'Checking.');
    assert.equal(messages[1]!.content, '<tool_result id="call_1" error="true">\na.ts\nb.ts\n</tool_result>');
    assert.deepEqual(messages[1]!.result, { callId: 'call_1', output: 'a.ts\nb.ts', isError: true });
    const form: ReducedForm = { how: 'shrunk', input: '{}', output: 'a.ts [… 1 more]', recover: 'view_tool_call("call_1")' };
    const reduced = renderUnit(step!, (address) => (address === 'tool:call_1' ? form : undefined));
    assert.equal(reduced[1]!.result!.output, 'a.ts [… 1 more]');
    assert.deepEqual(renderUnit({ ...user!, parts: [{ ...user!.parts[0]!, text: '  ' }] }), [], 'an empty message is not sent');
  });

  it('hides secrets in the text and in the structured form alike, and leaves a clean message as it is', () => {
    const m = { role: 'assistant' as const, content: `use ${SECRET}`, prose: `use ${SECRET}`, calls: [{ callId: 'c', name: 'Bash', input: `echo ${SECRET}` }] };
    const out = redactMessage(m, hide);
    assert.equal(out.content, 'use [hidden]');
    assert.equal(out.prose, 'use [hidden]');
    assert.equal(out.calls![0]!.input, 'echo [hidden]');
    const clean = { role: 'user' as const, content: 'nothing here' };
    assert.equal(redactMessage(clean, hide), clean);
  });

  it('keeps the messages between projections and renders again only what changed', () => {
    const b = new RecordBuilder().user('go');
    for (let i = 0; i < 4; i++) b.step(`Step ${i}.`, [{ name: 'Bash', input: { command: `echo ${i}` }, output: `${i}` }]);
    const record = recordOf(b);
    const projection = new Projection(record, hide);
    const forms = new RevisedMap<string, ReducedForm>();
    const head = { text: '## Task Context\nso far', parts: [{ block: 'summary' as const, text: '## Task Context\nso far' }] };
    const first = projection.project(head, 0, forms);
    assert.equal(first.length, 1 + 1 + 4 * 2);
    assert.equal(first[0]!.content, head.text);
    assert.deepEqual(first[0]!.head, head.parts);
    const second = projection.project(head, 0, forms);
    assert.notEqual(second, first, 'a fresh array each call');
    assert.ok(second.every((m, i) => m === first[i]), 'the same messages');
    assert.equal(projection.unchanged, second.length);
    assert.equal(projection.count, 2);
    // An appended record touches its unit: that unit is rendered again, the ones before are kept.
    const events = record.append({ index: record.records.length, role: 'assistant', content: 'More.', messageId: 'msg_4' });
    for (const e of events) projection.touched(e.unitIndex);
    const third = projection.project(head, 0, forms);
    assert.equal(third.length, second.length);
    assert.match(third[third.length - 2]!.content, /^Step 3\.\n<tool_call[\s\S]*\nMore\.$/);
    assert.equal(projection.unchanged, second.length - 2, 'the head and every unit but the touched one');
    // A form changes the revision: every unit is checked again, only the one with the form is rendered again.
    forms.set('tool:call_1', { how: 'shrunk', input: '{}', output: '0', recover: 'view_tool_call("call_1")' });
    const fourth = projection.project(head, 0, forms);
    assert.equal(projection.unchanged, 1, 'the head only');
    assert.equal(fourth[1], third[1], 'the user message kept its identity');
    assert.notEqual(fourth[2], third[2]);
    // Where each unit starts in the tail.
    assert.equal(projection.tailLength, fourth.length - 1);
    assert.equal(projection.tailBefore(0), 0);
    assert.equal(projection.tailBefore(2), 3);
    assert.equal(projection.tailBefore(99), fourth.length - 1);
    // A new head text is a new head message; the same text keeps it.
    const other = projection.project({ text: 'other', parts: [] }, 0, forms);
    assert.notEqual(other[0], fourth[0]);
    assert.equal(projection.unchanged, 0);
  });
});
