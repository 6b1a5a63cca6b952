/**
 * Ratio 4: a replay is linear in records. 10k, 50k and 200k tiny records (a
 * user turn every 50 records, short replies, small tool calls) replayed as
 * the CLI replays a transcript — a model call before every step — at the
 * default window and at 16k. Linear means the 200k run takes at most 25×
 * the 10k run (20× the records, within noise). Each run is timed in a fresh
 * process, after an untimed warm-up replay of other records (the code is
 * compiled, but no cache holds the measured records' texts, and no heap is
 * left over by an earlier run). Each size is the fastest of three runs: on a
 * shared machine other work only ever adds time to a run (measured here: one
 * 200k run took 8.6 s and the next, of the same build, 11.8 s), so the fastest
 * is the closest to what the replay itself costs.
 */
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { O200kTokenCounter } from '../src/adapters/o200kTokenCounter';
import { DEFAULT_CONTEXT_WINDOW, defaultBudget, OUTPUT_RESERVED_TOKENS } from '../src/core/budget';
import { replay } from '../src/core/replay';
import type { RawRecord } from '../src/core/types';

export const TINY_SIZES = [10_000, 50_000, 200_000];

export const TINY_CHILD_FLAG = '--tiny-child';

/** `n` tiny records: a user turn every 50 records, a small tool call every third, a short reply otherwise; `tag` varies their texts. */
export function tinyRecords(n: number, tag = ''): RawRecord[] {
  const out: RawRecord[] = [];
  let call = 0;
  while (out.length < n) {
    const i = out.length;
    if (i % 50 === 0) out.push({ index: i, role: 'user', content: `next ${tag}${i}` });
    else if (i % 3 === 0 && i + 1 < n) {
      const id = `c${++call}`;
      out.push({ index: i, role: 'assistant', content: '', toolName: 'Read', toolCallId: id, toolInput: { file_path: `f${tag}${i}.ts` }, messageId: `m${i}` });
      out.push({ index: i + 1, role: 'tool', content: '', toolName: 'Read', toolCallId: id, toolOutput: `x${tag}${i}` });
    } else out.push({ index: i, role: 'assistant', content: `ok ${tag}${i}`, messageId: `m${i}` });
  }
  return out;
}

function reserveOf(window: number): number {
  return window === DEFAULT_CONTEXT_WINDOW ? OUTPUT_RESERVED_TOKENS : window / 8;
}

/** The child: warms up on other records, then replays `n` tiny records at `window` and prints the seconds it took. */
export async function tinyChild(window: number, n: number): Promise<void> {
  const budget = defaultBudget({ window, reserve: reserveOf(window) });
  await replay(tinyRecords(TINY_SIZES[0]!, 'warm-'), { budget, counter: new O200kTokenCounter() });
  const records = tinyRecords(n);
  const t = performance.now();
  await replay(records, { budget, counter: new O200kTokenCounter() });
  process.stdout.write(String((performance.now() - t) / 1000));
}

function timeInChild(window: number, n: number): number {
  const child = spawnSync(process.execPath, [process.argv[1]!, TINY_CHILD_FLAG, String(window), String(n)], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (child.status !== 0) throw new Error(`the tiny-records bench child failed: ${child.stderr}`);
  return Number(child.stdout);
}

export async function runTinyBench(): Promise<void> {
  console.log('');
  console.log('Replay time by number of tiny records (a model call before every step, as `context-keeper replay`; each run in a fresh process, the fastest of three)');
  console.log('| window | 10k records | 50k records | 200k records | 200k ÷ 10k |');
  console.log('|---|---:|---:|---:|---:|');
  const ratios: string[] = [];
  for (const window of [DEFAULT_CONTEXT_WINDOW, 16_000]) {
    const seconds: number[] = [];
    for (const n of TINY_SIZES) {
      seconds.push(Math.min(timeInChild(window, n), timeInChild(window, n), timeInChild(window, n)));
    }
    const ratio = seconds[seconds.length - 1]! / seconds[0]!;
    console.log(`| ${window.toLocaleString('en-US')} | ${seconds.map((s) => `${s.toFixed(1)} s`).join(' | ')} | ${ratio.toFixed(1)} |`);
    ratios.push(`${window / 1000}k ${ratio.toFixed(1)}`);
  }
  console.log(`ratio 4 — replay of 200k tiny records ÷ 10k: ${ratios.join(', ')} — target ≤ 25 (linear): ${ratios.every((r) => Number(r.split(' ')[1]) <= 25) ? 'OK' : 'OVER'}`);
}
