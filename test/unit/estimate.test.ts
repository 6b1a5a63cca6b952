import { strict as assert } from 'node:assert';
import { MESSAGE_OVERHEAD_TOKENS } from '../../src/core/budget';
import { ViewEstimate, ViewMeter } from '../../src/core/estimate';
import { SessionRecord } from '../../src/core/parts';
import type { ReducedForm } from '../../src/core/store';
import { emptySummary, SummaryLineCounter } from '../../src/core/summary';
import { CachedTokenCounter } from '../../src/core/tokens';
import type { Part } from '../../src/core/types';
import { RecordBuilder, SpyCounter } from './engineHarness';

function partsOf(b: RecordBuilder): Part[] {
  const record = new SessionRecord();
  for (const r of b.records) record.append(r);
  return record.units.flatMap((u) => u.parts);
}

describe('estimate: the view measured', () => {
  describe('ViewEstimate', () => {
    it('sums the units, the summary and the blocks as each changes', () => {
      const e = new ViewEstimate();
      e.restart(100);
      e.addToUnit(3, 40);
      e.addToUnit(4, 60);
      e.addToUnit(3, -10);
      assert.equal(e.unit(3), 30);
      assert.equal(e.unit(9), 0);
      assert.equal(e.span(3, 5), 90);
      e.setBlocks(25);
      assert.equal(e.estimate, 100 + 90 + 25);
      e.setBlocks(5);
      assert.equal(e.estimate, 100 + 90 + 5);
      // A restart keeps the blocks as last measured and drops every unit.
      e.restart(7);
      assert.equal(e.estimate, 7 + 5);
      assert.equal(e.span(0, 10), 0);
      assert.equal(e.summaryTokens, 7);
    });

    it('a fold moves units into the summary, and a checkpoint puts them back exactly', () => {
      const e = new ViewEstimate();
      e.restart(50);
      for (let i = 0; i < 5; i++) e.addToUnit(i, 10 * (i + 1));
      e.setBlocks(8);
      const before = e.estimate;
      const saved = e.checkpoint(0, 3);
      const removed = e.fold(0, 3, 70);
      assert.equal(removed, 10 + 20 + 30);
      assert.equal(e.estimate, before - removed + (70 - 50));
      assert.equal(e.span(0, 3), 0);
      assert.equal(e.summaryTokens, 70);
      e.setBlocks(20);
      e.restore(saved);
      assert.equal(e.estimate, before);
      assert.equal(e.span(0, 5), 150);
      assert.equal(e.summaryTokens, 50);
      e.setBlocks(8);
      assert.equal(e.estimate, before, 'the blocks came back as they were measured');
    });

    it('predicts from the last real measurement plus what changed since', () => {
      const e = new ViewEstimate();
      e.addToUnit(0, 1000);
      assert.equal(e.predicted(), 1000);
      assert.deepEqual(e.observe(1300), { real: 1300, estimate: 1000 });
      e.addToUnit(1, 200);
      assert.equal(e.predicted(), 1500);
      e.restoreAnchor({ real: 10, estimate: 5000 });
      assert.equal(e.predicted(), 0, 'never below zero');
      e.restoreAnchor(undefined);
      assert.equal(e.predicted(), 1200);
    });
  });

  describe('ViewMeter', () => {
    const output = Array.from({ length: 200 }, (_, i) => `line ${i} of the file with some text`).join('\n');
    const parts = partsOf(new RecordBuilder().user('read the file please').step('Reading.', [{ name: 'Read', input: { file_path: 'src/a.ts' }, output }]));
    const tool = parts.find((p) => p.kind === 'tool')!;
    const text = parts.find((p) => p.kind === 'text' && p.role === 'user')!;

    it('counts each part once and a unit with its overhead', () => {
      const spy = new SpyCounter();
      const meter = new ViewMeter(new CachedTokenCounter(spy), new SummaryLineCounter(spy), new Map());
      const tokens = meter.partTokens(tool);
      const calls = spy.calls;
      assert.equal(meter.partTokens(tool), tokens);
      assert.equal(spy.calls, calls, 'counted again from the cache');
      assert.equal(meter.rawTokens(tool), tokens - MESSAGE_OVERHEAD_TOKENS);
      assert.equal(meter.partTokens(text), Math.ceil(text.text.length / 4));
      const unit = { kind: 'user' as const, step: undefined, turn: 0, firstRecord: 0, lastRecord: 0, parts: [text] };
      assert.equal(meter.unitTokens(unit), MESSAGE_OVERHEAD_TOKENS + Math.ceil(text.text.length / 4));
    });

    it('estimates a reduced form in proportion to the raw count, without tokenizing it', () => {
      const spy = new SpyCounter();
      const forms = new Map<string, ReducedForm>();
      const meter = new ViewMeter(new CachedTokenCounter(spy), new SummaryLineCounter(spy), forms);
      const raw = meter.partTokens(tool);
      const calls = spy.calls;
      forms.set(tool.address, { how: 'shrunk', input: '{"file_path":"src/a.ts"}', output: output.slice(0, output.length / 4), recover: 'view_tool_call("call_1")' });
      const reduced = meter.partTokens(tool);
      assert.equal(spy.calls, calls, 'the reduced form is not tokenized');
      assert.ok(reduced < raw / 2 && reduced > raw / 8, `${reduced} of ${raw}`);
      assert.equal(meter.rawTokens(tool), raw - MESSAGE_OVERHEAD_TOKENS, 'the raw size ignores the form');
    });

    it('measures a summary once per state', () => {
      const spy = new SpyCounter();
      const meter = new ViewMeter(new CachedTokenCounter(spy), new SummaryLineCounter(spy), new Map());
      const state = { ...emptySummary(), current: { goal: 'ship the parser', deliverable: '', status: 'tests pass', next: 'release' } };
      const tokens = meter.summaryTokensOf(state);
      assert.ok(tokens > MESSAGE_OVERHEAD_TOKENS);
      const calls = spy.calls;
      assert.equal(meter.summaryTokensOf(state), tokens);
      assert.equal(spy.calls, calls);
    });
  });
});
