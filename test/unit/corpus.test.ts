/**
 * The engine on the real sessions of ../shared/corpus (skipped, with the reason,
 * when the corpus is absent): every session loads and projects within
 * window − reserve at 16k and at the default window, and at 16k the projected
 * context keeps the requests and stated rules of the first quarter of each
 * session where a sliding window of the same size loses them.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { O200kTokenCounter } from '../../src/adapters/o200kTokenCounter';
import { DEFAULT_CONTEXT_WINDOW, OUTPUT_RESERVED_TOKENS } from '../../src/core/budget';
import { parseTranscript } from '../../src/core/transcript';
import { earlyProbes, scoreProbes, slidingWindow } from '../../src/eval/earlyContext';
import { runProjection } from '../../src/report/report';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

const corpus = process.env.CONTEXT_KEEPER_CORPUS ?? path.resolve(__dirname, '../../../../shared/corpus');
const sessionsDir = path.join(corpus, 'sessions');
const files = existsSync(sessionsDir) ? readdirSync(sessionsDir).filter((f) => f.endsWith('.jsonl')).sort() : [];

describe(`corpus sessions (${existsSync(sessionsDir) ? sessionsDir : `absent: ${sessionsDir}; set CONTEXT_KEEPER_CORPUS`})`, function () {
  this.timeout(300_000);

  before(function () {
    if (files.length === 0) this.skip();
  });

  for (const [window, reserve] of [
    [16_000, 2_000],
    [DEFAULT_CONTEXT_WINDOW, OUTPUT_RESERVED_TOKENS],
  ] as const) {
    it(`projects every session within window − reserve at --window ${window} --reserve ${reserve}`, async () => {
      const over: string[] = [];
      for (const file of files) {
        const transcript = parseTranscript(readFileSync(path.join(sessionsDir, file), 'utf8'), redactor);
        const { result } = await runProjection(transcript, { window, reserve, counter: new O200kTokenCounter(), redactor });
        if (result.tokens > window - reserve) over.push(`${file}: ${result.tokens}`);
        if (result.totals.maxTokens > window - reserve) over.push(`${file} (during replay): ${result.totals.maxTokens}`);
      }
      assert.deepEqual(over, []);
    });
  }

  it('keeps the first quarter\'s requests and rules at 16k where a sliding window loses them', async () => {
    const counter = new O200kTokenCounter();
    const window = 16_000;
    const reserve = 2_000;
    let total = 0;
    let keptOurs = 0;
    let keptSliding = 0;
    const rows: string[] = [];
    const lost: string[] = [];
    for (const file of files) {
      const transcript = parseTranscript(readFileSync(path.join(sessionsDir, file), 'utf8'), redactor);
      const probes = earlyProbes(transcript.records);
      if (probes.length === 0) continue;
      const { result } = await runProjection(transcript, { window, reserve, counter: new O200kTokenCounter(), redactor });
      const raw = await runProjection(transcript, { window: 1_000_000_000, reserve: 0, counter: new O200kTokenCounter(), redactor });
      const sliding = slidingWindow(raw.result.messages, window - reserve, counter);
      const ours = scoreProbes(probes, result.messages);
      const theirs = scoreProbes(probes, sliding);
      total += probes.length;
      keptOurs += ours.kept;
      keptSliding += theirs.kept;
      rows.push(`${file.slice(0, 70).padEnd(70)} ${String(probes.length).padStart(3)} probes  ours ${ours.kept}  sliding ${theirs.kept}`);
      for (const m of ours.missing) lost.push(`${file} r${m.record} ${m.kind}: ${m.text}`);
    }
    if (process.env.CONTEXT_KEEPER_VERBOSE) console.log(rows.join('\n'));
    console.log(`      early probes kept at 16k: ours ${keptOurs}/${total} (${((100 * keptOurs) / total).toFixed(1)}%), sliding window ${keptSliding}/${total} (${((100 * keptSliding) / total).toFixed(1)}%)`);
    assert.ok(total >= 30, `too few probes (${total})`);
    if (lost.length) console.log(`      not kept:\n${lost.map((l) => `        ${l}`).join("\n")}`);
    assert.ok(keptOurs / total >= 0.95, `ours kept only ${keptOurs}/${total}; lost:\n${lost.join('\n')}`);
    assert.ok(keptSliding / total <= 0.6, `sliding window kept ${keptSliding}/${total}: the probes are not discriminating`);
  });
});
