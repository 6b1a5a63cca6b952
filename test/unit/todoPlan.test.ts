import { strict as assert } from 'node:assert';
import { currentPlan, formatPlan, PLAN_NEXT, planLine, planNext, todoPlanOf } from '../../src/core/todoPlan';
import type { ToolInvocation } from '../../src/core/types';

function call(name: string, input: unknown, output?: string): ToolInvocation {
  return { callId: 't1', name, input, output, isError: false, callRecord: 7, resultRecord: output === undefined ? undefined : 8 };
}

const texts = (tool: ToolInvocation): string[] | undefined => todoPlanOf(tool)?.items.map((i) => `${i.status}:${i.text}`);

describe('todoPlan: the agent plan a todo call writes', () => {
  it('reads the list from the input: Claude Code / @keeper todos, Codex plan steps, a Roo checklist', () => {
    const claude = call('TodoWrite', { todos: [{ content: 'Write the CSV writer', status: 'completed', activeForm: 'Writing' }, { content: 'Add the JSON writer', status: 'in_progress' }, { content: 'Update docs', status: 'pending' }] });
    assert.deepEqual(texts(claude), ['done:Write the CSV writer', 'active:Add the JSON writer', 'open:Update docs']);
    const plan = todoPlanOf(claude)!;
    assert.deepEqual(plan.open, ['Add the JSON writer', 'Update docs']);
    assert.equal(plan.active, 'Add the JSON writer');
    assert.deepEqual(texts(call('update_plan', { plan: [{ step: 'Reproduce', status: 'completed' }, { step: 'Fix the parser', status: 'in_progress' }] })), ['done:Reproduce', 'active:Fix the parser']);
    assert.deepEqual(texts(call('update_todo_list', { todos: '- [x] Read the config\n- [-] Patch the loader\n- [ ] Run the tests' })), ['done:Read the config', 'active:Patch the loader', 'open:Run the tests']);
  });

  it('reads the list from the result when the export lost the input: Cursor finalTodos, SpecStory newTodos', () => {
    const cursor = 'Parameters:\n\n```json\n{\n  "merge": true\n}\n```\nResult:\n\n```json\n{\n  "finalTodos": [\n    { "content": "Separate refresh extraction", "id": "f3", "status": "completed" },\n    { "content": "Add regression tests", "id": "t", "status": "in_progress" },\n    { "content": "Old idea", "id": "x", "status": "cancelled" }\n  ]\n}\n```';
    assert.deepEqual(texts(call('todo_write', '', cursor)), ['done:Separate refresh extraction', 'active:Add regression tests'], 'a cancelled item is off the plan');
    const specstory = '{"oldTodos":[],"newTodos":[{"id":"1","content":"Initialize the project","status":"in_progress","priority":"high"},{"id":"2","content":"Implement the server","status":"pending"}]}';
    assert.deepEqual(texts(call('mcp:TodoWrite', '* todos: [object Object],[object Object]', specstory)), ['active:Initialize the project', 'open:Implement the server']);
  });

  it('a call that writes no list (a read of it, a damaged result) is no plan', () => {
    assert.equal(todoPlanOf(call('TodoRead', {}, 'ok')), undefined);
    assert.equal(todoPlanOf(call('todo_write', '', 'Result: {"finalTodos": [ broken')), undefined);
  });

  it('the Plan line marks every item in order and says where it was written; a long plan counts its oldest done items', () => {
    const plan = todoPlanOf(call('TodoWrite', { todos: [{ content: 'Reproduce the bug.', status: 'completed' }, { content: 'Fix it', status: 'in_progress' }, { content: 'Add a test', status: 'pending' }] }))!;
    assert.equal(formatPlan(plan, 8), '[x] Reproduce the bug; [>] Fix it; [ ] Add a test (todo, r8)');
    const many = todoPlanOf(call('TodoWrite', { todos: Array.from({ length: 14 }, (_, i) => ({ content: `Step ${i + 1}`, status: i < 12 ? 'completed' : 'pending' })) }))!;
    const line = formatPlan(many, 3);
    assert.ok(line.startsWith('[x] 4 earlier item(s) done; [x] Step 5;'), line);
    assert.ok(line.endsWith('[ ] Step 13; [ ] Step 14 (todo, r3)'), line);
  });

  it('a plan older than the request the goal quotes is left behind; an earlier fold\'s plan stays while it is current and open', () => {
    const plan = { ...todoPlanOf(call('TodoWrite', { todos: [{ content: 'Fix it', status: 'in_progress' }] }))!, record: 8 };
    assert.equal(currentPlan(plan, '#2 (r5): fix the parser'), plan);
    assert.equal(currentPlan(plan, '#3 (r9): now something else'), undefined);
    assert.equal(currentPlan(plan, '#2 (r5): fix the parser — continued at r12'), plan, 'a "continue" keeps the request, and the plan with it');
    const clean = (t: string): string => t;
    // The fold passes its span's plan through currentPlan: one the goal's request left behind shows no line.
    assert.equal(planLine(currentPlan(plan, '#2 (r5): fix'), undefined, '#2 (r5): fix', clean), '[>] Fix it (todo, r8)');
    assert.equal(planLine(currentPlan(plan, '#3 (r9): other'), undefined, '#3 (r9): other', clean), undefined);
    assert.equal(planLine(undefined, '[>] Fix it (todo, r8)', '#2 (r5): fix', clean), '[>] Fix it (todo, r8)');
    assert.equal(planLine(undefined, '[x] Fix it (todo, r8)', '#2 (r5): fix', clean), undefined, 'a finished plan is said once');
    assert.equal(planLine(undefined, '[>] Fix it (todo, r8)', '#3 (r9): other', clean), undefined);
    // Next from a plan, and the pattern that recognises it.
    const next = planNext(todoPlanOf(call('TodoWrite', { todos: [{ content: 'Add tests', status: 'pending' }, { content: 'Update docs', status: 'pending' }] }))!);
    assert.equal(next, 'Add tests (todo, 1 more open)');
    assert.ok(PLAN_NEXT.test(next!) && PLAN_NEXT.test('Fix it (in progress, todo)'));
  });
});
