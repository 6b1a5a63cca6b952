/**
 * Themes: the panel takes every colour from VS Code's theme variables, so the
 * same page follows light, dark and high contrast. Writes the README's
 * screenshots, media/panel-light.png and media/panel-dark.png (420×1100, the
 * width of a side panel).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildPanelState, TEXT } from './fixture';
import { panelSuite, repoRoot, THEMES, type PanelPage, type ThemeName } from './harness';

const VIEWPORT = { width: 420, height: 1100 };

/** The state the screenshots show: the fixture without a drift report (no rebuild asked for yet). */
function screenshotState() {
  return buildPanelState({ drift: null });
}

async function computed(panel: PanelPage, selector: string, property: string): Promise<string> {
  return (await panel.page.locator(selector).first().evaluate((el, p) => (globalThis as any).getComputedStyle(el).getPropertyValue(p), property)) as string;
}

/** `#rrggbb` → `rgb(r, g, b)`, as getComputedStyle reports it. */
function rgb(hex: string): string {
  const n = Number.parseInt(hex.slice(1, 7), 16);
  return `rgb(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255})`;
}

describe('webview: themes', function () {
  const suite = panelSuite();
  let panel: PanelPage | undefined;

  for (const theme of ['light', 'dark'] as const satisfies readonly ThemeName[]) {
    it(`renders with the ${theme} theme's variables and writes media/panel-${theme}.png`, async () => {
      panel = await suite.open({ theme, viewport: VIEWPORT });
      await panel.sendState(screenshotState());
      // Opened without the mouse, so no hover shows in the screenshot.
      await panel.fact(TEXT.pinnedConstraintId).locator('.history-toggle').dispatchEvent('click');
      await panel.page.evaluate(() => (globalThis as any).document.fonts.ready);
      const vars = THEMES[theme];
      assert.equal(await computed(panel, 'body', 'color'), rgb(vars['--vscode-foreground']!));
      assert.equal(await computed(panel, '.btn-primary', 'background-color'), rgb(vars['--vscode-button-background']!));
      assert.equal(await computed(panel, '.count', 'background-color'), rgb(vars['--vscode-badge-background']!));
      assert.equal(await computed(panel, 'rect.block-rawTail', 'fill'), rgb(vars['--vscode-charts-green']!));
      assert.equal(await computed(panel, 'button.source', 'color'), rgb(vars['--vscode-textLink-foreground']!));
      // Focus is drawn with the theme's focus border.
      await panel.page.locator(`[data-focus="fact:${TEXT.constraintId}:pin"]`).focus();
      await panel.page.keyboard.press('Shift+Tab');
      await panel.page.keyboard.press('Tab');
      assert.equal(await computed(panel, `[data-focus="fact:${TEXT.constraintId}:pin"]`, 'outline-color'), rgb(vars['--vscode-focusBorder']!));
      await panel.page.evaluate(() => (globalThis as any).document.activeElement.blur());

      const file = path.join(repoRoot, 'media', `panel-${theme}.png`);
      // Animations (the running spinner) are stopped so the same state gives the same image.
      await panel.page.screenshot({ path: file, clip: { x: 0, y: 0, ...VIEWPORT }, animations: 'disabled', caret: 'hide' });
      const png = fs.readFileSync(file);
      assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
      assert.equal(png.readUInt32BE(16), VIEWPORT.width);
      assert.equal(png.readUInt32BE(20), VIEWPORT.height);
      assert.deepEqual(panel.consoleErrors, []);
    });
  }

  it('high contrast: controls and tags get the contrast border', async () => {
    panel = await suite.open({ theme: 'high-contrast', viewport: VIEWPORT });
    await panel.sendState(screenshotState());
    const border = rgb(THEMES['high-contrast']['--vscode-contrastBorder']!);
    assert.equal(await computed(panel, '.fact-actions .btn', 'border-top-color'), border);
    assert.equal(await computed(panel, '.tag.confidence', 'border-top-color'), border);
    assert.equal(await computed(panel, 'rect.block', 'stroke'), border);
  });
});
