/**
 * Small deterministic SVG charts for the evaluation report: no dependencies,
 * fixed number formatting, a legend, axis labels and a <title> per mark so a
 * screen reader or a hover shows the value.
 */
import { formatCount } from '../core/formatCount';

export const SERIES_COLOURS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#4b5563'];

const WIDTH = 720;
const HEIGHT = 430;
const MARGIN = { left: 70, right: 180, top: 40, bottom: 90 };

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function fmt(n: number): string {
  if (n === 0) return '0';
  if (Math.abs(n) >= 1000) return formatCount(Math.round(n));
  if (Math.abs(n) >= 10) return n.toFixed(0);
  if (Math.abs(n) >= 1) return n.toFixed(2);
  return n.toFixed(3);
}

/** A "nice" upper bound and tick step for an axis from 0 to max. */
export function niceScale(max: number, ticks = 5): { max: number; step: number } {
  if (!(max > 0)) return { max: 1, step: 0.2 };
  const raw = max / ticks;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw)!;
  return { max: Math.ceil(max / step) * step, step };
}

function frame(title: string, xLabel: string, yLabel: string, body: string[], legend: { name: string; colour: string }[]): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${esc(title)}" font-family="system-ui, sans-serif" font-size="12">`,
    `<title>${esc(title)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${MARGIN.left}" y="22" font-size="15" font-weight="600" fill="#111827">${esc(title)}</text>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 14}" text-anchor="middle" fill="#374151">${esc(xLabel)}</text>`,
    `<text transform="translate(16 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle" fill="#374151">${esc(yLabel)}</text>`,
    ...body,
  ];
  legend.forEach((l, i) => {
    const y = MARGIN.top + 10 + i * 20;
    out.push(`<rect x="${WIDTH - MARGIN.right + 16}" y="${y - 9}" width="12" height="12" fill="${l.colour}"/>`);
    out.push(`<text x="${WIDTH - MARGIN.right + 34}" y="${y + 1}" fill="#111827">${esc(l.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}

function yAxis(maxY: number, step: number, format: (n: number) => string = fmt): string[] {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const out: string[] = [];
  for (let v = 0; v <= maxY + 1e-9; v += step) {
    const y = MARGIN.top + plotH - (v / maxY) * plotH;
    out.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="#e5e7eb"/>`);
    out.push(`<text x="${MARGIN.left - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end" fill="#4b5563">${esc(format(v))}</text>`);
  }
  out.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="#9ca3af"/>`);
  out.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH}" stroke="#9ca3af"/>`);
  return out;
}

export interface ScatterSeries {
  readonly name: string;
  readonly points: readonly { x: number; y: number; label: string }[];
}

/** Points per series (e.g. recall vs projected tokens, one point per window). Consecutive points are joined. */
export function scatterChart(title: string, xLabel: string, yLabel: string, series: readonly ScatterSeries[], yMax?: number): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const xs = niceScale(Math.max(...series.flatMap((s) => s.points.map((p) => p.x)), 1));
  const ys = yMax !== undefined ? { max: yMax, step: yMax / 5 } : niceScale(Math.max(...series.flatMap((s) => s.points.map((p) => p.y)), 1e-9));
  const body = yAxis(ys.max, ys.step, (v) => (yMax === 1 ? `${Math.round(v * 100)}%` : fmt(v)));
  for (let v = 0; v <= xs.max + 1e-9; v += xs.step) {
    const x = MARGIN.left + (v / xs.max) * plotW;
    body.push(`<text x="${x.toFixed(1)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle" fill="#4b5563">${esc(fmt(v))}</text>`);
  }
  series.forEach((s, i) => {
    const colour = SERIES_COLOURS[i % SERIES_COLOURS.length]!;
    const pts = s.points.map((p) => ({ ...p, px: MARGIN.left + (p.x / xs.max) * plotW, py: MARGIN.top + plotH - (p.y / ys.max) * plotH }));
    if (pts.length > 1) body.push(`<polyline fill="none" stroke="${colour}" stroke-width="1.5" stroke-opacity="0.6" points="${pts.map((p) => `${p.px.toFixed(1)},${p.py.toFixed(1)}`).join(' ')}"/>`);
    for (const p of pts) {
      body.push(`<circle cx="${p.px.toFixed(1)}" cy="${p.py.toFixed(1)}" r="4.5" fill="${colour}"><title>${esc(`${s.name} ${p.label}: ${fmt(p.x)}, ${fmt(p.y)}`)}</title></circle>`);
    }
  });
  return frame(title, xLabel, yLabel, body, series.map((s, i) => ({ name: s.name, colour: SERIES_COLOURS[i % SERIES_COLOURS.length]! })));
}

/** Grouped bars: one group per category, one bar per series. */
export function groupedBarChart(title: string, yLabel: string, categories: readonly string[], series: readonly { name: string; values: readonly number[] }[]): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const ys = niceScale(Math.max(...series.flatMap((s) => s.values), 1e-9));
  const body = yAxis(ys.max, ys.step);
  const group = plotW / Math.max(1, categories.length);
  const bar = (group * 0.8) / Math.max(1, series.length);
  categories.forEach((c, ci) => {
    const gx = MARGIN.left + ci * group + group * 0.1;
    series.forEach((s, si) => {
      const v = s.values[ci] ?? 0;
      const h = (v / ys.max) * plotH;
      body.push(
        `<rect x="${(gx + si * bar).toFixed(1)}" y="${(MARGIN.top + plotH - h).toFixed(1)}" width="${Math.max(1, bar - 1).toFixed(1)}" height="${h.toFixed(1)}" fill="${SERIES_COLOURS[si % SERIES_COLOURS.length]}"><title>${esc(`${c} — ${s.name}: ${fmt(v)}`)}</title></rect>`,
      );
    });
    body.push(`<text transform="translate(${(gx + group * 0.4).toFixed(1)} ${MARGIN.top + plotH + 12}) rotate(30)" font-size="10" fill="#4b5563">${esc(c)}</text>`);
  });
  return frame(title, '', yLabel, body, series.map((s, i) => ({ name: s.name, colour: SERIES_COLOURS[i % SERIES_COLOURS.length]! })));
}

/** Lines over a shared x index (e.g. cumulative cost after each model call). */
export function lineChart(title: string, xLabel: string, yLabel: string, series: readonly { name: string; values: readonly number[] }[]): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const n = Math.max(2, ...series.map((s) => s.values.length));
  const ys = niceScale(Math.max(...series.flatMap((s) => s.values), 1e-9));
  const xs = niceScale(n - 1);
  const body = yAxis(ys.max, ys.step);
  for (let v = 0; v <= xs.max + 1e-9; v += xs.step) {
    const x = MARGIN.left + (v / xs.max) * plotW;
    body.push(`<text x="${x.toFixed(1)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle" fill="#4b5563">${esc(fmt(v))}</text>`);
  }
  series.forEach((s, i) => {
    const points = s.values.map((v, k) => `${(MARGIN.left + (k / xs.max) * plotW).toFixed(1)},${(MARGIN.top + plotH - (v / ys.max) * plotH).toFixed(1)}`);
    body.push(`<polyline fill="none" stroke="${SERIES_COLOURS[i % SERIES_COLOURS.length]}" stroke-width="2" points="${points.join(' ')}"><title>${esc(`${s.name}: ${fmt(s.values[s.values.length - 1] ?? 0)} at the end`)}</title></polyline>`);
  });
  return frame(title, xLabel, yLabel, body, series.map((s, i) => ({ name: s.name, colour: SERIES_COLOURS[i % SERIES_COLOURS.length]! })));
}
