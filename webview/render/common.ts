/** Pieces several lists share: record source buttons and tags. */
import { h, icon } from '../dom';

/**
 * Record sources as buttons (`r12` opens record 12). A negative source (a
 * version no record established, e.g. written by a user act) is shown, not
 * linked. `focusPrefix` keeps each button's focus key unique in the document.
 */
export function sourceButtons(sources: readonly number[], focusPrefix: string): HTMLElement | null {
  const unique = [...new Set(sources)];
  if (unique.length === 0) return null;
  return h(
    'span',
    { class: 'sources', role: 'group', 'aria-label': unique.length === 1 ? 'Source record' : 'Source records' },
    unique.map((record) =>
      record < 0
        ? h('span', { class: 'source is-none', title: 'Not from a record (a user act)' }, 'no record')
        : h('button', { type: 'button', class: 'source', 'data-action': 'open-record', 'data-record': record, 'data-focus': `${focusPrefix}:r${record}`, 'aria-label': `Open record ${record}`, title: `Open record ${record}` }, `r${record}`),
    ),
  );
}

export function tag(text: string, className: string, title?: string): HTMLSpanElement {
  return h('span', { class: `tag ${className}`, title }, text);
}

export function iconTag(iconName: string, text: string, className: string, title?: string): HTMLSpanElement {
  return h('span', { class: `tag ${className}`, title }, icon(iconName), text);
}

/** A small button with an icon and a label. */
export function actionButton(options: {
  readonly action: string;
  readonly label: string;
  readonly icon: string;
  readonly focus: string;
  readonly kind?: 'primary' | 'secondary' | 'ghost' | 'danger';
  readonly data?: Readonly<Record<string, string>>;
  readonly describedBy?: string;
  readonly disabled?: boolean;
  readonly title?: string;
  readonly ariaLabel?: string;
}): HTMLButtonElement {
  const attrs: Record<string, string | boolean | undefined> = {
    type: 'button',
    class: `btn btn-${options.kind ?? 'ghost'}`,
    'data-action': options.action,
    'data-focus': options.focus,
    'aria-describedby': options.describedBy,
    'aria-disabled': options.disabled ? 'true' : undefined,
    'aria-label': options.ariaLabel,
    title: options.title,
  };
  for (const [k, v] of Object.entries(options.data ?? {})) attrs[`data-${k}`] = v;
  return h('button', attrs, icon(options.icon), h('span', { class: 'btn-label' }, options.label));
}
