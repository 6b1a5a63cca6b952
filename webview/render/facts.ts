/**
 * Protected facts: the active ones with their actions and correction editor,
 * the pending candidates the user confirms or rejects, and the superseded and
 * deleted ones kept for the audit.
 */
import type { FactView } from '../../src/protocol/messages';
import { h, icon, nodes, type ItemRenderer } from '../dom';
import { FACT_TYPE_LABEL, WRITER_LABEL } from '../format';
import { actionButton, iconTag, sourceButtons, tag } from './common';

/** What the panel knows about a fact beyond the host's state. */
export interface FactUiState {
  /** The draft when a correction editor is open. */
  draft(id: string): string | undefined;
  historyOpen(id: string): boolean;
  /** An action on the fact awaits its result. */
  busy(id: string): boolean;
  /** The failure of the last action on the fact, until the next one. */
  error(id: string): string | undefined;
  /** A DOM id for `key`, stable for the session (fact ids can hold any character). */
  domId(key: string): string;
}

export const EDITOR_MAX_CHARS = 4000;

function signature(fact: FactView, ui: FactUiState): string {
  const draft = ui.draft(fact.id);
  return `${JSON.stringify(fact)}|${draft === undefined ? 0 : 1}|${ui.historyOpen(fact.id) ? 1 : 0}|${ui.busy(fact.id) ? 1 : 0}|${ui.error(fact.id) ?? ''}`;
}

function searchText(fact: FactView): string {
  return `${fact.value} ${FACT_TYPE_LABEL[fact.type]} ${fact.writer} ${fact.reason}`.toLowerCase();
}

function valueParagraph(fact: FactView, valueId: string): HTMLElement {
  return h('p', { class: 'fact-value', id: valueId }, fact.value);
}

function writerTag(fact: FactView): HTMLElement {
  const writer = WRITER_LABEL[fact.writer];
  return iconTag(writer.icon, writer.label, `writer writer-${fact.writer}`, `Written by the ${writer.label}`);
}

function historyToggle(fact: FactView, ui: FactUiState, historyId: string): HTMLElement | null {
  if (fact.history.length === 0) return null;
  const open = ui.historyOpen(fact.id);
  return h(
    'button',
    { type: 'button', class: 'btn btn-ghost history-toggle', 'data-action': 'history', 'data-id': fact.id, 'data-focus': `fact:${fact.id}:history`, 'aria-expanded': String(open), 'aria-controls': historyId },
    icon('chevron-right', 'chevron'),
    h('span', { class: 'btn-label' }, `${fact.history.length} earlier ${fact.history.length === 1 ? 'version' : 'versions'}`),
  );
}

function historyList(fact: FactView, ui: FactUiState, historyId: string): HTMLElement | null {
  if (fact.history.length === 0 || !ui.historyOpen(fact.id)) return null;
  return h(
    'ol',
    { class: 'fact-history', id: historyId, 'aria-label': 'Earlier versions' },
    fact.history.map((v) =>
      h(
        'li',
        null,
        h('span', { class: 'history-head' }, tag(`v${v.version}`, 'version'), tag(v.status, `status status-${v.status}`), v.time >= 0 ? h('span', { class: 'muted' }, `at r${v.time}`) : null, v.reason ? h('span', { class: 'muted' }, `· ${v.reason}`) : null),
        h('span', { class: 'history-value' }, v.value),
      ),
    ),
  );
}

function errorLine(fact: FactView, ui: FactUiState, errorId: string): HTMLElement | null {
  const error = ui.error(fact.id);
  return error ? h('p', { class: 'inline-error', id: errorId }, icon('error'), h('span', null, error)) : null;
}

function editor(fact: FactView, draft: string, ui: FactUiState, ids: { value: string; error: string }): HTMLElement {
  const editorId = ui.domId(`editor:${fact.id}`);
  const hintId = ui.domId(`hint:${fact.id}`);
  const busy = ui.busy(fact.id);
  const textarea = h('textarea', {
    id: editorId,
    class: 'editor-input',
    rows: Math.min(8, Math.max(2, Math.ceil(draft.length / 48))),
    maxlength: EDITOR_MAX_CHARS,
    spellcheck: 'true',
    'data-editor': fact.id,
    'data-focus': `fact:${fact.id}:editor`,
    'aria-describedby': ui.error(fact.id) ? `${hintId} ${ids.error}` : hintId,
    'aria-invalid': ui.error(fact.id) ? 'true' : undefined,
    readonly: busy,
  });
  textarea.value = draft;
  return h(
    'div',
    { class: 'editor', role: 'group', 'aria-label': `Correct this ${FACT_TYPE_LABEL[fact.type]}` },
    h('label', { for: editorId, class: 'visually-hidden' }, `New wording of the ${FACT_TYPE_LABEL[fact.type]}`),
    textarea,
    h(
      'div',
      { class: 'editor-row' },
      h('span', { class: 'hint', id: hintId }, busy ? 'Saving…' : 'Enter saves · Shift+Enter new line · Esc cancels'),
      h(
        'span',
        { class: 'editor-buttons' },
        actionButton({ action: 'correct-save', label: busy ? 'Saving' : 'Save', icon: busy ? 'loading codicon-modifier-spin' : 'check', kind: 'primary', focus: `fact:${fact.id}:save`, data: { id: fact.id }, disabled: busy }),
        actionButton({ action: 'correct-cancel', label: 'Cancel', icon: 'close', kind: 'secondary', focus: `fact:${fact.id}:cancel`, data: { id: fact.id } }),
      ),
    ),
  );
}

/** An active protected fact: value, writer, version, pin, sources; Correct / Pin / Supersede / Delete. */
export function activeFactRenderer(ui: FactUiState): ItemRenderer<FactView> {
  return {
    key: (fact) => fact.id,
    signature: (fact) => signature(fact, ui),
    searchText,
    fill(el, fact) {
      const valueId = ui.domId(`value:${fact.id}`);
      const historyId = ui.domId(`history:${fact.id}`);
      const errorId = ui.domId(`error:${fact.id}`);
      const draft = ui.draft(fact.id);
      const busy = ui.busy(fact.id);
      el.className = `fact${fact.pinned ? ' is-pinned' : ''}${busy ? ' is-busy' : ''}${draft !== undefined ? ' is-editing' : ''}`;
      if (busy) el.setAttribute('aria-busy', 'true');
      else el.removeAttribute('aria-busy');
      const actions =
        draft !== undefined
          ? editor(fact, draft, ui, { value: valueId, error: errorId })
          : h(
              'div',
              { class: 'fact-actions', role: 'group', 'aria-label': 'Actions' },
              actionButton({ action: 'correct-open', label: 'Correct', icon: 'edit', focus: `fact:${fact.id}:correct`, data: { id: fact.id }, describedBy: valueId, disabled: busy, title: 'Write the fact in your own words' }),
              fact.pinned
                ? null
                : actionButton({ action: 'pin', label: 'Pin', icon: 'pin', focus: `fact:${fact.id}:pin`, data: { id: fact.id }, describedBy: valueId, disabled: busy, title: 'Keep this fact in every context' }),
              actionButton({ action: 'supersede', label: 'Supersede', icon: 'circle-slash', focus: `fact:${fact.id}:supersede`, data: { id: fact.id }, describedBy: valueId, disabled: busy, title: 'This no longer holds (kept in the history)' }),
              actionButton({ action: 'delete', label: 'Delete', icon: 'trash', kind: 'danger', focus: `fact:${fact.id}:delete`, data: { id: fact.id }, describedBy: valueId, disabled: busy, title: 'Remove from the protected state (kept in the history)' }),
              busy ? h('span', { class: 'busy' }, icon('loading', 'codicon-modifier-spin'), h('span', { class: 'visually-hidden' }, 'Working…')) : null,
            );
      el.replaceChildren(...nodes(
        valueParagraph(fact, valueId),
        h(
          'div',
          { class: 'meta' },
          writerTag(fact),
          tag(`v${fact.version}`, 'version', `Version ${fact.version}`),
          fact.pinned ? iconTag('pinned', 'pinned', 'pinned', 'Pinned by the user: kept in every context') : null,
          sourceButtons(fact.sources, `fact:${fact.id}`),
          historyToggle(fact, ui, historyId),
        ),
        historyList(fact, ui, historyId),
        actions,
        errorLine(fact, ui, errorId),
      ));
    },
  };
}

/** A candidate from tool output or model text, waiting for the user: Confirm / Reject. */
export function pendingRenderer(ui: FactUiState): ItemRenderer<FactView> {
  return {
    key: (fact) => fact.id,
    signature: (fact) => signature(fact, ui),
    searchText,
    fill(el, fact) {
      const valueId = ui.domId(`value:${fact.id}`);
      const busy = ui.busy(fact.id);
      const writer = WRITER_LABEL[fact.writer];
      el.className = `candidate${busy ? ' is-busy' : ''}`;
      if (busy) el.setAttribute('aria-busy', 'true');
      else el.removeAttribute('aria-busy');
      el.replaceChildren(...nodes(
        valueParagraph(fact, valueId),
        h(
          'div',
          { class: 'meta' },
          tag(FACT_TYPE_LABEL[fact.type], `type type-${fact.type}`),
          h('span', { class: 'from' }, icon(writer.icon), writer.from),
          sourceButtons(fact.sources, `fact:${fact.id}`),
        ),
        h(
          'div',
          { class: 'fact-actions', role: 'group', 'aria-label': 'Actions' },
          actionButton({ action: 'confirm', label: 'Confirm', icon: 'check', kind: 'primary', focus: `fact:${fact.id}:confirm`, data: { id: fact.id }, describedBy: valueId, disabled: busy, title: `Keep this ${FACT_TYPE_LABEL[fact.type]} as yours` }),
          actionButton({ action: 'reject', label: 'Reject', icon: 'close', kind: 'secondary', focus: `fact:${fact.id}:reject`, data: { id: fact.id }, describedBy: valueId, disabled: busy, title: 'Not a rule of yours' }),
          busy ? h('span', { class: 'busy' }, icon('loading', 'codicon-modifier-spin'), h('span', { class: 'visually-hidden' }, 'Working…')) : null,
        ),
        errorLine(fact, ui, ui.domId(`error:${fact.id}`)),
      ));
    },
  };
}

/** A superseded or deleted fact, kept for the audit. */
export function pastFactRenderer(ui: FactUiState): ItemRenderer<FactView> {
  return {
    key: (fact) => fact.id,
    signature: (fact) => signature(fact, ui),
    searchText,
    fill(el, fact) {
      const valueId = ui.domId(`value:${fact.id}`);
      const historyId = ui.domId(`history:${fact.id}`);
      el.className = `fact is-past status-${fact.status}`;
      el.replaceChildren(...nodes(
        valueParagraph(fact, valueId),
        h(
          'div',
          { class: 'meta' },
          tag(fact.status, `status status-${fact.status}`),
          tag(FACT_TYPE_LABEL[fact.type], `type type-${fact.type}`),
          writerTag(fact),
          tag(`v${fact.version}`, 'version', `Version ${fact.version}`),
          fact.reason ? h('span', { class: 'muted reason' }, fact.reason) : null,
          sourceButtons(fact.sources, `fact:${fact.id}`),
          historyToggle(fact, ui, historyId),
        ),
        historyList(fact, ui, historyId),
      ));
    },
  };
}
