// The Task Context panel during a scripted @keeper session: the panel opens in
// its activity-bar container, shows the task's protected facts, and a fact
// corrected there is carried by the very next context sent to the model.
import { openChat, pickModel, responseRendered, runCommand, sendChatMessage, waitUntil } from '../workbench.mjs';

const FIRST = 'KEEPER-PANEL-ONE: noted.';
const SECOND = 'KEEPER-PANEL-TWO: using two spaces.';

/** The panel's document: the webview frame that renders the facts. */
async function panelFrame(page) {
  return waitUntil(
    async () => {
      for (const frame of page.frames()) {
        if (!frame.url().includes('webview')) continue;
        if ((await frame.locator('.fact').count().catch(() => 0)) > 0) return frame;
      }
      return undefined;
    },
    { timeout: 45000, interval: 500, what: 'the Task Context panel to show facts' },
  );
}

export async function run({ page, log, check, fakeModel }) {
  fakeModel.script([{ text: FIRST }]);
  await openChat(page);
  check(await pickModel(page, 'Fake Small').catch(() => false), 'Fake Small is picked');
  await sendChatMessage(page, '@keeper Format the sources. Always use tabs for indentation.');
  check(await responseRendered(page, FIRST), 'the first answer is rendered');

  await runCommand(page, 'Context Keeper: Open the Task Context Panel');
  const frame = await panelFrame(page).catch(() => undefined);
  check(frame !== undefined, 'the Task Context panel opens and lists the protected facts');
  if (!frame) return;
  const fact = frame.locator('.fact', { hasText: 'Always use tabs for indentation.' }).first();
  check(await fact.isVisible(), 'the constraint stated in the chat is shown as a protected fact');
  await page.screenshot({ path: '.vscode-test/shots/panel-in-vscode.png' }).catch(() => undefined);

  await fact.getByRole('button', { name: 'Correct' }).click();
  const editor = frame.locator('textarea[data-editor]').first();
  await editor.waitFor({ state: 'visible', timeout: 10000 });
  await editor.fill('Always use two spaces for indentation.');
  await editor.press('Enter');
  const corrected = await waitUntil(async () => (await frame.locator('.fact', { hasText: 'Always use two spaces for indentation.' }).count()) > 0, { timeout: 15000, what: 'the corrected fact in the panel' }).catch(() => false);
  check(corrected, 'the correction is shown in the panel');
  log('fact corrected in the panel');

  fakeModel.script([{ text: SECOND }]);
  await sendChatMessage(page, '@keeper Go on with the formatting.');
  check(await responseRendered(page, SECOND, 60000), 'the next answer is rendered');
  const request = await waitUntil(() => fakeModel.requests().find((r) => r.messages.at(-1)?.content === 'Go on with the formatting.'), { timeout: 10000, what: 'the request after the correction' }).catch(() => undefined);
  const seen = request?.messages.map((m) => m.content).join('\n') ?? '';
  if (!seen.includes('two spaces')) log(`request after the correction: ${JSON.stringify(request?.messages.map((m) => m.content.slice(0, 300)))}`);
  check(/## Protected state[\s\S]*Always use two spaces for indentation\.[^\n]*corrected by the user/.test(seen), 'the next context sent to the model carries the correction as a protected fact');
}
