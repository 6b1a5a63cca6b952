// @keeper driven through the chat UI: the request is typed into the chat input,
// the agent reads a file and proposes an edit and a command; VS Code asks for
// each inline in the chat (no modal dialog, no diff tab): the edit is allowed
// with a click, the command declined with another, and the answer is rendered. Then the window is reloaded and
// a second request in the same chat continues the same task: the model is sent
// the first turn's tool result, which only the session store holds (the chat
// history carries no tool calls).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chatResponses, inlineConfirmation, openChat, pickModel, responseRendered, runCommand, sendChatMessage, visibleText, waitUntil } from '../workbench.mjs';

const FIRST = 'KEEPER-ANSWER-ONE: multiply now converts strings.';
const SECOND = 'KEEPER-ANSWER-TWO: I changed src/math.js.';

/**
 * All the text of the answer holding `lead`, once it holds `inside`. Once a turn ends VS Code folds what it streamed
 * between tool calls under "Completed N steps" (a closed <details>: its lines stay in the answer's DOM, hidden).
 * The DOM's text is read rather than the fold clicked open: a click that lands while the finished turn re-renders
 * is lost, and on a loaded machine the fold stayed closed past every retry.
 */
async function answerText(page, lead, inside) {
  const answer = chatResponses(page, lead).last();
  const text = async () => ((await answer.textContent().catch(() => '')) ?? '').replace(/\u00a0/g, ' ').replace(/\s+/g, ' ');
  await waitUntil(async () => (await text()).includes(inside), { timeout: 20000, interval: 250, what: 'the answer to hold its steps' }).catch(() => undefined);
  return text();
}

/** A turn's compaction line: once ("Compacted the context: a → b tokens") or "N times in this turn, the last time a → b tokens". */
const TURN_COMPACTION = /Compacted the context(?::| \d+ times in this turn, the last time) \d[\d,]* → \d[\d,]* tokens/;

/** The compaction the panel marks as revealed (one other than `other`), as text; undefined when none is within 30 s. */
async function revealedCompaction(page, other) {
  return waitUntil(async () => {
    for (const frame of page.frames()) {
      if (!frame.url().includes('webview')) continue;
      const marked = frame.locator('.region-timeline .is-revealed');
      if ((await marked.count().catch(() => 0)) === 0 || !(await marked.first().isVisible())) continue;
      const text = (await marked.first().innerText()).replace(/\s+/g, ' ');
      if (text !== other) return text;
    }
    return undefined;
  }, { timeout: 30000, interval: 500, what: 'the compaction shown in the panel' }).catch(() => undefined);
}

export async function run({ page, workspace, log, check, fakeModel }) {
  fakeModel.script([
    { text: 'Reading src/math.js.', toolCalls: [{ callId: 'ui-read', name: 'read_file', input: { path: 'src/math.js' } }] },
    { toolCalls: [{ callId: 'ui-edit', name: 'edit_file', input: { path: 'src/math.js', oldText: 'return a * b;', newText: 'return Number(a) * Number(b);' } }] },
    { toolCalls: [{ callId: 'ui-run', name: 'run_command', input: { command: 'touch declined-marker.txt' } }] },
    { text: FIRST },
  ]);
  await openChat(page);
  check(await pickModel(page, 'Fake Small').catch(() => false), 'Fake Small is picked for @keeper');
  await sendChatMessage(page, '@keeper Make multiply accept strings of digits. Always keep add unchanged.');

  // VS Code asks inline in the chat, with the change as a diff.
  // The confirmation sits in the chat view (VS Code docks it above the input): its buttons are "Allow…" and "Skip".
  const { chat, allow, skip } = inlineConfirmation(page);
  const askedEdit = await waitUntil(async () => (await chat.innerText()).includes('Edit src/math.js') && (await allow.isVisible()), { timeout: 30000, what: 'the edit confirmation' }).catch(() => false);
  await page.screenshot({ path: '.vscode-test/shots/keeper-confirm-edit.png' }).catch(() => undefined);
  check(askedEdit, 'the edit waits for the user in an inline confirmation in the chat');
  const shown = askedEdit ? (await chat.innerText()).replace(/\s+/g, ' ') : '';
  const diffShown = shown.includes('- return a * b;') && shown.includes('+ return Number(a) * Number(b);');
  if (!diffShown) log(`the confirmation read: ${shown.slice(-600)}`);
  check(diffShown, 'the confirmation shows the change as a diff');
  check((await page.locator('.monaco-dialog-box').count()) === 0, 'no modal dialog is open');
  if (askedEdit) await allow.click();
  const askedRun = await waitUntil(async () => (await chat.innerText()).includes('touch declined-marker.txt') && (await skip.isVisible()), { timeout: 30000, what: 'the command confirmation' }).catch(() => false);
  await page.screenshot({ path: '.vscode-test/shots/keeper-confirm-run.png' }).catch(() => undefined);
  check(askedRun, 'the command waits for the user in an inline confirmation');
  if (askedRun) await skip.click();
  check(await responseRendered(page, FIRST), "@keeper's answer is rendered in the chat list");
  // Each tool call stays in the answer as a line once the turn is over (VS Code renders @keeper's tool
  // invocations; once the turn ends it folds them under "Completed N steps").
  const answer = await answerText(page, FIRST, 'Editing src/math.js');
  check(answer.includes('Reading src/math.js') && answer.includes('Editing src/math.js') && answer.includes('touch declined-marker.txt'), `the read, the edit and the command stay as lines in the answer (${answer.slice(0, 240)})`);
  const source = readFileSync(join(workspace, 'src', 'math.js'), 'utf8');
  check(source.includes('return Number(a) * Number(b);') && source.includes('return a + b;'), 'the allowed edit is applied to the file');
  check(!existsSync(join(workspace, 'declined-marker.txt')), 'the declined command did not run');
  const told = fakeModel.requests().at(-1)?.messages.map((m) => m.content).join('\n') ?? '';
  check(told.includes('declined to run'), 'the model is told the command was declined');
  check((await page.locator('.tabs-container .tab', { hasText: /proposed by @keeper/ }).count()) === 0, 'no diff tab is left open');
  // The status-bar gauge shows the last context against the 8k window of Fake Small.
  const gauge = await waitUntil(async () => {
    const texts = await page.locator('.statusbar-item').allInnerTexts();
    return texts.find((t) => /\/8\.0k$/.test(t.trim()));
  }, { timeout: 10000, what: 'the budget gauge in the status bar' }).catch(() => undefined);
  check(gauge !== undefined, `the status bar shows the budget gauge (${gauge ?? 'none'})`);
  const firstRequests = fakeModel.requests();
  check(firstRequests.length === 4 && firstRequests.every((r) => r.tools.includes('edit_file')), `@keeper called the model 4 times with its tools (${firstRequests.length})`);

  // Reload the window: the chat is restored, and the next request continues the task.
  // The browser workbench persists chat sessions on a timer: give it a moment first.
  await page.waitForTimeout(5000);
  await runCommand(page, 'Developer: Reload Window');
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  const restored = await waitUntil(() => chatResponses(page, FIRST).count().then((n) => n > 0), { timeout: 60000, what: 'the chat to be restored after the reload' }).catch(() => false);
  check(restored, 'the chat is restored after the window reload');
  log('window reloaded; the earlier chat is open');
  // The participant is registered when the extension activates: sendChatMessage waits until the input
  // knows @keeper (before that, the message would go to the default agent). Opening the panel activates it.
  await runCommand(page, 'Context Keeper: Open the Task Context Panel');
  await openChat(page);
  fakeModel.script([{ text: SECOND }]);
  await sendChatMessage(page, '@keeper Which file did you change?', { timeout: 90000 });
  const answered = await responseRendered(page, SECOND, 90000);
  if (!answered) {
    log(`no answer after the reload (the input read: ${(await page.locator('.interactive-input-part').first().innerText().catch(() => '?')).replace(/\s+/g, ' ').slice(0, 120)})`);
    await page.screenshot({ path: '.vscode-test/shots/keeper-after-reload.png' }).catch(() => undefined);
  }
  check(answered, 'after the reload, @keeper answers in the same chat');
  // The fake writes its request log when an answer ends, a moment after the chat renders it.
  const last = await waitUntil(() => fakeModel.requests().find((r) => r.messages.at(-1)?.content === 'Which file did you change?'), { timeout: 10000, what: 'the request after the reload in the fake model log' }).catch(() => undefined);
  const seen = last?.messages.map((m) => m.content).join('\n') ?? '';
  if (!seen.includes('[result ui-read')) log(`request after the reload: ${JSON.stringify(last?.messages.map((m) => m.content.slice(0, 200)))}`);
  check(seen.includes('[result ui-read') && seen.includes('Always keep add unchanged.'), 'the request after the reload carries the first turn from the session store (its tool result and the stated rule)');

  // After the reload the chat shows the first turn's Undo button disabled (VS Code keeps a restored response's
  // buttons inert); the command undoes @keeper's last edits, which are kept in the workspace's state.
  await runCommand(page, "Context Keeper: Undo @keeper's Last Edits");
  const reverted = await waitUntil(() => readFileSync(join(workspace, 'src', 'math.js'), 'utf8').includes('return a * b;'), { timeout: 15000, what: 'src/math.js as it was' }).catch(() => false);
  if (!reverted) log(`undo after the reload: notifications: ${(await page.locator('.notifications-toasts').innerText().catch(() => '')).replace(/\s+/g, ' ').slice(0, 300)}`);
  check(reverted, "after the reload, Undo @keeper's Last Edits reverts the first turn's edit on disk");

  // Retry takes the last turn out of the chat, and @keeper out of the task's context: the new answer says so.
  const THIRD = 'KEEPER-ANSWER-THREE: retried.';
  fakeModel.script([{ text: THIRD }]);
  const response = chatResponses(page, SECOND).last();
  await response.hover().catch(() => undefined);
  const retry = response.locator('.codicon-refresh').first();
  const retried = await retry.click({ timeout: 10000 }).then(() => true).catch(() => false);
  check(retried, 'the last answer has a Retry button');
  if (retried) {
    check(await responseRendered(page, THIRD, 60000), '@keeper answers the retried request');
    // The notice follows the answer (written when the turn ends).
    const said = await waitUntil(async () => (await page.locator('.interactive-list').innerText()).replace(/\s+/g, ' ').includes('1 earlier turn of this task was taken out of the chat'), { timeout: 15000, what: 'the notice of the turn taken out' }).catch(() => false);
    check(said, 'the retried answer says a recorded turn left the chat');
    await page.screenshot({ path: '.vscode-test/shots/keeper-retry.png' }).catch(() => undefined);
  }

  // The slash commands act on the chat's task; /facts and /context ask the model nothing
  // (/compact may ask it for the summary, as a fold does: unscripted, the summary falls back to the deterministic one).
  let asked = fakeModel.requests().length;
  const command = async (text, lead, what) => {
    await sendChatMessage(page, `@keeper ${text}`);
    const shown = await responseRendered(page, lead, 30000);
    if (!shown) log(`${text} answered: ${(await visibleText(page.locator('.interactive-list .interactive-response').last()).catch(() => '?')).replace(/\s+/g, ' ').slice(0, 400)}`);
    check(shown, what);
    if (!shown) return '';
    // The answer streams: it is whole once its closing button is there (each command's answer ends with one).
    const answer = chatResponses(page, lead).last();
    await answer.locator('.monaco-button', { hasText: 'Show the Task Context' }).first().waitFor({ state: 'visible', timeout: 30000 }).catch(() => undefined);
    return (await visibleText(answer)).replace(/\s+/g, ' ');
  };
  const facts = await command('/facts', 'Protected facts are sent with every call', '/facts lists the protected facts');
  check(facts.includes('Always keep add unchanged.') && /r0\b/.test(facts), `/facts shows the user's rule with its source record (${facts.slice(0, 600)})`);
  check(fakeModel.requests().length === asked, '/facts did not call the model');
  const compacted = await command('/compact', 'Compacted the context', '/compact folds the first turn into the Task Context and says so');
  check(/\d[\d,]* → \d[\d,]* tokens/.test(compacted), `/compact gives the tokens before → after (${compacted.slice(0, 200)})`);
  // Its button opens the Task Context panel at that compaction.
  await chatResponses(page, 'Compacted the context').last().locator('.monaco-button', { hasText: 'Show the Task Context' }).click();
  const revealed = await revealedCompaction(page);
  check(revealed !== undefined, `the compaction line's button opens the panel at that compaction (${revealed ?? 'not shown'})`);
  asked = fakeModel.requests().length;
  const context = await command('/context', 'The next call sends about', '/context states what the next call sends');
  check(/stands for records 0–\d+/.test(context) && context.includes('Current state'), `/context shows the Task Context the model reads (${context.slice(0, 1500)})`);
  await page.screenshot({ path: '.vscode-test/shots/keeper-context.png' }).catch(() => undefined);
  check(fakeModel.requests().length === asked, '/context did not call the model');

  // A turn whose reads overflow the 8k window compacts on its own: the line stays in its answer once the turn is over.
  const FOURTH = 'KEEPER-ANSWER-FOUR: read the three notes.';
  const notes = ['a', 'b', 'c'].map((n) => {
    writeFileSync(join(workspace, `notes-${n}.txt`), Array.from({ length: 160 }, (_, i) => `note ${n} line ${i}: the quick brown fox jumps over the lazy dog`).join('\n'));
    return `notes-${n}.txt`;
  });
  fakeModel.script([...notes.map((path, i) => ({ toolCalls: [{ callId: `ui-note-${i}`, name: 'read_file', input: { path } }] })), { text: FOURTH }]);
  await sendChatMessage(page, '@keeper Read the three notes.');
  check(await responseRendered(page, FOURTH, 60000), '@keeper answers the turn that overflows the window');
  // The line is written when the turn ends, after its answer: VS Code's "Completed N steps" fold does not hide it.
  const overflowAnswer = chatResponses(page, FOURTH).last();
  const overflowed = await waitUntil(async () => {
    const text = (await visibleText(overflowAnswer)).replace(/\s+/g, ' ');
    return TURN_COMPACTION.test(text) ? text : undefined;
  }, { timeout: 15000, what: "the turn's compaction line" }).catch(async () => (await visibleText(overflowAnswer)).replace(/\s+/g, ' '));
  check(TURN_COMPACTION.test(overflowed), `the turn's own compaction line is shown in its answer without opening the folded steps (${overflowed.slice(0, 300)})`);
  check(overflowed.indexOf('Compacted the context') > overflowed.indexOf(FOURTH), 'the compaction line follows the answer');
  await overflowAnswer.scrollIntoViewIfNeeded().catch(() => undefined);
  await page.screenshot({ path: '.vscode-test/shots/keeper-turn-compaction.png' }).catch(() => undefined);
  await overflowAnswer.locator('.monaco-button', { hasText: 'Show the Task Context' }).last().click();
  const again = await revealedCompaction(page, revealed);
  check(again !== undefined, `the turn's compaction button opens the panel at that compaction (${again ?? 'not shown'})`);
}
