/**
 * The lists the host sends a page at a time: the evidence the model does not
 * see in full, the files, the compactions (the newest page first); and the
 * compaction a chat's line points at, revealed once it is listed.
 */
import type { ArtifactView, CompactionView, NotLoadedView, PanelState } from '../src/protocol/messages';
import { h, setHidden, setText } from './dom';
import { plural } from './format';
import type { Host } from './host';
import { listRegion, updateListCount, type ListRegion } from './listRegion';
import { artifactRenderer, compactionKeys, compactionRenderer, notLoadedRenderer } from './render/lists';
import type { Collapsibles } from './render/region';

export class PagedLists {
  private readonly notLoaded: ListRegion<NotLoadedView>;
  private readonly notLoadedTotal: HTMLElement;
  private readonly artifacts: ListRegion<ArtifactView>;
  private readonly timeline: ListRegion<{ key: string; compaction: CompactionView }>;
  /** A compaction to show once it is rendered (the host may post the reveal before the state that lists it). */
  private pendingReveal: number | undefined;

  /** `state`: the state the panel shows now (its pages say how much of each list the host matched). */
  constructor(
    collapsibles: Collapsibles,
    private readonly host: Host,
    private readonly root: HTMLElement,
    private readonly state: () => PanelState,
  ) {
    this.notLoaded = listRegion(collapsibles, 'not-loaded', { title: 'Evidence not loaded', icon: 'eye-closed', level: 2, countLabel: 'parts' }, notLoadedRenderer, 'Nothing left out: the model sees every part in full.', 'notLoaded');
    this.notLoadedTotal = h('p', { class: 'region-intro muted' });
    this.notLoaded.region.body.prepend(this.notLoadedTotal);
    this.artifacts = listRegion(collapsibles, 'artifacts', { title: 'Files', icon: 'files', level: 2, countLabel: 'files' }, artifactRenderer, 'No file read or written yet.', 'artifacts');
    this.timeline = listRegion(collapsibles, 'timeline', { title: 'Compactions', icon: 'history', level: 2, countLabel: 'compactions' }, compactionRenderer, 'No compaction yet.', 'compactions');
  }

  get elements(): HTMLElement[] {
    return [this.notLoaded.region.el, this.artifacts.region.el, this.timeline.region.el];
  }

  /** Draws the lists whose part of the state changed (all of them when the pages did). */
  render(changed: ReadonlySet<keyof PanelState>): void {
    const state = this.state();
    if (changed.has('notLoaded') || changed.has('pages')) this.renderNotLoaded();
    if (changed.has('artifacts') || changed.has('pages')) this.renderList(this.artifacts, state.artifacts);
    if (changed.has('compactions') || changed.has('pages')) this.renderList(this.timeline, compactionKeys(state.compactions), false);
  }

  /** Shows only the items whose text contains `filter` (the compactions are not filtered); counts follow with `updateCounts`. */
  setFilter(filter: string): void {
    this.notLoaded.list.setFilter(filter);
    this.artifacts.list.setFilter(filter);
  }

  /** Each list's count, and the button for its next page. */
  updateCounts(): void {
    updateListCount(this.notLoaded, true, this.state().pages);
    updateListCount(this.artifacts, true, this.state().pages);
  }

  /** Shows the compaction made before record `atRecord` now, or once a state lists it. */
  revealCompaction(atRecord: number): void {
    this.pendingReveal = atRecord;
    this.reveal();
  }

  /**
   * Shows the compaction the chat's line pointed at: the Compactions region
   * opened, the entry scrolled into view and marked (the last one made before
   * that record, when a reactive one followed it).
   */
  reveal(): void {
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

  private renderNotLoaded(): void {
    this.renderList(this.notLoaded, this.state().notLoaded);
    const page = this.state().pages.notLoaded;
    setText(this.notLoadedTotal, page.total > 0 ? `${plural(page.tokens, 'token')} the model does not see in full. View opens a tool call's full input and output.` : '');
    setHidden(this.notLoadedTotal, page.total === 0);
  }

  private renderList<T>(region: ListRegion<T>, items: readonly T[], filtered = true): void {
    region.list.update(items);
    updateListCount(region, filtered, this.state().pages);
  }
}
