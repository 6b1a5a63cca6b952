/**
 * The panel at sidebar width: at 280 px (VS Code's default side bar is about
 * 290 px) and at 400 px, in light, dark and high contrast, no text runs out of
 * its box or off the panel, text is at least 11 px, the input's placeholder is
 * whole, and the gauge's labels do not overlap. Writes the README's narrow
 * screenshots, media/panel-280-light.png and media/panel-280-dark.png.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { buildPanelState } from './fixture';
import { panelSuite, repoRoot, type ThemeName } from './harness';

const HEIGHT = 1400;

/** What is wrong with the layout, one line per problem (run in the page). */
function layoutProblems(): string[] {
  const w = globalThis as any;
  const doc = w.document;
  const width = doc.documentElement.clientWidth;
  const problems: string[] = [];
  const name = (el: any): string => `${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : ''} "${(el.textContent ?? '').trim().slice(0, 40)}"`;
  if (doc.documentElement.scrollWidth > width + 1) {
    const widest = [...doc.querySelectorAll('body *')].sort((a: any, b: any) => b.getBoundingClientRect().right - a.getBoundingClientRect().right)[0];
    problems.push(`the panel scrolls sideways (${doc.documentElement.scrollWidth} > ${width}; widest ${widest ? name(widest) : '?'} ends at ${Math.round(widest?.getBoundingClientRect().right ?? 0)})`);
  }
  for (const el of doc.querySelectorAll('body *')) {
    if (el.closest('.visually-hidden, [hidden], svg, script, style')) continue;
    const style = w.getComputedStyle(el);
    if (style.display === 'none' || style.visibility === 'hidden') continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    const text = [...el.childNodes].some((n: any) => n.nodeType === 3 && n.textContent.trim() !== '');
    if (box.right > width + 0.5 || box.left < -0.5) problems.push(`${name(el)} runs off the panel (${Math.round(box.left)}–${Math.round(box.right)} of ${width})`);
    if (!text) continue;
    if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0 && style.overflowX !== 'auto' && style.overflowX !== 'scroll') {
      // An ellipsis is a cut too, unless the whole text is one hover away (its title).
      const whole = style.textOverflow === 'ellipsis' && (el.closest('[title]')?.getAttribute('title') ?? '').includes((el.textContent ?? '').trim());
      if (!whole) problems.push(`${name(el)} is cut (${el.scrollWidth} > ${el.clientWidth})`);
    }
    if (parseFloat(style.fontSize) < 11) problems.push(`${name(el)} is ${style.fontSize}`);
  }
  // The input's placeholder is read whole.
  const canvas = doc.createElement('canvas').getContext('2d');
  for (const input of doc.querySelectorAll('input[placeholder]')) {
    const style = w.getComputedStyle(input);
    canvas.font = `${style.fontSize} ${style.fontFamily}`;
    const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const needed = canvas.measureText(input.getAttribute('placeholder')).width;
    if (needed > room + 0.5) problems.push(`the placeholder "${input.getAttribute('placeholder')}" is cut (${Math.round(needed)} > ${Math.round(room)} px)`);
  }
  // The gauge: labels at least 11 px as drawn, inside the panel, none over another.
  for (const svg of doc.querySelectorAll('svg.gauge')) {
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const labels = [...svg.querySelectorAll('text')].map((t: any) => ({ text: t.textContent, box: t.getBoundingClientRect(), size: parseFloat(w.getComputedStyle(t).fontSize) * scale }));
    for (const l of labels) {
      if (l.size < 10.95) problems.push(`the gauge label "${l.text}" is ${l.size.toFixed(1)} px`);
      if (l.box.left < -0.5 || l.box.right > width + 0.5) problems.push(`the gauge label "${l.text}" runs off the panel`);
    }
    for (let i = 0; i < labels.length; i++) {
      for (let j = i + 1; j < labels.length; j++) {
        const a = labels[i]!.box;
        const b = labels[j]!.box;
        if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) problems.push(`the gauge labels "${labels[i]!.text}" and "${labels[j]!.text}" overlap`);
      }
    }
  }
  return problems;
}

describe('webview: the panel at sidebar width', function () {
  const suite = panelSuite();

  it('draws the gauge again when the panel is made narrower: its labels keep 11 px and stay apart', async () => {
    const panel = await suite.open({ theme: 'dark', viewport: { width: 420, height: HEIGHT } });
    await panel.sendState(buildPanelState());
    const drawnAt = (width: number) =>
      panel.page.waitForFunction((w) => {
        const svg = (globalThis as any).document.querySelector('svg.gauge');
        return svg && Math.abs(svg.getBoundingClientRect().width - svg.viewBox.baseVal.width) < 1.5 && svg.viewBox.baseVal.width < w;
      }, width);
    await drawnAt(420);
    const wide = await panel.page.evaluate(() => (globalThis as any).document.querySelector('svg.gauge').viewBox.baseVal.width as number);
    await panel.page.setViewportSize({ width: 260, height: HEIGHT });
    await drawnAt(260);
    const narrow = await panel.page.evaluate(() => (globalThis as any).document.querySelector('svg.gauge').viewBox.baseVal.width as number);
    assert.ok(narrow < wide - 100, `redrawn at the new width (${wide} → ${narrow})`);
    assert.deepEqual(await panel.page.evaluate(layoutProblems), []);
  });

  for (const width of [280, 400]) {
    for (const theme of ['light', 'dark', 'high-contrast'] as const satisfies readonly ThemeName[]) {
      const shot = width === 280 && theme !== 'high-contrast' ? `panel-${width}-${theme}.png` : undefined;
      it(`${width} px, ${theme}: nothing cut or off the panel, text ≥ 11 px, the gauge's labels apart${shot ? `; writes media/${shot}` : ''}`, async () => {
        const panel = await suite.open({ theme, viewport: { width, height: HEIGHT } });
        // Everything the fixture has, a drift report included.
        await panel.sendState(buildPanelState());
        await panel.page.evaluate(() => (globalThis as any).document.fonts.ready);
        // The gauge is drawn again at the region's width once it is laid out.
        await panel.page.waitForFunction(() => {
          const svg = (globalThis as any).document.querySelector('svg.gauge');
          return svg && Math.abs(svg.viewBox.baseVal.width - svg.getBoundingClientRect().width) < 1.5;
        });
        assert.deepEqual(await panel.page.evaluate(layoutProblems), []);
        // The screenshot shows the panel before any rebuild was asked for, as the README's others do.
        if (shot) await panel.sendState(buildPanelState({ drift: null }));
        if (shot) await panel.page.screenshot({ path: path.join(repoRoot, 'media', shot), clip: { x: 0, y: 0, width, height: 760 }, animations: 'disabled', caret: 'hide' });
        assert.deepEqual(panel.consoleErrors, []);
      });
    }
  }
});
