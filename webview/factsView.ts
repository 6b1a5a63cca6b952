/**
 * The task's facts: the candidates awaiting the user's confirmation, and the
 * protected facts by type, then their history (superseded or deleted). Each
 * list is reconciled by fact id and filtered; the regions show their counts.
 */
import type { FactView } from '../src/protocol/messages';
import { h, KeyedList, setHidden } from './dom';
import { FACT_GROUPS } from './format';
import type { Host } from './host';
import { listRegion, type ListRegion, type LocalPages } from './listRegion';
import { activeFactRenderer, pastFactRenderer, pendingRenderer, type FactUiState } from './render/facts';
import { countText, updateGroupCounts, type Collapsible, type Collapsibles } from './render/region';

/**
 * Facts of a group drawn at first and added on each "show more" (a fact is a
 * card with its actions: about 23 nodes). All of them are in the view: the
 * filter and the counts cover every one.
 */
const FACTS_PAGE = 25;

export class FactsView {
  private readonly pending: ListRegion<FactView>;
  private readonly facts: Collapsible;
  private readonly factGroups: { readonly type: FactView['type']; readonly group: Collapsible; readonly list: KeyedList<FactView> }[];
  private readonly history: { readonly group: Collapsible; readonly list: KeyedList<FactView> };
  private readonly factsEmpty: HTMLElement;

  /** `ui`: what each fact's card shows besides the fact (drafts, busy, errors). */
  constructor(
    collapsibles: Collapsibles,
    private readonly pages: LocalPages,
    ui: FactUiState,
    private readonly host: Host,
  ) {
    this.pending = listRegion(collapsibles, 'pending', { title: 'Pending candidates', icon: 'inbox', level: 2, countLabel: 'to confirm' }, pendingRenderer(ui), 'Nothing to confirm.');
    const pendingIntro = h('p', { class: 'region-intro muted' }, 'Rules found in tool output or model text. They protect nothing until you confirm them.');
    this.pending.region.body.prepend(pendingIntro);

    this.facts = collapsibles.create('facts', { title: 'Protected facts', icon: 'shield', level: 2, countLabel: 'active' });
    this.factsEmpty = h('p', { class: 'empty-note' }, 'No protected facts yet.');
    const active = activeFactRenderer(ui);
    this.factGroups = FACT_GROUPS.map(({ type, title, icon: iconName }) => {
      const group = collapsibles.create(`facts-${type}`, { title, icon: iconName, level: 3 });
      const ul = h('ul', { class: 'list facts-list', 'aria-label': title });
      group.body.append(ul);
      return { type, group, list: this.pages.limit(`facts-${type}`, new KeyedList<FactView>(ul, active), FACTS_PAGE) };
    });
    const historyGroup = collapsibles.create('facts-history', { title: 'History', icon: 'history', level: 3, countLabel: 'superseded or deleted' });
    const historyUl = h('ul', { class: 'list facts-list history-list', 'aria-label': 'Superseded and deleted facts' });
    historyGroup.body.append(historyUl);
    this.history = { group: historyGroup, list: this.pages.limit('facts-history', new KeyedList<FactView>(historyUl, pastFactRenderer(ui)), FACTS_PAGE) };
    this.facts.body.append(this.factsEmpty, ...this.factGroups.map((g) => g.group.el), historyGroup.el);
  }

  /** The candidates' region, then the protected facts' one. */
  get elements(): HTMLElement[] {
    return [this.pending.region.el, this.facts.el];
  }

  /** Sorts the facts into their lists (a correction draft of a fact no longer active is dropped). */
  render(facts: readonly FactView[]): void {
    const buckets = new Map<FactView['type'], FactView[]>();
    const past: FactView[] = [];
    const pending: FactView[] = [];
    const active = new Set<string>();
    for (const fact of facts) {
      if (fact.status === 'active') {
        let bucket = buckets.get(fact.type);
        if (!bucket) buckets.set(fact.type, (bucket = []));
        bucket.push(fact);
        active.add(fact.id);
      } else if (fact.status === 'pending') {
        pending.push(fact);
      } else {
        past.push(fact);
      }
    }
    // An editor stays open only on an active fact.
    let dropped = false;
    for (const id of Object.keys(this.host.ui.drafts)) {
      if (!active.has(id)) {
        delete this.host.ui.drafts[id];
        dropped = true;
      }
    }
    if (dropped) this.host.saveSoon();
    for (const g of this.factGroups) g.list.update(buckets.get(g.type) ?? []);
    this.history.list.update(past);
    this.pending.list.update(pending);
    this.updateCounts();
  }

  /** Each region's and group's count; a group with nothing to show is hidden. */
  updateCounts(): void {
    const { total, shown } = updateGroupCounts(this.factGroups);
    const history = this.history.list;
    this.history.group.setCount(countText(history.visible, history.size));
    this.history.group.setVisible(history.visible > 0);
    this.facts.setCount(countText(shown, total));
    setHidden(this.factsEmpty, total + history.size > 0);
    this.pages.update();
    const pending = this.pending.list;
    this.pending.region.setCount(countText(pending.visible, pending.size));
    this.pending.region.setVisible(pending.size > 0);
    setHidden(this.pending.empty, pending.size > 0);
  }

  /** Shows only the facts whose text contains `filter` (counts follow with `updateCounts`). */
  setFilter(filter: string): void {
    for (const g of this.factGroups) g.list.setFilter(filter);
    this.history.list.setFilter(filter);
    this.pending.list.setFilter(filter);
  }

  private lists(): KeyedList<FactView>[] {
    return [...this.factGroups.map((g) => g.list), this.history.list, this.pending.list];
  }

  /** The card of a fact, if it is drawn. */
  element(factId: string): HTMLElement | undefined {
    for (const list of this.lists()) {
      const el = list.element(factId);
      if (el) return el;
    }
    return undefined;
  }

  /** Draws a fact's card again (what it shows besides the fact changed). */
  refresh(factId: string): void {
    for (const list of this.lists()) if (list.element(factId)) list.refresh(factId);
  }
}
