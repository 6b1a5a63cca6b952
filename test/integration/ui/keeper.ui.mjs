// @keeper driven through the chat UI: the request is typed into the chat input,
// the agent reads a file and proposes an edit, the real confirmation dialog is
// answered with a click, the answer is rendered. Then the window is reloaded and
// a second request in the same chat continues the same task: the model is sent
// the first turn's tool result, which only the session store holds (the chat
// history carries no tool calls).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openChat, pickModel, responseRendered, runCommand, sendChatMessage, waitUntil } from '../workbench.mjs';

const FIRST = 'KEEPER-ANSWER-ONE: multiply now converts strings.';
const SECOND = 'KEEPER-ANSWER-TWO: I changed src/math.js.';

export async function run({ page, workspace, log, check, fakeModel }) {
  fakeModel.script([
    { text: 'Reading src/math.js.', toolCalls: [{ callId: 'ui-read', name: 'read_file', input: { path: 'src/math.js' } }] },
    { toolCalls: [{ callId: 'ui-edit', name: 'edit_file', input: { path: 'src/math.js', oldText: 'return a * b;', newText: 'return Number(a) * Number(b);' } }] },
    { text: FIRST },
  ]);
  await openChat(page);
  check(await pickModel(page, 'Fake Small').catch(() => false), 'Fake Small is picked for @keeper');
  await sendChatMessage(page, '@keeper Make multiply accept strings of digits. Always keep add unchanged.');

  // The edit is confirmed in VS Code's own modal dialog.
  const apply = page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Apply$/ });
  const asked = await apply.first().waitFor({ state: 'visible', timeout: 30000 }).then(() => true).catch(() => false);
  check(asked, 'the edit waits for the user in a confirmation dialog');
  if (asked) await apply.first().click();
  check(await responseRendered(page, FIRST), "@keeper's answer is rendered in the chat list");
  const source = readFileSync(join(workspace, 'src', 'math.js'), 'utf8');
  check(source.includes('return Number(a) * Number(b);') && source.includes('return a + b;'), 'the confirmed edit is applied to the file');
  // The status-bar gauge shows the last context against the 8k window of Fake Small.
  const gauge = await waitUntil(async () => {
    const texts = await page.locator('.statusbar-item').allInnerTexts();
    return texts.find((t) => /\/8\.0k$/.test(t.trim()));
  }, { timeout: 10000, what: 'the budget gauge in the status bar' }).catch(() => undefined);
  check(gauge !== undefined, `the status bar shows the budget gauge (${gauge ?? 'none'})`);
  const firstRequests = fakeModel.requests();
  check(firstRequests.length === 3 && firstRequests.every((r) => r.tools.includes('edit_file')), `@keeper called the model 3 times with its tools (${firstRequests.length})`);

  // Reload the window: the chat is restored, and the next request continues the task.
  // The browser workbench persists chat sessions on a timer: give it a moment first.
  await page.waitForTimeout(5000);
  await runCommand(page, 'Developer: Reload Window');
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  const restored = await waitUntil(() => page.locator('.interactive-list .interactive-response', { hasText: FIRST }).count().then((n) => n > 0), { timeout: 60000, what: 'the chat to be restored after the reload' }).catch(() => false);
  check(restored, 'the chat is restored after the window reload');
  log('window reloaded; the earlier chat is open');
  fakeModel.script([{ text: SECOND }]);
  await sendChatMessage(page, '@keeper Which file did you change?');
  check(await responseRendered(page, SECOND, 60000), 'after the reload, @keeper answers in the same chat');
  // The fake writes its request log when an answer ends, a moment after the chat renders it.
  const last = await waitUntil(() => fakeModel.requests().find((r) => r.messages.at(-1)?.content === 'Which file did you change?'), { timeout: 10000, what: 'the request after the reload in the fake model log' }).catch(() => undefined);
  const seen = last?.messages.map((m) => m.content).join('\n') ?? '';
  if (!seen.includes('[result ui-read')) log(`request after the reload: ${JSON.stringify(last?.messages.map((m) => m.content.slice(0, 200)))}`);
  check(seen.includes('[result ui-read') && seen.includes('Always keep add unchanged.'), 'the request after the reload carries the first turn from the session store (its tool result and the stated rule)');
}
