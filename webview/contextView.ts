/** The Task Context region: the summary's lines by section, each section a list reconciled by topic key and filtered, with its count. */
import type { SectionView, SummaryLineView } from '../src/protocol/messages';
import { h, KeyedList, setHidden } from './dom';
import { SECTIONS } from './format';
import type { LocalPages } from './listRegion';
import { summaryLineRenderer } from './render/lists';
import { countText, updateGroupCounts, type Collapsible, type Collapsibles } from './render/region';

/** Lines of a section drawn at first and added on each "show more"; all of them are in the view (the filter and the counts cover every one). */
const LINES_PAGE = 50;

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

export class ContextView {
  private readonly context: Collapsible;
  private readonly contextGroups: { readonly name: SectionView['name']; readonly group: Collapsible; readonly list: KeyedList<SummaryLineView> }[];
  private readonly contextEmpty: HTMLElement;

  constructor(
    collapsibles: Collapsibles,
    private readonly pages: LocalPages,
  ) {
    this.context = collapsibles.create('context', { title: 'Task Context', icon: 'book', level: 2, countLabel: 'lines' });
    this.contextEmpty = h('p', { class: 'empty-note' }, 'No summary yet: the whole task still fits in the window.');
    this.contextGroups = SECTIONS.map((name) => {
      const group = collapsibles.create(`context-${slug(name)}`, { title: name, icon: 'list-flat', level: 3 });
      const ul = h('ul', { class: 'list lines-list', 'aria-label': name });
      group.body.append(ul);
      return { name, group, list: this.pages.limit(`context-${slug(name)}`, new KeyedList<SummaryLineView>(ul, summaryLineRenderer(name)), LINES_PAGE) };
    });
    this.context.body.append(this.contextEmpty, ...this.contextGroups.map((g) => g.group.el));
  }

  get el(): HTMLElement {
    return this.context.el;
  }

  /** Puts each section's lines in its list. */
  render(sections: readonly SectionView[]): void {
    const byName = new Map<string, SummaryLineView[]>();
    for (const section of sections) byName.set(section.name, [...(byName.get(section.name) ?? []), ...section.lines]);
    for (const g of this.contextGroups) g.list.update(byName.get(g.name) ?? []);
    this.updateCounts();
  }

  /** Each section's count and the region's; a section with nothing to show is hidden. */
  updateCounts(): void {
    const { total, shown } = updateGroupCounts(this.contextGroups);
    this.context.setCount(countText(shown, total));
    setHidden(this.contextEmpty, total > 0);
    this.pages.update();
  }

  /** Shows only the lines whose text contains `filter` (counts follow with `updateCounts`). */
  setFilter(filter: string): void {
    for (const g of this.contextGroups) g.list.setFilter(filter);
  }
}
