/**
 * The workspace store by size (issue 14): workspaces of about 10, 100 and
 * 500 MB of other tasks (10 MB each) plus a small task in use. In a fresh
 * process for each (so peak RSS is that workspace's): opening the workspace,
 * opening the task in use, one append, a checkpoint of it and deleting a small
 * task (the last two each the median of SAMPLES). The three workspaces are built
 * first and measured in ROUNDS rounds, a round measuring each once, so a slow
 * spell of the shared disk falls on every size alike; a row is the median of its
 * rounds. Ratios 500 MB ÷ 10 MB: open ≤ 2, checkpoint ≤ 1.5, delete ≤ 1.5.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Redactor } from '../src/core/redact';
import type { RawRecord } from '../src/core/types';
import { WorkspaceStore } from '../src/store/workspaceStore';
import { median } from './storeBench';

const WORKSPACE_MB = [10, 100, 500];
const TASK_MB = 10;
export const WORKSPACE_CHILD_FLAG = '--workspace-child';

const quiet = (): void => undefined;
/**
 * How many times a few-millisecond operation (a checkpoint, a delete) is timed: each is mostly fsyncs, whose latency
 * on a shared disk varies by 2-3× from one call to the next, so the bench takes the median of this many (with five, a
 * ratio of two medians still moved from 0.67 to 2.2 between runs of one build).
 */
const SAMPLES = 9;
/** Rounds of the three workspaces' measurements. */
const ROUNDS = 3;
/** Small tasks to delete, SAMPLES of them a round. */
const TINY_TASKS = Array.from({ length: SAMPLES * ROUNDS }, (_, i) => `tiny-${i}`);

function record(index: number, chars: number): RawRecord {
  const line = `${index.toString(36)} result line with some ordinary log text in it\n`;
  return { index, role: 'tool', content: '', toolName: 'Bash', toolCallId: `t${index}`, toolOutput: line.repeat(Math.ceil(chars / line.length)).slice(0, chars) };
}

/** A workspace store of about `mb` MB: tasks of TASK_MB MB of tool output each, a small `work` task and SAMPLES tiny ones. */
export async function buildWorkspace(dir: string, mb: number, redactor: Redactor): Promise<void> {
  const ws = await WorkspaceStore.open(dir, quiet, { checkpointDelayMs: 0, redactor });
  const template = await ws.task('other-0', 'other task 0');
  for (let i = 0; template.sizes().database < TASK_MB * 1024 * 1024; ) {
    for (let k = 0; k < 40; k++, i++) await template.appendRecord('other-0', record(i, 24 * 1024));
    template.checkpoint();
  }
  const source = path.join(ws.folderOf('other-0'), 'task.db');
  for (let n = 1; n < mb / TASK_MB; n++) {
    await ws.task(`other-${n}`, `other task ${n}`);
  }
  for (const [id, count] of [['work', 50], ...TINY_TASKS.map((t) => [t, 5] as const)] as const) {
    const store = await ws.task(id, id);
    for (let i = 0; i < count; i++) await store.appendRecord(id, record(i, 2_000));
  }
  ws.close();
  // The other tasks get the template's database: the same bytes a task of that size holds.
  for (let n = 1; n < mb / TASK_MB; n++) copyFileSync(source, path.join(ws.folderOf(`other-${n}`), 'task.db'));
}

/** The child: times each operation on an existing workspace (deleting the small tasks of `round`) and prints them as JSON. */
export async function workspaceChild(dir: string, round: number, redactor: Redactor): Promise<void> {
  const time = async <T>(f: () => Promise<T> | T): Promise<[T, number]> => {
    const t = performance.now();
    const value = await f();
    return [value, performance.now() - t];
  };
  const [ws, open] = await time(() => WorkspaceStore.open(dir, quiet, { checkpointDelayMs: 0, redactor }));
  const tasks = ws.sessions().length;
  const [work, task] = await time(() => ws.task('work'));
  const [, append] = await time(() => work.appendRecord('work', record(work.recordCount('work'), 2_000)));
  // A checkpoint, like a delete, is a few milliseconds of writes and fsyncs: the median of SAMPLES, each after an append.
  const checkpoints = [(await time(() => work.checkpoint()))[1]];
  while (checkpoints.length < SAMPLES) {
    await work.appendRecord('work', record(work.recordCount('work'), 2_000));
    checkpoints.push((await time(() => work.checkpoint()))[1]);
  }
  const checkpoint = median(checkpoints);
  const removals: number[] = [];
  for (const id of TINY_TASKS.slice(round * SAMPLES, (round + 1) * SAMPLES)) removals.push((await time(() => ws.deleteSession(id)))[1]);
  const remove = median(removals);
  ws.close();
  process.stdout.write(JSON.stringify({ tasks, open, task, append, checkpoint, remove, rss: process.resourceUsage().maxRSS * 1024 }));
}

export async function runWorkspaceBench(redactor: Redactor): Promise<void> {
  console.log('');
  console.log(`Workspace store: one database per task; each size measured in a fresh process, the median of ${ROUNDS} rounds`);
  console.log('| workspace | tasks | open ms | open the task in use ms | one append ms | checkpoint of the task ms | delete a small task ms | peak RSS MB |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  type Measured = { tasks: number; open: number; task: number; append: number; checkpoint: number; remove: number; rss: number };
  const dirs = WORKSPACE_MB.map(() => mkdtempSync(path.join(tmpdir(), 'ck-ws-bench-')));
  const rows: ({ mb: number } & Measured)[] = [];
  try {
    for (const [i, mb] of WORKSPACE_MB.entries()) await buildWorkspace(dirs[i]!, mb, redactor);
    // What building wrote is flushed first: the child's own fsyncs would otherwise wait behind
    // the writeback of the copies (423 ms vs 129 ms to open the task in use at 500 MB).
    if (process.platform !== 'win32') spawnSync('sync');
    const rounds: Measured[][] = WORKSPACE_MB.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, dir] of dirs.entries()) {
        const child = spawnSync(process.execPath, [process.argv[1]!, WORKSPACE_CHILD_FLAG, dir, String(round)], { encoding: 'utf8', maxBuffer: 1 << 20 });
        if (child.status !== 0) throw new Error(`the workspace bench child failed: ${child.stderr}`);
        rounds[i]!.push(JSON.parse(child.stdout) as Measured);
      }
    }
    for (const [i, mb] of WORKSPACE_MB.entries()) {
      const of = (k: keyof Measured): number => median(rounds[i]!.map((r) => r[k]));
      const r = { mb, tasks: rounds[i]![0]!.tasks, open: of('open'), task: of('task'), append: of('append'), checkpoint: of('checkpoint'), remove: of('remove'), rss: of('rss') };
      rows.push(r);
      console.log(`| ${mb} MB | ${r.tasks} | ${r.open.toFixed(1)} | ${r.task.toFixed(1)} | ${r.append.toFixed(2)} | ${r.checkpoint.toFixed(1)} | ${r.remove.toFixed(1)} | ${(r.rss / 1048576).toFixed(0)} |`);
    }
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
  const first = rows[0]!;
  const last = rows[rows.length - 1]!;
  const ratio = (k: 'open' | 'checkpoint' | 'remove' | 'rss'): number => last[k] / first[k];
  const line = (name: string, k: 'open' | 'checkpoint' | 'remove', target: number): string => `${name} ${ratio(k).toFixed(2)} (≤ ${target}: ${ratio(k) <= target ? 'OK' : 'OVER'})`;
  console.log(`ratio 5 — 500 MB ÷ 10 MB: ${line('open', 'open', 2)}, ${line('checkpoint', 'checkpoint', 1.5)}, ${line('delete', 'remove', 1.5)}; peak RSS ${ratio('rss').toFixed(2)}×`);
}
