/**
 * Keyboard and assistive technology: every control is a real button in a
 * sensible tab order; Escape cancels a correction; collapsibles say whether
 * they are open; the UI state survives the webview being reloaded.
 */
import * as assert from 'node:assert/strict';
import { buildPanelState, TEXT } from './fixture';
import { panelSuite, closePanel, type PanelPage } from './harness';

/** What has focus: its focus key, or its tag and text. */
async function focused(panel: PanelPage): Promise<string> {
  return (await panel.page.evaluate(() => {
    const el = (globalThis as any).document.activeElement;
    return el?.getAttribute('data-focus') ?? `${el?.tagName}:${el?.textContent}`;
  })) as string;
}

describe('webview: keyboard and accessibility', function () {
  const suite = panelSuite();
  let panel: PanelPage | undefined;

  it('Tab walks the header, then the regions in order, and reaches a fact\'s action buttons', async () => {
    panel = await suite.open();
    await panel.sendState(buildPanelState());
    const order: string[] = [];
    for (let i = 0; i < 80; i++) {
      await panel.page.keyboard.press('Tab');
      order.push(await focused(panel));
    }
    assert.deepEqual(order.slice(0, 5), ['filter', 'rebuild', 'toggle:drift', 'toggle:budget', 'toggle:pending']);
    const at = (key: string): number => {
      const i = order.indexOf(key);
      assert.ok(i >= 0, `Tab never reached ${key}: ${order.join(' → ')}`);
      return i;
    };
    // A pending candidate: its source, then Confirm, then Reject.
    assert.ok(at(`fact:${TEXT.pendingToolId}:r118`) < at(`fact:${TEXT.pendingToolId}:confirm`));
    assert.equal(at(`fact:${TEXT.pendingToolId}:reject`), at(`fact:${TEXT.pendingToolId}:confirm`) + 1);
    // A protected fact: its source, then Correct, Pin, Supersede, Delete.
    const correct = at(`fact:${TEXT.constraintId}:correct`);
    assert.equal(order[correct - 1], `fact:${TEXT.constraintId}:r0`);
    assert.deepEqual(order.slice(correct, correct + 4), ['correct', 'pin', 'supersede', 'delete'].map((a) => `fact:${TEXT.constraintId}:${a}`));
    assert.ok(at('toggle:pending') < at('toggle:facts'));

    // Enter on a focused button acts.
    await panel.clearPosted();
    await panel.page.locator(`[data-focus="fact:${TEXT.constraintId}:pin"]`).focus();
    await panel.page.keyboard.press('Enter');
    assert.deepEqual(await panel.posted(), [{ type: 'fact/pin', requestId: 'r1', taskId: TEXT.taskId, factId: TEXT.constraintId }]);
  });

  it('Escape cancels an open correction: nothing is posted, the value is unchanged, focus returns to Correct', async () => {
    panel = await suite.open();
    await panel.sendState(buildPanelState());
    await panel.clearPosted();
    await panel.page.locator(`[data-focus="fact:${TEXT.constraintId}:correct"]`).focus();
    await panel.page.keyboard.press('Enter');
    assert.equal(await focused(panel), `fact:${TEXT.constraintId}:editor`);
    await panel.page.keyboard.type(' (draft)');
    assert.equal(await panel.fact(TEXT.constraintId).locator('textarea').inputValue(), `${TEXT.constraint} (draft)`);
    await panel.page.waitForFunction((id) => (globalThis as any).__vscodeState()?.drafts?.[id]?.endsWith('(draft)'), TEXT.constraintId);
    // Tab goes from the editor to Save and Cancel.
    await panel.page.keyboard.press('Tab');
    assert.equal(await focused(panel), `fact:${TEXT.constraintId}:save`);
    await panel.page.keyboard.press('Tab');
    assert.equal(await focused(panel), `fact:${TEXT.constraintId}:cancel`);
    await panel.page.keyboard.press('Shift+Tab');
    await panel.page.keyboard.press('Shift+Tab');
    await panel.page.keyboard.press('Escape');
    assert.equal(await panel.fact(TEXT.constraintId).locator('textarea').count(), 0);
    assert.equal(await panel.text(`li[data-key="${TEXT.constraintId}"] .fact-value`), TEXT.constraint);
    assert.equal(await focused(panel), `fact:${TEXT.constraintId}:correct`);
    assert.deepEqual(await panel.posted(), []);
    assert.deepEqual((await panel.savedState()).drafts, {});
  });

  it('when a superseded fact leaves its group, focus goes to the same button of the next fact', async () => {
    panel = await suite.open();
    const state = buildPanelState();
    await panel.sendState(state);
    await panel.page.locator(`[data-focus="fact:${TEXT.constraintId}:supersede"]`).focus();
    await panel.page.keyboard.press('Enter');
    assert.deepEqual(await panel.lastPosted(), { type: 'fact/supersede', requestId: 'r1', taskId: TEXT.taskId, factId: TEXT.constraintId });
    await panel.send({ type: 'state/patch', patch: { facts: state.facts.map((f) => (f.id === TEXT.constraintId ? { ...f, status: 'superseded' as const, version: 2 } : f)) } });
    await panel.send({ type: 'action/result', requestId: 'r1', ok: true, message: 'Superseded.' });
    assert.equal(await focused(panel), `fact:${TEXT.pinnedConstraintId}:supersede`);
  });

  it('collapsibles are buttons with aria-expanded and aria-controls; Space toggles them', async () => {
    panel = await suite.open();
    await panel.sendState(buildPanelState());
    const toggle = panel.page.locator('[data-focus="toggle:not-loaded"]');
    assert.equal(await toggle.evaluate((el) => el.tagName), 'BUTTON');
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
    const body = await toggle.getAttribute('aria-controls');
    assert.ok(body && (await panel.page.locator(`#${body}`).isVisible()));
    await toggle.focus();
    await panel.page.keyboard.press('Space');
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    assert.equal(await panel.page.locator(`#${body}`).isVisible(), false);
    // Landmarks and headings.
    assert.equal(await panel.page.locator('main').count(), 1);
    assert.equal(await panel.page.locator('h1').count(), 1);
    assert.ok((await panel.page.locator('section[aria-labelledby] > .heading-row h2').count()) >= 7);
    assert.equal(await panel.page.getByRole('region', { name: /Evidence not loaded/ }).count(), 1);
    // Every button has an accessible name.
    const unnamed = await panel.page.evaluate(() =>
      [...(globalThis as any).document.querySelectorAll('button')].filter((b: any) => !(b.getAttribute('aria-label') || b.textContent.trim())).length,
    );
    assert.equal(unnamed, 0);
  });

  it('keeps collapsed regions, open histories, a draft and the filter across a reload of the webview', async () => {
    panel = await suite.open();
    await panel.sendState(buildPanelState());
    await panel.page.locator('[data-focus="toggle:artifacts"]').click();
    await panel.fact(TEXT.pinnedConstraintId).locator('.history-toggle').click();
    await panel.fact(TEXT.constraintId).getByRole('button', { name: 'Correct' }).click();
    await panel.fact(TEXT.constraintId).locator('textarea').fill('Half-written correction');
    await panel.page.locator('input.filter-input').fill('never');
    await panel.page.waitForTimeout(250);
    const saved = await panel.savedState();
    await closePanel(panel);

    panel = await suite.open({ uiState: saved });
    await panel.sendState(buildPanelState());
    assert.equal(await panel.page.locator('[data-focus="toggle:artifacts"]').getAttribute('aria-expanded'), 'false');
    assert.equal(await panel.fact(TEXT.pinnedConstraintId).locator('.history-toggle').getAttribute('aria-expanded'), 'true');
    assert.equal(await panel.fact(TEXT.constraintId).locator('textarea').inputValue(), 'Half-written correction');
    assert.equal(await panel.page.locator('input.filter-input').inputValue(), 'never');
    assert.equal(await panel.fact(TEXT.permissionId).isVisible(), false, 'the filter applies again');
    assert.equal(await panel.fact(TEXT.constraintId).isVisible(), true);
  });

  it('announces action results in a live region and notices in a status region', async () => {
    panel = await suite.open();
    await panel.sendState(buildPanelState());
    assert.equal(await panel.page.locator('.notices').getAttribute('role'), 'status');
    await panel.send({ type: 'action/result', requestId: 'r99', ok: true, message: 'Confirmed: Do not run the integration tests against production.' });
    const status = panel.page.locator('.action-status');
    assert.equal(await status.getAttribute('aria-live'), 'polite');
    assert.equal(await status.textContent(), 'Confirmed: Do not run the integration tests against production.');
  });
});
