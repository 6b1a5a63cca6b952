/**
 * A session of hundreds of turns (issue 13, linear in records): the request
 * log shows the first and the latest requests and points to the rest, and the
 * loss ledger counts the elided goals as elided, not as defects at every fold.
 */
import { strict as assert } from 'node:assert';
import { defaultBudget } from '../../src/core/budget';
import { ProviderMeter, replay } from '../../src/core/replay';
import { CompactionSession } from '../../src/core/session';
import { REQUESTS_SHOWN } from '../../src/core/summary';
import { CharRatioTokenCounter } from '../../src/core/tokens';
import { RecordBuilder } from './engineHarness';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

describe('a session of hundreds of turns', function () {
  this.timeout(60_000);

  it('shows the first and the latest requests, points to the rest, and the ledger calls them elided', async () => {
    const b = new RecordBuilder();
    const turns = REQUESTS_SHOWN + 200;
    for (let i = 0; i < turns; i++) b.user(`Task ${i}: rename helper ${i} to util ${i}.`).step(`Renamed helper ${i} in every module that imported it, updated the call sites and the docs, and ran the unit tests of the package again: all of them pass.`);
    const { messages, ledger } = await replay(b.records, { budget: defaultBudget({ window: 16_000, reserve: 2_000 }), counter: new CharRatioTokenCounter(), redactor });
    const head = messages[0]!.content;
    assert.match(head, /- #1 \(r0\): Task 0: rename helper 0/);
    assert.match(head, /- #2–#\d+ \(r\d+–r\d+\): \d+ earlier requests, in the record/);
    const shown = head.split('\n').filter((l) => /^- #\d+ \(r\d+\): Task /.test(l) || /^- \[Request\] #\d+ /.test(l)).length;
    assert.ok(shown <= REQUESTS_SHOWN, `at most ${REQUESTS_SHOWN} requests in the head (${shown})`);
    const last = ledger.boundaries[ledger.boundaries.length - 1]!;
    assert.ok((last.elided ?? 0) > 0, JSON.stringify(last));
    assert.ok(!ledger.defects.some((d) => d.type === 'goal'), `no goal is a defect: ${ledger.defects.filter((d) => d.type === 'goal').length}`);
  });

  it('measures a call from the messages the engine kept: the same tokens and reuse as comparing the whole view', async () => {
    const b = new RecordBuilder();
    for (let i = 0; i < 60; i++) {
      b.user(`Task ${i}: check module ${i}.`).step(`Looked at module ${i}.`, [{ name: 'Read', input: { file_path: `src/m${i}.ts` }, output: `export const m${i} = ${i};\n`.repeat(40) }]);
    }
    const counter = new CharRatioTokenCounter();
    const session = new CompactionSession({ budget: defaultBudget({ window: 6_000, reserve: 1_000 }), counter, redactor });
    const hinted = new ProviderMeter(counter);
    const plain = new ProviderMeter(counter);
    let previous: ReturnType<typeof session.engine.project> = [];
    let kept = 0;
    let folded = false;
    for (const record of b.records) {
      if (session.opensStep(record)) {
        await session.step(record.index);
        const messages = session.engine.project();
        const known = session.engine.unchangedSinceLastProjection;
        kept += known;
        folded ||= session.engine.compactions.length > 0;
        assert.deepEqual(hinted.measure(messages, previous, known), plain.measure(messages, previous), `at r${record.index}`);
        previous = messages;
      }
      session.append(record);
    }
    assert.ok(folded && kept > 0, 'the run folded and kept messages between calls');
  });
});
