/**
 * Drift between two summaries of the same span: the one a session built fold
 * by fold and one rebuilt from the raw record in a single pass. Used by the
 * CLI's `rebuild` and the extension's force-rebuild command.
 */
import type { CompactionSession } from './session';
import { ExtractiveSummarizer } from './summarizer';
import { summaryToJson, type SummaryState } from './summary';
import type { TokenCounter } from './tokens';

export interface SummaryDrift {
  /** The request log and the P0 (safety) constraints are the same in both. */
  readonly protectedIdentical: boolean;
  readonly sections: Record<string, { shared: number; onlyCurrent: string[]; onlyRebuilt: string[] }>;
}

/** Per section: lines shared by two summaries, and those only one of them has. */
export function summaryDiff(current: SummaryState, rebuilt: SummaryState): SummaryDrift {
  const lines = (s: SummaryState): Record<string, string[]> => {
    const json = summaryToJson(s);
    return Object.fromEntries(Object.entries(json).map(([k, v]) => [k, Array.isArray(v) ? v : [v]]));
  };
  const a = lines(current);
  const b = lines(rebuilt);
  const sections: Record<string, { shared: number; onlyCurrent: string[]; onlyRebuilt: string[] }> = {};
  for (const key of Object.keys(a)) {
    const x = new Set(a[key]);
    const y = new Set(b[key] ?? []);
    sections[key] = { shared: [...x].filter((l) => y.has(l)).length, onlyCurrent: [...x].filter((l) => !y.has(l)), onlyRebuilt: [...y].filter((l) => !x.has(l)) };
  }
  const safety = (s: SummaryState): string => s.facts.Constraints.filter((l) => l.priority === 0).map((l) => l.text).sort().join('\n');
  const protectedIdentical = JSON.stringify(a.Requests) === JSON.stringify(b.Requests) && safety(current) === safety(rebuilt);
  return { protectedIdentical, sections };
}


/**
 * The drift report, verdict first: how many lines differ and in which
 * sections, whether the request log and the safety rules are affected; then
 * each differing section's lines ("-" only in the current summary, "+" only in
 * the rebuild). Sections that agree are named on one line.
 */
export function formatDrift(current: SummaryState, drift: SummaryDrift): string[] {
  const differing = Object.entries(drift.sections).filter(([, d]) => d.onlyCurrent.length + d.onlyRebuilt.length > 0);
  const count = differing.reduce((n, [, d]) => n + d.onlyCurrent.length + d.onlyRebuilt.length, 0);
  const span = `records r0–r${current.coverageEnd - 1} (${current.folds} ${current.folds === 1 ? 'fold' : 'folds'})`;
  const rules = drift.protectedIdentical ? 'the request log and the safety rules are identical' : 'the request log or the safety rules DIFFER — the rebuild is what the record says';
  const out = [
    count > 0
      ? `${count} ${count === 1 ? 'line differs' : 'lines differ'} from a rebuild of ${span} from the raw record, in ${differing.map(([section]) => section).join(', ')}; ${rules}.`
      : drift.protectedIdentical
        ? `No drift: the summary of ${span} says what one rebuilt from the raw record says; ${rules}.`
        : `The summary of ${span} holds the same lines as a rebuild from the raw record, but ${rules}.`,
  ];
  for (const [section, d] of differing) {
    out.push(`${section} (${d.shared} shared):`);
    for (const l of d.onlyCurrent) out.push(`  - ${l}`);
    for (const l of d.onlyRebuilt) out.push(`  + ${l}`);
  }
  const agreeing = Object.entries(drift.sections).filter(([, d]) => d.onlyCurrent.length + d.onlyRebuilt.length === 0 && d.shared > 0);
  if (count > 0 && agreeing.length) out.push(`The same in both: ${agreeing.map(([section, d]) => `${section} (${d.shared})`).join(', ')}.`);
  if (count > 0) out.push('"-" only in the current summary, "+" only in the rebuild.');
  return out;
}

/**
 * The session's current summary against one rebuilt from the raw record in a
 * single deterministic pass over the same folded span; undefined when nothing
 * is folded yet.
 */
export function rebuildDrift(session: CompactionSession, counter: TokenCounter): { current: SummaryState; rebuilt: SummaryState; drift: SummaryDrift } | undefined {
  const engine = session.engine;
  const current = engine.currentSummary;
  if (!current) return undefined;
  const units = session.record.units.slice(0, engine.firstUnitInView);
  const rebuilt = new ExtractiveSummarizer(counter, session.redactor).foldSync({ previous: undefined, units, coverageEnd: current.coverageEnd });
  return { current, rebuilt, drift: summaryDiff(current, rebuilt) };
}
