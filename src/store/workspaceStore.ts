/**
 * The extension's session store in its storage folder: opened in the
 * background at activation, every notice (a damaged file moved aside and
 * rebuilt, a torn journal repaired, another window writing, a full disk and the
 * switch to memory) shown to the user once, closed (checkpointed) on dispose.
 */
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { SessionStore } from './sessionStore';

export type Notify = (severity: 'warning' | 'error', message: string) => void;

export const STORE_FILE_NAME = 'sessions.db';

export class WorkspaceStoreHost {
  private opening: Promise<SessionStore> | undefined;
  private subscription: { dispose(): void } | undefined;
  private disposed = false;

  constructor(private readonly dir: string, private readonly notify: Notify) {}

  get file(): string {
    return path.join(this.dir, STORE_FILE_NAME);
  }

  /** The store, opened on first use; never rejects (a store that cannot persist runs in memory and says so). */
  store(): Promise<SessionStore> {
    this.opening ??= this.open();
    return this.opening;
  }

  private async open(): Promise<SessionStore> {
    try {
      mkdirSync(this.dir, { recursive: true });
    } catch {
      /* SessionStore.open reports an unwritable folder itself */
    }
    const store = await SessionStore.open(this.file);
    for (const message of store.notices) this.notify(severityOf(store, message), message);
    this.subscription = store.onNotice((message) => this.notify(severityOf(store, message), message));
    if (this.disposed) this.close(store);
    return store;
  }

  private close(store: SessionStore): void {
    this.subscription?.dispose();
    try {
      store.close();
    } catch (error) {
      this.notify('error', `Context Keeper could not close its session store ${this.file}: ${(error as Error).message}`);
    }
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    void this.opening?.then((store) => this.close(store));
  }
}

function severityOf(store: SessionStore, message: string): 'warning' | 'error' {
  return store.mode === 'memory' || /damaged/.test(message) ? 'error' : 'warning';
}
