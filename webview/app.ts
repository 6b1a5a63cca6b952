/**
 * The Task Context panel: renders the host's `PanelState` and turns the user's
 * clicks and keys into the protocol's messages.
 *
 * Rendering is incremental: each part of the state (`task`, `facts`,
 * `notLoaded`…) has its own region, and a `state/patch` re-renders only the
 * regions whose keys it carries. Inside a region, lists are reconciled by key
 * (fact id, topic key, address, path), so a patch that changes one fact
 * refills that fact's node and leaves every other node untouched.
 */
import type { ArtifactView, CompactionView, FactView, HostMessage, NotLoadedView, PanelState, SectionView, SummaryLineView, WebviewMessage } from '../src/protocol/messages';
import { emptyPages, normalizeFilter, PAGE_SIZE, type PagedList } from '../src/protocol/view';
import { focusByKey, h, icon, KeyedList, setHidden, setText, type ItemRenderer } from './dom';
import { FACT_GROUPS, plural, percent, SECTIONS } from './format';
import type { Host } from './host';
import { renderBudget } from './render/budget';
import { activeFactRenderer, pastFactRenderer, pendingRenderer, type FactUiState } from './render/facts';
import { driftCount, Header, renderDrift, renderNotices } from './render/header';
import { artifactRenderer, compactionKeys, compactionRenderer, notLoadedRenderer, summaryLineRenderer } from './render/lists';
import { Collapsible, countText } from './render/region';

type PanelKey = keyof PanelState;
const ALL_KEYS: readonly PanelKey[] = ['task', 'notices', 'drift', 'budget', 'facts', 'sections', 'notLoaded', 'artifacts', 'compactions', 'pages'];

/** Actions whose result the host reports with `action/result`. */
type RequestMessage = Extract<WebviewMessage, { requestId: string }>;
type FactAction = Extract<RequestMessage, { factId: string }>['type'];

interface PendingRequest {
  readonly type: RequestMessage['type'];
  readonly factId?: string;
}

/** Collapsibles closed until the user opens them. */
const CLOSED_BY_DEFAULT: ReadonlySet<string> = new Set(['facts-history']);

/**
 * Items of a Task Context section, and of a fact group (a fact is a card with
 * its actions: about 23 nodes), drawn at first and added on each "show more".
 * All of them are in the view: the filter and the counts cover every one.
 */
const LINES_PAGE = 50;
const FACTS_PAGE = 25;

/** How long the last action's result stays on screen (it is announced at once). */
const STATUS_VISIBLE_MS = 8000;

function emptyState(): PanelState {
  return { task: null, sections: [], facts: [], budget: null, notLoaded: [], artifacts: [], compactions: [], pages: emptyPages(), notices: [], drift: null };
}

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

/** A region's body: its list and the note shown when the list is empty. */
interface ListRegion<T> {
  readonly region: Collapsible;
  readonly list: KeyedList<T>;
  readonly empty: HTMLElement;
  /** A long list the host sends a page of: which, and the button that asks for the next page. */
  readonly paged?: { readonly name: PagedList; readonly more: HTMLButtonElement };
}

export class App implements FactUiState {
  private state: PanelState = emptyState();
  private received = false;
  private filterText = '';
  private readonly requests = new Map<string, PendingRequest>();
  private readonly busyFacts = new Set<string>();
  private readonly errors = new Map<string, string>();
  private readonly domIds = new Map<string, string>();
  private rebuilding = false;
  /** What the regions drawn as a whole last showed (their state as JSON). */
  private readonly drawn = new Map<string, string>();
  private statusTimer: ReturnType<typeof setTimeout> | undefined;

  private readonly collapsibles = new Map<string, Collapsible>();
  private readonly header: Header;
  private readonly status: HTMLElement;
  private readonly notices: HTMLElement;
  private readonly emptyView: HTMLElement;
  private readonly loading: HTMLElement;
  private readonly main: HTMLElement;
  private readonly drift: Collapsible;
  private readonly budget: Collapsible;
  private readonly pending: ListRegion<FactView>;
  private readonly facts: Collapsible;
  private readonly factGroups: { readonly type: FactView['type']; readonly group: Collapsible; readonly list: KeyedList<FactView> }[];
  private readonly history: { readonly group: Collapsible; readonly list: KeyedList<FactView> };
  private readonly factsEmpty: HTMLElement;
  private readonly context: Collapsible;
  private readonly contextGroups: { readonly name: SectionView['name']; readonly group: Collapsible; readonly list: KeyedList<SummaryLineView> }[];
  private readonly contextEmpty: HTMLElement;
  private readonly notLoaded: ListRegion<NotLoadedView>;
  private readonly notLoadedTotal: HTMLElement;
  private readonly artifacts: ListRegion<ArtifactView>;
  private readonly timeline: ListRegion<{ key: string; compaction: CompactionView }>;
  /** The lists drawn a page of items at a time, by id, with the button that draws more. */
  private readonly limited = new Map<string, { readonly list: KeyedList<unknown>; readonly more: HTMLButtonElement; readonly page: number }>();

  constructor(
    private readonly host: Host,
    private readonly root: HTMLElement,
  ) {
    this.filterText = normalizeFilter(host.ui.filter);
    this.header = new Header(host.ui.filter);
    // Always in the accessibility tree (a live region that appears with its text may not be announced); empty, it takes no room.
    this.status = h('p', { class: 'action-status', role: 'status', 'aria-live': 'polite' });
    this.notices = h('ul', { class: 'notices', role: 'status', 'aria-label': 'Notices', hidden: true });
    this.loading = h('p', { class: 'loading' }, 'Loading the Task Context…');
    this.emptyView = h(
      'div',
      { class: 'empty-state' },
      icon('comment-discussion', 'empty-icon'),
      h('p', null, 'No @keeper task yet — ask @keeper in the chat.'),
      h('p', { class: 'muted' }, 'Its protected facts, Task Context, budget and everything the model did not see will show here.'),
    );

    this.drift = this.collapsible('drift', { title: 'Drift report', icon: 'git-compare', level: 2, countLabel: 'lines' });
    this.budget = this.collapsible('budget', { title: 'Budget', icon: 'dashboard', level: 2, countLabel: 'of the effective window' });
    // The gauge is drawn at the region's width in pixels: drawn again when the panel is resized.
    if (typeof ResizeObserver === 'function') {
      new ResizeObserver(() => {
        const width = this.gaugeWidth();
        if (width !== undefined && width !== this.drawnGaugeWidth && this.state.budget) this.drawBudget(this.state.budget);
      }).observe(this.budget.body);
    }

    this.pending = this.listRegion('pending', { title: 'Pending candidates', icon: 'inbox', level: 2, countLabel: 'to confirm' }, pendingRenderer(this), 'Nothing to confirm.');
    const pendingIntro = h('p', { class: 'region-intro muted' }, 'Rules found in tool output or model text. They protect nothing until you confirm them.');
    this.pending.region.body.prepend(pendingIntro);

    this.facts = this.collapsible('facts', { title: 'Protected facts', icon: 'shield', level: 2, countLabel: 'active' });
    this.factsEmpty = h('p', { class: 'empty-note' }, 'No protected facts yet.');
    const active = activeFactRenderer(this);
    this.factGroups = FACT_GROUPS.map(({ type, title, icon: iconName }) => {
      const group = this.collapsible(`facts-${type}`, { title, icon: iconName, level: 3 });
      const ul = h('ul', { class: 'list facts-list', 'aria-label': title });
      group.body.append(ul);
      return { type, group, list: this.limit(`facts-${type}`, new KeyedList<FactView>(ul, active), FACTS_PAGE) };
    });
    const historyGroup = this.collapsible('facts-history', { title: 'History', icon: 'history', level: 3, countLabel: 'superseded or deleted' });
    const historyUl = h('ul', { class: 'list facts-list history-list', 'aria-label': 'Superseded and deleted facts' });
    historyGroup.body.append(historyUl);
    this.history = { group: historyGroup, list: this.limit('facts-history', new KeyedList<FactView>(historyUl, pastFactRenderer(this)), FACTS_PAGE) };
    this.facts.body.append(this.factsEmpty, ...this.factGroups.map((g) => g.group.el), historyGroup.el);

    this.context = this.collapsible('context', { title: 'Task Context', icon: 'book', level: 2, countLabel: 'lines' });
    this.contextEmpty = h('p', { class: 'empty-note' }, 'No summary yet: the whole task still fits in the window.');
    this.contextGroups = SECTIONS.map((name) => {
      const group = this.collapsible(`context-${slug(name)}`, { title: name, icon: 'list-flat', level: 3 });
      const ul = h('ul', { class: 'list lines-list', 'aria-label': name });
      group.body.append(ul);
      return { name, group, list: this.limit(`context-${slug(name)}`, new KeyedList<SummaryLineView>(ul, summaryLineRenderer(name)), LINES_PAGE) };
    });
    this.context.body.append(this.contextEmpty, ...this.contextGroups.map((g) => g.group.el));

    this.notLoaded = this.listRegion('not-loaded', { title: 'Evidence not loaded', icon: 'eye-closed', level: 2, countLabel: 'parts' }, notLoadedRenderer, 'Nothing left out: the model sees every part in full.', 'notLoaded');
    this.notLoadedTotal = h('p', { class: 'region-intro muted' });
    this.notLoaded.region.body.prepend(this.notLoadedTotal);
    this.artifacts = this.listRegion('artifacts', { title: 'Files', icon: 'files', level: 2, countLabel: 'files' }, artifactRenderer, 'No file read or written yet.', 'artifacts');
    this.timeline = this.listRegion('timeline', { title: 'Compactions', icon: 'history', level: 2, countLabel: 'compactions' }, compactionRenderer, 'No compaction yet.', 'compactions');

    this.main = h(
      'main',
      { class: 'panel', 'aria-label': 'Task Context panel' },
      this.notices,
      this.drift.el,
      this.budget.el,
      this.pending.region.el,
      this.facts.el,
      this.context.el,
      this.notLoaded.region.el,
      this.artifacts.region.el,
      this.timeline.region.el,
    );
    this.root.replaceChildren(this.header.el, this.status, this.loading, this.emptyView, this.main);
    this.root.removeAttribute('aria-busy');
    this.applyFilter(this.filterText);
    // The host pages the long lists by the filter: a view restored with one tells it before `ready`.
    if (this.filterText !== '') this.host.post({ type: 'view/filter', text: this.filterText });
    this.showTask();
    this.listen();
  }

  // ------------------------------------------------------------ FactUiState

  draft(id: string): string | undefined {
    return this.host.ui.drafts[id];
  }

  historyOpen(id: string): boolean {
    return this.host.ui.history.includes(id);
  }

  busy(id: string): boolean {
    return this.busyFacts.has(id);
  }

  error(id: string): string | undefined {
    return this.errors.get(id);
  }

  domId(key: string): string {
    let id = this.domIds.get(key);
    if (!id) {
      id = `u${this.domIds.size + 1}`;
      this.domIds.set(key, id);
    }
    return id;
  }

  // ------------------------------------------------------------ messages

  /** Handles one message of the host. */
  handle(message: HostMessage): void {
    switch (message.type) {
      case 'state/full':
        this.apply({ ...emptyState(), ...message.state }, ALL_KEYS);
        break;
      case 'state/patch': {
        const keys = ALL_KEYS.filter((k) => Object.prototype.hasOwnProperty.call(message.patch, k) && message.patch[k] !== undefined);
        this.apply({ ...this.state, ...pick(message.patch, keys) }, keys);
        break;
      }
      case 'action/result':
        this.result(message.requestId, message.ok, message.message);
        break;
      case 'reveal':
        this.pendingReveal = message.atRecord;
        this.reveal();
        break;
    }
  }

  /** A compaction to show once it is rendered (the host may post the reveal before the state that lists it). */
  private pendingReveal: number | undefined;

  /**
   * Shows the compaction the chat's line pointed at: the Compactions region
   * opened, the entry scrolled into view and marked (the last one made before
   * that record, when a reactive one followed it).
   */
  private reveal(): void {
    const atRecord = this.pendingReveal;
    if (atRecord === undefined) return;
    const entries = [...this.timeline.list.container.querySelectorAll<HTMLElement>('li[data-key]')].filter((el) => el.dataset['key']?.startsWith(`${atRecord}:`));
    const entry = entries[entries.length - 1];
    if (!entry) return;
    this.pendingReveal = undefined;
    this.timeline.region.setOpen(true);
    this.host.ui.open['timeline'] = true;
    this.host.save();
    for (const marked of this.root.querySelectorAll('.is-revealed')) marked.classList.remove('is-revealed');
    entry.classList.add('is-revealed');
    entry.scrollIntoView({ block: 'center' });
  }

  private apply(state: PanelState, keys: readonly PanelKey[]): void {
    const first = !this.received;
    this.received = true;
    this.state = state;
    const changed = new Set(keys);
    if (changed.has('task') && state.task && state.task.id !== this.host.ui.taskId) {
      // Another task: the drafts and open histories were for the previous one.
      if (this.host.ui.taskId !== null) {
        this.host.ui.drafts = {};
        this.host.ui.history = [];
      }
      this.host.ui.taskId = state.task.id;
      this.host.save();
    }
    this.keepingFocus(() => {
      if (changed.has('task')) this.showTask();
      if (changed.has('notices')) renderNotices(this.notices, state.notices);
      if (changed.has('drift')) this.renderDrift();
      if (changed.has('budget')) this.renderBudget();
      if (changed.has('facts')) this.renderFacts();
      if (changed.has('sections')) this.renderSections();
      if (changed.has('notLoaded') || changed.has('pages')) this.renderNotLoaded();
      if (changed.has('artifacts') || changed.has('pages')) this.renderList(this.artifacts, state.artifacts);
      if (changed.has('compactions') || changed.has('pages')) this.renderList(this.timeline, compactionKeys(state.compactions), false);
    });
    if (first && state.task && this.host.ui.scrollY > 0) window.scrollTo(0, this.host.ui.scrollY);
    this.reveal();
  }

  // ------------------------------------------------------------ regions

  private showTask(): void {
    const task = this.state.task;
    setHidden(this.loading, this.received);
    setHidden(this.emptyView, task !== null || !this.received);
    setHidden(this.main, task === null);
    setHidden(this.header.el, task === null);
    if (task) this.header.update(task);
  }

  private renderDrift(): void {
    const drift = this.state.drift;
    if (!this.changedSince('drift', drift)) return;
    this.drift.setVisible(drift !== null);
    if (drift === null) return;
    this.drift.body.replaceChildren(h('p', { class: 'region-intro muted' }, 'How the summary built fold by fold differs from one rebuilt from the raw record.'), ...renderDrift(drift));
    const differing = driftCount(drift);
    this.drift.setCount(differing > 0 ? String(differing) : '');
  }

  private renderBudget(): void {
    const budget = this.state.budget;
    if (!this.changedSince('budget', budget)) return;
    this.drawBudget(budget);
    this.budget.setCount(budget ? percent(budget.current, budget.effective) : '');
  }

  private drawnGaugeWidth: number | undefined;

  private drawBudget(budget: PanelState['budget']): void {
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

  private renderFacts(): void {
    const buckets = new Map<FactView['type'], FactView[]>();
    const past: FactView[] = [];
    const pending: FactView[] = [];
    const active = new Set<string>();
    for (const fact of this.state.facts) {
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
    this.updateFactCounts();
  }

  private updateFactCounts(): void {
    let total = 0;
    let shown = 0;
    for (const g of this.factGroups) {
      const visible = g.list.visible;
      total += g.list.size;
      shown += visible;
      g.group.setCount(countText(visible, g.list.size));
      g.group.setVisible(visible > 0);
    }
    const history = this.history.list;
    this.history.group.setCount(countText(history.visible, history.size));
    this.history.group.setVisible(history.visible > 0);
    this.facts.setCount(countText(shown, total));
    setHidden(this.factsEmpty, total + history.size > 0);
    this.updateLimited();
    const pending = this.pending.list;
    this.pending.region.setCount(countText(pending.visible, pending.size));
    this.pending.region.setVisible(pending.size > 0);
    setHidden(this.pending.empty, pending.size > 0);
  }

  private renderSections(): void {
    const byName = new Map<string, SummaryLineView[]>();
    for (const section of this.state.sections) byName.set(section.name, [...(byName.get(section.name) ?? []), ...section.lines]);
    for (const g of this.contextGroups) g.list.update(byName.get(g.name) ?? []);
    this.updateContextCounts();
  }

  private updateContextCounts(): void {
    let total = 0;
    let shown = 0;
    for (const g of this.contextGroups) {
      const visible = g.list.visible;
      total += g.list.size;
      shown += visible;
      g.group.setCount(countText(visible, g.list.size));
      g.group.setVisible(visible > 0);
    }
    this.context.setCount(countText(shown, total));
    setHidden(this.contextEmpty, total > 0);
    this.updateLimited();
  }

  /** Draws a list `page` items at a time, with a button under it for the next ones. */
  private limit<T>(id: string, list: KeyedList<T>, page: number): KeyedList<T> {
    list.setLimit(page);
    const more = h('button', { type: 'button', class: 'btn btn-secondary show-more', 'data-action': 'more-local', 'data-list': id, 'data-focus': `more:${id}`, hidden: true }, 'Show more') as HTMLButtonElement;
    list.container.after(more);
    this.limited.set(id, { list: list as KeyedList<unknown>, more, page });
    return list;
  }

  private updateLimited(): void {
    for (const { list, more, page } of this.limited.values()) {
      const left = list.overLimit;
      setHidden(more, left === 0);
      if (left > 0) setText(more, `Show ${Math.min(page, left).toLocaleString('en-US')} more (${left.toLocaleString('en-US')} not shown)`);
    }
  }

  private renderNotLoaded(): void {
    this.renderList(this.notLoaded, this.state.notLoaded);
    const page = this.state.pages.notLoaded;
    setText(this.notLoadedTotal, page.total > 0 ? `${plural(page.tokens, 'token')} the model does not see in full. View opens a tool call's full input and output.` : '');
    setHidden(this.notLoadedTotal, page.total === 0);
  }

  private renderList<T>(region: ListRegion<T>, items: readonly T[], filtered = true): void {
    region.list.update(items);
    this.updateListCount(region, filtered);
  }

  /**
   * A list's count, and for a paged list the button for its next page. A paged
   * list counts what the host matched of the whole list (it sent only a page);
   * until the host answers a new filter, what this view filters of the page.
   */
  private updateListCount<T>(region: ListRegion<T>, filtered: boolean): void {
    const visible = filtered ? region.list.visible : region.list.size;
    if (!region.paged) {
      region.region.setCount(countText(visible, region.list.size));
      setHidden(region.empty, region.list.size > 0);
      return;
    }
    const page = this.state.pages[region.paged.name];
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

  /** False when a region drawn as a whole (the gauge, the drift report) would be drawn the same again. */
  private changedSince(region: string, value: unknown): boolean {
    const signature = JSON.stringify(value);
    if (this.drawn.get(region) === signature) return false;
    this.drawn.set(region, signature);
    return true;
  }

  // ------------------------------------------------------------ building blocks

  private collapsible(id: string, options: { title: string; icon: string; level: 2 | 3; countLabel?: string }): Collapsible {
    const open = this.host.ui.open[id] ?? !CLOSED_BY_DEFAULT.has(id);
    const c = new Collapsible(id, { ...options, open });
    this.collapsibles.set(id, c);
    return c;
  }

  private listRegion<T>(id: string, options: { title: string; icon: string; level: 2; countLabel: string }, renderer: ItemRenderer<T>, emptyText: string, paged?: PagedList): ListRegion<T> {
    const region = this.collapsible(id, options);
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
   * Runs a render and gives focus back if it lost it: to the same control when
   * it still exists, else to the next item of the list it was in, else to the
   * region's heading.
   */
  private keepingFocus(render: () => void): void {
    const active = document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null;
    const focusKey = active?.getAttribute('data-focus') ?? null;
    const item = active?.closest('[data-key]') ?? null;
    const neighbours = item ? [item.nextElementSibling, item.previousElementSibling] : [];
    const headings = [active?.closest('.group'), active?.closest('.region')].map((c) => c?.querySelector<HTMLElement>(':scope > .heading-row .toggle') ?? null);
    render();
    if (!active || !focusKey || (active.isConnected && document.activeElement === active)) return;
    if (document.activeElement && document.activeElement !== document.body) return;
    if (focusByKey(this.root, focusKey)) return;
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

  // ------------------------------------------------------------ the user

  private listen(): void {
    this.root.addEventListener('click', (event) => {
      const target = (event.target as Element | null)?.closest<HTMLElement>('[data-action]');
      if (!target || !this.root.contains(target)) return;
      if (target.getAttribute('aria-disabled') === 'true') return;
      this.act(target);
    });
    this.root.addEventListener('keydown', (event) => {
      const target = event.target as HTMLElement;
      if (target instanceof HTMLTextAreaElement && target.dataset['editor'] !== undefined) this.editorKey(event, target, target.dataset['editor']);
      else if (target === this.header.filter && event.key === 'Escape' && this.header.filter.value !== '') {
        event.preventDefault();
        this.header.filter.value = '';
        this.setFilter('');
      }
    });
    this.root.addEventListener('input', (event) => {
      const target = event.target as HTMLElement;
      if (target instanceof HTMLTextAreaElement && target.dataset['editor'] !== undefined) {
        this.host.ui.drafts[target.dataset['editor']] = target.value;
        this.host.saveSoon();
      } else if (target === this.header.filter) {
        this.setFilter(this.header.filter.value);
      }
    });
    window.addEventListener('scroll', () => {
      this.host.ui.scrollY = Math.round(window.scrollY);
      this.host.saveSoon();
    }, { passive: true });
  }

  private editorKey(event: KeyboardEvent, textarea: HTMLTextAreaElement, factId: string): void {
    if (event.isComposing) return;
    if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      this.cancelCorrection(factId);
    } else if (event.key === 'Enter' && (!event.shiftKey || event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      this.saveCorrection(factId, textarea.value);
    }
  }

  private act(target: HTMLElement): void {
    const id = target.dataset['id'] ?? '';
    switch (target.dataset['action']) {
      case 'toggle': {
        const key = target.dataset['toggle'] ?? '';
        const c = this.collapsibles.get(key);
        if (!c) return;
        c.setOpen(!c.open);
        this.host.ui.open[key] = c.open;
        this.host.save();
        return;
      }
      case 'history': {
        const ui = this.host.ui;
        ui.history = ui.history.includes(id) ? ui.history.filter((h) => h !== id) : [...ui.history, id];
        this.host.save();
        this.refreshFact(id);
        return;
      }
      case 'correct-open':
        return this.openCorrection(id);
      case 'correct-save': {
        const textarea = this.factElement(id)?.querySelector('textarea');
        return this.saveCorrection(id, textarea?.value ?? this.draft(id) ?? '');
      }
      case 'correct-cancel':
        return this.cancelCorrection(id);
      case 'pin':
        return this.factAction('fact/pin', id);
      case 'supersede':
        return this.factAction('fact/supersede', id);
      case 'delete':
        return this.factAction('fact/delete', id);
      case 'confirm':
        return this.factAction('pending/confirm', id);
      case 'reject':
        return this.factAction('pending/reject', id);
      case 'open-record': {
        const taskId = this.taskId();
        const record = Number(target.dataset['record']);
        if (taskId !== undefined && Number.isInteger(record) && record >= 0) this.host.post({ type: 'open/record', taskId, record });
        return;
      }
      case 'open-tool': {
        const taskId = this.taskId();
        const toolCallId = target.dataset['toolCall'];
        if (taskId !== undefined && toolCallId) this.host.post({ type: 'open/toolCall', taskId, toolCallId });
        return;
      }
      case 'open-file': {
        const path = target.dataset['path'];
        if (path) this.host.post({ type: 'open/file', path });
        return;
      }
      case 'more-local': {
        const limited = this.limited.get(target.dataset['list'] ?? '');
        if (!limited) return;
        limited.list.setLimit(limited.list.limit + limited.page);
        this.updateLimited();
        return;
      }
      case 'more': {
        const taskId = this.taskId();
        const list = target.dataset['list'];
        if (taskId !== undefined && (list === 'notLoaded' || list === 'artifacts' || list === 'compactions')) this.host.post({ type: 'list/more', taskId, list });
        return;
      }
      case 'rebuild': {
        const taskId = this.taskId();
        if (this.rebuilding || taskId === undefined) return;
        const requestId = this.host.requestId();
        this.requests.set(requestId, { type: 'rebuild' });
        this.rebuilding = true;
        this.header.setRebuilding(true);
        this.host.post({ type: 'rebuild', requestId, taskId });
        return;
      }
    }
  }

  /**
   * The task this view rendered, which every message acting on a task names:
   * the host refuses one whose task it no longer shows (it may have moved to
   * another task a moment before this view redrew). Undefined: no task, send nothing.
   */
  private taskId(): string | undefined {
    return this.state.task?.id;
  }

  private factAction(type: Exclude<FactAction, 'fact/correct'>, factId: string): void {
    const taskId = this.taskId();
    if (taskId === undefined || this.busyFacts.has(factId)) return;
    const requestId = this.host.requestId();
    this.requests.set(requestId, { type, factId });
    this.busyFacts.add(factId);
    this.errors.delete(factId);
    this.host.post({ type, requestId, taskId, factId });
    this.refreshFact(factId);
  }

  private openCorrection(factId: string): void {
    const fact = this.state.facts.find((f) => f.id === factId);
    if (!fact) return;
    this.host.ui.drafts[factId] = fact.value;
    this.errors.delete(factId);
    this.host.save();
    this.refreshFact(factId);
    const textarea = this.factElement(factId)?.querySelector('textarea');
    if (textarea) {
      textarea.focus();
      textarea.setSelectionRange(textarea.value.length, textarea.value.length);
    }
  }

  private saveCorrection(factId: string, raw: string): void {
    const taskId = this.taskId();
    if (taskId === undefined || this.busyFacts.has(factId)) return;
    const value = raw.trim();
    this.host.ui.drafts[factId] = raw;
    if (value === '') {
      this.errors.set(factId, 'Write the new wording, or press Escape to cancel.');
      this.refreshFact(factId);
      focusByKey(this.root, `fact:${factId}:editor`);
      return;
    }
    const requestId = this.host.requestId();
    this.requests.set(requestId, { type: 'fact/correct', factId });
    this.busyFacts.add(factId);
    this.errors.delete(factId);
    this.host.save();
    this.host.post({ type: 'fact/correct', requestId, taskId, factId, value });
    this.refreshFact(factId);
  }

  private cancelCorrection(factId: string): void {
    delete this.host.ui.drafts[factId];
    this.errors.delete(factId);
    this.host.save();
    this.refreshFact(factId);
    focusByKey(this.root, `fact:${factId}:correct`);
  }

  /** The host's answer to an action: announce it; a failed correction keeps its editor open with the reason. */
  private result(requestId: string, ok: boolean, message: string): void {
    this.announce(ok, message);
    const request = this.requests.get(requestId);
    if (!request) return;
    this.requests.delete(requestId);
    if (request.type === 'rebuild') {
      this.rebuilding = false;
      this.header.setRebuilding(false);
      return;
    }
    const factId = request.factId;
    if (factId === undefined) return;
    this.busyFacts.delete(factId);
    const editorHadFocus = document.activeElement instanceof HTMLElement && document.activeElement.closest('.editor') !== null && this.factElement(factId)?.contains(document.activeElement) === true;
    if (ok) {
      this.errors.delete(factId);
      if (request.type === 'fact/correct') {
        delete this.host.ui.drafts[factId];
        this.host.save();
      }
    } else {
      this.errors.set(factId, message || 'The action failed.');
    }
    this.refreshFact(factId);
    if (request.type === 'fact/correct') {
      if (!ok) focusByKey(this.root, `fact:${factId}:editor`);
      else if (editorHadFocus) focusByKey(this.root, `fact:${factId}:correct`);
    }
  }

  private announce(ok: boolean, message: string): void {
    const text = message || (ok ? 'Done.' : 'The action failed.');
    this.status.className = `action-status ${ok ? 'is-ok' : 'is-error'}`;
    this.status.replaceChildren(icon(ok ? 'check' : 'error'), h('span', null, text));
    if (this.statusTimer !== undefined) clearTimeout(this.statusTimer);
    this.statusTimer = setTimeout(() => this.status.replaceChildren(), STATUS_VISIBLE_MS);
  }

  private setFilter(value: string): void {
    this.host.ui.filter = value;
    this.host.saveSoon();
    const filter = normalizeFilter(value);
    if (filter === this.filterText) return;
    this.filterText = filter;
    this.applyFilter(filter);
    this.host.post({ type: 'view/filter', text: filter });
  }

  private applyFilter(filter: string): void {
    for (const g of this.factGroups) g.list.setFilter(filter);
    this.history.list.setFilter(filter);
    this.pending.list.setFilter(filter);
    for (const g of this.contextGroups) g.list.setFilter(filter);
    this.notLoaded.list.setFilter(filter);
    this.artifacts.list.setFilter(filter);
    this.updateFactCounts();
    this.updateContextCounts();
    this.updateListCount(this.notLoaded, true);
    this.updateListCount(this.artifacts, true);
  }

  private factLists(): KeyedList<FactView>[] {
    return [...this.factGroups.map((g) => g.list), this.history.list, this.pending.list];
  }

  private factElement(factId: string): HTMLElement | undefined {
    for (const list of this.factLists()) {
      const el = list.element(factId);
      if (el) return el;
    }
    return undefined;
  }

  private refreshFact(factId: string): void {
    for (const list of this.factLists()) if (list.element(factId)) list.refresh(factId);
  }
}

function isShown(el: HTMLElement): boolean {
  return el.isConnected && el.getClientRects().length > 0;
}

function pick(patch: Partial<PanelState>, keys: readonly PanelKey[]): Partial<PanelState> {
  const out: Partial<PanelState> = {};
  for (const key of keys) (out as Record<string, unknown>)[key] = patch[key];
  return out;
}
