/**
 * The budget gauge: an inline SVG of the context window with the effective
 * window, the trigger and stop lines, the current size as a stacked bar of its
 * blocks; a legend with the numbers; and, for screen readers, a label that says
 * it all plus a visually hidden table.
 */
import type { BudgetView } from '../../src/protocol/messages';
import { h, s } from '../dom';
import { formatCompact, formatTokens, percent } from '../format';

type BlockKey = keyof BudgetView['blocks'];

export const BLOCKS: readonly { readonly key: BlockKey; readonly label: string }[] = [
  { key: 'overhead', label: 'Overhead' },
  { key: 'protectedState', label: 'Protected state' },
  { key: 'summary', label: 'Summary' },
  { key: 'retrieved', label: 'Retrieved' },
  { key: 'evidence', label: 'Evidence' },
  { key: 'rawTail', label: 'Raw tail' },
];

/**
 * Width of the drawing when the panel's is not known (not laid out yet). The
 * panel draws it at its own width in pixels, so a label's 11 px are 11 px at
 * sidebar width too (a fixed drawing scaled down to 260 px made them 7 px).
 */
export const GAUGE_DEFAULT_WIDTH = 360;
/** The narrowest drawing: below it the labels are stacked on more rows rather than shrunk. */
const MIN_WIDTH = 180;
const BAR_TOP = 17;
const BAR_HEIGHT = 18;
const ROW_HEIGHT = 12;
/** Average width of a label character at font-size 11 (styles.css `.gauge .label`), for collision checks. */
const CHAR_WIDTH = 6;

export type BudgetLevel = 'ok' | 'near' | 'over-trigger' | 'over-window';

export function budgetLevel(b: BudgetView): BudgetLevel {
  if (b.current >= b.effective) return 'over-window';
  if (b.current >= b.trigger) return 'over-trigger';
  if (b.current >= b.stop) return 'near';
  return 'ok';
}

const LEVEL_TEXT: Readonly<Record<BudgetLevel, string>> = {
  ok: 'below stop',
  near: 'between stop and trigger',
  'over-trigger': 'over the trigger: compacts before the next call',
  'over-window': 'over the effective window',
};

const LEVEL_SHORT: Readonly<Record<BudgetLevel, string>> = {
  ok: 'below stop',
  near: 'below trigger',
  'over-trigger': 'over trigger',
  'over-window': 'over window',
};

/** The sentence the gauge's `aria-label` carries. */
export function budgetSummary(b: BudgetView): string {
  const blocks = BLOCKS.map(({ key, label }) => `${label.toLowerCase()} ${formatTokens(b.blocks[key])}`).join('; ');
  return (
    `Context budget: ${formatTokens(b.current)} of ${formatTokens(b.effective)} effective tokens (${percent(b.current, b.effective)}), ${LEVEL_TEXT[budgetLevel(b)]}; ` +
    `window ${formatTokens(b.window)}; trigger ${formatTokens(b.trigger)}; stop ${formatTokens(b.stop)}. Blocks: ${blocks}.`
  );
}

interface Label {
  /** Where the label's line is. */
  readonly x: number;
  readonly text: string;
  readonly className: string;
  /** Beside its line (left or right of it, so the line never crosses the text) or centred under it. */
  readonly side: 'left' | 'right' | 'centre';
  /** The first row it may take (the current size is labelled under the bar). */
  readonly minRow?: number;
}

interface Placed extends Label {
  readonly row: number;
  readonly left: number;
  readonly right: number;
  /** Where the text is anchored (exact whatever the font's real widths). */
  readonly anchor: 'start' | 'middle' | 'end';
  readonly at: number;
}

/** Gap between a line and the label beside it. */
const BESIDE = 3;

/**
 * Places labels on rows (0 above the bar, 1 and 2 below) so none overlap: each
 * sits on its preferred side of its line, is kept inside the drawing, and moves
 * to the next row when it would cover a label placed before it.
 */
function placeLabels(labels: readonly Label[], W: number): Placed[] {
  const placed: Placed[] = [];
  for (const label of labels) {
    const width = label.text.length * CHAR_WIDTH;
    const wanted = label.side === 'left' ? label.x - BESIDE - width : label.side === 'right' ? label.x + BESIDE : label.x - width / 2;
    const left = Math.max(0, Math.min(W - width, wanted));
    const right = left + width;
    let anchor: Placed['anchor'];
    let at: number;
    if (left > wanted) [anchor, at] = ['start', 0];
    else if (left < wanted) [anchor, at] = ['end', W];
    else if (label.side === 'left') [anchor, at] = ['end', label.x - BESIDE];
    else if (label.side === 'right') [anchor, at] = ['start', label.x + BESIDE];
    else [anchor, at] = ['middle', label.x];
    let row = label.minRow ?? 0;
    while (placed.some((p) => p.row === row && p.left < right + 6 && left < p.right + 6)) row++;
    placed.push({ ...label, row, left, right, anchor, at });
  }
  return placed;
}

function rowBaseline(row: number): number {
  return row === 0 ? BAR_TOP - 5 : BAR_TOP + BAR_HEIGHT + 4 + row * ROW_HEIGHT - 2;
}

function gaugeSvg(b: BudgetView, width: number): SVGSVGElement {
  const W = Math.max(MIN_WIDTH, Math.round(width));
  const max = Math.max(b.window, b.current, 1);
  const x = (tokens: number): number => Math.min(W, (tokens / max) * W);
  const xEff = x(b.effective);

  const labels = placeLabels([
    { x: x(b.current), text: `now ${formatCompact(b.current)}`, className: 'label-current', side: 'centre', minRow: 1 },
    { x: x(b.stop), text: `stop ${formatCompact(b.stop)}`, className: 'label-stop', side: 'left' },
    { x: x(b.trigger), text: `trigger ${formatCompact(b.trigger)}`, className: 'label-trigger', side: 'right' },
    { x: x(b.window), text: `window ${formatCompact(b.window)}`, className: 'label-window', side: 'left' },
    { x: xEff, text: `effective ${formatCompact(b.effective)}`, className: 'label-effective', side: 'left' },
  ], W);
  const rows = Math.max(1, ...labels.map((l) => l.row));
  const height = rowBaseline(rows) + 4;

  const segments: SVGElement[] = [];
  let at = 0;
  for (const { key } of BLOCKS) {
    const width = x(b.blocks[key]);
    if (width <= 0) continue;
    segments.push(s('rect', { class: `block block-${key}`, x: at.toFixed(2), y: BAR_TOP, width: Math.max(0.5, Math.min(width, W - at)).toFixed(2), height: BAR_HEIGHT }));
    at += width;
  }

  // A line reaches its label's row: beside the text, or up to it when the label is centred under it.
  const line = (label: Placed, className: string): SVGElement => {
    const lx = Math.max(0.75, Math.min(W - 0.75, label.x));
    const top = label.row === 0 ? rowBaseline(0) - 8 : BAR_TOP;
    const bottom = label.row === 0 ? BAR_TOP + BAR_HEIGHT : label.side === 'centre' ? rowBaseline(label.row) - 9 : rowBaseline(label.row) + 1;
    return s('line', { class: `marker ${className}`, x1: lx.toFixed(2), x2: lx.toFixed(2), y1: top, y2: bottom });
  };
  const byClass = (className: string): Placed => labels.find((l) => l.className === className)!;

  return s(
    'svg',
    { class: 'gauge', viewBox: `0 0 ${W} ${height}`, role: 'img', 'aria-label': budgetSummary(b), preserveAspectRatio: 'xMidYMid meet' },
    s('defs', null, s('pattern', { id: 'reserve-hatch', width: 4, height: 4, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' }, s('line', { class: 'hatch', x1: 0, y1: 0, x2: 0, y2: 4 }))),
    s('rect', { class: 'track', x: 0, y: BAR_TOP, width: xEff.toFixed(2), height: BAR_HEIGHT }),
    xEff < W ? s('rect', { class: 'reserve', x: xEff.toFixed(2), y: BAR_TOP, width: (x(b.window) - xEff).toFixed(2), height: BAR_HEIGHT }) : null,
    segments,
    s('rect', { class: 'frame', x: 0.5, y: BAR_TOP + 0.5, width: W - 1, height: BAR_HEIGHT - 1 }),
    line(byClass('label-stop'), 'marker-stop'),
    line(byClass('label-trigger'), 'marker-trigger'),
    line(byClass('label-effective'), 'marker-effective'),
    line(byClass('label-current'), 'marker-current'),
    labels.map((l) => s('text', { class: `label ${l.className}`, x: l.at.toFixed(2), y: rowBaseline(l.row), 'text-anchor': l.anchor }, l.text)),
  );
}

/** The legend (seen) and the table (heard): the same numbers. */
function legend(b: BudgetView): HTMLElement {
  return h(
    'ul',
    { class: 'legend', 'aria-hidden': 'true' },
    BLOCKS.map(({ key, label }) =>
      h(
        'li',
        { class: b.blocks[key] === 0 ? 'is-zero' : null },
        h('span', { class: `swatch block-${key}` }),
        h('span', { class: 'legend-label' }, label),
        h('span', { class: 'legend-tokens' }, formatTokens(b.blocks[key])),
        h('span', { class: 'legend-share' }, percent(b.blocks[key], b.current)),
      ),
    ),
  );
}

function table(b: BudgetView): HTMLElement {
  const row = (name: string, tokens: number, share?: string): HTMLElement => h('tr', null, h('th', { scope: 'row' }, name), h('td', null, formatTokens(tokens)), h('td', null, share ?? ''));
  // Hidden by its wrapper: a table keeps its content's width whatever its own, and would widen the panel.
  return h(
    'div',
    { class: 'visually-hidden' },
    h(
      'table',
      null,
      h('caption', null, 'Context budget in tokens'),
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Measure'), h('th', { scope: 'col' }, 'Tokens'), h('th', { scope: 'col' }, 'Share of current'))),
      h(
        'tbody',
        null,
        row('Window', b.window),
        row('Effective window', b.effective),
        row('Trigger', b.trigger),
        row('Stop', b.stop),
        row('Current', b.current, percent(b.current, b.effective) + ' of effective'),
        BLOCKS.map(({ key, label }) => row(label, b.blocks[key], percent(b.blocks[key], b.current))),
      ),
    ),
  );
}

/** The budget region; `width` is the gauge's width in pixels (the region's), when known. */
export function renderBudget(b: BudgetView | null, width = GAUGE_DEFAULT_WIDTH): Node[] {
  if (!b) return [h('p', { class: 'empty-note' }, 'No context has been sent yet.')];
  const level = budgetLevel(b);
  const headroom = b.trigger - b.current;
  return [
    h(
      'div',
      { class: `budget-headline level-${level}` },
      h('span', { class: 'budget-current' }, formatTokens(b.current)),
      h('span', { class: 'budget-of' }, ` / ${formatTokens(b.effective)} tokens`),
      h('span', { class: `budget-level level-${level}` }, LEVEL_SHORT[level]),
    ),
    h(
      'p',
      { class: 'budget-sub muted' },
      headroom > 0 ? `${formatTokens(headroom)} tokens until compaction · ` : `${LEVEL_TEXT[level]} · `,
      `window ${formatTokens(b.window)} − reserve ${formatTokens(b.window - b.effective)}`,
    ),
    gaugeSvg(b, width),
    legend(b),
    table(b),
  ];
}
