import { strict as assert } from 'node:assert';
import { ANTI_THRASH_LIMIT, computeBudget, type Budget } from '../../src/core/budget';
import {
  AntiThrashGate,
  CompactionLog,
  MIN_FOLD_SAVING_RATIO,
  clippableParts,
  clippedForm,
  firstClipShare,
  foldBoundary,
  foldTarget,
  highestTier,
  nearWindowStart,
  recentGrowth,
  reduceAlongLadder,
  summaryGrowth,
  type LadderView,
  type Tier,
} from '../../src/core/ladder';
import { InMemorySnapshotStore } from '../../src/core/store';
import type { Part, Unit, UnitKind } from '../../src/core/types';

function unitsOf(kinds: string): Unit[] {
  const byLetter: Record<string, UnitKind> = { u: 'user', s: 'step', y: 'system' };
  return [...kinds].map((k, i) => ({ kind: byLetter[k]!, step: undefined, turn: 0, firstRecord: i, lastRecord: i, parts: [] }));
}

/** A view whose rungs change its size as scripted, recording what the ladder asked for. */
class ScriptedView implements LadderView {
  readonly calls: string[] = [];
  size: number;
  first = 0;

  constructor(
    readonly budget: Budget,
    start: number,
    private readonly rungs: { shrink?: number[]; fold?: number[]; clip?: number } = {},
    private readonly units = 20,
    private readonly near = 15,
    private readonly planned: { ready?: number; span?: number } = {},
  ) {
    this.size = start;
  }

  unitCount(): number {
    return this.units;
  }
  predicted(): number {
    return this.size;
  }
  firstUnit(): number {
    return this.first;
  }
  nearWindowStart(): number {
    return this.near;
  }
  shrink(from: number, to: number, target: number): void {
    this.calls.push(`shrink ${from}-${to} to ${target}`);
    this.size = this.rungs.shrink?.shift() ?? this.size;
  }
  async fold(toUnit: number, minSaving: number): Promise<boolean> {
    this.calls.push(`fold to ${toUnit} saving ${minSaving}`);
    const next = this.rungs.fold?.shift();
    if (next === undefined) return false;
    this.size = next;
    this.first = toUnit;
    return true;
  }
  plannedBoundary(): number | undefined {
    return this.planned.ready;
  }
  plannedSpan(): number | undefined {
    return this.planned.span;
  }
  foldBoundary(limit: number): number {
    return limit - 1;
  }
  clipLastUnit(): void {
    this.calls.push('clip');
    this.size = this.rungs.clip ?? this.size;
  }
  note(tier: Tier, before: number, reactive?: boolean): void {
    this.calls.push(`note ${tier} ${before}→${this.size}${reactive ? ' reactive' : ''}`);
  }
}

describe('ladder', () => {
  const budget = computeBudget({ window: 100_000, reserve: 0 }); // trigger 65,000, stop 50,000

  describe('where a fold ends', () => {
    it('the near window starts at the Nth-last step, never before the first unit in view', () => {
      const units = unitsOf('usssussss');
      assert.equal(nearWindowStart(units, 0, 2), 7);
      assert.equal(nearWindowStart(units, 0, 5), 3);
      assert.equal(nearWindowStart(units, 4, 10), 4);
    });

    it('recent growth is the median size of the last steps in view, its peak the largest', () => {
      const units = unitsOf('ussssu');
      const sizes = [0, 10, 500, 30, 20, 99];
      assert.deepEqual(recentGrowth(units, 0, (i) => sizes[i]!), { median: 30, peak: 500 });
      assert.deepEqual(recentGrowth(units, 5, (i) => sizes[i]!), { median: 0, peak: 0 }, 'no step in view');
    });

    it('a fold aims below stop with room for the recent growth, and the summary grows with what it folds', () => {
      assert.equal(foldTarget(budget, 0), budget.stop);
      assert.equal(foldTarget(budget, 3000), budget.trigger - 8 * 3000);
      assert.equal(summaryGrowth(0, 5000, 1000), 300);
      assert.equal(summaryGrowth(10_000, 5000, 1000), 1800);
      assert.equal(summaryGrowth(100_000, 5000, 4900), 300, 'capped by the room left under the cap, at least 300');
    });

    it('folds the smallest prefix that reaches the target, up to the limit', () => {
      const tokens = [1000, 1000, 1000, 1000, 1000];
      assert.equal(foldBoundary(0, 5, 10_000, 7_500, (i) => tokens[i]!, () => 0), 3);
      assert.equal(foldBoundary(1, 5, 10_000, 7_500, (i) => tokens[i]!, () => 0), 4);
      assert.equal(foldBoundary(0, 5, 10_000, 7_500, (i) => tokens[i]!, () => 600), 4, 'the summary growth is allowed for');
      assert.equal(foldBoundary(0, 2, 10_000, 1_000, (i) => tokens[i]!, () => 0), 2);
    });
  });

  describe('the rungs', () => {
    it('a shrink that brings the view to stop is the only rung', async () => {
      const view = new ScriptedView(budget, 70_000, { shrink: [48_000] });
      await reduceAlongLadder(view);
      assert.deepEqual(view.calls, [`shrink 0-15 to ${budget.stop}`, 'note 1 70000→48000']);
    });

    it('in a narrow dead zone a view left above stop is folded; in a wide one it settles under the trigger', async () => {
      assert.equal(budget.foldAboveStop, true);
      const narrow = new ScriptedView(budget, 70_000, { shrink: [60_000], fold: [45_000] });
      await reduceAlongLadder(narrow);
      assert.deepEqual(narrow.calls, [`shrink 0-15 to ${budget.stop}`, 'note 1 70000→60000', `fold to 14 saving ${MIN_FOLD_SAVING_RATIO * budget.effective}`, 'note 2 60000→45000']);
      const wide = computeBudget({ window: 100_000, reserve: 0, triggerRatio: 0.9, stopRatio: 0.5 });
      const settled = new ScriptedView(wide, 95_000, { shrink: [80_000] });
      await reduceAlongLadder(settled);
      assert.deepEqual(settled.calls, [`shrink 0-15 to ${wide.stop}`, 'note 1 95000→80000']);
    });

    it('the fold takes a plan that still serves, else the planned span, else the smallest prefix that reaches the target', async () => {
      const saving = MIN_FOLD_SAVING_RATIO * budget.effective;
      const ready = new ScriptedView(budget, 90_000, { shrink: [80_000], fold: [55_000] }, 20, 15, { ready: 9, span: 6 });
      await reduceAlongLadder(ready);
      assert.equal(ready.calls[2], `fold to 9 saving ${saving}`);
      // The view outgrew the plan: its span is still folded (summarized ahead in the background), the rungs after it take the rest.
      const ahead = new ScriptedView(budget, 90_000, { shrink: [80_000, 60_000], fold: [70_000] }, 20, 15, { span: 6 });
      await reduceAlongLadder(ahead);
      assert.deepEqual(ahead.calls.slice(2), [`fold to 6 saving ${saving}`, 'note 2 80000→70000', `shrink 6-20 to ${budget.stop}`, 'note 3 70000→60000']);
      const none = new ScriptedView(budget, 90_000, { shrink: [80_000], fold: [55_000] });
      await reduceAlongLadder(none);
      assert.equal(none.calls[2], `fold to 14 saving ${saving}`);
    });

    it('still over the trigger, the prefix outside the near window is folded, and it must pay', async () => {
      const view = new ScriptedView(budget, 90_000, { shrink: [80_000], fold: [55_000] });
      await reduceAlongLadder(view);
      assert.deepEqual(view.calls, [`shrink 0-15 to ${budget.stop}`, 'note 1 90000→80000', `fold to 14 saving ${MIN_FOLD_SAVING_RATIO * budget.effective}`, 'note 2 80000→55000']);
    });

    it('then a breakthrough shrink of everything, and a fold of all but the last unit only when ② did not try', async () => {
      const view = new ScriptedView(budget, 90_000, { shrink: [80_000, 70_000], fold: [] }, 20, 0);
      await reduceAlongLadder(view);
      assert.deepEqual(view.calls, [
        `shrink 0-0 to ${budget.stop}`,
        'note 1 90000→80000',
        `shrink 0-20 to ${budget.stop}`,
        'note 3 80000→70000',
        `fold to 18 saving ${MIN_FOLD_SAVING_RATIO * budget.effective}`,
        'note 4 70000→70000',
      ]);
    });

    it('over the window a fold is the error recovery (any saving), and the last guard clips the last unit', async () => {
      const view = new ScriptedView(budget, 120_000, { shrink: [119_000, 118_000], fold: [117_000, 110_000], clip: 90_000 });
      await reduceAlongLadder(view);
      assert.deepEqual(view.calls, [
        `shrink 0-15 to ${budget.stop}`,
        'note 1 120000→119000',
        `fold to 14 saving ${MIN_FOLD_SAVING_RATIO * budget.effective}`,
        'note 2 119000→117000',
        `shrink 14-20 to ${budget.stop}`,
        'note 3 117000→118000',
        'fold to 18 saving 1',
        'note 4 118000→110000 reactive',
        'clip',
        'note 4 110000→90000 reactive',
      ]);
    });

    it('the highest tier of a step', () => {
      assert.equal(highestTier([]), 0);
      assert.equal(highestTier([{ atRecord: 1, tier: 1, before: 2, after: 1 }, { atRecord: 1, tier: 3, before: 2, after: 1 }, { atRecord: 1, tier: 2, before: 2, after: 1 }]), 3);
    });
  });

  describe('the emergency clip', () => {
    const long = 'x'.repeat(5000);
    const text: Part = { address: 'text:1', kind: 'text', role: 'assistant', record: 7, text: long };
    const tool: Part = { address: 'tool:t1', kind: 'tool', role: 'assistant', record: 8, text: '', tool: { callId: 't1', name: 'Agent', input: { prompt: 'go' }, output: long, isError: false, callRecord: 8, resultRecord: 9 } };
    const short: Part = { address: 'text:2', kind: 'text', role: 'assistant', record: 9, text: 'ok' };

    it('clips the long parts not dropped, sharing one budget', () => {
      const unit: Unit = { kind: 'step', step: 0, turn: 0, firstRecord: 7, lastRecord: 9, parts: [text, tool, short] };
      assert.deepEqual(clippableParts(unit, () => undefined).map((p) => p.address), ['text:1', 'tool:t1']);
      assert.deepEqual(clippableParts(unit, (a) => (a === 'tool:t1' ? { how: 'dropped', input: '', output: '', recover: undefined } : undefined)).map((p) => p.address), ['text:1']);
      assert.equal(firstClipShare(2), 4000);
      assert.equal(firstClipShare(20), 1000);
    });

    it('keeps the head and tail of a clipped part, with its pointer', () => {
      const form = clippedForm(tool, undefined, 400, 'view_tool_call("t1")');
      assert.equal(form.how, 'shrunk');
      assert.equal(form.input, '{"prompt":"go"}');
      assert.ok(form.output.startsWith('x'.repeat(300)));
      assert.ok(form.output.endsWith('x'.repeat(100)));
      assert.ok(form.output.includes('[… 4600 characters elided to fit the window; full text: view_tool_call("t1")]'));
      const clippedText = clippedForm(text, undefined, 400, 'record r7');
      assert.ok(clippedText.output.includes('full text: record r7'));
      assert.ok(clippedText.output.length < 600);
    });
  });

  describe('the gate and the log', () => {
    it('holds the ladder off after passes in a row that saved too little, for the turn only', () => {
      const gate = new AntiThrashGate();
      for (let i = 0; i < ANTI_THRASH_LIMIT; i++) {
        assert.equal(gate.isHeld, false);
        gate.passed(1, budget.effective);
      }
      assert.equal(gate.isHeld, true);
      assert.deepEqual(gate.stored(12), { turnRecord: 12, ineffective: ANTI_THRASH_LIMIT, held: true });
      gate.resume(gate.stored(12), 12);
      assert.equal(gate.isHeld, true, 'a resume inside the same turn keeps it');
      gate.resume(gate.stored(12), 40);
      assert.equal(gate.isHeld, false, 'a new turn resets it');
      gate.passed(1, budget.effective);
      gate.passed(budget.effective, budget.effective);
      gate.passed(1, budget.effective);
      assert.equal(gate.isHeld, false, 'an effective pass starts the count again');
    });

    it('keeps compactions in the store and reads them back, and counts the folds', () => {
      const snapshots = new InMemorySnapshotStore();
      const log = new CompactionLog(snapshots);
      log.add({ atRecord: 3, tier: 1, before: 10, after: 8 });
      log.add({ atRecord: 9, tier: 4, before: 8, after: 2, reactive: true });
      log.foldMade('appended', 'precomputed');
      log.foldMade('rendered', 'synchronous');
      log.foldSkipped();
      assert.equal(log.floors, 2);
      assert.equal(log.foldsSkipped, 1);
      assert.deepEqual(log.headLayouts, { appended: 1, rendered: 1 });
      assert.deepEqual(log.floorSources, { precomputed: 1, awaited: 0, synchronous: 1 });
      const resumed = new CompactionLog(snapshots);
      resumed.load();
      assert.deepEqual(resumed.compactions, log.compactions);
      resumed.load();
      assert.equal(resumed.compactions.length, 2, 'loaded once');
    });
  });
});
