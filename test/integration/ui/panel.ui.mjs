// The Task Context panel during a scripted @keeper session: the panel opens in
// its activity-bar container, shows the task's protected facts, and a fact
// corrected there is carried by the very next context sent to the model. Then
// a session larger than the window is imported: the task picker in the panel's
// title bar shows it folded, under the window, and switches back to the chat's task.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { answerFileDialog, openChat, pickModel, responseRendered, runCommand, runningExtensionActivationMs, sendChatMessage, waitUntil } from '../workbench.mjs';

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

export async function run({ page, workspace, log, check, fakeModel }) {
  fakeModel.script([{ text: FIRST }]);
  await openChat(page);
  check(await pickModel(page, 'Fake Small').catch(() => false), 'Fake Small is picked');
  await sendChatMessage(page, '@keeper Format the sources. Always use tabs for indentation.');
  check(await responseRendered(page, FIRST), 'the first answer is rendered');
  // The figure VS Code's Running Extensions shows for the activation this first @keeper message caused: printed,
  // not judged (a shared 2-core machine moves it); the README reports it.
  const activation = await runningExtensionActivationMs(page, 'context-keeper');
  check(activation !== undefined, 'Running Extensions shows how long Context Keeper took to activate');
  log(`measured: activation ${activation} ms (Developer: Show Running Extensions; the issue's bound: 300 ms)`);

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

  // A session of ~130k tokens, over the 128k window a task opened outside a chat is shown with.
  const line = (o) => JSON.stringify({ role: o.role, content: o.content ?? '', tool_name: o.tool ?? null, tool_call_id: o.id ?? null, tool_input: o.input ?? null, tool_output: o.output ?? null, meta: o.meta ?? null });
  const records = [line({ role: 'user', content: 'Port the parser to TypeScript. Never change the grammar file.' })];
  for (let i = 0; i < 60; i++) {
    const output = Array.from({ length: 110 }, (_, l) => `parser ${i} line ${l}: const token${l} = scan(input, ${l * 7}); // keeps the offsets`).join('\n');
    records.push(line({ role: 'assistant', tool: 'read_file', id: `imp-${i}`, input: { path: `src/parser${i}.js` }, meta: { message_id: `m${i}` } }));
    records.push(line({ role: 'tool', tool: 'read_file', id: `imp-${i}`, output }));
  }
  const file = join(workspace, 'imported-session.jsonl');
  writeFileSync(file, records.join('\n') + '\n');
  await runCommand(page, 'Context Keeper: Import a Session');
  // code-server's open dialog is VS Code's simple one: a path in the quick input.
  await answerFileDialog(page, file);
  // The picker in the panel's title bar lists both tasks; the imported one is shown folded, under its window.
  // The import ends with its records stored: until then the picker does not list it yet, and is opened again.
  const pick = async (label) => {
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
    await waitUntil(async () => {
      if (await row.isVisible()) return true;
      await page.keyboard.press('Escape');
      await page.locator('.action-label[aria-label="Show Another Task in the Panel…"]').first().click();
      await row.waitFor({ state: 'visible', timeout: 3000 });
      return true;
    }, { timeout: 30000, interval: 500, what: `${label} in the task picker` });
    await row.click();
  };
  await pick('imported · 121 records');
  const shown = await waitUntil(async () => {
    const text = await frame.locator('body').innerText().catch(() => '');
    return text.includes('121 records') && text.includes('Never change the grammar file.') ? text : undefined;
  }, { timeout: 30000, what: 'the imported session in the panel' }).catch(() => undefined);
  check(shown !== undefined, 'the task picker shows the imported session in the panel');
  await page.screenshot({ path: '.vscode-test/shots/panel-imported.png' }).catch(() => undefined);
  const level = (await frame.locator('.budget-level').first().innerText().catch(() => '')).trim();
  const compactions = (await frame.locator('.region-timeline .count').first().innerText().catch(() => '')).trim();
  check(level !== 'over window' && level !== '' && Number(compactions) >= 1, `the imported session is shown folded, under its window (${level}; ${compactions} compactions)`);
  await pick('Format the sources');
  const back = await waitUntil(async () => (await frame.locator('.fact', { hasText: 'Always use two spaces for indentation.' }).count()) > 0, { timeout: 15000, what: "the chat's task back in the panel" }).catch(() => false);
  check(back, "the task picker switches back to the chat's task");
}
