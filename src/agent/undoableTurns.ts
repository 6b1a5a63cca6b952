/**
 * The edits of @keeper's last turns that changed files, by the key their Undo
 * button carries, kept in the workspace's state so that Undo still works after
 * a window reload.
 */
import * as vscode from 'vscode';
import { messageOf } from './model';
import type { TurnEdit } from './workspaceTools';

/** Turns whose edits can still be undone from their button. */
const MAX_UNDOABLE_TURNS = 20;
/** The workspace-state key of the undoable turns, the most text they may hold there in all, and how long they are kept. */
const UNDO_STATE_KEY = 'contextKeeper.undoableTurns';
const UNDO_STATE_MAX_CHARS = 2_000_000;
const UNDO_STATE_MAX_AGE_MS = 7 * 24 * 3600_000;

/** A turn's edits, kept for its Undo button. */
export interface KeptTurn {
  readonly taskId: string;
  readonly turn: number;
  /** When the turn ended (ms since the epoch). */
  readonly savedAt: number;
  readonly edits: readonly TurnEdit[];
}

/** An undoable turn as the workspace's state keeps it (JSON). */
interface SavedTurn {
  readonly key: string;
  readonly taskId: string;
  readonly turn: number;
  /** When the turn ended (ms since the epoch). */
  readonly savedAt: number;
  readonly edits: readonly { readonly uri: string; readonly rel: string; readonly before: string; readonly after: string; readonly created?: boolean }[];
}

export class UndoableTurns {
  /** The edits of the last turns that changed files, by the key their Undo button carries. */
  private readonly turnEdits = new Map<string, KeptTurn>();
  private editedTurns = 0;
  /** Undoable turns already named to a new task as left applied. */
  private readonly leftEditsSaid = new Set<string>();

  constructor(
    /** Where the undoable turns are kept across window reloads (the workspace's state). */
    private readonly undoState: vscode.Memento | undefined,
    private readonly log: vscode.LogOutputChannel | undefined,
  ) {
    this.loadUndoable();
  }

  /** A kept turn by its key. */
  turn(key: string): KeptTurn | undefined {
    return this.turnEdits.get(key);
  }

  /** The turns an Undo button names (`key`), or by default the last turn that edited. */
  chosen(key?: string | readonly string[]): readonly string[] {
    const last = [...this.turnEdits.keys()].pop();
    return key === undefined ? (last !== undefined ? [last] : []) : typeof key === 'string' ? [key] : key;
  }

  /** The kept turns of a task after its turn `turn` (1-based). */
  keysAfter(taskId: string, turn: number): string[] {
    return [...this.turnEdits].filter(([, t]) => t.taskId === taskId && t.turn > turn).map(([key]) => key);
  }

  /** The kept turns of a task not named yet to a new task as left applied; they count as named from now on. */
  takeUnsaid(taskId: string): string[] {
    const keys = [...this.turnEdits].filter(([key, t]) => t.taskId === taskId && !this.leftEditsSaid.has(key)).map(([key]) => key);
    for (const key of keys) this.leftEditsSaid.add(key);
    return keys;
  }

  /** The files the kept turns `keys` changed, each once. */
  filesOf(keys: readonly string[]): string[] {
    return [...new Set(keys.flatMap((key) => this.turnEdits.get(key)?.edits.map((e) => e.rel) ?? []))];
  }

  /** Keeps a turn's edits for its Undo (the last MAX_UNDOABLE_TURNS turns); returns their key. */
  keep(taskId: string, turn: number, edits: readonly TurnEdit[]): string {
    // Unique across reloads: a button of an earlier window keeps pointing at its own turn.
    const key = `turn-${Date.now().toString(36)}-${++this.editedTurns}`;
    this.turnEdits.set(key, { taskId, turn, savedAt: Date.now(), edits });
    for (const old of this.turnEdits.keys()) {
      if (this.turnEdits.size <= MAX_UNDOABLE_TURNS) break;
      this.turnEdits.delete(old);
    }
    this.saveUndoable();
    return key;
  }

  /** Lets go of undone turns. */
  drop(keys: readonly string[]): void {
    for (const k of keys) this.turnEdits.delete(k);
    this.saveUndoable();
  }

  /** A deleted task's edits are no longer offered for undo (here or after a reload). */
  forgetTask(taskId: string): void {
    let dropped = false;
    for (const [key, t] of this.turnEdits) if (t.taskId === taskId) dropped = this.turnEdits.delete(key) || dropped;
    if (dropped) this.saveUndoable();
  }

  /**
   * The undoable turns, kept in the workspace's state so that Undo still
   * works after a window reload: the newest turns up to UNDO_STATE_MAX_CHARS
   * of text in all (an older one stays undoable in this window only), for
   * UNDO_STATE_MAX_AGE_MS.
   */
  private saveUndoable(): void {
    if (!this.undoState) return;
    const saved: SavedTurn[] = [];
    let chars = 0;
    // Newest first, until the state's budget is spent: an older turn stays undoable in this window only.
    for (const [key, t] of [...this.turnEdits].reverse()) {
      const size = t.edits.reduce((n, e) => n + e.before.length + e.after.length, 0);
      if (chars + size > UNDO_STATE_MAX_CHARS) continue;
      chars += size;
      saved.unshift({ key, taskId: t.taskId, turn: t.turn, savedAt: t.savedAt, edits: t.edits.map((e) => ({ uri: e.uri.toString(), rel: e.rel, before: e.before, after: e.after, ...(e.created ? { created: true } : {}) })) });
    }
    this.undoState.update(UNDO_STATE_KEY, saved).then(undefined, (error: unknown) => this.log?.warn(`the undoable edits could not be kept for the next window: ${messageOf(error)}`));
  }

  private loadUndoable(): void {
    const saved = this.undoState?.get<unknown>(UNDO_STATE_KEY);
    if (!Array.isArray(saved)) return;
    for (const raw of saved) {
      const t = raw as Partial<SavedTurn> | null;
      if (!t || typeof t.key !== 'string' || typeof t.taskId !== 'string' || typeof t.turn !== 'number' || typeof t.savedAt !== 'number' || !Array.isArray(t.edits)) continue;
      // A week later the files have moved on: the turn is no longer offered.
      if (Date.now() - t.savedAt > UNDO_STATE_MAX_AGE_MS) continue;
      const edits: TurnEdit[] = [];
      for (const e of t.edits) {
        if (!e || typeof e.uri !== 'string' || typeof e.rel !== 'string' || typeof e.before !== 'string' || typeof e.after !== 'string') continue;
        edits.push({ uri: vscode.Uri.parse(e.uri), rel: e.rel, before: e.before, after: e.after, ...(e.created === true ? { created: true } : {}) });
      }
      if (edits.length) this.turnEdits.set(t.key, { taskId: t.taskId, turn: t.turn, savedAt: t.savedAt, edits });
    }
  }
}
