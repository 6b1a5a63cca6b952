/** A collapsible part of the panel: a heading whose button shows and hides the body; and the panel's collapsibles by id. */
import { h, icon, setAttr, setHidden, setText } from '../dom';
import type { Host } from '../host';

export interface CollapsibleOptions {
  readonly title: string;
  readonly icon: string;
  /** 2: a top-level region (a landmark); 3: a group inside one. */
  readonly level: 2 | 3;
  readonly open: boolean;
  /** Said after the title by screen readers (what the count means). */
  readonly countLabel?: string;
}

export class Collapsible {
  readonly el: HTMLElement;
  readonly body: HTMLDivElement;
  readonly toggle: HTMLButtonElement;
  /** Controls shown in the heading row beside the toggle. */
  readonly tools: HTMLDivElement;
  private readonly count: HTMLSpanElement;
  private readonly countText: HTMLSpanElement;

  constructor(
    readonly id: string,
    private readonly options: CollapsibleOptions,
  ) {
    const headingId = `h-${id}`;
    const bodyId = `b-${id}`;
    this.countText = h('span', { class: 'visually-hidden' });
    this.count = h('span', { class: 'count', 'aria-hidden': 'true' });
    this.toggle = h(
      'button',
      { type: 'button', class: 'toggle', 'aria-expanded': String(options.open), 'aria-controls': bodyId, 'data-action': 'toggle', 'data-toggle': id, 'data-focus': `toggle:${id}` },
      icon('chevron-right', 'chevron'),
      icon(options.icon, 'toggle-icon'),
      h('span', { class: 'toggle-title' }, options.title),
      this.countText,
      this.count,
    );
    const heading = options.level === 2 ? h('h2', { id: headingId, class: 'heading' }, this.toggle) : h('h3', { id: headingId, class: 'heading' }, this.toggle);
    this.tools = h('div', { class: 'heading-tools' });
    this.body = h('div', { id: bodyId, class: 'body', hidden: !options.open });
    const head = h('div', { class: 'heading-row' }, heading, this.tools);
    this.el =
      options.level === 2
        ? h('section', { class: `region region-${id}`, 'aria-labelledby': headingId }, head, this.body)
        : h('div', { class: `group group-${id}` }, head, this.body);
  }

  get open(): boolean {
    return this.toggle.getAttribute('aria-expanded') === 'true';
  }

  setOpen(open: boolean): void {
    setAttr(this.toggle, 'aria-expanded', String(open));
    setHidden(this.body, !open);
  }

  /** The number shown beside the title (`12`, or `3/12` under a filter). */
  setCount(shown: string): void {
    setText(this.count, shown);
    setText(this.countText, shown ? `, ${shown}${this.options.countLabel ? ` ${this.options.countLabel}` : ''}` : '');
    setHidden(this.count, shown === '');
  }

  setVisible(visible: boolean): void {
    setHidden(this.el, !visible);
  }
}

/** Collapsibles closed until the user opens them. */
const CLOSED_BY_DEFAULT: ReadonlySet<string> = new Set(['facts-history']);

/** The panel's collapsibles by id, each open or closed as the user left it (kept in the UI state), else by default. */
export class Collapsibles {
  private readonly byId = new Map<string, Collapsible>();

  constructor(private readonly host: Host) {}

  create(id: string, options: { title: string; icon: string; level: 2 | 3; countLabel?: string }): Collapsible {
    const open = this.host.ui.open[id] ?? !CLOSED_BY_DEFAULT.has(id);
    const c = new Collapsible(id, { ...options, open });
    this.byId.set(id, c);
    return c;
  }

  /** Opens or closes collapsible `id` (its heading's button was pressed), and remembers it. */
  toggle(id: string): void {
    const c = this.byId.get(id);
    if (!c) return;
    c.setOpen(!c.open);
    this.host.ui.open[id] = c.open;
    this.host.save();
  }
}

/**
 * Each group's count (`3/12` under a filter), a group with nothing to show
 * hidden; returns how many items the groups hold and how many show.
 */
export function updateGroupCounts(groups: readonly { readonly group: Collapsible; readonly list: { readonly visible: number; readonly size: number } }[]): { readonly total: number; readonly shown: number } {
  let total = 0;
  let shown = 0;
  for (const g of groups) {
    const visible = g.list.visible;
    total += g.list.size;
    shown += visible;
    g.group.setCount(countText(visible, g.list.size));
    g.group.setVisible(visible > 0);
  }
  return { total, shown };
}

/** `12`, or `3/12` when a filter hides some. */
export function countText(visible: number, total: number): string {
  return visible === total ? String(total) : `${visible}/${total}`;
}
