/**
 * The snapshot store and the tool-compaction store: the two append-only,
 * content-addressed projection stores beside the raw record.
 *
 * The core defines the ports; this file also ships the in-memory
 * implementation used by the CLI, tests and isolated runs. A persistent
 * implementation (sql.js) lives outside the core and honours the same rules:
 * upsert by key, monotonic (a form may escalate shrunk → dropped, never back),
 * floors write-once.
 */
import type { Fact } from './state';
import type { SummaryState } from './summary';

/** A reduced form of one tool part, as applied to the projection. */
export interface ReducedForm {
  readonly how: 'shrunk' | 'dropped';
  readonly input: string;
  readonly output: string;
  /** How the model recovers the original (`view_tool_call("…")`); undefined for a drop. */
  readonly recover: string | undefined;
}

/** A floor summary, keyed by the coverage it folds: records [0, coverageEnd). */
export interface FloorEntry {
  readonly coverageEnd: number;
  /** Rolling digest of the addresses of every covered unit: the content address of the coverage. */
  readonly digest: string;
  readonly state: SummaryState;
}

/** The calibration anchor: the last real prompt size and our estimate of that same view. */
export interface Anchor {
  readonly real: number;
  readonly estimate: number;
}

/**
 * The anti-thrash gate of the current turn. Not a compaction decision: a
 * counter that must survive a crash in the middle of a turn, or a resumed run
 * would retry compactions the original run had given up on.
 */
export interface Gate {
  readonly turnRecord: number;
  readonly ineffective: number;
  readonly held: boolean;
}

export type SnapshotEntry =
  | { readonly type: 'form'; readonly form: ReducedForm }
  | { readonly type: 'floor'; readonly floor: FloorEntry }
  | { readonly type: 'plan'; readonly plan: FoldPlan }
  | { readonly type: 'prefloor'; readonly state: SummaryState }
  | { readonly type: 'anchor'; readonly anchor: Anchor }
  | { readonly type: 'gate'; readonly gate: Gate }
  | { readonly type: 'retrieval'; readonly retrieval: { readonly coverageEnd: number; readonly queryRecord: number } }
  | { readonly type: 'stateEvent'; readonly event: StateEvent }
  | { readonly type: 'fact'; readonly fact: Fact }
  | { readonly type: 'milestone'; readonly milestone: MilestoneSnapshot }
  | { readonly type: 'log'; readonly compaction: { readonly atRecord: number; readonly tier: 1 | 2 | 3 | 4; readonly before: number; readonly after: number; readonly reactive?: boolean } };

export const ANCHOR_KEY = 'meta:anchor';
export const GATE_KEY = 'meta:gate';
/** The request the head's retrieval block was built for, with the coverage it was built at. */
export const RETRIEVAL_KEY = 'meta:retrieval';
/** A user's act on a protected fact: kept so every later derivation starts from it. */
export interface StateEvent {
  readonly kind: 'confirm' | 'reject' | 'correct' | 'pin' | 'delete' | 'close' | 'supersede';
  readonly factId: string;
  /** The corrected wording (kind 'correct'). */
  readonly value?: string;
  /** The record the user was at when acting. */
  readonly record: number;
}

/** A stable checkpoint recorded at a milestone (see milestones.ts). */
export interface MilestoneSnapshot {
  readonly record: number;
  readonly reason: string;
  readonly detail: string;
  readonly coverageEnd: number;
  readonly folds: number;
  /**
   * Fact versions written by then: the state at this milestone is the audit
   * history's first `audit` entries (the history is append-only), so a
   * snapshot costs what changed, not every fact again.
   */
  readonly audit: number;
  /** The fact versions written since the previous milestone, as `id@version status`. */
  readonly changed: readonly string[];
}

export const MILESTONE_PREFIX = 'milestone:';
export function milestoneKey(record: number): string {
  return `${MILESTONE_PREFIX}${String(record).padStart(9, '0')}`;
}

/**
 * The protected facts' audit history, one row per written version in the order
 * written: `state:fact:0000000`, … The facts are re-derived from the record and
 * the user's events on every load; these rows are what was derived and shown,
 * kept so the audit survives the session and can be read without the engine.
 */
export const FACT_PREFIX = 'state:fact:';

export const STATE_EVENT_PREFIX = 'state:event:';
export function stateEventKey(n: number): string {
  return `${STATE_EVENT_PREFIX}${String(n).padStart(7, '0')}`;
}

/** The compaction log, one entry per compaction in order: `log:0000000`, `log:0000001`, … */
export const LOG_PREFIX = 'log:';
export function logKey(n: number): string {
  return `${LOG_PREFIX}${String(n).padStart(7, '0')}`;
}
export const FLOOR_PREFIX = 'floor:';

export function floorKey(coverageEnd: number, digest: string): string {
  return `${FLOOR_PREFIX}${coverageEnd}:${digest}`;
}

/**
 * The span the next fold from `from` will cover, decided when the view crossed
 * the background watermark (records [from, to)). Stored so that a view derived
 * again after a crash folds the same span; never rewritten.
 */
export interface FoldPlan {
  readonly from: number;
  readonly to: number;
  /** Made before its span could buy the fold its runway: a later plan for the same coverage may replace it. */
  readonly provisional?: true;
}

export const PLAN_PREFIX = 'plan:';

/**
 * A plan is for one coverage under one budget (another window plans again);
 * `n` numbers the plans made for it (a plan the view outgrew is followed by another).
 */
export function planKey(from: number, budgetKey: string, n: number): string {
  return `${PLAN_PREFIX}${from}:${budgetKey}:${n}`;
}

export const PREFLOOR_PREFIX = 'prefloor:';

/**
 * A summary computed ahead of its fold, addressed by what it covers: the span
 * [from, to), the digest of every record up to `to`, and the cap it was made
 * for. Only a fold of exactly that span restores it.
 */
export function prefloorKey(from: number, to: number, digest: string, cap: number): string {
  return `${PREFLOOR_PREFIX}${from}:${to}:${digest}:${cap}`;
}

export function parseFloorKey(key: string): { coverageEnd: number; digest: string } | undefined {
  const match = /^floor:(\d+):([0-9a-f]+)$/.exec(key);
  if (!match) return undefined;
  return { coverageEnd: Number(match[1]), digest: match[2]! };
}

/** One session's snapshot store (`task_compaction_snapshot`). */
export interface SnapshotStore {
  get(key: string): SnapshotEntry | undefined;
  /** Upsert by key, monotonic: a drop is never replaced by a shrink, a floor never rewritten. */
  put(key: string, entry: SnapshotEntry): void;
  /** Keys starting with `prefix`, in no particular order. */
  keys(prefix: string): string[];
}

/** One session's eager tool store (`task_tool_compaction`): toolCallId → compacted form. */
export interface ToolCompactionStore {
  get(toolCallId: string): ReducedForm | undefined;
  put(toolCallId: string, form: ReducedForm): void;
}

/** Applies the monotonic upsert rule shared by every store implementation. */
export function shouldReplace(existing: SnapshotEntry | undefined, next: SnapshotEntry): boolean {
  if (!existing) return true;
  if (existing.type !== next.type) return true;
  // Content-addressed or decided once: never rewritten.
  if (existing.type === 'floor' || existing.type === 'plan' || existing.type === 'prefloor') return false;
  if (existing.type === 'form' && next.type === 'form') {
    return !(existing.form.how === 'dropped' && next.form.how === 'shrunk');
  }
  return true;
}

/** Namespaces that hold namespaces of their own: facts and user acts are listed apart ('state:fact:', 'state:event:'). */
const GROUPS = new Set(['state:']);

/** The namespace of a key: up to and including its first ':' ('floor:', 'log:'…), its second inside a group. */
function namespaceOf(key: string): string {
  const colon = key.indexOf(':');
  if (colon < 0) return key;
  const first = key.slice(0, colon + 1);
  if (!GROUPS.has(first)) return first;
  const second = key.indexOf(':', colon + 1);
  return second < 0 ? first : key.slice(0, second + 1);
}

export class InMemorySnapshotStore implements SnapshotStore {
  private readonly entries = new Map<string, SnapshotEntry>();
  /** Keys by namespace, so listing floors or events never walks every stored form. */
  private readonly byNamespace = new Map<string, Set<string>>();

  get(key: string): SnapshotEntry | undefined {
    return this.entries.get(key);
  }

  put(key: string, entry: SnapshotEntry): void {
    if (!shouldReplace(this.entries.get(key), entry)) return;
    this.entries.set(key, entry);
    const ns = namespaceOf(key);
    let set = this.byNamespace.get(ns);
    if (!set) this.byNamespace.set(ns, (set = new Set()));
    set.add(key);
  }

  keys(prefix: string): string[] {
    const ns = namespaceOf(prefix);
    if (ns.endsWith(':') && !GROUPS.has(ns)) {
      const set = this.byNamespace.get(ns);
      return set ? [...set].filter((k) => k.startsWith(prefix)) : [];
    }
    return [...this.entries.keys()].filter((k) => k.startsWith(prefix));
  }

  get size(): number {
    return this.entries.size;
  }
}

export class InMemoryToolCompactionStore implements ToolCompactionStore {
  private readonly forms = new Map<string, ReducedForm>();
  get(toolCallId: string): ReducedForm | undefined {
    return this.forms.get(toolCallId);
  }
  put(toolCallId: string, form: ReducedForm): void {
    this.forms.set(toolCallId, form);
  }
}
