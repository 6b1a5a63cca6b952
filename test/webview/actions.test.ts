/**
 * Every user action posts exactly the protocol's message, and the panel
 * follows the host's `action/result` (a failed correction keeps its editor).
 */
import * as assert from 'node:assert/strict';
import { parseWebviewMessage, type WebviewMessage } from '../../src/protocol/messages';
import { buildPanelState, TEXT } from './fixture';
import { panelSuite, type PanelPage } from './harness';

describe('webview: actions post the protocol messages', function () {
  const suite = panelSuite();
  let panel: PanelPage;

  beforeEach(async () => {
    panel = await suite.open();
    await panel.sendState(buildPanelState());
    await panel.clearPosted();
  });

  it('Correct: the editor opens with the value, new wording typed, Enter saves with fact/correct', async () => {
    const fact = panel.fact(TEXT.constraintId);
    await fact.getByRole('button', { name: 'Correct' }).click();
    const editor = fact.locator('textarea');
    assert.equal(await editor.inputValue(), TEXT.constraint);
    assert.equal(await editor.evaluate((el) => el === (globalThis as any).document.activeElement), true, 'the editor has focus');
    await panel.page.keyboard.press('ControlOrMeta+A');
    await panel.page.keyboard.type('  Never change the public signature of handleRequest or its error type.  ');
    await panel.page.keyboard.press('Enter');
    assert.deepEqual(await panel.posted(), [{ type: 'fact/correct', requestId: 'r1', taskId: TEXT.taskId, factId: TEXT.constraintId, value: 'Never change the public signature of handleRequest or its error type.' }]);
    // Waiting for the result: the editor stays, read-only.
    assert.equal(await editor.getAttribute('readonly'), '');
    await panel.send({ type: 'action/result', requestId: 'r1', ok: true, message: 'Corrected the constraint.' });
    assert.equal(await fact.locator('textarea').count(), 0, 'a saved correction closes the editor');
    assert.equal(await panel.text('.action-status'), 'Corrected the constraint.');
    assert.equal(await fact.getByRole('button', { name: 'Correct' }).evaluate((el) => el === (globalThis as any).document.activeElement), true, 'focus goes back to Correct');
    assert.deepEqual((await panel.savedState()).drafts, {});
  });

  it('Correct: Shift+Enter is a new line, Ctrl+Enter saves, an empty value is not sent', async () => {
    const fact = panel.fact(TEXT.permissionId);
    await fact.getByRole('button', { name: 'Correct' }).click();
    const editor = fact.locator('textarea');
    await editor.fill('');
    await panel.page.keyboard.press('Enter');
    assert.deepEqual(await panel.posted(), []);
    assert.match(await fact.locator('.inline-error').textContent() ?? '', /Write the new wording/);
    assert.equal(await fact.locator('textarea').getAttribute('aria-invalid'), 'true');
    await panel.page.keyboard.type('You may add a dev dependency');
    await panel.page.keyboard.press('Shift+Enter');
    await panel.page.keyboard.type('for fake timers only.');
    await panel.page.keyboard.press('Control+Enter');
    assert.deepEqual(await panel.posted(), [{ type: 'fact/correct', requestId: 'r1', taskId: TEXT.taskId, factId: TEXT.permissionId, value: 'You may add a dev dependency\nfor fake timers only.' }]);
  });

  it('a failed correction keeps the editor open with the draft and the reason', async () => {
    const fact = panel.fact(TEXT.constraintId);
    await fact.getByRole('button', { name: 'Correct' }).click();
    await fact.locator('textarea').fill('Keep handleRequest stable.');
    await fact.getByRole('button', { name: 'Save' }).click();
    assert.deepEqual(await panel.lastPosted(), { type: 'fact/correct', requestId: 'r1', taskId: TEXT.taskId, factId: TEXT.constraintId, value: 'Keep handleRequest stable.' });
    await panel.send({ type: 'action/result', requestId: 'r1', ok: false, message: 'The session store is read-only (another window holds the lock).' });
    const editor = fact.locator('textarea');
    assert.equal(await editor.inputValue(), 'Keep handleRequest stable.');
    assert.equal(await editor.getAttribute('readonly'), null, 'editable again');
    assert.equal(await fact.locator('.inline-error').textContent(), 'The session store is read-only (another window holds the lock).');
    assert.equal(await panel.text('.action-status.is-error'), 'The session store is read-only (another window holds the lock).');
    assert.equal(await editor.evaluate((el) => el === (globalThis as any).document.activeElement), true, 'focus back in the editor');
    // It can be saved again with a new request id.
    await panel.page.keyboard.press('Enter');
    assert.deepEqual(await panel.lastPosted(), { type: 'fact/correct', requestId: 'r2', taskId: TEXT.taskId, factId: TEXT.constraintId, value: 'Keep handleRequest stable.' });
  });

  it('Pin, Supersede, Delete post fact/pin, fact/supersede, fact/delete with fresh request ids', async () => {
    await panel.fact(TEXT.constraintId).getByRole('button', { name: 'Pin' }).click();
    await panel.fact(TEXT.decisionId).getByRole('button', { name: 'Supersede' }).click();
    await panel.fact(TEXT.openIssueId).getByRole('button', { name: 'Delete' }).click();
    assert.deepEqual(await panel.posted(), [
      { type: 'fact/pin', requestId: 'r1', taskId: TEXT.taskId, factId: TEXT.constraintId },
      { type: 'fact/supersede', requestId: 'r2', taskId: TEXT.taskId, factId: TEXT.decisionId },
      { type: 'fact/delete', requestId: 'r3', taskId: TEXT.taskId, factId: TEXT.openIssueId },
    ]);
    // While an action is in flight, the fact's buttons do nothing.
    assert.equal(await panel.fact(TEXT.constraintId).getAttribute('aria-busy'), 'true');
    await panel.fact(TEXT.constraintId).getByRole('button', { name: 'Pin' }).click({ force: true });
    assert.equal((await panel.posted()).length, 3);
    await panel.send({ type: 'action/result', requestId: 'r1', ok: true, message: 'Pinned.' });
    assert.equal(await panel.fact(TEXT.constraintId).getAttribute('aria-busy'), null);
  });

  it('Confirm and Reject a pending candidate post pending/confirm and pending/reject', async () => {
    await panel.fact(TEXT.pendingToolId).getByRole('button', { name: 'Confirm' }).click();
    await panel.fact(TEXT.pendingModelId).getByRole('button', { name: 'Reject' }).click();
    assert.deepEqual(await panel.posted(), [
      { type: 'pending/confirm', requestId: 'r1', taskId: TEXT.taskId, factId: TEXT.pendingToolId },
      { type: 'pending/reject', requestId: 'r2', taskId: TEXT.taskId, factId: TEXT.pendingModelId },
    ]);
  });

  it('View, a source, a file path and Rebuild post open/toolCall, open/record, open/file and rebuild', async () => {
    const page = panel.page;
    await page.getByRole('button', { name: `View tool call ${TEXT.evidenceToolCall}` }).click();
    await panel.fact(TEXT.pinnedConstraintId).getByRole('button', { name: 'Open record 140' }).click();
    await page.locator('.lines-list li[data-key="request-2"]').getByRole('button', { name: 'Open record 88' }).click();
    await page.getByRole('button', { name: `Open ${TEXT.artifact}` }).click();
    await page.getByRole('button', { name: 'Rebuild from raw record' }).click();
    assert.deepEqual(await panel.posted(), [
      { type: 'open/toolCall', taskId: TEXT.taskId, toolCallId: TEXT.evidenceToolCall },
      { type: 'open/record', taskId: TEXT.taskId, record: 140 },
      { type: 'open/record', taskId: TEXT.taskId, record: 88 },
      { type: 'open/file', path: TEXT.artifact },
      { type: 'rebuild', requestId: 'r1', taskId: TEXT.taskId },
    ]);
    // Rebuilding: the button says so and a second click sends nothing until the result.
    const rebuild = page.locator('button.rebuild');
    assert.equal(await rebuild.getAttribute('aria-disabled'), 'true');
    assert.equal(await rebuild.textContent(), 'Rebuilding…');
    await rebuild.click({ force: true });
    assert.equal((await panel.posted()).length, 5);
    await panel.send({ type: 'action/result', requestId: 'r1', ok: true, message: 'Rebuilt from 269 records: 3 lines drifted.' });
    assert.equal(await rebuild.getAttribute('aria-disabled'), null);
    assert.equal(await panel.text('.action-status[role="status"]'), 'Rebuilt from 269 records: 3 lines drifted.');
  });

  it('every message that acts on a task names the task rendered; after another task\'s state/full, the new one', async () => {
    const page = panel.page;
    const taskOf = (messages: WebviewMessage[]) => messages.map((m) => [m.type, 'taskId' in m ? m.taskId : null]);
    await panel.fact(TEXT.constraintId).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Rebuild from raw record' }).click();
    await page.getByRole('button', { name: `View tool call ${TEXT.evidenceToolCall}` }).click();
    await panel.fact(TEXT.pinnedConstraintId).getByRole('button', { name: 'Open record 140' }).click();
    await page.getByRole('button', { name: `Open ${TEXT.artifact}` }).click();
    assert.deepEqual(taskOf(await panel.posted()), [
      ['fact/delete', TEXT.taskId],
      ['rebuild', TEXT.taskId],
      ['open/toolCall', TEXT.taskId],
      ['open/record', TEXT.taskId],
      ['open/file', null],
    ]);
    await panel.send({ type: 'action/result', requestId: 'r1', ok: true, message: 'Deleted.' });
    await panel.send({ type: 'action/result', requestId: 'r2', ok: true, message: 'Rebuilt.' });

    // The chat moved to another task; it holds the same rules (fact ids are content hashes: the same ids).
    const other = 'task-2026-11-30-limits-docs';
    await panel.sendState(buildPanelState({ task: { id: other, title: 'Document the per-route limits', records: 12, running: true } }));
    await panel.clearPosted();
    await panel.fact(TEXT.constraintId).getByRole('button', { name: 'Delete' }).click();
    await panel.fact(TEXT.permissionId).getByRole('button', { name: 'Correct' }).click();
    await panel.fact(TEXT.permissionId).locator('textarea').fill('You may add a dev dependency for the docs build.');
    await page.keyboard.press('Enter');
    await panel.fact(TEXT.pendingToolId).getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('button', { name: 'Rebuild from raw record' }).click();
    await page.getByRole('button', { name: `View tool call ${TEXT.evidenceToolCall}` }).click();
    await panel.fact(TEXT.pinnedConstraintId).getByRole('button', { name: 'Open record 140' }).click();
    const posted = await panel.posted();
    assert.deepEqual(taskOf(posted), [
      ['fact/delete', other],
      ['fact/correct', other],
      ['pending/confirm', other],
      ['rebuild', other],
      ['open/toolCall', other],
      ['open/record', other],
    ]);
    // Each is a message the host accepts.
    for (const message of posted) assert.equal(parseWebviewMessage(message).ok, true, JSON.stringify(message));
  });

  it('a failed fact action shows its reason on the fact until the next action', async () => {
    await panel.fact(TEXT.decisionId).getByRole('button', { name: 'Supersede' }).click();
    await panel.send({ type: 'action/result', requestId: 'r1', ok: false, message: 'fact decision-91c04e3a55d2 is not active' });
    assert.equal(await panel.fact(TEXT.decisionId).locator('.inline-error').textContent(), 'fact decision-91c04e3a55d2 is not active');
    await panel.fact(TEXT.decisionId).getByRole('button', { name: 'Pin' }).click();
    assert.equal(await panel.fact(TEXT.decisionId).locator('.inline-error').count(), 0);
  });

  it('opens a fact\'s earlier versions and the History group', async () => {
    const page = panel.page;
    const pinned = panel.fact(TEXT.pinnedConstraintId);
    const toggle = pinned.locator('.history-toggle');
    await toggle.click();
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
    assert.match((await pinned.locator('.fact-history li').textContent()) ?? '', /v1.*active.*at r88.*\/health must never be limited\./);
    const history = page.locator('.group-facts-history .toggle');
    await history.click();
    assert.equal(await history.getAttribute('aria-expanded'), 'true');
    assert.ok(await panel.fact(TEXT.supersededId).isVisible());
    assert.deepEqual(await panel.posted(), [], 'UI state only: nothing posted');
    const saved = await panel.savedState();
    assert.deepEqual(saved.history, [TEXT.pinnedConstraintId]);
    assert.equal(saved.open['facts-history'], true);
  });
});
