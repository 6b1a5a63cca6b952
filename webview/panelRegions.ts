/**
 * The panel under its header: a loading note until the first state, the empty
 * view while there is no task, else the regions (notices, drift report, budget,
 * candidates and protected facts, Task Context, evidence, files, compactions).
 * Each region is rendered when its part of the state changes; the filter is
 * applied to every list at once.
 */
import type { PanelState } from '../src/protocol/messages';
import { h, icon, setHidden } from './dom';
import { ContextView } from './contextView';
import { FactsView } from './factsView';
import type { Host } from './host';
import { LocalPages } from './listRegion';
import { PagedLists } from './pagedLists';
import type { FactUiState } from './render/facts';
import { renderNotices } from './render/header';
import { Collapsibles } from './render/region';
import { BudgetRegion, DriftRegion } from './wholeRegions';

export class PanelRegions {
  private readonly collapsibles: Collapsibles;
  private readonly pages = new LocalPages();
  private readonly notices: HTMLElement;
  private readonly loading: HTMLElement;
  private readonly emptyView: HTMLElement;
  private readonly main: HTMLElement;
  private readonly drift: DriftRegion;
  private readonly budget: BudgetRegion;
  private readonly facts: FactsView;
  private readonly context: ContextView;
  private readonly lists: PagedLists;

  /** `marks`: what the fact cards show besides the facts; `state`: the state the panel shows now. */
  constructor(host: Host, root: HTMLElement, marks: FactUiState, state: () => PanelState) {
    this.collapsibles = new Collapsibles(host);
    this.notices = h('ul', { class: 'notices', role: 'status', 'aria-label': 'Notices', hidden: true });
    this.loading = h('p', { class: 'loading' }, 'Loading the Task Context…');
    this.emptyView = h(
      'div',
      { class: 'empty-state' },
      icon('comment-discussion', 'empty-icon'),
      h('p', null, 'No @keeper task yet — ask @keeper in the chat.'),
      h('p', { class: 'muted' }, 'Its protected facts, Task Context, budget and everything the model did not see will show here.'),
    );
    this.drift = new DriftRegion(this.collapsibles);
    this.budget = new BudgetRegion(this.collapsibles, () => state().budget);
    this.facts = new FactsView(this.collapsibles, this.pages, marks, host);
    this.context = new ContextView(this.collapsibles, this.pages);
    this.lists = new PagedLists(this.collapsibles, host, root, state);
    this.main = h('main', { class: 'panel', 'aria-label': 'Task Context panel' }, this.notices, this.drift.el, this.budget.el, ...this.facts.elements, this.context.el, ...this.lists.elements);
  }

  /** What goes under the header and the status line. */
  get elements(): HTMLElement[] {
    return [this.loading, this.emptyView, this.main];
  }

  /** The loading note until the first state (`received`), then the regions of the task, or the empty view when there is none. */
  showTask(hasTask: boolean, received: boolean): void {
    setHidden(this.loading, received);
    setHidden(this.emptyView, hasTask || !received);
    setHidden(this.main, !hasTask);
  }

  /** Renders the regions whose part of the state is in `changed`. */
  render(state: PanelState, changed: ReadonlySet<keyof PanelState>): void {
    if (changed.has('notices')) renderNotices(this.notices, state.notices);
    if (changed.has('drift')) this.drift.render(state.drift);
    if (changed.has('budget')) this.budget.render(state.budget);
    if (changed.has('facts')) this.facts.render(state.facts);
    if (changed.has('sections')) this.context.render(state.sections);
    this.lists.render(changed);
  }

  /** Shows only the items whose text contains `filter` (normalized), in every list, and their counts. */
  applyFilter(filter: string): void {
    this.facts.setFilter(filter);
    this.context.setFilter(filter);
    this.lists.setFilter(filter);
    this.facts.updateCounts();
    this.context.updateCounts();
    this.lists.updateCounts();
  }

  /** Opens or closes collapsible `id`. */
  toggle(id: string): void {
    this.collapsibles.toggle(id);
  }

  /** Draws the next page of a list the panel holds whole. */
  showMoreLocal(id: string): void {
    this.pages.showMore(id);
  }

  /** Shows the compaction made before record `atRecord` (once it is listed). */
  revealCompaction(atRecord: number): void {
    this.lists.revealCompaction(atRecord);
  }

  /** Shows a compaction asked for before it was listed, if it is now. */
  reveal(): void {
    this.lists.reveal();
  }

  /** The card of a fact, if it is drawn. */
  factElement(factId: string): HTMLElement | undefined {
    return this.facts.element(factId);
  }

  /** Draws a fact's card again. */
  refreshFact(factId: string): void {
    this.facts.refresh(factId);
  }
}
