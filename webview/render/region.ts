/** A collapsible part of the panel: a heading whose button shows and hides the body. */
import { h, icon, setAttr, setHidden, setText } from '../dom';

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

/** `12`, or `3/12` when a filter hides some. */
export function countText(visible: number, total: number): string {
  return visible === total ? String(total) : `${visible}/${total}`;
}
