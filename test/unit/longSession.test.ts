/**
 * A session of hundreds of turns (issue 13, linear in records): the request
 * log shows the first and the latest requests and points to the rest, and the
 * loss ledger counts the elided goals as elided, not as defects at every fold.
 */
import { strict as assert } from 'node:assert';
import { defaultBudget } from '../../src/core/budget';
import { replay } from '../../src/core/replay';
import { REQUESTS_SHOWN } from '../../src/core/summary';
import { CharRatioTokenCounter } from '../../src/core/tokens';
import { RecordBuilder } from './engineHarness';

describe('a session of hundreds of turns', function () {
  this.timeout(60_000);

  it('shows the first and the latest requests, points to the rest, and the ledger calls them elided', async () => {
    const b = new RecordBuilder();
    const turns = REQUESTS_SHOWN + 200;
    for (let i = 0; i < turns; i++) b.user(`Task ${i}: rename helper ${i} to util ${i}.`).step(`Renamed helper ${i} in every module that imported it, updated the call sites and the docs, and ran the unit tests of the package again: all of them pass.`);
    const { messages, ledger } = await replay(b.records, { budget: defaultBudget({ window: 16_000, reserve: 2_000 }), counter: new CharRatioTokenCounter() });
    const head = messages[0]!.content;
    assert.match(head, /- #1 \(r0\): Task 0: rename helper 0/);
    assert.match(head, /- #2–#\d+ \(r\d+–r\d+\): \d+ earlier requests, in the record/);
    const shown = head.split('\n').filter((l) => /^- #\d+ \(r\d+\): Task /.test(l) || /^- \[Request\] #\d+ /.test(l)).length;
    assert.ok(shown <= REQUESTS_SHOWN, `at most ${REQUESTS_SHOWN} requests in the head (${shown})`);
    const last = ledger.boundaries[ledger.boundaries.length - 1]!;
    assert.ok((last.elided ?? 0) > 0, JSON.stringify(last));
    assert.ok(!ledger.defects.some((d) => d.type === 'goal'), `no goal is a defect: ${ledger.defects.filter((d) => d.type === 'goal').length}`);
  });
});
