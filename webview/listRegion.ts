/**
 * A region's list: a keyed list in a collapsible, with the note shown while it
 * is empty. A long list the host sends a page of has a button that asks for
 * the next page, and counts what the host matched; the lists the panel holds
 * whole are drawn a page at a time (`LocalPages`).
 */
import type { PanelState } from '../src/protocol/messages';
import { PAGE_SIZE, type PagedList } from '../src/protocol/view';
import { h, KeyedList, setHidden, setText, type ItemRenderer } from './dom';
import { countText, type Collapsible, type Collapsibles } from './render/region';

/** A region's body: its list and the note shown when the list is empty. */
export interface ListRegion<T> {
  readonly region: Collapsible;
  readonly list: KeyedList<T>;
  readonly empty: HTMLElement;
  /** A long list the host sends a page of: which, and the button that asks for the next page. */
  readonly paged?: { readonly name: PagedList; readonly more: HTMLButtonElement };
}

/** A region `id` holding a list (paged by the host when `paged` names it). */
export function listRegion<T>(collapsibles: Collapsibles, id: string, options: { title: string; icon: string; level: 2; countLabel: string }, renderer: ItemRenderer<T>, emptyText: string, paged?: PagedList): ListRegion<T> {
  const region = collapsibles.create(id, options);
  const ul = h('ul', { class: `list ${id}-list`, 'aria-label': options.title });
  const empty = h('p', { class: 'empty-note' }, emptyText);
  region.body.append(empty, ul);
  const list = new KeyedList<T>(ul, renderer);
  if (!paged) return { region, list, empty };
  const more = h('button', { type: 'button', class: 'btn btn-secondary show-more', 'data-action': 'more', 'data-list': paged, 'data-focus': `more:${paged}`, hidden: true }, 'Show more') as HTMLButtonElement;
  // The timeline's page is its newest compactions: the earlier ones come above it.
  if (paged === 'compactions') ul.before(more);
  else ul.after(more);
  return { region, list, empty, paged: { name: paged, more } };
}

/**
 * A list's count, and for a paged list the button for its next page. A paged
 * list counts what the host matched of the whole list (it sent only a page);
 * until the host answers a new filter, what this view filters of the page.
 */
export function updateListCount<T>(region: ListRegion<T>, filtered: boolean, pages: PanelState['pages']): void {
  const visible = filtered ? region.list.visible : region.list.size;
  if (!region.paged) {
    region.region.setCount(countText(visible, region.list.size));
    setHidden(region.empty, region.list.size > 0);
    return;
  }
  const page = pages[region.paged.name];
  const loaded = region.list.size;
  const matching = visible < loaded ? visible : Math.max(page.matching, loaded);
  region.region.setCount(countText(matching, Math.max(page.total, loaded)));
  setHidden(region.empty, Math.max(page.total, loaded) > 0);
  const left = page.matching - loaded;
  setHidden(region.paged.more, left <= 0);
  if (left > 0) {
    const next = Math.min(PAGE_SIZE, left);
    setText(region.paged.more, region.paged.name === 'compactions' ? `Show ${next.toLocaleString('en-US')} earlier (${left.toLocaleString('en-US')} not shown)` : `Show ${next.toLocaleString('en-US')} more (${left.toLocaleString('en-US')} not shown)`);
  }
}

/** The lists the panel holds whole (every item is in the view: the filter and the counts cover all) but draws a page at a time. */
export class LocalPages {
  /** The lists drawn a page of items at a time, by id, with the button that draws more. */
  private readonly limited = new Map<string, { readonly list: KeyedList<unknown>; readonly more: HTMLButtonElement; readonly page: number }>();

  /** Draws a list `page` items at a time, with a button under it for the next ones. */
  limit<T>(id: string, list: KeyedList<T>, page: number): KeyedList<T> {
    list.setLimit(page);
    const more = h('button', { type: 'button', class: 'btn btn-secondary show-more', 'data-action': 'more-local', 'data-list': id, 'data-focus': `more:${id}`, hidden: true }, 'Show more') as HTMLButtonElement;
    list.container.after(more);
    this.limited.set(id, { list: list as KeyedList<unknown>, more, page });
    return list;
  }

  /** Each list's button: hidden when all is drawn, else how many more it draws. */
  update(): void {
    for (const { list, more, page } of this.limited.values()) {
      const left = list.overLimit;
      setHidden(more, left === 0);
      if (left > 0) setText(more, `Show ${Math.min(page, left).toLocaleString('en-US')} more (${left.toLocaleString('en-US')} not shown)`);
    }
  }

  /** Draws the next page of list `id` (its button was pressed). */
  showMore(id: string): void {
    const limited = this.limited.get(id);
    if (!limited) return;
    limited.list.setLimit(limited.list.limit + limited.page);
    this.update();
  }
}
