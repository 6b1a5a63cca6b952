/**
 * What the agent needs of persistence, as interfaces the store implements
 * (src/store/sessionStore.ts, src/store/workspaceStore.ts); the composition
 * root passes the store in, so the agent imports nothing of it.
 */
import type { SnapshotStore, ToolCompactionStore } from '../core/store';
import type { RawRecord } from '../core/types';

/** One task's raw record, append-only, with the stores its compactions are kept in. */
export interface TaskRecordLog {
  /** 'reader': another window writes this store; 'memory': nothing is kept on disk. */
  readonly mode: 'writer' | 'reader' | 'memory';
  createSession(taskId: string, title: string): void;
  records(taskId: string, options?: { loadPayloads?: boolean }): RawRecord[];
  appendRecord(taskId: string, record: RawRecord): Promise<void>;
  snapshotStore(taskId: string): SnapshotStore;
  toolStore(taskId: string): ToolCompactionStore;
}

/** The workspace's tasks: one record log each. */
export interface TaskStores {
  has(taskId: string): boolean;
  lastUsedTask(): string | undefined;
  task(taskId: string, title?: string): Promise<TaskRecordLog>;
  /** Closes the logs of tasks not in `keep` idle for `idleMs`; returns their ids. */
  closeIdle(idleMs: number, keep: ReadonlySet<string>, now?: number): string[];
}

/** Opens the workspace's task stores on first use. */
export interface TaskStoreHost {
  store(): Promise<TaskStores>;
}
