/** Wording and number formats the panel shares. */
import type { FactView, NotLoadedView, SECTION_ORDER, SummaryLineView } from '../src/protocol/messages';

/** `SECTION_ORDER` of the protocol, repeated here (a value import would bundle zod); the type keeps them equal. */
export const SECTIONS: typeof SECTION_ORDER = ['Requests', 'Deliverables', 'Decisions', 'Constraints', 'Ruled out', 'Findings', 'Archived', 'Current state'];

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** 12,345 */
export function formatTokens(n: number): string {
  return integer.format(n);
}

/** 12.3k, 1.2M: for labels inside the gauge. */
export function formatCompact(n: number): string {
  if (n >= 1_000_000) return `${trimZero((n / 1_000_000).toFixed(1))}M`;
  if (n >= 100_000) return `${Math.round(n / 1000)}k`;
  if (n >= 1000) return `${trimZero((n / 1000).toFixed(1))}k`;
  return String(n);
}

function trimZero(s: string): string {
  return s.endsWith('.0') ? s.slice(0, -2) : s;
}

export function percent(part: number, whole: number): string {
  if (whole <= 0) return '0%';
  const p = (part / whole) * 100;
  return `${p < 10 && p > 0 ? p.toFixed(1).replace(/\.0$/, '') : Math.round(p)}%`;
}

/** A change against a whole, with its own sign: "−12%", "+2%", "0%" (never "−-2%"). */
export function signedChange(change: number, whole: number): string {
  if (whole <= 0 || change === 0) return '0%';
  return `${change < 0 ? '−' : '+'}${percent(Math.abs(change), whole)}`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatTokens(n)} ${n === 1 ? one : many}`;
}

/** Steps as ranges: [3,4,5,9] → "3–5, 9". */
export function formatRanges(values: readonly number[]): string {
  const sorted = [...new Set(values)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j === i ? String(sorted[i]) : `${sorted[i]}–${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}

export const PRIORITY_LABEL: Readonly<Record<SummaryLineView['priority'], { short: string; long: string }>> = {
  0: { short: 'P0 · never demoted', long: 'Priority 0: the user\'s words, never demoted' },
  1: { short: 'P1', long: 'Priority 1: kept until the lower priorities are archived' },
  2: { short: 'P2', long: 'Priority 2: demoted to Archived when the summary is over its cap' },
  3: { short: 'P3 · first to archive', long: 'Priority 3: the first to go to Archived' },
};

export const CONFIDENCE_LABEL: Readonly<Record<SummaryLineView['confidence'], { short: string; long: string }>> = {
  verbatim: { short: 'verbatim', long: 'The user\'s words, kept verbatim' },
  extracted: { short: 'extracted', long: 'Extracted by rule from the record' },
  model: { short: 'model', long: 'Written by a model' },
};

/** The groups of protected facts, in display order. */
export const FACT_GROUPS: readonly { readonly type: FactView['type']; readonly title: string; readonly icon: string }[] = [
  { type: 'goal', title: 'Goals', icon: 'target' },
  { type: 'constraint', title: 'Constraints', icon: 'law' },
  { type: 'permission', title: 'Permissions', icon: 'unlock' },
  { type: 'decision', title: 'Decisions', icon: 'milestone' },
  { type: 'open_issue', title: 'Open issues', icon: 'issues' },
  { type: 'completed_effect', title: 'Completed effects', icon: 'pass' },
  { type: 'preference', title: 'Preferences', icon: 'heart' },
  { type: 'evidence_ref', title: 'Evidence references', icon: 'references' },
];

export const FACT_TYPE_LABEL: Readonly<Record<FactView['type'], string>> = {
  goal: 'goal',
  constraint: 'constraint',
  permission: 'permission',
  decision: 'decision',
  open_issue: 'open issue',
  completed_effect: 'completed effect',
  preference: 'preference',
  evidence_ref: 'evidence reference',
};

export const WRITER_LABEL: Readonly<Record<FactView['writer'], { label: string; from: string; icon: string }>> = {
  user: { label: 'user', from: 'from your message', icon: 'account' },
  model: { label: 'model', from: 'from model text', icon: 'sparkle' },
  tool: { label: 'tool', from: 'from tool output', icon: 'tools' },
  policy: { label: 'policy', from: 'from policy', icon: 'shield' },
};

export const HOW_LABEL: Readonly<Record<NotLoadedView['how'], { label: string; icon: string; long: string }>> = {
  shrunk: { label: 'shrunk', icon: 'fold', long: 'shortened to head and tail' },
  dropped: { label: 'dropped', icon: 'circle-slash', long: 'left out' },
  folded: { label: 'folded', icon: 'fold-up', long: 'folded into the summary' },
};

export const KIND_LABEL: Readonly<Record<NotLoadedView['kind'], string>> = {
  tool: 'tool call',
  text: 'text',
  reasoning: 'reasoning',
  span: 'records',
};

export const TIER_LABEL: Readonly<Record<number, string>> = {
  1: 'shrink old tools',
  2: 'fold into summary',
  3: 'breakthrough shrink',
  4: 'breakthrough fold',
};
