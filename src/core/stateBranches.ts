/**
 * Branches of the protected state: a session forked from a snapshot of another
 * keeps its own increments, and two branches of one base are joined by source,
 * version and explicit rules (see mergeStates).
 */
import { ProtectedState, type Fact } from './state';

export interface MergeConflict {
  readonly factId: string;
  readonly ours: Fact;
  readonly theirs: Fact;
  readonly rule: string;
}

/** Rank of a writer when two branches changed the same fact: the user's word outranks the rest. */
const WRITER_RANK: Record<Fact['writer'], number> = { user: 3, policy: 2, tool: 1, model: 0 };

/**
 * A branch: a session forked from a snapshot of another keeps its own
 * increments. `fork` copies the state; `mergeStates` joins two branches of one
 * base by source, version and explicit rules, never by which finished last:
 * - a fact changed in one branch only takes that branch's version;
 * - changed in both the same way: taken once;
 * - changed in both differently: the higher-ranked writer wins (user > policy >
 *   tool > model); between equal writers nothing wins silently — the base
 *   version stays and the conflict is returned for the user to settle;
 * - facts new in either branch are added (order: base, then by first source).
 * The result does not depend on the order of the two branches.
 */
export function fork(state: ProtectedState): ProtectedState {
  const copy = new ProtectedState(state.redactor);
  copy.restore(state.audit());
  return copy;
}

export function mergeStates(base: ProtectedState, a: ProtectedState, b: ProtectedState): { state: ProtectedState; conflicts: MergeConflict[] } {
  const baseFacts = new Map(base.facts().map((f) => [f.id, f]));
  const ids = [...new Set([...baseFacts.keys(), ...a.facts().map((f) => f.id), ...b.facts().map((f) => f.id)])];
  const conflicts: MergeConflict[] = [];
  const chosen: Fact[] = [];
  const same = (x: Fact, y: Fact): boolean => x.value === y.value && x.status === y.status && x.pinned === y.pinned;
  for (const id of ids) {
    const o = baseFacts.get(id);
    const x = a.get(id);
    const y = b.get(id);
    const changedX = x !== undefined && (!o || !same(o, x));
    const changedY = y !== undefined && (!o || !same(o, y));
    if (changedX && changedY && !same(x!, y!)) {
      const rx = WRITER_RANK[x!.writer];
      const ry = WRITER_RANK[y!.writer];
      if (rx !== ry) chosen.push(rx > ry ? x! : y!);
      else {
        const [first, second] = x!.version <= y!.version ? [x!, y!] : [y!, x!];
        conflicts.push({ factId: id, ours: first, theirs: second, rule: `both branches changed it as ${x!.writer}: the user decides` });
        chosen.push(o ?? first);
      }
    } else if (changedX) chosen.push(x!);
    else if (changedY) chosen.push(y!);
    else if (o) chosen.push(o);
  }
  chosen.sort((p, q) => {
    const inBase = Number(baseFacts.has(q.id)) - Number(baseFacts.has(p.id));
    return inBase || Math.min(...p.sources) - Math.min(...q.sources) || (p.id < q.id ? -1 : p.id > q.id ? 1 : 0);
  });
  const merged = new ProtectedState(base.redactor);
  merged.restore(chosen);
  return { state: merged, conflicts };
}
