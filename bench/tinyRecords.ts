/**
 * Ratio 4: a replay is linear in records. 10k, 50k and 200k tiny records (a
 * user turn every 50 records, short replies, small tool calls) replayed as
 * the CLI replays a transcript — a model call before every step — at the
 * default window and at 16k. Linear means the 200k run takes at most 25×
 * the 10k run (20× the records, within noise). Each run is timed in a fresh
 * process, after an untimed warm-up replay of other records (the code is
 * compiled, but no cache holds the measured records' texts, and no heap is
 * left over by an earlier run).
 *
 * The runs go in TINY_ROUNDS rounds of every size, and each size reports the
 * median of its rounds. Not the fastest run: this machine has fast spells
 * (measured: 10k runs of one build took 0.34–0.37 s in one round and
 * 0.52–0.58 s in the next), and a 0.4 s run can fall wholly inside one where a
 * 10 s run cannot, so the fastest of each size compared a fast spell with an
 * average one. Rounds spread a slow spell over every size; the range is
 * printed beside the median.
 */
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { O200kTokenCounter } from '../src/adapters/o200kTokenCounter';
import { DEFAULT_CONTEXT_WINDOW, defaultBudget, OUTPUT_RESERVED_TOKENS } from '../src/core/budget';
import type { Redactor } from '../src/core/redact';
import { replay } from '../src/core/replay';
import type { RawRecord } from '../src/core/types';
import { median } from './storeBench';

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
export async function tinyChild(window: number, n: number, redactor: Redactor): Promise<void> {
  const budget = defaultBudget({ window, reserve: reserveOf(window) });
  await replay(tinyRecords(TINY_SIZES[0]!, 'warm-'), { budget, counter: new O200kTokenCounter(), redactor });
  const records = tinyRecords(n);
  const t = performance.now();
  await replay(records, { budget, counter: new O200kTokenCounter(), redactor });
  process.stdout.write(String((performance.now() - t) / 1000));
}

function timeInChild(window: number, n: number): number {
  const child = spawnSync(process.execPath, [process.argv[1]!, TINY_CHILD_FLAG, String(window), String(n)], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (child.status !== 0) throw new Error(`the tiny-records bench child failed: ${child.stderr}`);
  return Number(child.stdout);
}

/** Rounds of every size: each size reports the median of its runs. */
const TINY_ROUNDS = 5;

export async function runTinyBench(): Promise<void> {
  console.log('');
  console.log(`Replay time by number of tiny records (a model call before every step, as \`context-keeper replay\`; each run in a fresh process; the median of ${TINY_ROUNDS} rounds of every size, the range in brackets)`);
  console.log('| window | 10k records | 50k records | 200k records | 200k ÷ 10k |');
  console.log('|---|---:|---:|---:|---:|');
  const ratios: string[] = [];
  for (const window of [DEFAULT_CONTEXT_WINDOW, 16_000]) {
    const runs: number[][] = TINY_SIZES.map(() => []);
    for (let round = 0; round < TINY_ROUNDS; round++) TINY_SIZES.forEach((n, k) => runs[k]!.push(timeInChild(window, n)));
    const seconds = runs.map(median);
    const ratio = seconds[seconds.length - 1]! / seconds[0]!;
    const cell = (s: number, k: number): string => `${s.toFixed(2)} s (${Math.min(...runs[k]!).toFixed(2)}–${Math.max(...runs[k]!).toFixed(2)})`;
    console.log(`| ${window.toLocaleString('en-US')} | ${seconds.map(cell).join(' | ')} | ${ratio.toFixed(1)} |`);
    ratios.push(`${window / 1000}k ${ratio.toFixed(1)}`);
  }
  console.log(`ratio 4 — replay of 200k tiny records ÷ 10k: ${ratios.join(', ')} — target ≤ 25 (linear): ${ratios.every((r) => Number(r.split(' ')[1]) <= 25) ? 'OK' : 'OVER'}`);
}
