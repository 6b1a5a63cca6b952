/**
 * The loss ledger: at every compaction boundary, each critical item before vs
 * after — retained, superseded or omitted — and every unsupported (unsourced)
 * assertion of the summary. An omitted critical item or an unsupported line is
 * a defect the engine reports.
 */
import type { ProjectedMessage } from './engine';
import type { Fact, ProtectedState } from './state';
import { ADDED_HEADING, elidedRequestRecords, FACT_SECTIONS, type SummaryState } from './summary';

export type Disposition = 'retained' | 'superseded' | 'omitted' | 'unsupported';

export interface LedgerEntry {
  readonly atRecord: number;
  readonly item: string;
  readonly type: string;
  readonly disposition: Disposition;
  /** The rule that allowed the disposition, or the defect it is. */
  readonly rule: string;
}

export interface LedgerCounts {
  readonly atRecord: number;
  readonly retained: number;
  readonly superseded: number;
  readonly omitted: number;
  readonly unsupported: number;
  /** Goals of requests the head elides on purpose (a session of hundreds of turns): in the record, one line points to them. */
  readonly elided?: number;
}

const CRITICAL: ReadonlySet<Fact['type']> = new Set(['goal', 'constraint', 'permission', 'open_issue', 'decision']);

function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim().toLowerCase();
}

/** The head's request entries (`- #n (rN): …`, or appended `- [Request] #n (rN): …`; a multi-line ask whole), normalised, by their record. */
function requestEntries(head: string): Map<number, string> {
  const out = new Map<number, string>();
  const read = (section: string, entryStart: RegExp, entry: RegExp): void => {
    const at = head.indexOf(`${section}\n`);
    if (at < 0) return;
    const end = head.indexOf('\n### ', at + section.length);
    for (const text of head.slice(at + section.length + 1, end < 0 ? undefined : end).split(entryStart)) {
      const m = entry.exec(text);
      if (m) out.set(Number(m[1]), normalise(text));
    }
  };
  read('### Requests', /\n(?=- #\d+ \(r\d+\): )/, /^- #\d+ \(r(\d+)\): /);
  // A fold that appends its delta adds its asks below the sections (`- [Request] #n (rN): …`).
  read(ADDED_HEADING, /\n(?=- )/, /^- \[Request\] #\d+ \(r(\d+)\): /);
  return out;
}

/** A fact's value as the ledger searches for it, computed once per fact version (a boundary checks every fact). */
const normalisedValues = new WeakMap<Fact, string>();
function normalisedValue(fact: Fact): string {
  let value = normalisedValues.get(fact);
  if (value === undefined) {
    // A long goal carries a pointer to the rest of its ask; its verbatim part is what must be there.
    value = normalise(fact.value.replace(/ \[…\d+ more chars in r\d+\]$/, ''));
    normalisedValues.set(fact, value);
  }
  return value;
}

/**
 * Checks one compaction boundary: every critical fact the user or the session
 * established must still be in the context word for word (or be superseded by
 * a later version); every summary line must name its source.
 */
export function checkBoundary(
  atRecord: number,
  state: ProtectedState,
  messages: readonly ProjectedMessage[],
  summary: SummaryState | undefined,
  coverageEnd: number,
): { entries: LedgerEntry[]; counts: LedgerCounts } {
  // A folded fact is searched in the head first (where the summary and the protected block carry it);
  // the whole context is joined and normalised only for a fact the head does not hold.
  const head = normalise(messages[0]?.content ?? '');
  let whole: string | undefined;
  const inContext = (value: string): boolean => head.includes(value) || (whole ??= normalise(messages.map((m) => m.content).join('\n'))).includes(value);
  // A goal is looked for first in the head's entry of its own request (a long head searched once per goal is
  // what made a boundary cost more as the request log grew).
  const requests = requestEntries(messages[0]?.content ?? '');
  const entries: LedgerEntry[] = [];
  let retained = 0;
  let superseded = 0;
  let elided = 0;
  const elidedRequests = elidedRequestRecords(summary);
  for (const fact of state.facts()) {
    if (!CRITICAL.has(fact.type)) continue;
    if (fact.type === 'goal' && elidedRequests.size > 0 && fact.sources.every((s) => elidedRequests.has(s))) {
      elided++;
      continue;
    }
    if (fact.status === 'superseded' || fact.status === 'deleted') {
      superseded++;
      continue;
    }
    if (fact.status === 'pending') continue;
    // Retained: word for word in the context, or its source record is still in view as it was written.
    if (fact.sources.some((s) => s >= coverageEnd)) {
      retained++;
      continue;
    }
    const entry = fact.sources.length === 1 ? requests.get(fact.sources[0]!) : undefined;
    // A goal is its request's ask: the request log's line for that record carries it (more fully: the goal leaves
    // out what the user quoted or pasted, the line shows it).
    if (fact.type === 'goal' && entry !== undefined) {
      retained++;
      continue;
    }
    const value = normalisedValue(fact);
    if (entry?.includes(value) || inContext(value)) retained++;
    else entries.push({ atRecord, item: fact.value, type: fact.type, disposition: 'omitted', rule: `defect: an active ${fact.type} is missing from the context` });
  }
  let unsupported = 0;
  for (const section of FACT_SECTIONS) {
    for (const line of summary?.facts[section] ?? []) {
      if (line.sources.length > 0) continue;
      unsupported++;
      entries.push({ atRecord, item: `${line.key}: ${line.text}`, type: section, disposition: 'unsupported', rule: 'defect: a summary line with no source record' });
    }
  }
  const omitted = entries.filter((e) => e.disposition === 'omitted').length;
  return { entries, counts: { atRecord, retained, superseded, omitted, unsupported, ...(elided ? { elided } : {}) } };
}
