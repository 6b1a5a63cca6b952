/**
 * `npm run bench`: the engine's hot path, measured side by side in one run.
 *
 * 1. Step-operation time as the history grows from 10k to 1M tokens: the
 *    per-step engine time (the compaction operation at the model-call boundary
 *    plus appending that step's records, which counts their new content and
 *    mints eager tool forms) in three bands of the same session. The ratio of
 *    the 1M band to the 10k band must stay under 1.5 (flat).
 * 2. Engine time per step divided by the time gpt-tokenizer alone needs to
 *    count that step's new content (goal: under 1.5). The tokenizer is timed
 *    after the engine on identical strings, so its merge cache is warm: the
 *    ratio is conservative.
 *
 * 3. (bench/storeBench.ts) append latency by database size.
 * 4. (bench/tinyRecords.ts) replay time of 10k, 50k and 200k tiny records: linear.
 * 5. (bench/panelBench.ts) the panel's snapshot of a 10k- and a 50k-record task;
 *    (bench/workspaceBench.ts) the workspace store at 10, 100 and 500 MB.
 *
 * `--tiny-only` and `--workspace-only` run one of those alone.
 *
 * Prints ratios, never passes or fails on absolute times: machines are shared.
 */
import { performance } from 'node:perf_hooks';
import { O200kTokenCounter } from '../src/adapters/o200kTokenCounter';
import { computeBudget, DEFAULT_CONTEXT_WINDOW, OUTPUT_RESERVED_TOKENS } from '../src/core/budget';
import { SecretRedactor, type Redactor } from '../src/core/redact';
import { CompactionSession } from '../src/core/session';
import { renderToolInput } from '../src/core/tools';
import type { RawRecord } from '../src/core/types';
import { runPanelBench } from './panelBench';
import { median, runStoreBench } from './storeBench';
import { runTinyBench, TINY_CHILD_FLAG, tinyChild } from './tinyRecords';
import { runWorkspaceBench, WORKSPACE_CHILD_FLAG, workspaceChild } from './workspaceBench';
import { SyntheticSession } from './syntheticSession';

const BANDS = [10_000, 100_000, 1_000_000];
const STEPS_PER_BAND = 100;

interface BandResult {
  band: number;
  historyStart: number;
  steps: number;
  engineMs: number[];
  tokenizerMs: number[];
  preflightMs: number[];
  compactions: number;
  viewTokens: number;
}


function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}

function contentOf(record: RawRecord): string[] {
  if (record.role === 'tool') return [record.toolOutput ?? record.content];
  if (record.toolName !== undefined) {
    return [renderToolInput({ callId: record.toolCallId ?? '', name: record.toolName, input: record.toolInput, output: undefined, isError: false, callRecord: 0, resultRecord: undefined })];
  }
  return [record.content];
}

async function run(measure: boolean, maxTokens: number, redactor: Redactor): Promise<BandResult[]> {
  const counter = new O200kTokenCounter();
  // The tokenizer side counts with a counter of its own: the two remember the chunks of texts they counted
  // (O200kTokenCounter), and sharing one would let whichever side counts second read the other's counts.
  const baseline = new O200kTokenCounter();
  const session = new CompactionSession({
    budget: computeBudget({ window: DEFAULT_CONTEXT_WINDOW, reserve: OUTPUT_RESERVED_TOKENS }),
    counter,
    redactor,
  });
  const generator = new SyntheticSession();
  let history = 0;
  const results: BandResult[] = [];
  let band: BandResult | undefined;
  let nextBand = 0;
  let generatorStep = 0;

  while (history < maxTokens || band) {
    if (!band && nextBand < BANDS.length && history >= BANDS[nextBand]!) {
      band = { band: BANDS[nextBand]!, historyStart: history, steps: 0, engineMs: [], tokenizerMs: [], preflightMs: [], compactions: session.engine.compactions.length, viewTokens: 0 };
      nextBand++;
    }
    const { records, user } = generator.next();
    if (user) {
      session.append(user);
      const t = performance.now();
      session.preflight();
      const ms = performance.now() - t;
      if (band) band.preflightMs.push(ms);
      history += counter.count(user.content);
    }
    // The engine's work for this step (the operation at the call boundary, then
    // the step's records) and, side by side, gpt-tokenizer counting the same new
    // content. The order alternates so that the tokenizer's merge cache favours
    // each side on half of the steps.
    const strings = records.flatMap(contentOf);
    let tokens = 0;
    let engineMs = 0;
    let tokenizerMs = 0;
    const timeTokenizer = (): void => {
      const t1 = performance.now();
      tokens = 0;
      for (const s of strings) tokens += baseline.count(s);
      tokenizerMs = performance.now() - t1;
    };
    if (generatorStep % 2 === 1) timeTokenizer();
    const t0 = performance.now();
    for (const record of records) {
      if (session.opensStep(record)) await session.step(record.index);
      session.append(record);
    }
    engineMs = performance.now() - t0;
    if (generatorStep % 2 === 0) timeTokenizer();
    generatorStep++;
    // the provider's real count of what was sent would refresh the anchor here
    session.engine.observeRealTokens(session.engine.estimated());
    history += tokens;
    if (band && measure) {
      band.engineMs.push(engineMs);
      band.tokenizerMs.push(tokenizerMs);
      band.steps++;
      if (band.steps >= STEPS_PER_BAND) {
        band.compactions = session.engine.compactions.length - band.compactions;
        band.viewTokens = session.engine.estimated();
        results.push(band);
        band = undefined;
        if (nextBand >= BANDS.length) break;
      }
    } else if (band && !measure) {
      band = undefined;
    }
  }
  return results;
}

const ROUNDS = 3;

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

async function main(redactor: Redactor): Promise<void> {
  if (process.argv.includes('--tiny-only')) return runTinyBench();
  if (process.argv.includes('--workspace-only')) return runWorkspaceBench(redactor);
  const t = performance.now();
  process.stdout.write('warming up the JIT on a throwaway session… ');
  await run(false, 150_000, redactor);
  process.stdout.write(`${((performance.now() - t) / 1000).toFixed(1)} s\n`);
  const flatMedians: number[] = [];
  const flatMeans: number[] = [];
  const overheadMedians: number[] = [];
  const overheadSums: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const results = await run(true, BANDS[BANDS.length - 1]! + 200_000, redactor);
    console.log('');
    console.log(`round ${round}/${ROUNDS} — window ${DEFAULT_CONTEXT_WINDOW}, reserve ${OUTPUT_RESERVED_TOKENS}; ${STEPS_PER_BAND} steps per band, o200k tokens`);
    console.log('| history at band start | view tokens at end | engine ms/step (median) | engine ms/step (mean) | tokenizer ms/step (median) | engine ÷ tokenizer (median of steps) | engine ÷ tokenizer (sums) | compactions in band | preflight ms (mean) |');
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of results) {
      const perStep = r.engineMs.map((e, i) => e / Math.max(1e-6, r.tokenizerMs[i]!));
      console.log(
        `| ${r.historyStart.toLocaleString('en-US')} | ${r.viewTokens.toLocaleString('en-US')} | ${median(r.engineMs).toFixed(3)} | ${mean(r.engineMs).toFixed(3)} | ${median(r.tokenizerMs).toFixed(3)} | ${median(perStep).toFixed(2)} | ${(sum(r.engineMs) / sum(r.tokenizerMs)).toFixed(2)} | ${r.compactions} | ${r.preflightMs.length ? mean(r.preflightMs).toFixed(3) : '–'} |`,
      );
    }
    const first = results[0]!;
    const last = results[results.length - 1]!;
    flatMedians.push(median(last.engineMs) / median(first.engineMs));
    flatMeans.push(mean(last.engineMs) / mean(first.engineMs));
    overheadMedians.push(median(last.engineMs.map((e, i) => e / Math.max(1e-6, last.tokenizerMs[i]!))));
    overheadSums.push(sum(last.engineMs) / sum(last.tokenizerMs));
  }
  const flat = median(flatMedians);
  const overhead = median(overheadMedians);
  console.log('');
  console.log(`(each ratio is the median over ${ROUNDS} rounds; means include garbage-collection pauses and the amortized cost of compaction passes)`);
  console.log(`ratio 1 — step time with 1M tokens of history ÷ with 10k: ${flat.toFixed(2)} (per-step medians; means: ${median(flatMeans).toFixed(2)}) — target < 1.5: ${flat < 1.5 ? 'OK' : 'OVER'}`);
  console.log(`ratio 2 — engine time ÷ gpt-tokenizer time for the same new content, 1M band: ${overhead.toFixed(2)} (median of steps; sums: ${median(overheadSums).toFixed(2)}) — goal < 1.5: ${overhead < 1.5 ? 'OK' : 'OVER'}`);
  if (!process.argv.includes('--engine-only')) {
    await runTinyBench();
    await runPanelBench(redactor);
    await runStoreBench(redactor);
    await runWorkspaceBench(redactor);
  }
}

/** The benchmarks' composition root: one redactor for the process (a child process of a bench builds its own), passed to every bench. */
function start(): Promise<void> {
  const redactor = new SecretRedactor();
  const child = process.argv.indexOf(WORKSPACE_CHILD_FLAG);
  const tiny = process.argv.indexOf(TINY_CHILD_FLAG);
  return child >= 0 ? workspaceChild(process.argv[child + 1]!, Number(process.argv[child + 2] ?? 0), redactor) : tiny >= 0 ? tinyChild(Number(process.argv[tiny + 1]), Number(process.argv[tiny + 2]), redactor) : main(redactor);
}

void start();
