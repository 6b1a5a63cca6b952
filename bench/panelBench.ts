/**
 * The Task Context panel at scale: a task of 10k and of 50k tiny records
 * (bench/tinyRecords.ts) played as @keeper plays a turn at a 16k window, then
 * the host's snapshot of it (what the panel is sent after every step), timed
 * as the median of five after a first one. The panel gets a page of each long
 * list (evidence not loaded, files, compactions), so neither the snapshot nor
 * what is posted grows with the history; the target is under 20 ms at 50k.
 */
import { performance } from 'node:perf_hooks';
import { TaskSession } from '../src/agent/taskSession';
import { O200kTokenCounter } from '../src/adapters/o200kTokenCounter';
import type { Redactor } from '../src/core/redact';
import { ExtractiveSummarizer } from '../src/core/summarizer';
import { SummaryLineCounter } from '../src/core/summary';
import { MemoTokenCounter } from '../src/core/tokens';
import { buildPanelState, type LastSent } from '../src/panel/snapshot';
import { median } from './storeBench';
import { tinyRecords } from './tinyRecords';

const WINDOW = 16_000;

async function playedTask(n: number, redactor: Redactor): Promise<{ task: TaskSession; lastSent: LastSent | undefined }> {
  const counter = new O200kTokenCounter();
  const task = TaskSession.open(undefined, `bench-${n}`, `bench-${n}`, { window: WINDOW, reserve: WINDOW / 8, protectRecentSteps: 2, summaryCap: 2500 }, counter, redactor, new ExtractiveSummarizer(new SummaryLineCounter(counter), redactor, 2500));
  const session = task.session;
  let lastSent: LastSent | undefined;
  for (const record of tinyRecords(n)) {
    if (session.opensStep(record)) {
      const report = await session.step(task.nextIndex);
      lastSent = { messages: session.engine.project(), tokens: undefined, predicted: report.after, window: WINDOW };
    }
    const { index: _index, ...rest } = record;
    await task.append(rest);
    if (record.role === 'user') session.preflight();
  }
  return { task, lastSent };
}

export async function runPanelBench(redactor: Redactor): Promise<void> {
  console.log('');
  console.log(`Task Context panel: the host's snapshot after a step (median of 5, ${WINDOW.toLocaleString('en-US')} window)`);
  console.log('| records | parts not loaded | compactions | snapshot | posted |');
  console.log('|---:|---:|---:|---:|---:|');
  const results: number[] = [];
  for (const n of [10_000, 50_000]) {
    const { task, lastSent } = await playedTask(n, redactor);
    const counter = new MemoTokenCounter(new O200kTokenCounter(), 5_000);
    const snapshot = () => buildPanelState({ task, running: false, lastSent, notices: [], drift: null, counter });
    snapshot();
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      snapshot();
      times.push(performance.now() - started);
    }
    const middle = median(times);
    const state = snapshot();
    results.push(middle);
    console.log(`| ${n.toLocaleString('en-US')} | ${state.pages.notLoaded.total.toLocaleString('en-US')} | ${state.pages.compactions.total.toLocaleString('en-US')} | ${middle.toFixed(1)} ms | ${(JSON.stringify(state).length / 1024).toFixed(0)} KiB |`);
  }
  const at50k = results[results.length - 1]!;
  console.log(`panel snapshot of a 50k-record task: ${at50k.toFixed(1)} ms — target < 20 ms: ${at50k < 20 ? 'OK' : 'OVER'}`);
}
