/**
 * The few DOM helpers the panel needs: element builders, text setters that do
 * not touch the DOM when nothing changed, and a keyed list that reconciles its
 * children by key so an update touches only the items that changed.
 */

type Child = Node | string | number | null | undefined | false;
export type Children = Child | readonly Children[];
type AttrValue = string | number | boolean | null | undefined;

/** Builds an HTML element: attributes (`false`/`null`/`undefined` are left out, `true` is an empty attribute) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Record<string, AttrValue> | null, ...children: Children[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Builds an SVG element (presentation attributes only: colours come from the stylesheet). */
export function s<K extends keyof SVGElementTagNameMap>(tag: K, attrs?: Record<string, AttrValue> | null, ...children: Children[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  if (attrs) setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el: Element, attrs: Record<string, AttrValue>): void {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    el.setAttribute(name, value === true ? '' : String(value));
  }
}

function append(parent: Node, children: readonly Children[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else if (typeof child === 'string' || typeof child === 'number') parent.appendChild(document.createTextNode(String(child)));
    else parent.appendChild(child as Node);
  }
}

/** Flattens children into nodes (for `replaceChildren`). */
export function nodes(...children: Children[]): Node[] {
  const fragment = document.createDocumentFragment();
  append(fragment, children);
  return [...fragment.childNodes];
}

/** A codicon (decorative: hidden from assistive technology). */
export function icon(name: string, extra = ''): HTMLSpanElement {
  return h('span', { class: `codicon codicon-${name}${extra ? ` ${extra}` : ''}`, 'aria-hidden': 'true' });
}

/** Sets text only when it differs (no mutation otherwise). */
export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

/** Sets or removes an attribute only when it differs. */
export function setAttr(el: Element, name: string, value: string | null): void {
  if (value === null) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else if (el.getAttribute(name) !== value) {
    el.setAttribute(name, value);
  }
}

export function setHidden(el: HTMLElement, hidden: boolean): void {
  if (el.hidden !== hidden) el.hidden = hidden;
}

/** The element that has focus and its caret, to put back after a node is refilled. */
interface FocusMemo {
  readonly focusKey: string;
  readonly selection?: readonly [number, number];
}

function rememberFocus(scope: Element): FocusMemo | undefined {
  const active = document.activeElement;
  if (!active || active === document.body || !scope.contains(active)) return undefined;
  const focusKey = active.getAttribute('data-focus');
  if (!focusKey) return undefined;
  if (active instanceof HTMLTextAreaElement || active instanceof HTMLInputElement) {
    return { focusKey, selection: [active.selectionStart ?? 0, active.selectionEnd ?? 0] };
  }
  return { focusKey };
}

/** Focuses the element carrying `data-focus="key"` under `scope`; true when found. */
export function focusByKey(scope: ParentNode, focusKey: string, selection?: readonly [number, number]): boolean {
  const target = scope.querySelector<HTMLElement>(`[data-focus="${CSS.escape(focusKey)}"]`);
  if (!target) return false;
  target.focus({ preventScroll: true });
  if (selection && (target instanceof HTMLTextAreaElement || target instanceof HTMLInputElement)) target.setSelectionRange(selection[0], selection[1]);
  return true;
}

/**
 * Runs a render and gives focus back if it lost it: to the same control when
 * it still exists, else to the next item of the list it was in, else to the
 * region's heading.
 */
export function keepingFocus(root: HTMLElement, render: () => void): void {
  const active = document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null;
  const focusKey = active?.getAttribute('data-focus') ?? null;
  const item = active?.closest('[data-key]') ?? null;
  const neighbours = item ? [item.nextElementSibling, item.previousElementSibling] : [];
  const headings = [active?.closest('.group'), active?.closest('.region')].map((c) => c?.querySelector<HTMLElement>(':scope > .heading-row .toggle') ?? null);
  render();
  if (!active || !focusKey || (active.isConnected && document.activeElement === active)) return;
  if (document.activeElement && document.activeElement !== document.body) return;
  if (focusByKey(root, focusKey)) return;
  // The control is gone (its fact moved to History, say): the same control of the next item, else its first button.
  const action = focusKey.slice(focusKey.lastIndexOf(':') + 1);
  for (const n of neighbours) {
    if (!n?.isConnected) continue;
    const same = [...n.querySelectorAll<HTMLElement>('[data-focus]')].find((el) => el.dataset['focus']?.endsWith(`:${action}`));
    const target = same ?? n.querySelector<HTMLElement>('button');
    if (target && isShown(target)) {
      target.focus();
      return;
    }
  }
  headings.find((h) => h && isShown(h))?.focus();
}

function isShown(el: HTMLElement): boolean {
  return el.isConnected && el.getClientRects().length > 0;
}

export interface ItemRenderer<T> {
  /** Stable identity of an item (a fact id, an address, a path…). */
  key(item: T): string;
  /** Everything the item's node shows; the node is refilled only when this changes. */
  signature(item: T): string;
  /** Writes the node's attributes and children for `item` (called on create and on change). */
  fill(el: HTMLElement, item: T): void;
  /** Lower-case text the filter matches against. */
  searchText?(item: T): string;
}

interface Entry<T> {
  readonly key: string;
  /** Its node; none while the item is past the list's limit (it is created when it comes within it). */
  el: HTMLElement | undefined;
  item: T;
  signature: string;
  search: string;
}

export interface ReconcileStats {
  created: number;
  refilled: number;
  removed: number;
}

/**
 * The children of `container`, one node per item, reconciled by key: an item
 * whose signature is unchanged keeps its node untouched (no mutation), a
 * changed one is refilled in place (its node survives, focus is kept), new ones
 * are created, gone ones removed, and nodes are moved only when the order
 * changed.
 *
 * A list may be limited: only the first `limit` items that match the filter
 * get a node (a task of 50k records has hundreds of facts and summary lines;
 * drawing all of them at once is what made the panel slow). The others are
 * kept as items, counted and searched, and drawn when the limit grows or the
 * filter brings them forward.
 */
export class KeyedList<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private filter = '';
  private max = Number.POSITIVE_INFINITY;

  constructor(
    readonly container: HTMLElement,
    private readonly renderer: ItemRenderer<T>,
    private readonly tag: keyof HTMLElementTagNameMap = 'li',
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** Items that match the current filter (drawn or past the limit). */
  get visible(): number {
    if (!this.filter) return this.entries.size;
    let n = 0;
    for (const entry of this.entries.values()) if (entry.search.includes(this.filter)) n++;
    return n;
  }

  /** Matching items past the limit, not drawn. */
  get overLimit(): number {
    return Math.max(0, this.visible - this.max);
  }

  get limit(): number {
    return this.max;
  }

  /** Draws at most `limit` matching items. */
  setLimit(limit: number): void {
    if (limit === this.max) return;
    this.max = limit;
    this.place(undefined);
  }

  element(key: string): HTMLElement | undefined {
    return this.entries.get(key)?.el;
  }

  item(key: string): T | undefined {
    return this.entries.get(key)?.item;
  }

  keys(): IterableIterator<string> {
    return this.entries.keys();
  }

  update(items: readonly T[]): ReconcileStats {
    const stats: ReconcileStats = { created: 0, refilled: 0, removed: 0 };
    const next = new Map<string, T>();
    for (const item of items) {
      const base = this.renderer.key(item);
      let key = base;
      // A repeated key (should not happen) still gets a node of its own.
      for (let n = 2; next.has(key); n++) key = `${base}\u0000${n}`;
      next.set(key, item);
    }
    for (const [key, entry] of this.entries) {
      if (!next.has(key)) {
        entry.el?.remove();
        this.entries.delete(key);
        stats.removed++;
      }
    }
    // In the new order: the map is rebuilt so that its iteration is the list's order.
    const previous = new Map(this.entries);
    this.entries.clear();
    for (const [key, item] of next) {
      const signature = this.renderer.signature(item);
      const entry = previous.get(key);
      if (!entry) {
        this.entries.set(key, { key, el: undefined, item, signature, search: this.searchOf(item) });
      } else {
        if (entry.signature !== signature) {
          entry.signature = signature;
          entry.search = this.searchOf(item);
          entry.item = item;
          if (entry.el) {
            this.refill(entry);
            stats.refilled++;
          }
        } else entry.item = item;
        this.entries.set(key, entry);
      }
    }
    this.place(stats);
    return stats;
  }

  /**
   * Puts the nodes of the items within the limit in order (creating those that
   * have none), hides the ones the filter does not match, and removes the
   * nodes of the items past the limit.
   */
  private place(stats: ReconcileStats | undefined): void {
    let cursor: ChildNode | null = this.container.firstChild;
    let drawn = 0;
    for (const entry of this.entries.values()) {
      const match = this.filter === '' || entry.search.includes(this.filter);
      if (match && drawn >= this.max) {
        if (entry.el) {
          if (entry.el === cursor) cursor = cursor.nextSibling;
          entry.el.remove();
          entry.el = undefined;
        }
        continue;
      }
      if (match) drawn++;
      if (!entry.el) {
        // An item the filter hides is not drawn until it matches.
        if (!match) continue;
        const el = document.createElement(this.tag);
        el.dataset['key'] = entry.key;
        this.renderer.fill(el, entry.item);
        entry.el = el;
        if (stats) stats.created++;
      }
      setHidden(entry.el, !match);
      if (entry.el === cursor) cursor = cursor.nextSibling;
      else this.container.insertBefore(entry.el, cursor);
    }
  }

  /** Refills one item's node (its look depends on UI state that changed, e.g. an editor opened). */
  refresh(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    entry.signature = this.renderer.signature(entry.item);
    if (entry.el) this.refill(entry);
  }

  /** Shows only the items whose text contains `filter` (lower-case); returns how many match. */
  setFilter(filter: string): number {
    if (filter === this.filter) return this.visible;
    this.filter = filter;
    this.place(undefined);
    return this.visible;
  }

  private searchOf(item: T): string {
    return this.renderer.searchText ? this.renderer.searchText(item) : '';
  }

  private refill(entry: Entry<T>): void {
    const el = entry.el;
    if (!el) return;
    const focus = rememberFocus(el);
    this.renderer.fill(el, entry.item);
    if (focus) focusByKey(el, focus.focusKey, focus.selection);
  }
}
