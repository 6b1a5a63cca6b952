/**
 * The CLI's use of a persistent store (`--db FILE`): a transcript becomes a
 * session whose id is derived from the file's name and first record, so a run
 * that stopped (or was killed) is found again and resumed.
 */
import type { ReplayOptions } from '../core/replay';
import {
  InMemorySnapshotStore,
  InMemoryToolCompactionStore,
  shouldReplace,
  type SnapshotStore,
  type ToolCompactionStore,
} from '../core/store';
import type { RawRecord } from '../core/types';
import type { ParsedTranscript } from '../core/transcript';
import type { SessionStore } from '../store/sessionStore';

export class StoreMismatchError extends Error {}

/** Reads from a read-only store, writes to memory: another window owns the file. */
function overlaySnapshots(base: SnapshotStore): SnapshotStore {
  const mine = new InMemorySnapshotStore();
  return {
    get: (key) => mine.get(key) ?? base.get(key),
    put: (key, entry) => {
      if (shouldReplace(mine.get(key) ?? base.get(key), entry)) mine.put(key, entry);
    },
    keys: (prefix) => [...new Set([...base.keys(prefix), ...mine.keys(prefix)])],
  };
}

function overlayTools(base: ToolCompactionStore): ToolCompactionStore {
  const mine = new InMemoryToolCompactionStore();
  return { get: (id) => mine.get(id) ?? base.get(id), put: (id, form) => mine.put(id, form) };
}

/** Field by field, inputs and outputs included: forms and floors stored for other content must never be reused. */
function sameRecord(a: RawRecord, b: RawRecord): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]) as Set<keyof RawRecord>;
  for (const key of keys) {
    const x = a[key];
    const y = b[key];
    if (x === y) continue;
    if (typeof x === 'object' && typeof y === 'object' && JSON.stringify(x) === JSON.stringify(y)) continue;
    return false;
  }
  return true;
}

/**
 * Puts back, from the transcript, the records of the session that the store
 * lost to a damaged journal line (a marker stands in their place), when every
 * other stored record is the transcript's: a resumed `replay --db` then goes on
 * as if nothing had been lost. Returns the indices put back.
 */
export async function restoreLost(store: SessionStore, id: string, transcript: ParsedTranscript): Promise<number[]> {
  if (store.mode !== 'writer') return [];
  const lost = store.lostRecords(id);
  if (lost.length === 0) return [];
  const gone = new Set(lost);
  const stored = store.records(id, { loadPayloads: true });
  if (stored.length > transcript.records.length || stored.some((r, i) => !gone.has(i) && !sameRecord(r, transcript.records[i]!))) return [];
  const restored: number[] = [];
  for (const index of lost) {
    const record = transcript.records[index];
    if (!record || index >= stored.length) continue;
    await store.restoreRecord(id, record);
    restored.push(index);
  }
  return restored;
}

/**
 * The replay options that keep a transcript's session in `store`: its stores,
 * where to resume, and the durable append. Refuses a store whose session under
 * this id holds different records.
 */
export function persistenceFor(store: SessionStore, id: string, transcript: ParsedTranscript): Pick<ReplayOptions, 'snapshots' | 'tools' | 'resumeFrom' | 'persist'> {
  const stored = store.records(id, { loadPayloads: true });
  if (stored.length > transcript.records.length) {
    throw new StoreMismatchError(`the store holds ${stored.length} records of session ${id}, more than the transcript's ${transcript.records.length}`);
  }
  // A lost record's marker is not a difference (a reader cannot put the record back; a writer already did).
  const lost = new Set(store.lostRecords(id));
  const differs = stored.findIndex((r, i) => !lost.has(i) && !sameRecord(r, transcript.records[i]!));
  if (differs >= 0) throw new StoreMismatchError(`session ${id} in the store differs from the transcript at record ${differs}`);
  const readOnly = store.mode === 'reader';
  if (!readOnly) store.createSession(id, transcript.title ?? id);
  return {
    snapshots: readOnly ? overlaySnapshots(store.snapshotStore(id)) : store.snapshotStore(id),
    tools: readOnly ? overlayTools(store.toolStore(id)) : store.toolStore(id),
    resumeFrom: stored.length,
    persist: (record) => (store.mode === 'reader' ? Promise.resolve() : store.appendRecord(id, record)),
  };
}
