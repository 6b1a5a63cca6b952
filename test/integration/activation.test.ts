/**
 * Runs first (files run in name order): the extension is not active yet. With
 * 100 MB of other tasks already in its store, activation and the first @keeper
 * turn must not stall the extension host's event loop, which every extension
 * shares: opening reads the task index only, and the turn opens only its own
 * (new, small) task. The longest stall is measured with the stall meter
 * below and reported (the issue's bound is 50 ms; see the end).
 *
 * What the measure sees is the whole host, so the test first takes out what is
 * not the extension's: the other tasks are written by a child process (their
 * garbage is not collected in the host while it measures), and it starts once
 * the host has gone quiet (the workbench's own extensions activate at startup,
 * on the same thread).
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import * as vscode from 'vscode';
import type { TurnEndEvent } from '../../src/agent/participant';
import type { ContextKeeperApi } from '../../src/extension';
import { FAKE_LARGE, FAKE_VENDOR, fakeModel } from './fakeModelApi';

const EXTENSION_ID = 'context-keeper.context-keeper';
const OTHER_TASKS_MB = 100;
const STALL_BOUND_MS = 50;
/** The host is quiet when its event loop was never held longer than this … */
const QUIET_MS = 20;
/** … in this many windows of QUIET_WINDOW_MS in a row (at most SETTLE_TIMEOUT_MS of waiting). */
const QUIET_WINDOWS = 3;
const QUIET_WINDOW_MS = 200;
const SETTLE_TIMEOUT_MS = 30_000;

/** Writes `mb` MB of other tasks into `storage` in a child process (bench/workspaceBench.ts), so the host's heap stays as it was. */
function buildOtherTasks(storage: string, mb: number): void {
  const bench = path.resolve(__dirname, '../../bench/workspaceBench.js');
  // The child is a composition root of its own: it builds the redactor the store is given.
  const redact = path.resolve(__dirname, '../../src/core/redact.js');
  const script = `const { SecretRedactor } = require(${JSON.stringify(redact)}); require(${JSON.stringify(bench)}).buildWorkspace(${JSON.stringify(storage)}, ${mb}, new SecretRedactor()).catch((e) => { console.error(e); process.exit(1); })`;
  // The host's executable is node (code-server) or Electron, which runs as node with this variable.
  const child = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, encoding: 'utf8', timeout: 180_000 });
  assert.equal(child.status, 0, `building the other tasks failed: ${child.stderr || child.error?.message}`);
}

/** What the stall meter saw. */
interface Stalls {
  /** The longest gap (wall clock), and when it began (performance.now()) … */
  readonly longest: number;
  readonly from: number;
  /** … how much of it the host's thread ran, and how long it waited for a core (undefined where it cannot be told). */
  readonly ran: number | undefined;
  readonly waited: number | undefined;
  /** The longest gap less the time the thread waited for a core in it: what held the event loop (code, a blocking call). */
  readonly held: number | undefined;
}

/** The CPU time of the calling thread in ms (node 23.9+, as in code-server's host), else undefined. */
function threadCpuMs(): number | undefined {
  const usage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.();
  return usage ? (usage.user + usage.system) / 1000 : undefined;
}

/** How long the calling thread has waited for a core, runnable but not running, in ms (Linux: its schedstat), else undefined. */
function threadWaitMs(): number | undefined {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return undefined;
  }
}

/**
 * The longest the host's event loop was held, measured as the longest gap
 * between the ticks of a 1 ms timer (a block of N ms delays the next tick by
 * N ms). node's delay histogram misses a block that begins in the same turn as
 * its last sample, which is where an awaited activation can begin.
 *
 * A gap is also time the machine did not run the host's thread at all: on the
 * 2-core machine the workbench (its renderer, its GPU process), the server and
 * the host's own collector threads take the cores from it for tens of ms. So
 * each gap is split: how much of it the thread ran, and how long it waited,
 * runnable, for a core (the kernel's schedstat). A gap less that wait is what
 * held the event loop: code on it (the extension's, the host's, the
 * collector's main-thread work) or a call that blocked it. The garbage
 * collections that began in the gap are named with it (node's `gc` entries):
 * in a collection the thread also waits for the collector's helper threads,
 * which wait for a core in turn.
 */
class StallMeter {
  private last = performance.now();
  private lastCpu = threadCpuMs();
  private lastWait = threadWaitMs();
  private longest: Omit<Stalls, 'held'> = { longest: 0, from: 0, ran: undefined, waited: undefined };
  private held: number | undefined;
  private timer: NodeJS.Timeout | undefined = setTimeout(() => this.tick(), 1);
  /** Every collection since the start ([start, duration]): the observer delivers each a turn or two after it ran. */
  private readonly collections: [number, number][] = [];
  private readonly observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) this.collections.push([e.startTime, e.duration]);
  });

  constructor() {
    this.observer.observe({ entryTypes: ['gc'] });
  }

  private tick(): void {
    const now = performance.now();
    const cpu = threadCpuMs();
    const wait = threadWaitMs();
    const gap = now - this.last;
    const waited = wait !== undefined && this.lastWait !== undefined ? wait - this.lastWait : undefined;
    if (gap > this.longest.longest) {
      this.longest = { longest: gap, from: this.last, ran: cpu !== undefined && this.lastCpu !== undefined ? cpu - this.lastCpu : undefined, waited };
    }
    if (waited !== undefined) this.held = Math.max(this.held ?? 0, gap - waited);
    this.last = now;
    this.lastCpu = cpu;
    this.lastWait = wait;
    if (this.timer) this.timer = setTimeout(() => this.tick(), 1);
  }

  /** The stalls since the start or the last `take`, and a fresh start. */
  take(): Stalls {
    this.tick();
    const stalls = { ...this.longest, held: this.held };
    this.longest = { longest: 0, from: 0, ran: undefined, waited: undefined };
    this.held = undefined;
    return stalls;
  }

  /** Stops the timer (the stalls since the last `take`), then the observer once it has delivered the last collections. */
  async stop(): Promise<Stalls> {
    const stalls = this.take();
    clearTimeout(this.timer);
    this.timer = undefined;
    for (let i = 0; i < 2; i++) await new Promise((resolve) => setTimeout(resolve, 0));
    this.observer.disconnect();
    return stalls;
  }

  /** The collections that began in a stall's gap, in ms (complete once `stop` has resolved). */
  collectedIn(stalls: Stalls): number[] {
    return this.collections.filter(([start]) => start >= stalls.from && start < stalls.from + stalls.longest).map(([, duration]) => duration);
  }
}

/** A stall as the report says it: its length, how much of it the thread ran and waited, the collections in it, and the longest hold. */
function stallText(stalls: Stalls, collected: readonly number[]): string {
  const parts = [
    ...(stalls.ran === undefined ? [] : [`the host's thread ran ${stalls.ran.toFixed(1)} ms of it`]),
    ...(stalls.waited === undefined ? [] : [`waited ${stalls.waited.toFixed(1)} ms for a core`]),
    ...(collected.length === 0 ? [] : [`a garbage collection of ${collected.map((ms) => ms.toFixed(1)).join(' + ')} ms ran in it`]),
  ];
  const held = stalls.held === undefined ? '' : `, the longest the event loop was held ${stalls.held.toFixed(1)} ms`;
  return `${stalls.longest.toFixed(1)} ms${parts.length > 0 ? ` (${parts.join(', ')})` : ''}${held}`;
}

/** Resolves when the host's event loop has been quiet for QUIET_WINDOWS windows in a row; the time it took. */
async function hostSettled(): Promise<number> {
  const started = performance.now();
  const meter = new StallMeter();
  for (let quiet = 0; quiet < QUIET_WINDOWS && performance.now() - started < SETTLE_TIMEOUT_MS; ) {
    await new Promise((resolve) => setTimeout(resolve, QUIET_WINDOW_MS));
    quiet = meter.take().longest <= QUIET_MS ? quiet + 1 : 0;
  }
  await meter.stop();
  return performance.now() - started;
}

describe('activation with months of other tasks in the store', function () {
  this.timeout(240_000);

  it(`activates and runs a first turn with ${OTHER_TASKS_MB} MB of other tasks without opening them, and reports the longest event-loop stall`, async function () {
    const extension = vscode.extensions.getExtension<ContextKeeperApi>(EXTENSION_ID);
    assert.ok(extension);
    if (extension.isActive) this.skip(); // another test activated it first: nothing to measure here
    const fake = await fakeModel();
    assert.ok(fake.storagePath, 'the fake model has workspace storage (a folder is open)');
    const storage = path.join(path.dirname(fake.storagePath), EXTENSION_ID);
    const built = performance.now();
    buildOtherTasks(storage, OTHER_TASKS_MB);
    console.log(`      built ${OTHER_TASKS_MB} MB of other tasks in ${((performance.now() - built) / 1000).toFixed(1)} s`);
    // What building wrote is flushed first: activation would otherwise read behind the disk's writeback of 100 MB.
    if (process.platform !== 'win32') spawnSync('sync');
    const settled = await hostSettled();

    const meter = new StallMeter();
    let turnStall: Stalls | undefined;
    let openingStall: Stalls | undefined;
    let activationStall: Stalls;
    let activated: number;
    let workspace: Awaited<ReturnType<ContextKeeperApi['sessions']['store']>>;
    let end: TurnEndEvent;
    try {
      const started = performance.now();
      const api = await extension.activate();
      activated = performance.now() - started;
      activationStall = meter.take();
      assert.equal(api.sessions.dir, storage, 'the store is where the test put the other tasks');
      workspace = await api.sessions.store();
      assert.ok(workspace.sessions().length >= OTHER_TASKS_MB / 10, 'the other tasks are listed from the index');

      fake.reset();
      fake.script([{ text: 'Hello from the fake model.' }]);
      const ended = new Promise<TurnEndEvent>((resolve) => {
        const sub = api.onDidEndTurn((event) => {
          sub.dispose();
          resolve(event);
        });
      });
      // The chat view opens first (the workbench draws it and routes the request); the turn begins when @keeper is asked.
      const asked = api.onDidStartTurn(() => {
        asked.dispose();
        openingStall = meter.take();
      });
      await vscode.commands.executeCommand('workbench.action.chat.open', { query: '@keeper say hello', modelSelector: { vendor: FAKE_VENDOR, id: FAKE_LARGE }, mode: 'ask' });
      end = await Promise.race([ended, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('@keeper did not finish')), 90_000))]);
      assert.equal(end.outcome, 'answer');
    } finally {
      // The timer and the observer stop whatever happened; the last collections are in once it resolves.
      turnStall = await meter.stop();
    }
    assert.ok(openingStall, '@keeper was asked');
    const text = (stalls: Stalls): string => stallText(stalls, meter.collectedIn(stalls));
    const report = `(host quiet after ${(settled / 1000).toFixed(1)} s) activation ${activated.toFixed(0)} ms, its longest event-loop stall ${text(activationStall)}; the first turn's (from @keeper asked to its answer) ${text(turnStall)}; opening the chat view before it, ${text(openingStall)} (with ${OTHER_TASKS_MB} MB of other tasks; the issue's bound: ${STALL_BOUND_MS} ms)`;
    console.log(`MEASURE ${report}`);
    assert.ok(existsSync(path.join(storage, 'index.json')));
    // What the store controls: no other task's database was opened (the turn opened its own, new task only).
    const open = [...(workspace as unknown as { stores: Map<string, unknown> }).stores.keys()];
    assert.deepEqual(open, [end.taskId], `open task databases: ${open.join(', ')}`);
    // The issue's bound is STALL_BOUND_MS. Measured on the 2-core machine (2026-12-05), with the extension loaded a
    // module per turn (src/loader.ts): activation's longest stall 10-24 ms in 17 runs, nearly all of it the thread
    // running (it was 34-85 ms loading one 590 KB bundle). In 6 runs, the first turn, from @keeper asked to its answer:
    // 27-57 ms (above 50 ms once), the loop held 17-40 ms; opening the chat view before it (the workbench draws the
    // view and routes the request while the warm-ups run): 32-117 ms, nearly all of it the host's thread waiting for a
    // core (the renderer, the GPU process and the host's collector threads take both cores), held 18-69 ms. On
    // 2026-12-06 (7 runs) the first turn was 19-48 ms, and the longest gaps while the chat view opened (37-175 ms) were
    // the thread waiting for a core, or a minor collection waiting for its helper threads (one of 119 ms, the thread
    // running 23 ms of it; the warm-ups grow the heap by about 19 MB, and run alone in node 24 none of their
    // collections takes over 11 ms). On 2026-12-07, 4 runs gave a first turn of 26-63 ms, once with the loop held 41.7
    // ms of which the thread ran 16.5 ms: the rest was the disk (six fsyncs on the event loop for a new task: its
    // task.json, its lock, its journal's name, the index twice). With those on the thread pool (or gone, for the
    // lock), 8 runs: the first turn 21-29 ms, held 13-22 ms; activation 12-32 ms. Reported above, not judged on time (a shared machine's load moves it); a
    // regression of the store (opening the other tasks) fails on the open databases just above, and
    // test/unit/package.test.ts fails on a module too large to load in one block.
  });
});
