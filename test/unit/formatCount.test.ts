import * as assert from 'node:assert/strict';
import { formatCount } from '../../src/core/formatCount';

describe('formatCount', () => {
  it('writes counts as toLocaleString("en-US") does, without ICU', () => {
    const samples = [0, -0, 7, -7, 999, 1000, -1000, 12_307, 200_000, 1_234_567, -9_876_543_210, Number.MAX_SAFE_INTEGER, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 1e21];
    for (let i = 0; i < 2000; i++) samples.push(Math.floor((i * 7919 - 5_000_000) * 10 ** (i % 9)));
    for (const n of samples) assert.equal(formatCount(n), n.toLocaleString('en-US'), String(n));
  });
});
