/**
 * The regions drawn as a whole rather than item by item: the drift report of
 * a forced rebuild, and the budget gauge. Each is drawn again only when what
 * it shows changed; the gauge also when the panel's width changed.
 */
import type { PanelState } from '../src/protocol/messages';
import { h } from './dom';
import { percent } from './format';
import { renderBudget } from './render/budget';
import { driftCount, renderDrift } from './render/header';
import type { Collapsible, Collapsibles } from './render/region';

/** What a region drawn as a whole last showed (its state as JSON). */
class LastDrawn {
  private drawn: string | undefined;

  /** False when `value` would be drawn the same again. */
  changedSince(value: unknown): boolean {
    const signature = JSON.stringify(value);
    if (this.drawn === signature) return false;
    this.drawn = signature;
    return true;
  }
}

/** The drift report of the last forced rebuild (hidden when there is none). */
export class DriftRegion {
  private readonly drift: Collapsible;
  private readonly last = new LastDrawn();

  constructor(collapsibles: Collapsibles) {
    this.drift = collapsibles.create('drift', { title: 'Drift report', icon: 'git-compare', level: 2, countLabel: 'lines' });
  }

  get el(): HTMLElement {
    return this.drift.el;
  }

  render(drift: PanelState['drift']): void {
    if (!this.last.changedSince(drift)) return;
    this.drift.setVisible(drift !== null);
    if (drift === null) return;
    this.drift.body.replaceChildren(h('p', { class: 'region-intro muted' }, 'How the summary built fold by fold differs from one rebuilt from the raw record.'), ...renderDrift(drift));
    const differing = driftCount(drift);
    this.drift.setCount(differing > 0 ? String(differing) : '');
  }
}

/** The budget gauge, drawn at the region's width in pixels. */
export class BudgetRegion {
  private readonly budget: Collapsible;
  private readonly last = new LastDrawn();
  private drawnGaugeWidth: number | undefined;

  /** `current`: the budget the panel shows now (drawn again at another width). */
  constructor(collapsibles: Collapsibles, current: () => PanelState['budget']) {
    this.budget = collapsibles.create('budget', { title: 'Budget', icon: 'dashboard', level: 2, countLabel: 'of the effective window' });
    // The gauge is drawn at the region's width in pixels: drawn again when the panel is resized.
    if (typeof ResizeObserver === 'function') {
      new ResizeObserver(() => {
        const width = this.gaugeWidth();
        const budget = current();
        if (width !== undefined && width !== this.drawnGaugeWidth && budget) this.draw(budget);
      }).observe(this.budget.body);
    }
  }

  get el(): HTMLElement {
    return this.budget.el;
  }

  render(budget: PanelState['budget']): void {
    if (!this.last.changedSince(budget)) return;
    this.draw(budget);
    this.budget.setCount(budget ? percent(budget.current, budget.effective) : '');
  }

  private draw(budget: PanelState['budget']): void {
    const width = this.gaugeWidth();
    this.drawnGaugeWidth = width;
    this.budget.body.replaceChildren(...renderBudget(budget, width));
  }

  /** The budget region's content width in whole pixels; undefined while it is not laid out (collapsed, hidden). */
  private gaugeWidth(): number | undefined {
    const body = this.budget.body;
    const style = getComputedStyle(body);
    const width = Math.floor(body.clientWidth - parseFloat(style.paddingLeft || '0') - parseFloat(style.paddingRight || '0'));
    return width > 0 ? width : undefined;
  }
}
