/**
 * Builds the state the Task Context panel is sent for the task it shows: the
 * agent's task and what the model was last sent, with what the host noted (its
 * newest notices, each task's drift report from a forced rebuild) and what the
 * webview asked to see of the long lists (how many pages, which filter).
 */
import type { TokenCounter } from '../core/tokens';
import { MemoTokenCounter } from '../core/tokens';
import { PAGE_SIZE, type PagedList, type PanelState } from '../protocol/messages';
import type { LastSent, PanelAgent } from './ports';
import { buildPanelState, defaultPanelView, type PanelView } from './snapshot';

/** Host notices kept for the panel (the newest). */
const MAX_NOTICES = 5;

export class PanelStateBuilder {
  private readonly drift = new Map<string, string[]>();
  private readonly notices: string[] = [];
  /** How much of each long list the webview asked for, and its filter; the pages start again for another task. */
  private panelView: PanelView = defaultPanelView();
  private panelViewTask: string | undefined;
  /** The messages of a few contexts: a snapshot re-counts only what changed since the last one. */
  private readonly counter: MemoTokenCounter;

  constructor(private readonly deps: { readonly agent: PanelAgent; readonly lastSent: (taskId: string) => LastSent | undefined; readonly counter: TokenCounter }) {
    this.counter = new MemoTokenCounter(deps.counter, 5_000);
  }

  /** A notice for the panel (only the newest MAX_NOTICES are kept). */
  addNotice(notice: string): void {
    this.notices.push(notice);
    if (this.notices.length > MAX_NOTICES) this.notices.splice(0, this.notices.length - MAX_NOTICES);
  }

  /** The drift report of a task's last forced rebuild, line by line. */
  setDrift(taskId: string, lines: string[]): void {
    this.drift.set(taskId, lines);
  }

  /** One more page of a long list. */
  showMore(list: PagedList): void {
    this.panelView = { ...this.panelView, limits: { ...this.panelView.limits, [list]: this.panelView.limits[list] + PAGE_SIZE } };
  }

  /** The panel's filter; false when it is the one already applied. */
  setFilter(text: string): boolean {
    if (text === this.panelView.filter) return false;
    // What matches another filter starts from its first page.
    this.panelView = { ...defaultPanelView(), filter: text };
    return true;
  }

  /** The state of task `id` (undefined: no task). */
  async build(id: string | undefined): Promise<PanelState> {
    const agent = this.deps.agent;
    const task = id !== undefined ? await agent.inspect(id) : undefined;
    const sent = id !== undefined ? this.deps.lastSent(id) : undefined;
    if (id !== this.panelViewTask) {
      this.panelViewTask = id;
      this.panelView = { ...defaultPanelView(), filter: this.panelView.filter };
    }
    return buildPanelState({
      task,
      running: id !== undefined && agent.isRunning(id),
      lastSent: sent,
      notices: this.notices,
      drift: (id !== undefined ? this.drift.get(id) : undefined) ?? null,
      counter: this.counter,
      view: this.panelView,
    });
  }
}
