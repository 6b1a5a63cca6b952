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
import type { HostMessage, PanelState, WebviewMessage } from '../src/protocol/messages';
import { emptyPages, normalizeFilter } from '../src/protocol/view';
import { ActionStatus, FactMarks } from './actionState';
import { focusByKey, keepingFocus, setHidden } from './dom';
import type { Host } from './host';
import { PanelRegions } from './panelRegions';
import { Header } from './render/header';

type PanelKey = keyof PanelState;
const ALL_KEYS: readonly PanelKey[] = ['task', 'notices', 'drift', 'budget', 'facts', 'sections', 'notLoaded', 'artifacts', 'compactions', 'pages'];

/** Actions whose result the host reports with `action/result`. */
type RequestMessage = Extract<WebviewMessage, { requestId: string }>;
type FactAction = Extract<RequestMessage, { factId: string }>['type'];

interface PendingRequest {
  readonly type: RequestMessage['type'];
  readonly factId?: string;
}

function emptyState(): PanelState {
  return { task: null, sections: [], facts: [], budget: null, notLoaded: [], artifacts: [], compactions: [], pages: emptyPages(), notices: [], drift: null };
}

export class App {
  private state: PanelState = emptyState();
  private received = false;
  private filterText = '';
  private readonly requests = new Map<string, PendingRequest>();
  private rebuilding = false;
  private readonly header: Header;
  /** The line that announces each action's result. */
  private readonly status = new ActionStatus();
  /** What each fact's card shows besides the fact: an act awaiting its result, the last one's failure, a draft. */
  private readonly marks: FactMarks;
  /** Everything under the header: the regions, each rendered from its part of the state. */
  private readonly regions: PanelRegions;

  constructor(
    private readonly host: Host,
    private readonly root: HTMLElement,
  ) {
    this.filterText = normalizeFilter(host.ui.filter);
    this.header = new Header(host.ui.filter);
    this.marks = new FactMarks(host);
    this.regions = new PanelRegions(host, root, this.marks, () => this.state);
    this.root.replaceChildren(this.header.el, this.status.el, ...this.regions.elements);
    this.root.removeAttribute('aria-busy');
    this.regions.applyFilter(this.filterText);
    // The host pages the long lists by the filter: a view restored with one tells it before `ready`.
    if (this.filterText !== '') this.host.post({ type: 'view/filter', text: this.filterText });
    this.showTask();
    this.listen();
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
        this.regions.revealCompaction(message.atRecord);
        break;
    }
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
    keepingFocus(this.root, () => {
      if (changed.has('task')) this.showTask();
      this.regions.render(state, changed);
    });
    if (first && state.task && this.host.ui.scrollY > 0) window.scrollTo(0, this.host.ui.scrollY);
    this.regions.reveal();
  }

  private showTask(): void {
    const task = this.state.task;
    this.regions.showTask(task !== null, this.received);
    setHidden(this.header.el, task === null);
    if (task) this.header.update(task);
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
      case 'toggle':
        this.regions.toggle(target.dataset['toggle'] ?? '');
        return;
      case 'history': {
        const ui = this.host.ui;
        ui.history = ui.history.includes(id) ? ui.history.filter((h) => h !== id) : [...ui.history, id];
        this.host.save();
        this.regions.refreshFact(id);
        return;
      }
      case 'correct-open':
        return this.openCorrection(id);
      case 'correct-save': {
        const textarea = this.regions.factElement(id)?.querySelector('textarea');
        return this.saveCorrection(id, textarea?.value ?? this.marks.draft(id) ?? '');
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
      case 'more-local':
        this.regions.showMoreLocal(target.dataset['list'] ?? '');
        return;
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
    if (taskId === undefined || this.marks.busy(factId)) return;
    const requestId = this.host.requestId();
    this.requests.set(requestId, { type, factId });
    this.marks.setBusy(factId, true);
    this.marks.setError(factId, undefined);
    this.host.post({ type, requestId, taskId, factId });
    this.regions.refreshFact(factId);
  }

  private openCorrection(factId: string): void {
    const fact = this.state.facts.find((f) => f.id === factId);
    if (!fact) return;
    this.host.ui.drafts[factId] = fact.value;
    this.marks.setError(factId, undefined);
    this.host.save();
    this.regions.refreshFact(factId);
    const textarea = this.regions.factElement(factId)?.querySelector('textarea');
    if (textarea) {
      textarea.focus();
      textarea.setSelectionRange(textarea.value.length, textarea.value.length);
    }
  }

  private saveCorrection(factId: string, raw: string): void {
    const taskId = this.taskId();
    if (taskId === undefined || this.marks.busy(factId)) return;
    const value = raw.trim();
    this.host.ui.drafts[factId] = raw;
    if (value === '') {
      this.marks.setError(factId, 'Write the new wording, or press Escape to cancel.');
      this.regions.refreshFact(factId);
      focusByKey(this.root, `fact:${factId}:editor`);
      return;
    }
    const requestId = this.host.requestId();
    this.requests.set(requestId, { type: 'fact/correct', factId });
    this.marks.setBusy(factId, true);
    this.marks.setError(factId, undefined);
    this.host.save();
    this.host.post({ type: 'fact/correct', requestId, taskId, factId, value });
    this.regions.refreshFact(factId);
  }

  private cancelCorrection(factId: string): void {
    delete this.host.ui.drafts[factId];
    this.marks.setError(factId, undefined);
    this.host.save();
    this.regions.refreshFact(factId);
    focusByKey(this.root, `fact:${factId}:correct`);
  }

  /** The host's answer to an action: announce it; a failed correction keeps its editor open with the reason. */
  private result(requestId: string, ok: boolean, message: string): void {
    this.status.announce(ok, message);
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
    this.marks.setBusy(factId, false);
    const editorHadFocus = document.activeElement instanceof HTMLElement && document.activeElement.closest('.editor') !== null && this.regions.factElement(factId)?.contains(document.activeElement) === true;
    if (ok) {
      this.marks.setError(factId, undefined);
      if (request.type === 'fact/correct') {
        delete this.host.ui.drafts[factId];
        this.host.save();
      }
    } else {
      this.marks.setError(factId, message || 'The action failed.');
    }
    this.regions.refreshFact(factId);
    if (request.type === 'fact/correct') {
      if (!ok) focusByKey(this.root, `fact:${factId}:editor`);
      else if (editorHadFocus) focusByKey(this.root, `fact:${factId}:correct`);
    }
  }

  private setFilter(value: string): void {
    this.host.ui.filter = value;
    this.host.saveSoon();
    const filter = normalizeFilter(value);
    if (filter === this.filterText) return;
    this.filterText = filter;
    this.regions.applyFilter(filter);
    this.host.post({ type: 'view/filter', text: filter });
  }
}

function pick(patch: Partial<PanelState>, keys: readonly PanelKey[]): Partial<PanelState> {
  const out: Partial<PanelState> = {};
  for (const key of keys) (out as Record<string, unknown>)[key] = patch[key];
  return out;
}
