/**
 * What the panel shows of the acts the user asked of the host: on each fact's
 * card, an act awaiting its result or the last one's failure, beside the
 * correction draft and the earlier versions kept in the UI state (`FactMarks`);
 * and the status line that announces every result (`ActionStatus`).
 */
import { h, icon } from './dom';
import type { Host } from './host';
import type { FactUiState } from './render/facts';

/** How long the last action's result stays on screen (it is announced at once). */
const STATUS_VISIBLE_MS = 8000;

export class FactMarks implements FactUiState {
  private readonly busyFacts = new Set<string>();
  private readonly errors = new Map<string, string>();
  private readonly domIds = new Map<string, string>();

  constructor(private readonly host: Host) {}

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

  /** An act on the fact awaits its result (true), or got it (false). */
  setBusy(id: string, busy: boolean): void {
    if (busy) this.busyFacts.add(id);
    else this.busyFacts.delete(id);
  }

  /** The failure of the last act on the fact; undefined clears it. */
  setError(id: string, error: string | undefined): void {
    if (error === undefined) this.errors.delete(id);
    else this.errors.set(id, error);
  }
}

/** The status line under the header: it announces each action's result, and clears it after STATUS_VISIBLE_MS. */
export class ActionStatus {
  // Always in the accessibility tree (a live region that appears with its text may not be announced); empty, it takes no room.
  readonly el: HTMLElement = h('p', { class: 'action-status', role: 'status', 'aria-live': 'polite' });
  private timer: ReturnType<typeof setTimeout> | undefined;

  announce(ok: boolean, message: string): void {
    const text = message || (ok ? 'Done.' : 'The action failed.');
    this.el.className = `action-status ${ok ? 'is-ok' : 'is-error'}`;
    this.el.replaceChildren(icon(ok ? 'check' : 'error'), h('span', null, text));
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.el.replaceChildren(), STATUS_VISIBLE_MS);
  }
}
