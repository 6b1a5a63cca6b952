// VS Code's checkpoint controls on @keeper's turns. Restore Checkpoint takes a
// turn out of the chat but cannot revert @keeper's edits (they are not in VS
// Code's editing session): the next answer says what remains applied and offers
// the undo; the task records the rewind (its record keeps the turn, append-only)
// and leaves the turn out of the model's context, and records the undo. Start
// Over empties the chat, so the next message starts a new task: its answer names
// the edits the earlier task left and offers their undo.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chatResponses, inlineConfirmation, openChat, pickModel, responseRendered, sendChatMessage, visibleText, waitUntil } from '../workbench.mjs';

const EDIT = { name: 'edit_file', input: { path: 'src/math.js', oldText: 'return a * b;', newText: 'return Number(a) * Number(b);' } };

export async function run({ page, workspace, log, check, fakeModel }) {
  const edited = () => readFileSync(join(workspace, 'src', 'math.js'), 'utf8').includes('Number(a) * Number(b)');
  const { allow } = inlineConfirmation(page);
  /** Sends a message whose turn reads and edits src/math.js (an edit needs a read of the file as it is), allows the edit inline, and waits for `answer`. */
  const editTurn = async (message, callId, answer) => {
    fakeModel.script([{ toolCalls: [{ callId: `${callId}-read`, name: 'read_file', input: { path: 'src/math.js' } }] }, { toolCalls: [{ callId, ...EDIT }] }, { text: answer }]);
    await sendChatMessage(page, message);
    // VS Code asks inline, unless the user allowed such edits for the session already.
    const answered = () => chatResponses(page, answer).count().then((n) => n > 0);
    const asked = await waitUntil(async () => ((await allow.isVisible()) ? 'asked' : (await answered()) ? 'answered' : undefined), { timeout: 30000, what: 'the edit confirmation' }).catch(() => undefined);
    if (asked === 'asked') await allow.click();
    return responseRendered(page, answer, 60000);
  };
  /** Runs one of VS Code's checkpoint actions on the request row holding `text` (they show on hover). */
  const checkpointAction = async (text, label) => {
    const row = page.locator('.interactive-list .interactive-request', { hasText: text }).last();
    const action = page.locator(`.interactive-list .action-label[aria-label="${label}"]`).first();
    // The chat list renders only the rows in view, Start Over above the first: scroll up until the action shows.
    await waitUntil(async () => {
      if ((await row.count()) > 0) {
        // A row still moving (the list scrolling) is not hovered yet: scroll on and try again, within the budget.
        await row.hover({ timeout: 2000 }).catch(() => undefined);
        if (await action.isVisible()) return true;
      }
      await page.locator('.interactive-list').first().hover();
      await page.mouse.wheel(0, -600);
      return false;
    }, { timeout: 15000, interval: 300, what: `${label} on the request "${text}"` });
    // At the list's top edge the title bar's drag region lies over it: the click goes to the action itself.
    await action.dispatchEvent('click');
  };
  /** The answer led by `lead` once it holds `expected` (notices follow the answer, written when the turn ends), or as it is after 15 s. */
  const answerOf = async (lead, expected) => {
    const text = async () => (await visibleText(chatResponses(page, lead).last())).replace(/\s+/g, ' ');
    return waitUntil(async () => ((await text()).includes(expected) ? text() : undefined), { timeout: 15000, what: `"${expected}" in the answer` }).catch(text);
  };
  const requestFor = (prompt) => waitUntil(() => fakeModel.requests().find((r) => r.messages.at(-1)?.content === prompt), { timeout: 10000, what: `the model request for "${prompt}"` }).catch(() => undefined);

  fakeModel.script([{ text: 'REWIND-ZERO' }]);
  await openChat(page);
  check(await pickModel(page, 'Fake Small').catch(() => false), 'Fake Small is picked');
  await sendChatMessage(page, '@keeper Look at the project first.');
  check(await responseRendered(page, 'REWIND-ZERO'), 'the first turn is answered');
  check(await editTurn('@keeper Make multiply accept strings.', 'rw-edit-1', 'REWIND-ONE'), 'the editing turn is answered');
  check(edited(), "the turn's edit is on disk");

  // Restore Checkpoint on the editing turn: VS Code takes it out of the chat; the file keeps @keeper's edit.
  await checkpointAction('Make multiply accept strings.', 'Restores workspace and chat to this point');
  const restored = await waitUntil(async () => !(await page.locator('.interactive-list').innerText()).includes('REWIND-ONE'), { timeout: 15000, what: 'the turn to leave the chat' }).catch(() => false);
  check(restored, 'Restore Checkpoint takes the editing turn out of the chat');
  check(edited(), "Restore Checkpoint leaves @keeper's edit in the file (VS Code does not track it)");

  fakeModel.script([{ text: 'REWIND-TWO' }]);
  await sendChatMessage(page, '@keeper What is left to do?');
  check(await responseRendered(page, 'REWIND-TWO', 60000), 'the next turn is answered');
  await page.screenshot({ path: '.vscode-test/shots/rewind-two.png' }).catch(() => undefined);
  const said = await answerOf('REWIND-TWO', 'still in src/math.js');
  check(said.includes('1 earlier turn of this task was taken out of the chat') && said.includes('src/math.js'), `the answer says the removed turn's change is still in src/math.js (${said.slice(0, 300)})`);
  const two = await requestFor('What is left to do?');
  check(two !== undefined && !two.messages.some((m) => m.content.includes('Make multiply accept strings.')), "the removed turn is left out of the model's context");
  check((two?.messages ?? []).some((m) => /took turn 2 \(records r\d+–r\d+\) out of the chat/.test(m.content) && m.content.includes('src/math.js')), 'the model is told that turn 2 was taken out and that src/math.js still holds its change');
  await chatResponses(page, 'REWIND-TWO').last().locator('.monaco-button', { hasText: 'Undo the edits of the removed turn' }).click();
  check(await waitUntil(() => !edited(), { timeout: 15000, what: 'src/math.js as it was' }).catch(() => false), "the answer's Undo reverts the removed turn's edit");

  fakeModel.script([{ text: 'REWIND-THREE' }]);
  await sendChatMessage(page, '@keeper Is multiply as it was?');
  check(await responseRendered(page, 'REWIND-THREE', 60000), 'the turn after the undo is answered');
  const three = await requestFor('Is multiply as it was?');
  check((three?.messages ?? []).some((m) => m.content.includes("Undone by the user: @keeper's edits of turn 2 to src/math.js were reverted")), "the task's record holds the undo (the model is told)");

  // Start Over empties the chat: the next message starts a new task, told of the edits the earlier task left.
  check(await editTurn('@keeper Make multiply accept strings again.', 'rw-edit-2', 'REWIND-FOUR'), 'the second editing turn is answered');
  check(edited(), "the second turn's edit is on disk");
  await checkpointAction('Look at the project first.', 'Clears the chat and undoes all changes');
  const cleared = await waitUntil(async () => !(await page.locator('.interactive-list').innerText().catch(() => '')).includes('REWIND-ZERO'), { timeout: 15000, what: 'the chat to be cleared' }).catch(() => false);
  check(cleared, 'Start Over clears the chat');
  check(edited(), "Start Over leaves @keeper's edit in the file");
  fakeModel.script([{ text: 'REWIND-FIVE' }]);
  await sendChatMessage(page, '@keeper Start again from here.');
  check(await responseRendered(page, 'REWIND-FIVE', 60000), 'the first turn after Start Over is answered');
  const five = await answerOf('REWIND-FIVE', 'left its edits in src/math.js');
  check(five.includes('left its edits in src/math.js'), `the new task's first answer names the edit the earlier task left (${five.slice(0, 300)})`);
  await page.screenshot({ path: '.vscode-test/shots/rewind-start-over.png' }).catch(() => undefined);
  const fresh = await requestFor('Start again from here.');
  check(fresh !== undefined && !fresh.messages.some((m) => m.content.includes('Make multiply accept strings')), 'after Start Over the model starts a new task (the earlier turns are not in its context)');
  await chatResponses(page, 'REWIND-FIVE').last().locator('.monaco-button', { hasText: "Undo the earlier task's edits" }).click();
  check(await waitUntil(() => !edited(), { timeout: 15000, what: 'src/math.js as it was' }).catch(() => false), "its Undo reverts the earlier task's edit");
  log(`rewind: ${fakeModel.requests().length} model requests`);
}
