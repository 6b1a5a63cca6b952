/**
 * The texts of Context Keeper's language model tools (src/agent/recordTools.ts):
 * what another agent gets from #taskContext, a record search and a tool call
 * lookup, on a task that has folded its early history.
 */
import { strict as assert } from 'node:assert';
import { TaskSession } from '../../src/agent/taskSession';
import { recordSearchText, taskContextText, toolCallText } from '../../src/agent/recordTools';
import { ExtractiveSummarizer } from '../../src/core/summarizer';
import { SummaryLineCounter } from '../../src/core/summary';
import { CharRatioTokenCounter } from '../../src/core/tokens';
import { RecordBuilder } from './engineHarness';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

const RULE = 'Never push to main.';
const SECRET = 'ghp_q1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6j7k8';

async function foldedTask(): Promise<TaskSession> {
  const counter = new CharRatioTokenCounter();
  const task = TaskSession.open(undefined, 'task-tools', 'task-tools', { window: 6_000, reserve: 500, protectRecentSteps: 2, summaryCap: 1500 }, counter, redactor, new ExtractiveSummarizer(new SummaryLineCounter(counter), redactor, 1500));
  const b = new RecordBuilder().user(`Fix the flaky retry test in src/net/retry.ts. ${RULE}`);
  b.step('Running the tests first.', [{ name: 'Bash', input: { command: 'npm test' }, output: `FAIL src/net/retry.test.ts\n  Error: ECONNRESET after 3 attempts (backoffJitterMs=250)\ntoken ${SECRET}` }]);
  for (let i = 0; i < 30; i++) b.read(`src/net/part${i}.ts`, 40, `Looking at part ${i}.`);
  const session = task.session;
  for (const record of b.records) {
    if (session.opensStep(record)) await session.step(task.nextIndex);
    const { index: _index, ...rest } = record;
    await task.append(rest);
    if (record.role === 'user') session.preflight();
  }
  return task;
}

describe('language model tools: what other agents read', function () {
  this.timeout(60_000);
  let task: TaskSession;
  before(async () => {
    task = await foldedTask();
    assert.ok(task.session.engine.compactions.length > 0, 'the fixture folds');
  });

  it('task context: the summary the model sees, then each protected fact with its writer and source records', () => {
    const text = taskContextText(task);
    assert.match(text, /^# Task task-tools \(\d+ records\)/);
    assert.ok(text.includes('## Task Context'), 'the summary of the folded history');
    assert.match(text, /- \[constraint\] Never push to main\. — user, from r0/);
    assert.ok(!text.includes(SECRET), 'secrets are redacted');
  });

  it('record search: the exact earlier passage, with its record number, from the folded part too', () => {
    const text = recordSearchText(task, 'ECONNRESET backoffJitterMs');
    assert.match(text, /^1 passage\(s\) of task task-tools matching "ECONNRESET backoffJitterMs"/);
    // The output is quoted with its own record (the result, r3), not its call's (r2).
    assert.match(text, /\[r3\]\nFAIL src\/net\/retry\.test\.ts\n {2}Error: ECONNRESET after 3 attempts \(backoffJitterMs=250\)/);
    assert.ok(!text.includes(SECRET));
    assert.match(recordSearchText(task, 'kubernetes helm'), /No passage of task task-tools .* matches "kubernetes helm"/);
  });

  it('view tool call: the full input and output of a folded call, or a clear miss', () => {
    const found = toolCallText(task, 'call_1');
    assert.equal(found.found, true);
    assert.match(found.text, /^Tool call call_1: Bash\nInput:\n.*npm test[\s\S]*Output:\nFAIL src\/net\/retry\.test\.ts/);
    assert.ok(!found.text.includes(SECRET));
    assert.deepEqual(toolCallText(task, 'call_999'), { found: false, text: 'Task task-tools has no tool call with id "call_999".' });
  });
});
