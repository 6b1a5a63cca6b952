/**
 * Incremental rendering: a `state/patch` re-renders only the regions it
 * carries, and inside them only the items that changed (keyed by fact id,
 * address, path…). Also the time to render a long task and patch one fact.
 */
import * as assert from 'node:assert/strict';
import type { FactView, PanelState } from '../../src/protocol/messages';
import { build50kPanelState, buildBigPanelState, buildPanelState, TEXT } from './fixture';
import { panelSuite, type PanelPage } from './harness';

/**
 * Starts recording the mutations under `<main>` and tags every node listed in
 * `mark` (selector → property value) with a JS property a rebuilt node would lose.
 */
async function observe(panel: PanelPage, mark: Record<string, string>): Promise<void> {
  await panel.page.evaluate((marks) => {
    const w = globalThis as any;
    for (const [selector, value] of Object.entries(marks as Record<string, string>)) {
      const el = w.document.querySelector(selector);
      if (!el) throw new Error(`nothing matches ${selector}`);
      el.__mark = value;
    }
    w.__mutations = [];
    w.__observer?.disconnect();
    w.__observer = new w.MutationObserver((records: any[]) => w.__mutations.push(...records));
    w.__observer.observe(w.document.querySelector('main'), { subtree: true, childList: true, attributes: true, characterData: true });
  }, mark as unknown);
}

interface MutationSummary {
  readonly total: number;
  /** Keys of the list items the mutations happened in ("" when outside every item). */
  readonly items: string[];
}

/** The mutations since `observe`, by the list item they touched. */
async function mutations(panel: PanelPage): Promise<MutationSummary> {
  return (await panel.page.evaluate(() => {
    const w = globalThis as any;
    const records = [...w.__mutations, ...w.__observer.takeRecords()];
    const items = new Set<string>();
    for (const r of records) {
      const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      const item = el?.closest('[data-key]');
      items.add(item ? item.getAttribute('data-key') : `outside:${el?.className ?? el?.nodeName}`);
    }
    return { total: records.length, items: [...items].sort() };
  })) as MutationSummary;
}

async function marked(panel: PanelPage, selector: string): Promise<string | undefined> {
  return (await panel.page.evaluate((s) => (globalThis as any).document.querySelector(s)?.__mark, selector)) as string | undefined;
}

function withFact(state: PanelState, id: string, change: Partial<FactView>): FactView[] {
  return state.facts.map((f) => (f.id === id ? { ...f, ...change } : f));
}

describe('webview: incremental rendering', function () {
  const suite = panelSuite();
  let panel: PanelPage | undefined;

  it('a patch that changes one fact updates that fact\'s node only', async () => {
    panel = await suite.open();
    const state = buildPanelState();
    await panel.sendState(state);
    const other = `li[data-key="${TEXT.pinnedConstraintId}"]`;
    const target = `li[data-key="${TEXT.constraintId}"]`;
    await observe(panel, { [other]: 'other', [target]: 'target', 'svg.gauge': 'gauge', [`li[data-key="${TEXT.artifact}"]`]: 'file' });

    const corrected = 'Never change the public signature of handleRequest, nor its error type.';
    await panel.send({ type: 'state/patch', patch: { facts: withFact(state, TEXT.constraintId, { value: corrected, version: 2, writer: 'user', reason: 'corrected by the user' }) } });

    assert.equal(await panel.text(`${target} .fact-value`), corrected);
    assert.equal(await panel.text(`${target} .tag.version`), 'v2');
    const seen = await mutations(panel);
    assert.deepEqual(seen.items, [TEXT.constraintId], `mutations only inside the changed fact (${seen.total} records)`);
    assert.ok(seen.total <= 3, `a handful of mutations, got ${seen.total}`);
    assert.equal(await marked(panel, target), 'target', 'the changed fact keeps its node (refilled in place)');
    assert.equal(await marked(panel, other), 'other', 'another fact\'s node survives');
    assert.equal(await marked(panel, 'svg.gauge'), 'gauge', 'regions not in the patch are untouched');
    assert.equal(await marked(panel, `li[data-key="${TEXT.artifact}"]`), 'file');
  });

  it('an identical patch changes nothing; a status change moves one node; keyed lists keep their nodes', async () => {
    panel = await suite.open();
    const state = buildPanelState();
    await panel.sendState(state);
    const other = `li[data-key="${TEXT.pinnedConstraintId}"]`;
    await observe(panel, { [other]: 'other' });
    await panel.send({ type: 'state/patch', patch: structuredClone(state) });
    assert.equal((await mutations(panel)).total, 0, 'the same state again, every key: no mutation at all');

    // Superseded by the user: the fact leaves Decisions for History; nothing else moves.
    await observe(panel, { [other]: 'other' });
    await panel.send({ type: 'state/patch', patch: { facts: withFact(state, TEXT.decisionId, { status: 'superseded', version: 2, reason: 'superseded by the user' }) } });
    assert.equal(await panel.page.locator(`.group-facts-decision li[data-key="${TEXT.decisionId}"]`).count(), 0);
    assert.equal(await panel.page.locator(`.group-facts-history li[data-key="${TEXT.decisionId}"]`).count(), 1);
    assert.equal(await panel.page.locator('.group-facts-decision').isVisible(), false, 'an empty group is hidden');
    assert.equal(await marked(panel, other), 'other');
    const seen = await mutations(panel);
    assert.ok(seen.items.every((k) => k === TEXT.decisionId || k.startsWith('outside:')), `only the moved fact and group chrome changed: ${seen.items.join(', ')}`);

    // Not loaded / files: a new part is inserted, the others keep their nodes.
    const part = `li[data-key="${TEXT.evidenceToolCall}"]`;
    await observe(panel, { [part]: 'part' });
    await panel.send({ type: 'state/patch', patch: { notLoaded: [{ address: 'toolu_new', kind: 'tool', toolCallId: 'toolu_new', tokens: 900, how: 'shrunk', recover: 'view_tool_call("toolu_new")' }, ...state.notLoaded] } });
    assert.equal(await marked(panel, part), 'part');
    assert.equal(await panel.page.locator('.not-loaded-list li').first().getAttribute('data-key'), 'toolu_new');
  });

  it('a patch keeps an open correction editor, its draft and its focus', async () => {
    panel = await suite.open();
    const state = buildPanelState();
    await panel.sendState(state);
    const fact = panel.fact(TEXT.constraintId);
    await fact.getByRole('button', { name: 'Correct' }).click();
    await fact.locator('textarea').fill('A draft in progress');
    // Another fact changes, then this one (a new source): the draft stays and keeps the focus.
    await panel.send({ type: 'state/patch', patch: { facts: withFact(state, TEXT.permissionId, { pinned: true }) } });
    await panel.send({ type: 'state/patch', patch: { facts: withFact(state, TEXT.constraintId, { sources: [0, 150] }) } });
    assert.equal(await fact.locator('textarea').inputValue(), 'A draft in progress');
    assert.equal(await fact.locator('textarea').evaluate((el) => el === (globalThis as any).document.activeElement), true);
    assert.deepEqual(await fact.locator('button.source').allTextContents(), ['r0', 'r150']);
  });

  it('1,000 facts and 500 parts not loaded: the first 25 of each group drawn, then a one-fact patch', async function () {
    this.timeout(60000);
    panel = await suite.open();
    const big = buildBigPanelState(1000, 500);
    const timings = (await panel.page.evaluate(
      ([full, id]) => {
        const w = globalThis as any;
        const send = (data: unknown) => w.dispatchEvent(new w.MessageEvent('message', { data }));
        const t0 = w.performance.now();
        send({ type: 'state/full', state: full });
        const t1 = w.performance.now();
        w.document.body.offsetHeight; // layout included
        const t2 = w.performance.now();
        const s = full as any;
        const facts = s.facts.map((f: any) => (f.id === id ? { ...f, value: `${f.value} (corrected)`, version: f.version + 1 } : f));
        const other = w.document.querySelector('li[data-key="constraint-big00001"]');
        other.__mark = 1;
        const t3 = w.performance.now();
        send({ type: 'state/patch', patch: { facts } });
        const t4 = w.performance.now();
        w.document.body.offsetHeight;
        const t5 = w.performance.now();
        return {
          full: t1 - t0,
          fullWithLayout: t2 - t0,
          patch: t4 - t3,
          patchWithLayout: t5 - t3,
          survived: w.document.querySelector('li[data-key="constraint-big00001"]').__mark === 1,
          text: w.document.querySelector(`li[data-key="${id}"] .fact-value`).textContent,
          factNodes: w.document.querySelectorAll('.facts-list > li, .pending-list > li').length,
          partNodes: w.document.querySelectorAll('.not-loaded-list > li').length,
        };
      },
      [big, 'decision-big00010'] as const,
    )) as { full: number; fullWithLayout: number; patch: number; patchWithLayout: number; survived: boolean; text: string; factNodes: number; partNodes: number };
    console.log(
      `      big state: full render ${timings.full.toFixed(1)} ms (${timings.fullWithLayout.toFixed(1)} ms with layout); ` +
        `one-fact patch ${timings.patch.toFixed(1)} ms (${timings.patchWithLayout.toFixed(1)} ms with layout)`,
    );
    // Each fact group draws its first 25 (the rest are counted, searched and drawn on "show more").
    const groups = new Map<string, number>();
    for (const f of big.facts) if (f.status === 'active' || f.status === 'pending') groups.set(`${f.status}:${f.type}`, (groups.get(`${f.status}:${f.type}`) ?? 0) + 1);
    const pendingCount = big.facts.filter((f) => f.status === 'pending').length;
    const pastCount = big.facts.filter((f) => f.status !== 'active' && f.status !== 'pending').length;
    const drawn = [...groups].filter(([k]) => k.startsWith('active:')).reduce((n, [, c]) => n + Math.min(25, c), 0) + pendingCount + Math.min(25, pastCount);
    assert.equal(timings.factNodes, drawn);
    assert.equal(timings.partNodes, 500);
    assert.match(timings.text, /\(corrected\)$/);
    assert.equal(timings.survived, true);
    assert.ok(timings.fullWithLayout < 5000, `full render took ${timings.fullWithLayout} ms`);
    assert.ok(timings.patchWithLayout < 2000, `one-fact patch took ${timings.patchWithLayout} ms`);

    // The filter over all of it.
    const started = Date.now();
    await panel.page.locator('input.filter-input').fill('route /v1/items/500 ');
    assert.equal(await panel.page.locator('.facts-list > li:visible').count(), 1);
    assert.equal(await panel.text('.region-facts > .heading-row .count'), '1/' + String(big.facts.filter((f) => f.status === 'active').length));
    console.log(`      filter over 1,500 items: ${Date.now() - started} ms (including the round trips)`);

    // "Show more" draws the next 25 of a group; the filter cleared, the group shows its first 50.
    await panel.page.locator('input.filter-input').fill('');
    const more = panel.page.locator('button[data-list="facts-decision"]');
    assert.match((await more.textContent()) ?? '', /^Show 25 more \(\d+ not shown\)$/);
    await more.focus();
    await panel.page.keyboard.press('Enter');
    assert.equal(await panel.page.locator('.facts-list[aria-label="Decisions"] > li').count(), 50);
  });

  it('a task of 50,000 records: the first page of each long list, timed; more comes on request', async function () {
    this.timeout(60000);
    panel = await suite.open();
    const state = build50kPanelState();
    const id = state.facts.find((f) => f.status === 'active')!.id;
    const timings = (await panel.page.evaluate(
      ([full, factId]) => {
        const w = globalThis as any;
        const send = (data: unknown) => w.dispatchEvent(new w.MessageEvent('message', { data }));
        const t0 = w.performance.now();
        send({ type: 'state/full', state: full });
        w.document.body.offsetHeight;
        const t1 = w.performance.now();
        const facts = (full as any).facts.map((f: any) => (f.id === factId ? { ...f, value: `${f.value} (corrected)`, version: f.version + 1 } : f));
        send({ type: 'state/patch', patch: { facts } });
        w.document.body.offsetHeight;
        const t2 = w.performance.now();
        return { first: t1 - t0, patch: t2 - t1, nodes: w.document.querySelectorAll('*').length };
      },
      [state, id] as const,
    )) as { first: number; patch: number; nodes: number };
    console.log(`      50k-record task (a page of each long list, ${timings.nodes} DOM nodes): first render ${timings.first.toFixed(1)} ms, one-fact patch ${timings.patch.toFixed(1)} ms`);
    // Reported, not judged on time (the target, 300 ms, is read from this line); a gross regression still fails.
    assert.ok(timings.first < 3000, `first render took ${timings.first.toFixed(1)} ms`);
    assert.equal(await panel.page.locator('.not-loaded-list > li').count(), 100);
    assert.equal(await panel.text('.region-not-loaded > .heading-row .count'), '16329');
    const more = panel.page.locator('.region-not-loaded button.show-more');
    assert.equal(await more.textContent(), 'Show 100 more (16,229 not shown)');
    assert.equal(await panel.text('.region-timeline button.show-more'), 'Show 100 earlier (3,740 not shown)');

    // "Show more" asks the host for the next page; the host's patch extends the list in place.
    // Keyboard activation: rows off screen are laid out as they scroll near, so a pointer aim can shift under it.
    await panel.clearPosted();
    await more.focus();
    await panel.page.keyboard.press('Enter');
    assert.deepEqual(await panel.lastPosted(), { type: 'list/more', taskId: state.task!.id, list: 'notLoaded' });
    const first = state.notLoaded[0]!;
    await panel.page.evaluate((address) => ((globalThis as any).document.querySelector(`li[data-key="${address}"]`).__mark = 1), first.address);
    const next = buildBigPanelState(0, 200).notLoaded;
    await panel.send({ type: 'state/patch', patch: { notLoaded: next, pages: { ...state.pages, notLoaded: { ...state.pages.notLoaded } } } });
    assert.equal(await panel.page.locator('.not-loaded-list > li').count(), 200);
    assert.equal(await panel.page.evaluate((address) => (globalThis as any).document.querySelector(`li[data-key="${address}"]`).__mark, first.address), 1, 'the first page was kept, not drawn again');
    assert.equal(await more.textContent(), 'Show 100 more (16,129 not shown)');

    // The filter goes to the host, which pages by what matches.
    await panel.clearPosted();
    await panel.page.locator('input.filter-input').fill('Part7 ');
    assert.deepEqual((await panel.posted()).filter((m) => m.type === 'view/filter').pop(), { type: 'view/filter', text: 'part7' });
    const matched = state.artifacts.filter((a) => a.path.includes('part7'));
    await panel.send({ type: 'state/patch', patch: { artifacts: matched, pages: { ...state.pages, artifacts: { total: 686, matching: 61, tokens: 0 } } } });
    assert.equal(await panel.text('.region-artifacts > .heading-row .count'), '61/686');
    assert.equal(await panel.text('.region-artifacts button.show-more'), `Show 50 more (${61 - matched.length} not shown)`);
  });
});
