/** The panel's header: the task, whether it is running, Rebuild, the filter; then notices and the drift report. */
import type { PanelState } from '../../src/protocol/messages';
import { h, icon, setAttr, setHidden, setText } from '../dom';
import { formatTokens } from '../format';

export class Header {
  readonly el: HTMLElement;
  readonly filter: HTMLInputElement;
  private readonly title: HTMLHeadingElement;
  private readonly taskId: HTMLElement;
  private readonly records: HTMLElement;
  private readonly running: HTMLElement;
  private readonly runningIcon: HTMLElement;
  private readonly runningText: HTMLElement;
  private readonly rebuild: HTMLButtonElement;
  private readonly rebuildIcon: HTMLElement;
  private readonly rebuildLabel: HTMLElement;

  constructor(filterValue: string) {
    this.title = h('h1', { class: 'task-title' });
    this.taskId = h('code', { class: 'task-id' });
    this.records = h('span', { class: 'task-records' });
    this.runningIcon = icon('circle-large-outline');
    this.runningText = h('span');
    this.running = h('span', { class: 'running' }, this.runningIcon, this.runningText);
    this.rebuildIcon = icon('debug-restart');
    this.rebuildLabel = h('span', { class: 'btn-label' }, 'Rebuild from raw record');
    this.rebuild = h(
      'button',
      { type: 'button', class: 'btn btn-secondary rebuild', 'data-action': 'rebuild', 'data-focus': 'rebuild', title: 'Derive the task again from the raw record and report how the summary drifted' },
      this.rebuildIcon,
      this.rebuildLabel,
    );
    this.filter = h('input', {
      type: 'search',
      class: 'filter-input',
      placeholder: 'Filter facts, lines, files',
      title: 'Filter facts, Task Context lines, evidence and files',
      'aria-label': 'Filter facts, Task Context lines, evidence and files',
      'data-focus': 'filter',
      'data-filter': '',
      spellcheck: 'false',
    });
    this.filter.value = filterValue;
    this.el = h(
      'header',
      { class: 'task-header' },
      h('div', { class: 'task-title-row' }, this.title, this.running),
      h('div', { class: 'task-meta' }, this.taskId, h('span', { class: 'sep', 'aria-hidden': 'true' }, '·'), this.records),
      h('div', { class: 'toolbar' }, h('div', { class: 'filter' }, icon('filter', 'filter-icon'), this.filter), this.rebuild),
    );
  }

  update(task: NonNullable<PanelState['task']>): void {
    setText(this.title, task.title || 'Untitled task');
    setAttr(this.title, 'title', task.title);
    setText(this.taskId, task.id);
    // Cut with an ellipsis in a narrow panel: the whole id is one hover away.
    this.taskId.title = `Task id: ${task.id}`;
    setText(this.records, `${formatTokens(task.records)} ${task.records === 1 ? 'record' : 'records'}`);
    setText(this.runningText, task.running ? 'Running' : 'Idle');
    setAttr(this.running, 'class', `running${task.running ? ' is-running' : ''}`);
    setAttr(this.runningIcon, 'class', task.running ? 'codicon codicon-loading codicon-modifier-spin' : 'codicon codicon-circle-large-outline');
  }

  setRebuilding(busy: boolean): void {
    setAttr(this.rebuild, 'aria-disabled', busy ? 'true' : null);
    setAttr(this.rebuildIcon, 'class', busy ? 'codicon codicon-loading codicon-modifier-spin' : 'codicon codicon-debug-restart');
    setText(this.rebuildLabel, busy ? 'Rebuilding…' : 'Rebuild from raw record');
  }
}

/** `state.notices`: what the user should know (a protected block over its budget, a failed action…). */
export function renderNotices(container: HTMLElement, all: readonly string[]): void {
  const notices = [...new Set(all)];
  // Keyed by text: an unchanged notice keeps its node (a screen reader does not hear it again).
  const existing = new Map<string, Element>();
  for (const child of [...container.children]) existing.set(child.getAttribute('data-notice') ?? '', child);
  const next = notices.map((text) => existing.get(text) ?? h('li', { class: 'notice', 'data-notice': text }, icon('warning'), h('span', null, text)));
  const keep = new Set(next);
  for (const child of [...container.children]) if (!keep.has(child)) child.remove();
  let cursor: Element | null = container.firstElementChild;
  for (const el of next) {
    if (el === cursor) cursor = cursor.nextElementSibling;
    else container.insertBefore(el, cursor);
  }
  setHidden(container, notices.length === 0);
}

/**
 * The drift report (`formatDrift`'s lines): its verdict as the lead, then each
 * differing section with its lines marked "only now" (in the summary built
 * fold by fold) or "rebuild" (only in the one rebuilt from the raw record).
 * Lines of another shape are listed as they are.
 */
export function renderDrift(drift: readonly string[]): Node[] {
  if (drift.length === 0) return [h('p', { class: 'empty-note' }, 'No drift: the summary built fold by fold matches the one rebuilt from the raw record.')];
  const [verdict, ...rest] = drift;
  const out: Node[] = [h('p', { class: 'drift-verdict' }, verdict!)];
  let list: HTMLElement | undefined;
  for (const line of rest) {
    const section = /^(.+) \((\d+) shared\):$/.exec(line);
    const item = /^ {2}([-+]) (.*)$/.exec(line);
    if (section) {
      list = h('ul', { class: 'drift-lines', 'aria-label': section[1]! });
      out.push(h('h4', { class: 'drift-section' }, section[1]!, h('span', { class: 'muted' }, ` · ${section[2]} shared`)), list);
    } else if (item && list) {
      const now = item[1] === '-';
      list.append(h('li', { class: now ? 'drift-now' : 'drift-rebuilt' }, h('span', { class: 'drift-mark' }, now ? 'only now' : 'rebuild'), h('span', { class: 'drift-text' }, item[2]!)));
    } else if (!/^"-" only in/.test(line)) {
      list = undefined;
      out.push(h('p', { class: 'drift-note muted' }, line));
    }
  }
  return out;
}

/** How many lines differ in a drift report (its "-" and "+" lines). */
export function driftCount(drift: readonly string[]): number {
  return drift.filter((line) => /^ {2}[-+] /.test(line)).length;
}
