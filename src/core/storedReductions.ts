/**
 * The view's reductions in the snapshot store: the forms and floors the
 * engine writes (counted, so that a preflight after none of them has nothing
 * to derive again), and what a preflight reads back — the deepest stored floor
 * that still matches the raw record, with its protected lines re-derived from
 * the raw (drift reset). Both lookups are cached under what they depend on,
 * so a preflight at every turn costs what changed since the last one.
 */
import { unitsBefore } from './artifacts';
import { KeyedMemo, PrefixFold } from './memo';
import type { SessionRecord } from './parts';
import type { Redactor } from './redact';
import { FLOOR_PREFIX, floorKey, parseFloorKey, type ReducedForm, type SnapshotStore } from './store';
import { protectedFromRaw, resetDrift, type ProtectedLines } from './summarizer';
import type { SummaryState } from './summary';

/** A stored floor summary's key and what it covers. */
interface FloorCandidate {
  readonly key: string;
  readonly parsed: { readonly coverageEnd: number; readonly digest: string };
}

/** The floor a preflight restores: units [0, coverageUnit) folded into `summary` (none: nothing folded). */
export interface RestoredFloor {
  readonly coverageUnit: number;
  readonly summary: SummaryState | undefined;
  /** P0 lines of the stored summary that differed from the raw and were reset. */
  readonly drifted: number;
}

/** What a view was derived from: a coverage, its summary, and the writes made until then. */
interface Derivation {
  readonly coverageUnit: number;
  readonly summary: SummaryState | undefined;
  readonly writes: number;
}

export class StoredReductions {
  private readonly floorList: { count: number; seen: Set<string>; list: FloorCandidate[] } = { count: 0, seen: new Set(), list: [] };
  /** A stored summary repaired against the raw, by the summary and the coverage it was checked at. */
  private readonly repaired = new KeyedMemo<{ stored: SummaryState; coverageUnit: number }, SummaryState>((a, b) => a.stored === b.stored && a.coverageUnit === b.coverageUnit);
  /** The raw-derived protected lines: a left fold over the covered units, extended as the coverage grows. */
  private readonly protectedLines: PrefixFold<ProtectedLines>;
  /** Forms and floors written (a preflight after none of them has nothing to re-derive). */
  private writes = 0;
  private derived: Derivation | undefined;

  constructor(
    private readonly record: SessionRecord,
    private readonly snapshots: SnapshotStore,
    private readonly redactor: Redactor,
  ) {
    this.protectedLines = new PrefixFold((lines, from, to) => protectedFromRaw(this.record.units.slice(from, to), redactor, lines, unitsBefore(this.record.units, from)));
  }

  /** Keeps the reduced form of a part. */
  putForm(address: string, form: ReducedForm): void {
    this.writes++;
    this.snapshots.put(address, { type: 'form', form });
  }

  /** Keeps a floor: the summary of records [0, coverageEnd), by their digest. */
  putFloor(coverageEnd: number, digest: string, state: SummaryState): void {
    this.writes++;
    this.snapshots.put(floorKey(coverageEnd, digest), { type: 'floor', floor: { coverageEnd, digest, state } });
  }

  /** The stored reduced form of a part, if any. */
  formOf(address: string): ReducedForm | undefined {
    const entry = this.snapshots.get(address);
    return entry?.type === 'form' ? entry.form : undefined;
  }

  /** The view now is what deriving it for `coverageUnit` and `summary` gives (nothing written since). */
  markDerived(coverageUnit: number, summary: SummaryState | undefined): void {
    this.derived = { coverageUnit, summary, writes: this.writes };
  }

  /** Whether the view last marked was derived for this coverage and summary, with nothing written since. */
  isDerived(coverageUnit: number, summary: SummaryState | undefined): boolean {
    const mark = this.derived;
    return mark !== undefined && mark.coverageUnit === coverageUnit && mark.summary === summary && mark.writes === this.writes;
  }

  /**
   * The longest stored coverage that still matches the raw, with the
   * protected lines of its summary re-derived from the raw record (drift
   * reset). A summary already checked against this same coverage is not
   * checked again (and reports no drift).
   */
  restore(): RestoredFloor {
    const units = this.record.units;
    let coverageUnit = 0;
    let summary: SummaryState | undefined;
    for (const c of this.floorCandidates()) {
      const unitIndex = this.record.unitIndexAtRecord(c.parsed.coverageEnd);
      if (unitIndex >= units.length || units[unitIndex]!.firstRecord !== c.parsed.coverageEnd) continue;
      if (this.record.coverageDigest(unitIndex) !== c.parsed.digest) continue;
      const entry = this.snapshots.get(c.key);
      if (entry?.type !== 'floor') continue;
      coverageUnit = unitIndex;
      summary = entry.floor.state;
      break;
    }
    let drifted = 0;
    if (summary) {
      const stored = summary;
      summary = this.repaired.get({ stored, coverageUnit }, () => {
        const reset = resetDrift(stored, this.protectedLines.upTo(coverageUnit), this.redactor);
        drifted = reset.drifted;
        return reset.state;
      });
    }
    return { coverageUnit, summary, drifted };
  }

  /**
   * The stored floors, deepest coverage first. Floors are content-addressed and
   * never removed while the engine lives, so the sorted list is rebuilt only when
   * one was added: a preflight at every turn does not parse and sort them all again.
   */
  private floorCandidates(): readonly FloorCandidate[] {
    const keys = this.snapshots.keys(FLOOR_PREFIX);
    const known = this.floorList;
    if (known.count !== keys.length) {
      let added = false;
      for (const key of keys) {
        if (known.seen.has(key)) continue;
        known.seen.add(key);
        const parsed = parseFloorKey(key);
        if (parsed) {
          known.list.push({ key, parsed });
          added = true;
        }
      }
      if (added) known.list.sort((a, b) => b.parsed.coverageEnd - a.parsed.coverageEnd || (a.key < b.key ? -1 : 1));
      known.count = keys.length;
    }
    return known.list;
  }
}
