import * as assert from 'node:assert/strict';
import { nextTurn } from '../../src/core/turns';

describe('sharing the event loop', () => {
  it('nextTurn resumes one waiter a turn, in the order they asked', async () => {
    const order: string[] = [];
    const walk = async (name: string, steps: number): Promise<void> => {
      for (let step = 0; step < steps; step++) {
        await nextTurn();
        order.push(`${name}${step}`);
      }
    };
    // A turn of the event loop of its own for each step: an immediate queued by the test lands between two steps.
    const between: string[] = [];
    const walks = Promise.all([walk('a', 3), walk('b', 2)]);
    setImmediate(() => between.push(order.join(' ')));
    await walks;
    assert.deepEqual(order, ['a0', 'b0', 'a1', 'b1', 'a2']);
    assert.deepEqual(between, ['a0'], 'the steps of two walks waiting together do not run in one turn');
  });
});
