/**
 * The session store under growth: append latency with a database of about 1,
 * 10 and 100 MB (the ratio 100 MB / 1 MB must stay under 1.5: an append is a
 * journal line and an fsync, never an export), the cost of a checkpoint at each
 * size, and the time to open a store holding 10,000 records and 100 MB of
 * payloads (payloads are not loaded).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Redactor } from '../src/core/redact';
import type { RawRecord } from '../src/core/types';
import { SessionStore } from '../src/store/sessionStore';

const SIZES_MB = [1, 10, 100];
const TIMED_APPENDS = 200;

/** The median (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** A tool result of `chars` characters, unique per index (under the payload threshold when chars < 32k). */
function toolRecord(index: number, chars: number): RawRecord {
  const line = `${index.toString(36)} result line with some ordinary log text in it\n`;
  return { index, role: 'tool', content: '', toolName: 'Bash', toolCallId: `t${index}`, toolOutput: line.repeat(Math.ceil(chars / line.length)).slice(0, chars) };
}

function smallRecord(index: number): RawRecord {
  return { index, role: 'assistant', content: `step ${index}: a short message of about a hundred characters, as a model writes between calls.` };
}

export async function runStoreBench(redactor: Redactor): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ck-store-bench-'));
  try {
    console.log('');
    console.log('Session store: append latency and checkpoint cost by database size');
    const file = path.join(dir, 'grow.db');
    const store = await SessionStore.open(file, { checkpointDelayMs: 0, redactor });
    store.createSession('s', 'bench');
    let index = 0;
    const rows: { size: number; append: number; checkpoint: number; database: number }[] = [];
    for (const mb of SIZES_MB) {
      // grow (untimed) with 24 KB results, under the payload threshold, so the database itself grows
      while (index === 0 || store.sizes().database < mb * 1024 * 1024) {
        for (let k = 0; k < 40; k++) await store.appendRecord('s', toolRecord(index++, 24 * 1024));
        store.checkpoint();
      }
      const times: number[] = [];
      for (let k = 0; k < TIMED_APPENDS; k++) {
        const record = smallRecord(index++);
        const t = performance.now();
        await store.appendRecord('s', record);
        times.push(performance.now() - t);
      }
      const t = performance.now();
      store.checkpoint();
      const checkpoint = performance.now() - t;
      rows.push({ size: mb, append: median(times), checkpoint, database: store.sizes().database });
    }
    store.close();
    console.log('| target size | database bytes | append ms (median of 200, fsync included) | checkpoint ms |');
    console.log('|---:|---:|---:|---:|');
    for (const r of rows) console.log(`| ${r.size} MB | ${r.database.toLocaleString('en-US')} | ${r.append.toFixed(3)} | ${r.checkpoint.toFixed(1)} |`);
    const ratio = rows[rows.length - 1]!.append / rows[0]!.append;
    console.log(`ratio 3 — append latency at 100 MB ÷ at 1 MB: ${ratio.toFixed(2)} (target < 1.5) ${ratio < 1.5 ? 'OK' : 'OVER'}`);

    // open: 10,000 records, 100 MB of payloads
    const big = path.join(dir, 'open.db');
    const writer = await SessionStore.open(big, { checkpointDelayMs: 0, redactor });
    writer.createSession('big', 'open bench');
    let payloadRecords = 0;
    for (let i = 0; i < 10_000; i++) {
      if (i % 5 === 0 && payloadRecords < 2_000) {
        await writer.appendRecord('big', toolRecord(i, 50 * 1024));
        payloadRecords++;
      } else await writer.appendRecord('big', smallRecord(i));
    }
    writer.close();
    const heapBefore = process.memoryUsage().heapUsed;
    const t = performance.now();
    const reader = await SessionStore.open(big, { checkpointDelayMs: 0, redactor });
    const count = reader.recordCount('big');
    const openMs = performance.now() - t;
    const heapDelta = process.memoryUsage().heapUsed - heapBefore;
    const sizes = reader.sizes();
    reader.close();
    console.log(
      `open: ${count.toLocaleString('en-US')} records, ${(sizes.payloads / 1024 / 1024).toFixed(0)} MB of payloads, database ${(sizes.database / 1024 / 1024).toFixed(1)} MB: ${openMs.toFixed(0)} ms, heap +${(heapDelta / 1024 / 1024).toFixed(0)} MB`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
