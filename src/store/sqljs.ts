/**
 * Loads sql.js (SQLite compiled to WebAssembly) and types the small part of its
 * API the store uses. The wasm file sits beside the bundle in dist/ (esbuild
 * copies it); under tests it is found in node_modules.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { nextTurn } from '../core/turns';

export type SqlValue = number | string | Uint8Array | null;

export interface SqlStatement {
  bind(values: SqlValue[]): boolean;
  step(): boolean;
  get(): SqlValue[];
  getAsObject(): Record<string, SqlValue>;
  free(): boolean;
}

export interface SqlDatabase {
  run(sql: string, params?: SqlValue[]): void;
  exec(sql: string, params?: SqlValue[]): { columns: string[]; values: SqlValue[][] }[];
  prepare(sql: string): SqlStatement;
  export(): Uint8Array;
  /** Rows changed by the last statement. */
  getRowsModified(): number;
  close(): void;
}

export interface SqlJs {
  Database: new (data?: Uint8Array) => SqlDatabase;
}

let loading: Promise<SqlJs> | undefined;

/** Beside the bundle (dist/), else in node_modules as seen from dist/ or from the compiled tests (out/src/store/). */
function wasmPath(): string {
  const candidates = [
    path.join(__dirname, 'sql-wasm.wasm'),
    path.resolve(__dirname, '..', 'node_modules', 'sql.js', 'dist', 'sql-wasm.wasm'),
    path.resolve(__dirname, '..', '..', '..', 'node_modules', 'sql.js', 'dist', 'sql-wasm.wasm'),
  ];
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error(`sql-wasm.wasm not found (looked in ${candidates.join(', ')})`);
  return found;
}

/** The sql.js module, initialised once per process. */
export function loadSqlJs(): Promise<SqlJs> {
  if (!loading) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const init = require('sql.js') as (config: { locateFile: (file: string) => string }) => Promise<SqlJs>;
    const wasm = wasmPath();
    loading = init({ locateFile: () => wasm });
  }
  return loading;
}

let warming: Promise<void> | undefined;

/**
 * Runs SQLite's first statements on a throwaway database, one per turn of the
 * event loop. Its WebAssembly is compiled function by function on first call,
 * on the host's thread: the first statement of a process (SQLite's set-up)
 * and the first CREATE TABLE held the thread 80-100 ms in one block when a
 * task's database was first opened inside a turn; warmed in steps, no step
 * holds it more than about 30 ms and that first open about 20 ms. Each
 * statement is compiled in one turn and run in the next, the first write on
 * its own (in node 24, 3 runs: the longest step 15-26 ms when each statement
 * was one step, 9-16 ms so). The
 * extension starts it at activation with the statements a new task's database
 * runs (tables.ts SQLITE_WARM_UP); a failure is the real open's to report.
 */
export function warmSqlJs(steps: readonly string[]): Promise<void> {
  return (warming ??= (async () => {
    // Loading sql.js (its glue code, the wasm file read, the module instantiated) is a block of its own: not in the caller's.
    await nextTurn();
    const sql = await loadSqlJs();
    await nextTurn();
    const db = new sql.Database();
    try {
      // Compiled, then run, in turns of their own: a first statement's parsing and its running each compile a share.
      for (const step of steps) {
        await nextTurn();
        const statement = db.prepare(step);
        try {
          await nextTurn();
          while (statement.step()) statement.get();
        } finally {
          statement.free();
        }
      }
    } finally {
      db.close();
    }
  })().catch(() => undefined));
}

/** All rows of a query as objects keyed by column name. */
export function queryAll(db: SqlDatabase, sql: string, params: SqlValue[] = []): Record<string, SqlValue>[] {
  const stmt = db.prepare(sql);
  try {
    stmt.bind(params);
    const rows: Record<string, SqlValue>[] = [];
    while (stmt.step()) rows.push(stmt.getAsObject());
    return rows;
  } finally {
    stmt.free();
  }
}
