/**
 * The panel renders every part of the state, in the page `panelHtml` builds,
 * under its Content Security Policy.
 */
import * as assert from 'node:assert/strict';
import { makeNonce, panelHtml } from '../../src/panel/html';
import { buildPanelState, TEXT } from './fixture';
import { panelSuite, type PanelPage } from './harness';

describe('webview: panelHtml', () => {
  const options = { nonce: 'abc123+/XYZ=', cspSource: 'https://*.vscode-cdn.net', scriptUri: 'https://x.vscode-cdn.net/dist/webview.js', styleUri: 'https://x.vscode-cdn.net/dist/webview.css', codiconUri: 'https://x.vscode-cdn.net/dist/codicon.css' };

  it('declares the CSP with the nonce and loads only the given URIs', () => {
    const html = panelHtml(options);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1];
    assert.equal(csp, "default-src 'none'; style-src https://*.vscode-cdn.net; font-src https://*.vscode-cdn.net; img-src https://*.vscode-cdn.net data:; script-src 'nonce-abc123+/XYZ=';");
    assert.match(html, /<script nonce="abc123\+\/XYZ=" src="https:\/\/x\.vscode-cdn\.net\/dist\/webview\.js"><\/script>/);
    assert.match(html, /<link rel="stylesheet" href="https:\/\/x\.vscode-cdn\.net\/dist\/codicon\.css">/);
    assert.match(html, /<link rel="stylesheet" href="https:\/\/x\.vscode-cdn\.net\/dist\/webview\.css">/);
    assert.doesNotMatch(html, /style="/, 'no inline style');
    assert.equal((html.match(/<script/g) ?? []).length, 1, 'one script, the bundle');
    assert.doesNotMatch(html.replace(/https:\/\/[x*]\.vscode-cdn\.net/g, ''), /https?:\/\//, 'nothing remote beyond the webview origin');
  });

  it('escapes the URIs and refuses a nonce or source that could widen the policy', () => {
    assert.match(panelHtml({ ...options, scriptUri: 'https://x/a"b<c' }), /src="https:\/\/x\/a&quot;b&lt;c"/);
    assert.throws(() => panelHtml({ ...options, nonce: "x' 'unsafe-inline" }), /nonce/);
    assert.throws(() => panelHtml({ ...options, cspSource: "https://x; script-src 'unsafe-inline'" }), /cspSource/);
    assert.throws(() => panelHtml({ ...options, cspSource: "https://x 'unsafe-eval'" }), /cspSource/);
    // The web workbench (code-server) lists two sources, one a quoted keyword.
    assert.match(panelHtml({ ...options, cspSource: "'self' https://*.vscode-cdn.net" }), /style-src 'self' https:\/\/\*\.vscode-cdn\.net;/);
  });

  it('makes a fresh base64 nonce of 128 bits each time', () => {
    const a = makeNonce();
    const b = makeNonce();
    assert.notEqual(a, b);
    assert.equal(Buffer.from(a, 'base64').length, 16);
    assert.doesNotThrow(() => panelHtml({ ...options, nonce: a }));
  });
});

describe('webview: rendering the panel state', function () {
  const suite = panelSuite();
  let panel: PanelPage | undefined;

  it('posts ready on load, and shows the empty state while there is no task', async () => {
    panel = await suite.open();
    assert.deepEqual(await panel.posted(), [{ type: 'ready' }]);
    await panel.sendState(buildPanelState({ task: null }));
    assert.ok(await panel.page.getByText('No @keeper task yet — ask @keeper in the chat.').isVisible());
    assert.equal(await panel.page.locator('main').isVisible(), false);
    assert.equal(await panel.page.locator('header.task-header').isVisible(), false);
  });

  it('renders every section from the fixture', async () => {
    panel = await suite.open();
    await panel.sendState(buildPanelState());
    const page = panel.page;
    assert.equal(await page.getByText('No @keeper task yet').isVisible(), false);

    // Header: title, id, record count, running, rebuild; notices; drift.
    assert.equal(await panel.text('h1.task-title'), TEXT.title);
    assert.equal(await panel.text('.task-id'), TEXT.taskId);
    assert.equal(await panel.text('.task-records'), '269 records');
    assert.equal(await panel.text('.running'), 'Running');
    assert.ok(await page.getByRole('button', { name: 'Rebuild from raw record' }).isVisible());
    assert.equal(await page.locator('.notices[role="status"] li').textContent(), TEXT.notice);
    // The drift report: its verdict first, then the differing lines of each section, marked.
    assert.equal(await page.locator('.region-drift .drift-verdict').textContent(), TEXT.driftVerdict);
    assert.equal(await page.locator('.region-drift .drift-section').first().textContent(), 'Decisions · 4 shared');
    assert.deepEqual(await page.locator('.region-drift .drift-lines li').allTextContents(), [`only now${TEXT.driftLine}`, 'rebuildlimiter-storage: in-memory sliding window (r88)']);
    assert.equal(await page.locator('.region-drift .count').first().textContent(), '2');

    // Task Context: sections in order, with key, priority, confidence and sources.
    const headings = await page.locator('.region-context .group:not([hidden]) h3 .toggle-title').allTextContents();
    assert.deepEqual(headings, ['Requests', 'Deliverables', 'Decisions', 'Constraints', 'Ruled out', 'Findings', 'Archived', 'Current state']);
    const constraintLine = page.locator('.group-context-constraints li[data-key="handle-request-signature"]');
    assert.equal(await constraintLine.locator('.line-text').textContent(), TEXT.constraint);
    assert.equal(await constraintLine.locator('.line-key').textContent(), 'handle-request-signature');
    assert.equal(await constraintLine.locator('.tag.priority-0').textContent(), 'P0 · never demoted');
    assert.equal(await constraintLine.locator('.tag.confidence').textContent(), 'verbatim');
    assert.deepEqual(await constraintLine.locator('button.source').allTextContents(), ['r0']);
    assert.equal(await page.locator('.group-context-decisions li[data-key="limiter-storage"] .tag.confidence').textContent(), 'model');

    // Protected facts: grouped by type, apart from the narrative.
    const groups = await page.locator('.region-facts .group:not([hidden]) h3 .toggle-title').allTextContents();
    assert.deepEqual(groups, ['Goals', 'Constraints', 'Permissions', 'Decisions', 'Open issues', 'Completed effects', 'Preferences', 'History']);
    const constraint = page.locator(`.group-facts-constraint li[data-key="${TEXT.constraintId}"]`);
    assert.equal(await constraint.locator('.fact-value').textContent(), TEXT.constraint);
    assert.equal(await constraint.locator('.tag.writer').textContent(), 'user');
    assert.equal(await constraint.locator('.tag.version').textContent(), 'v1');
    assert.deepEqual(await constraint.locator('.fact-actions button').allTextContents(), ['Correct', 'Pin', 'Supersede', 'Delete']);
    const pinned = page.locator(`li[data-key="${TEXT.pinnedConstraintId}"]`);
    assert.ok(await pinned.locator('.tag.pinned').isVisible());
    assert.deepEqual(await pinned.locator('.fact-actions button').allTextContents(), ['Correct', 'Supersede', 'Delete'], 'a pinned fact offers no Pin');
    assert.deepEqual(await pinned.locator('button.source').allTextContents(), ['r88', 'r140']);
    assert.equal(await pinned.locator('.history-toggle').getAttribute('aria-expanded'), 'false');
    // History group: superseded and deleted, collapsed.
    const historyToggle = page.locator('.group-facts-history .toggle');
    assert.equal(await historyToggle.getAttribute('aria-expanded'), 'false');
    assert.equal(await page.locator(`.group-facts-history li[data-key="${TEXT.supersededId}"] .tag.status`).textContent(), 'superseded');
    assert.equal(await page.locator(`.group-facts-history li[data-key="${TEXT.deletedId}"] .tag.status`).textContent(), 'deleted');
    assert.equal(await page.locator(`.group-facts-history li[data-key="${TEXT.supersededId}"]`).isVisible(), false);

    // Pending candidates, with writer and source.
    const pendingTool = page.locator(`.pending-list li[data-key="${TEXT.pendingToolId}"]`);
    assert.equal(await pendingTool.locator('.fact-value').textContent(), TEXT.pendingTool);
    assert.equal(await pendingTool.locator('.from').textContent(), 'from tool output');
    assert.deepEqual(await pendingTool.locator('button.source').allTextContents(), ['r118']);
    assert.deepEqual(await pendingTool.locator('.fact-actions button').allTextContents(), ['Confirm', 'Reject']);
    assert.equal(await page.locator(`.pending-list li[data-key="${TEXT.pendingModelId}"] .from`).textContent(), 'from model text');
    assert.equal(await page.locator(`.facts-list li[data-key="${TEXT.pendingToolId}"]`).count(), 0, 'a candidate is not a protected fact');

    // Budget gauge: the numbers, the labelled lines, the legend, the hidden table.
    assert.equal(await panel.text('.budget-current'), '71,540');
    assert.equal(await panel.text('.budget-of'), ' / 120,000 tokens');
    const gauge = page.locator('svg.gauge');
    assert.equal(await gauge.getAttribute('role'), 'img');
    const label = (await gauge.getAttribute('aria-label')) ?? '';
    assert.match(label, /71,540 of 120,000 effective tokens \(60%\)/);
    assert.match(label, /window 128,000; trigger 78,000; stop 60,000/);
    assert.match(label, /raw tail 41,500/);
    assert.deepEqual((await gauge.locator('text').allTextContents()).sort(), ['effective 120k', 'now 71.5k', 'stop 60k', 'trigger 78k', 'window 128k']);
    assert.equal(await gauge.locator('rect.block').count(), 6);
    assert.deepEqual(await page.locator('.legend .legend-label').allTextContents(), ['Overhead', 'Protected state', 'Summary', 'Retrieved', 'Evidence', 'Raw tail']);
    assert.equal(await page.locator('.legend li:has-text("Evidence") .legend-tokens').textContent(), '18,900');
    assert.equal(await page.locator('.visually-hidden table tr:has(th:text-is("Trigger")) td').first().textContent(), '78,000');

    // Evidence not loaded: size, how, View for a tool call, the recover text otherwise.
    const shrunk = page.locator(`.not-loaded-list li[data-key="${TEXT.evidenceToolCall}"]`);
    assert.equal(await shrunk.locator('.part-tokens').textContent(), '12,840 tok');
    assert.equal(await shrunk.locator('.tag.how').textContent(), 'shrunk');
    // Each row says its tool and command or file, and its age in records; the address is in the tooltip.
    assert.equal(await shrunk.locator('.part-tool').textContent(), 'Bash');
    assert.equal(await shrunk.locator('.part-subject').textContent(), 'npm test -- --runInBand test/rateLimiter.test.ts');
    assert.equal(await shrunk.locator('.part-age').textContent(), 'r231 · 37 records ago');
    assert.match((await shrunk.locator('.part-what').getAttribute('title')) ?? '', new RegExp(TEXT.evidenceToolCall));
    const view = shrunk.getByRole('button', { name: `View tool call ${TEXT.evidenceToolCall}` });
    await view.scrollIntoViewIfNeeded(); // off-screen items skip rendering (content-visibility) until scrolled to
    assert.ok(await view.isVisible());
    const reasoning = page.locator(`.not-loaded-list li[data-key="${TEXT.evidenceText}"]`);
    assert.equal(await reasoning.locator('button').count(), 0);
    assert.equal(await reasoning.locator('.recover code').textContent(), 'record r214');
    assert.equal(await page.locator('.not-loaded-list li').count(), 5);
    assert.match(await panel.text('.region-not-loaded .region-intro'), /^72,536 tokens the model does not see in full/);

    // Files: path, counts, steps.
    const file = page.locator(`.artifacts-list li[data-key="${TEXT.artifact}"]`);
    assert.equal(await file.locator('.path-name').textContent(), 'rateLimiter.ts');
    assert.equal(await file.locator('.path-dir').textContent(), 'src/middleware');
    assert.deepEqual(await file.locator('.artifact-counts .tag').allTextContents(), ['created 1', 'modified 3', 'read 4']);
    assert.equal(await file.locator('.artifact-steps').textContent(), 'steps 41, 63–65, 120');

    // Compaction timeline.
    const rows = page.locator('.timeline-list li');
    assert.equal(await rows.count(), 4);
    const reactive = rows.nth(3);
    assert.equal(await reactive.locator('.compaction-at').textContent(), 'r244');
    assert.equal(await reactive.locator('.tag.tier').textContent(), '③ breakthrough shrink');
    assert.equal(await reactive.locator('.tag.reactive').textContent(), 'reactive');
    assert.equal(await reactive.locator('.compaction-tokens').textContent(), '121,400 → 57,310 tokens (−53%)');
    assert.equal(await reactive.locator('.ledger').textContent(), 'retained 24 · superseded 3 · omitted 5 · unsupported 1');
    assert.equal(await rows.nth(0).locator('.ledger').count(), 0);

    assert.deepEqual(panel.consoleErrors, []);
  });

  it('loads under its CSP with no violation, the codicon font included', async () => {
    panel = await suite.open();
    await panel.sendState(buildPanelState());
    await panel.page.evaluate(() => (globalThis as any).document.fonts.ready);
    assert.deepEqual(await panel.cspViolations(), []);
    const fontLoaded = await panel.page.evaluate(() => (globalThis as any).document.fonts.check('16px codicon'));
    assert.equal(fontLoaded, true);
    const codicon = await panel.page.locator('.codicon-shield').first().evaluate((el) => (globalThis as any).getComputedStyle(el).fontFamily);
    assert.equal(codicon, 'codicon');
  });

  it('shows the idle state, hides drift and pending when there are none, and says when nothing is left out', async () => {
    panel = await suite.open();
    const base = buildPanelState();
    await panel.sendState(buildPanelState({ task: { ...base.task!, running: false }, drift: null, notLoaded: [], facts: base.facts.filter((f) => f.status !== 'pending'), notices: [] }));
    assert.equal(await panel.text('.running'), 'Idle');
    assert.equal(await panel.page.locator('.region-drift').isVisible(), false);
    assert.equal(await panel.page.locator('.region-pending').isVisible(), false);
    assert.equal(await panel.page.locator('.notices').isVisible(), false);
    assert.ok(await panel.page.getByText('Nothing left out: the model sees every part in full.').isVisible());
  });

  it("reveals the compaction a chat's line points at: its region opened, the entry in view and marked, even when the reveal comes first", async () => {
    panel = await suite.open({ viewport: { width: 300, height: 500 }, uiState: { open: { timeline: false } } });
    // Posted before the state that lists it: kept until that state is rendered.
    await panel.send({ type: 'reveal', atRecord: 121 });
    await panel.sendState(buildPanelState());
    const entry = panel.page.locator('.region-timeline li[data-key="121:1"]');
    assert.equal(await entry.getAttribute('class').then((c) => c?.includes('is-revealed')), true);
    assert.ok(await entry.isVisible(), 'the Compactions region is open');
    assert.ok(await entry.evaluate((el) => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.bottom <= (globalThis as any).innerHeight; }), 'scrolled into view');
    // Another reveal moves the mark.
    await panel.send({ type: 'reveal', atRecord: 244 });
    assert.equal(await panel.page.locator('.is-revealed').count(), 1);
    assert.equal(await panel.page.locator('.is-revealed').getAttribute('data-key'), '244:1');
  });
});
