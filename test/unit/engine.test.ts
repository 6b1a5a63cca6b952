import { strict as assert } from 'node:assert';
import {
  COMPACTION_PROTECT_RECENT_STEPS,
  COMPACTION_STOP_RATIO,
  COMPACTION_TRIGGER_RATIO,
  computeBudget,
  isNearWindow,
  type Budget,
  isOverTrigger,
} from '../../src/core/budget';
import { DelayedRunner } from '../../src/core/background';
import { SessionRecord } from '../../src/core/parts';
import { ANCHOR_KEY, FLOOR_PREFIX, InMemorySnapshotStore, InMemoryToolCompactionStore } from '../../src/core/store';
import { continuationQuestionTokens, ExtractiveSummarizer, type FoldInput, type Summarizer } from '../../src/core/summarizer';
import { renderSummary, type SummaryState } from '../../src/core/summary';
import { renderUnit } from '../../src/core/engine';
import { budgetOf, newSession, play, RecordBuilder, SpyCounter } from './engineHarness';
import { CharRatioTokenCounter } from '../../src/core/tokens';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

function longSession(steps: number, linesPerRead = 200): RecordBuilder {
  const b = new RecordBuilder();
  b.user('Refactor the parser. You must never modify the production database. Keep the public API unchanged.');
  for (let i = 0; i < steps; i++) {
    if (i % 7 === 3) b.user(`Also handle case ${i}: please add a test for it.`);
    b.read(`src/file${i}.ts`, linesPerRead, `Reading file ${i} to understand it.`);
  }
  return b;
}

describe('parts and addresses', () => {
  it('addresses tool parts by toolCallId and text by content hash, never by message id', () => {
    const b = new RecordBuilder().user('hello there, fix the bug').step('Looking at it.', [{ name: 'Grep', input: { pattern: 'bug' }, output: 'a.ts:1: bug' }]);
    const record = new SessionRecord();
    for (const r of b.records) record.append(r);
    const addresses = record.units.flatMap((u) => u.parts.map((p) => p.address));
    assert.ok(addresses.includes('tool:call_1'));
    assert.ok(addresses.every((a) => /^(tool:call_\d+|text:[0-9a-f]{16}|reasoning:[0-9a-f]{16})$/.test(a)), addresses.join(','));
    assert.ok(addresses.every((a) => !a.includes('msg_')));
    // same content → same address, whatever record it came from
    const again = new SessionRecord();
    again.append({ index: 0, role: 'user', content: 'hello there, fix the bug' });
    assert.equal(again.units[0]!.parts[0]!.address, record.units[0]!.parts[0]!.address);
  });

  it('splits steps where the response id changes and joins results to their calls', () => {
    const record = new SessionRecord();
    const rs = [
      { index: 0, role: 'user' as const, content: 'go' },
      { index: 1, role: 'assistant' as const, content: 'a', messageId: 'm1' },
      { index: 2, role: 'assistant' as const, content: '', toolName: 'Bash', toolCallId: 't1', toolInput: { command: 'ls' }, messageId: 'm1' },
      { index: 3, role: 'tool' as const, content: '', toolCallId: 't1', toolOutput: 'x' },
      { index: 4, role: 'assistant' as const, content: 'b', messageId: 'm1' },
      { index: 5, role: 'assistant' as const, content: 'c', messageId: 'm2' },
      { index: 6, role: 'tool' as const, content: '', toolCallId: 'orphan', toolOutput: 'late' },
    ];
    for (const r of rs) record.append(r);
    const kinds = record.units.map((u) => `${u.kind}:${u.firstRecord}-${u.lastRecord}`);
    assert.deepEqual(kinds, ['user:0-0', 'step:1-4', 'step:5-6']);
    assert.equal(record.findTool('t1')!.output, 'x');
    assert.equal(record.findTool('orphan')!.output, 'late');
    assert.equal(record.steps, 2);
  });

  it('without response ids, a run of assistant records is one step and tool results close it', () => {
    const record = new SessionRecord();
    const rs = [
      { index: 0, role: 'assistant' as const, content: 'a' },
      { index: 1, role: 'assistant' as const, content: '', toolName: 'x', toolCallId: 's1' },
      { index: 2, role: 'tool' as const, content: '', toolCallId: 's1', toolOutput: 'o' },
      { index: 3, role: 'assistant' as const, content: 'b' },
    ];
    assert.equal(record.opensStep(rs[0]!), true);
    for (const r of rs) record.append(r);
    assert.deepEqual(record.units.map((u) => u.firstRecord), [0, 3]);
  });

  it('keeps duplicate tool call ids apart', () => {
    const record = new SessionRecord();
    record.append({ index: 0, role: 'assistant', content: '', toolName: 'x', toolCallId: 'ss_1' });
    record.append({ index: 1, role: 'tool', content: '', toolCallId: 'ss_1', toolOutput: 'first' });
    record.append({ index: 2, role: 'user', content: 'again' });
    record.append({ index: 3, role: 'assistant', content: '', toolName: 'x', toolCallId: 'ss_1' });
    record.append({ index: 4, role: 'tool', content: '', toolCallId: 'ss_1', toolOutput: 'second' });
    const addresses = record.units.flatMap((u) => u.parts.filter((p) => p.kind === 'tool').map((p) => p.address));
    assert.deepEqual(addresses, ['tool:ss_1', 'tool:ss_1#r3']);
  });
});

describe('budget', () => {
  it('computes trigger and stop on wEff = window − reserve', () => {
    const b = computeBudget({ window: 16000, reserve: 2000 });
    assert.equal(b.effective, 14000);
    assert.equal(b.trigger, Math.floor(14000 * COMPACTION_TRIGGER_RATIO));
    assert.equal(b.trigger, 9100);
    assert.equal(b.stop, Math.floor(14000 * COMPACTION_STOP_RATIO));
    assert.equal(b.stop, 7000);
    assert.equal(isOverTrigger(b, 9100), false);
    assert.equal(isOverTrigger(b, 9101), true);
    assert.throws(() => computeBudget({ window: 1000, reserve: 1000 }), /reserve/);
    // A pass that ends within 1% of the window is taken as over it: no call has measured the reshaped view yet.
    assert.ok(13_978 <= b.effective);
    assert.equal(isNearWindow(b, 13_978), true);
    assert.equal(isNearWindow(b, 13_850), false);
  });

  it('does nothing in the dead zone (stop, trigger]', async () => {
    const b = longSession(6, 30);
    const probe = newSession(budgetOf(1_000_000));
    await play(probe, b.records);
    const size = probe.engine.predicted();
    // a window whose dead zone contains the final size
    const window = Math.ceil(size / ((COMPACTION_STOP_RATIO + COMPACTION_TRIGGER_RATIO) / 2));
    const budget = budgetOf(window);
    assert.ok(size > budget.stop && size <= budget.trigger, 'the final size lies in the dead zone (stop, trigger]');
    const s = newSession(budget);
    await play(s, b.records);
    const report = await s.step(b.records.length);
    assert.equal(report.tier, 0);
    assert.equal(s.engine.compactions.length, 0);
  });
});

describe('real-token calibration', () => {
  it('predicts anchor + increment, and a cold start is pure estimation', () => {
    const b = new RecordBuilder().user('do it').step('ok', [{ name: 'Bash', input: { command: 'ls' }, output: 'a\nb' }]);
    const s = newSession(budgetOf(100_000));
    for (const r of b.records) s.append(r);
    const cold = s.engine.predicted();
    assert.equal(cold, s.engine.estimated());
    s.engine.observeRealTokens(5000);
    assert.equal(s.engine.predicted(), 5000);
    const base = s.engine.estimated();
    assert.ok(base >= cold, 'the measured view includes the protected-state block');
    s.append({ index: b.records.length, role: 'user', content: 'x'.repeat(400) });
    const increment = s.engine.estimated() - base;
    assert.ok(increment >= 100);
    assert.equal(s.engine.predicted(), 5000 + increment);
    const stored = s.snapshots.get(ANCHOR_KEY);
    assert.deepEqual(stored, { type: 'anchor', anchor: { real: 5000, estimate: base } });
  });

  it('persists the anchor as meta:anchor and seeds the next turn from it', () => {
    const snapshots = new InMemorySnapshotStore();
    const b = new RecordBuilder().user('first').step('done');
    const s1 = newSession(budgetOf(100_000), { snapshots });
    for (const r of b.records) s1.append(r);
    s1.engine.observeRealTokens(777);
    const s2 = newSession(budgetOf(100_000), { snapshots });
    for (const r of b.records) s2.append(r);
    s2.preflight();
    assert.equal(s2.engine.predicted(), 777);
  });

  it('never re-tokenizes unchanged content on the hot path', async () => {
    const counter = new SpyCounter();
    const b = longSession(30, 50);
    const s = newSession(budgetOf(1_000_000), { counter });
    await play(s, b.records);
    const before = counter.calls;
    for (let i = 0; i < 20; i++) await s.step(b.records.length);
    assert.equal(counter.calls, before, 'steps with no new content must not count tokens');
    s.append({ index: b.records.length, role: 'user', content: 'one more' });
    assert.equal(counter.calls, before + 1, 'a new part is counted once');
  });
});

describe('one model call', () => {
  it('prepareCall steps, projects, and runs the state channel\'s checks only when the step compacted', async () => {
    const b = longSession(14, 150);
    const s = newSession(budgetOf(20_000));
    let checked = 0;
    for (const r of b.records) {
      if (s.opensStep(r)) {
        const call = await s.prepareCall(r.index);
        assert.deepEqual(call.messages, s.engine.project(), 'the messages are the projection after the step');
        assert.equal(call.boundary !== undefined, call.report.compactions.length > 0);
        if (call.boundary) checked++;
        const sent = call.messages.reduce((n, m) => n + Math.ceil(m.content.length / 4) + 4, 0);
        s.observeSent(sent);
        assert.equal(s.engine.predicted(), sent, 'what was sent calibrates the estimate');
      }
      s.append(r);
      if (r.role === 'user') s.preflight();
    }
    assert.ok(checked > 0, 'the session compacted at least once');
  });
});

describe('the ladder', () => {
  const budget = budgetOf(20_000);

  it('keeps the view unchanged while under trigger', async () => {
    const b = longSession(3, 20);
    const s = newSession(budget);
    const reports = await play(s, b.records);
    assert.ok(reports.every((r) => r.report.tier === 0));
    assert.equal(s.engine.coverageEnd, 0);
  });

  it('in a narrow dead zone a shrink that stops above stop is followed by a fold; a wide one is settled in', async () => {
    const b = new RecordBuilder().user('Refactor the parser.');
    for (let i = 0; i < 60; i++) b.read(`src/file${i}.ts`, i % 5 === 0 ? 120 : 15, `Reading file ${i}.`);
    const passes = async (budget: Budget) => (await play(newSession(budget), b.records)).map((r) => r.report).filter((r) => r.compactions.length > 0);

    const narrow = computeBudget({ window: 20_000, reserve: 0 });
    assert.equal(narrow.foldAboveStop, true);
    const n = await passes(narrow);
    assert.ok(n.length > 0);
    for (const r of n) assert.ok(r.after <= narrow.stop || r.tier >= 2, `shrink-only pass left ${r.after} above stop ${narrow.stop}`);

    const wide = computeBudget({ window: 20_000, reserve: 0, triggerRatio: 0.9, stopRatio: 0.5 });
    assert.equal(wide.foldAboveStop, false);
    const w = await passes(wide);
    assert.ok(w.some((r) => r.tier === 1 && r.after > wide.stop && r.after <= wide.trigger), 'a wide dead zone keeps the shrink alone');
  });

  it('tier ① shrinks old tools oldest first and never touches the near window', async () => {
    const b = longSession(14, 150);
    const s = newSession(budget);
    const reports = await play(s, b.records);
    const tiers = reports.map((r) => r.report.tier);
    assert.ok(tiers.some((t) => t >= 1), `expected compaction, got ${tiers.join(',')}`);
    const units = s.record.units;
    const lastSteps = units.filter((u) => u.kind === 'step').slice(-COMPACTION_PROTECT_RECENT_STEPS);
    // when no breakthrough happened, the near window is raw
    if (!s.engine.compactions.some((c) => c.tier >= 3)) {
      for (const u of lastSteps) for (const p of u.parts) assert.equal(s.engine.formOf(p.address), undefined, `near-window part ${p.address} was reduced`);
    }
    // shrunk parts are a prefix of the tool parts in view (oldest first)
    const inView = units.filter((u) => u.firstRecord >= s.engine.coverageEnd).flatMap((u) => u.parts.filter((p) => p.kind === 'tool'));
    const flags = inView.map((p) => s.engine.formOf(p.address) !== undefined);
    const firstRaw = flags.indexOf(false);
    if (firstRaw >= 0) assert.ok(flags.slice(firstRaw).every((f) => !f) || s.engine.compactions.some((c) => c.tier >= 3), `not oldest-first: ${flags.join('')}`);
  });

  it('tiers ① and ② leave the last 5 steps raw', async () => {
    const b = longSession(40, 60);
    const s = newSession(budgetOf(30_000));
    await play(s, b.records);
    assert.ok(s.engine.compactions.some((c) => c.tier === 2), 'expected a floor summary');
    assert.ok(!s.engine.compactions.some((c) => c.tier >= 3), 'no breakthrough expected at this size');
    const steps = s.record.units.filter((u) => u.kind === 'step');
    const near = steps.slice(-COMPACTION_PROTECT_RECENT_STEPS);
    for (const u of near) {
      assert.ok(u.firstRecord >= s.engine.coverageEnd, 'near window folded');
      for (const p of u.parts) assert.equal(s.engine.formOf(p.address), undefined);
    }
  });

  it('breaks through the near window only when ① and ② cannot fit (③, ④)', async () => {
    const b = new RecordBuilder().user('Read these five huge files.');
    for (let i = 0; i < 5; i++) b.read(`big${i}.ts`, 400);
    const s = newSession(budgetOf(12_000));
    await play(s, b.records);
    const report = await s.step(b.records.length);
    const tiers = s.engine.compactions.map((c) => c.tier);
    assert.ok(tiers.includes(3), `expected tier 3, got ${tiers.join(',')} ${JSON.stringify(report)}`);
    assert.ok(s.engine.predicted() <= s.budget.effective);
  });

  it('folds with ④ when nothing is outside the near window and shrinking is not enough', async () => {
    const b = new RecordBuilder().user('Explain everything.');
    for (let i = 0; i < 5; i++) b.step(`Thoughts ${i}: ${'lorem ipsum dolor sit amet '.repeat(300)}`);
    const s = newSession(budgetOf(12_000));
    await play(s, b.records);
    // Over the trigger with no plan, the fold waits one call while its span (the breakthrough floor's, up to the
    // last unit) is summarized in the background; the call after it folds.
    const first = await s.step(b.records.length);
    const second = first.deferred ? await s.step(b.records.length) : first;
    assert.ok(!second.deferred, 'it waits one call at most');
    const tiers = s.engine.compactions.map((c) => c.tier);
    assert.ok(tiers.includes(4), `expected tier 4, got ${tiers.join(',')}`);
    assert.ok(!tiers.includes(2));
    assert.ok(s.engine.predicted() <= s.budget.effective);
  });

  it('a view one output took past the window waits a call for its fold when tier ① alone brings it back under', async () => {
    // Seven test runs (their outputs shrink well), then an 820-line log: the view jumps from below the watermark
    // (no plan) past the effective window. Shrinking the old runs brings it back under: the fold waits one call,
    // summarized meanwhile, and is then made from the summary computed ahead (the log, in the near window, is
    // shrunk by tier ③ after it). It waits once: a plan that cannot serve alone is not planned again.
    const b = new RecordBuilder().user('Run the suite until it passes, then read the log.');
    for (let i = 0; i < 7; i++) {
      const output = Array.from({ length: 120 }, (_, k) => `  ok ${k} test case ${k} of run ${i} passed in ${k}ms`).join('\n');
      b.step(`Run ${i}.`, [{ name: 'Bash', input: { command: 'npm test' }, output }]);
    }
    const before = b.records.length;
    b.read('logs/build.log', 820, 'Reading the build log.');
    const runner = new DelayedRunner(1);
    const s = newSession(budgetOf(20_000), { background: runner });
    await play(s, b.records, 0, before);
    for (let i = before; i < b.records.length; i++) s.append(b.records[i]!);
    await runner.tick();
    const first = await s.step(b.records.length);
    assert.ok(first.predicted > s.budget.effective, `the log takes the view past the window: ${first.predicted}`);
    assert.ok(first.deferred, 'the fold waits');
    assert.deepEqual(first.compactions.map((c) => c.tier), [1]);
    assert.ok(first.after <= s.budget.effective, `the call goes out under the window: ${first.after}`);
    b.step('The log names the missing import.');
    s.append(b.records[b.records.length - 1]!);
    await runner.tick();
    const second = await s.step(b.records.length);
    assert.ok(!second.deferred, 'it waits once');
    assert.ok(second.compactions.some((c) => c.tier === 2));
    assert.ok(second.after <= s.budget.trigger);
    assert.deepEqual(s.engine.floorSources, { precomputed: 1, awaited: 0, synchronous: 0 });
  });

  it('summarizes at most once per pass outside error recovery', async () => {
    const b = longSession(60, 80);
    const s = newSession(budgetOf(25_000));
    await play(s, b.records);
    const perCall = new Map<number, number>();
    for (const c of s.engine.compactions) {
      if ((c.tier === 2 || c.tier === 4) && !c.reactive) perCall.set(c.atRecord, (perCall.get(c.atRecord) ?? 0) + 1);
    }
    assert.ok(perCall.size > 0);
    for (const [at, n] of perCall) assert.equal(n, 1, `two floors at record ${at}`);
  });

  it('a shrink miss is a skip, never a drop', async () => {
    const b = new RecordBuilder().user('Look at these.');
    // outputs of a tool with no reducer rule ('other' family)
    for (let i = 0; i < 30; i++) b.step('', [{ name: 'mystery_tool', input: { i }, output: `row ${i} `.repeat(800) }]);
    const s = newSession(budgetOf(30_000));
    await play(s, b.records);
    const reduced = s.record.units.flatMap((u) => u.parts).filter((p) => s.engine.formOf(p.address) !== undefined);
    assert.equal(reduced.length, 0, 'no form exists, so nothing may be shrunk or dropped');
    assert.ok(s.engine.compactions.some((c) => c.tier === 2), 'the floor absorbs them instead');
  });

  it('drops only tools that declare their output disposable', async () => {
    const b = new RecordBuilder().user('Think hard.');
    for (let i = 0; i < 30; i++) b.step('', [{ name: 'mcp:sequentialthinking', input: { thought: `t${i}` }, output: `thinking ${i} `.repeat(300) }]);
    const s = newSession(budgetOf(20_000));
    await play(s, b.records);
    const forms = s.record.units.flatMap((u) => u.parts).map((p) => s.engine.formOf(p.address)).filter((f) => f !== undefined);
    assert.ok(forms.length > 0);
    assert.ok(forms.every((f) => f!.how === 'dropped' && f!.recover === undefined));
  });

  it('never lets the projection exceed the effective window when the floor fits', async () => {
    for (const [window, lines] of [[8000, 300], [12000, 120], [16000, 500]] as const) {
      const b = longSession(50, lines);
      const s = newSession(budgetOf(window, 1000));
      let max = 0;
      for (let i = 0; i < b.records.length; i++) {
        const r = b.records[i]!;
        if (s.opensStep(r)) {
          await s.step(i);
          const tokens = s.engine.project().reduce((n, m) => n + Math.ceil(m.content.length / 4) + 4, 0);
          s.engine.observeRealTokens(tokens);
          max = Math.max(max, tokens);
        }
        s.append(r);
        if (r.role === 'user') s.preflight();
      }
      assert.ok(max <= s.budget.effective, `window ${window}: ${max} > ${s.budget.effective}`);
    }
  });
});

describe('anti-thrash', () => {
  it('stops a futile loop after two ineffective compactions and resets on a new turn', async () => {
    // one step of plain text bigger than trigger: once the user message is folded nothing is left to reduce
    const b = new RecordBuilder().user('Talk.');
    b.step(`Step. ${'words '.repeat(3300)}`);
    const s = newSession(budgetOf(6_000), {
      summarizer: {
        name: 'useless',
        async fold(input: FoldInput): Promise<SummaryState> {
          throw new Error(`no model (${input.units.length})`);
        },
      },
    });
    await play(s, b.records);
    const r1 = await s.step(b.records.length);
    const r2 = await s.step(b.records.length);
    const r3 = await s.step(b.records.length);
    assert.equal(r1.held, false);
    assert.ok(r1.predicted > s.budget.trigger && r1.predicted <= s.budget.effective, `setup: ${JSON.stringify(r1)}`);
    assert.equal(r2.held, false);
    assert.equal(r3.held, true, 'third attempt must be held off');
    const r4 = await s.step(b.records.length);
    assert.equal(r4.held, true);
    assert.equal(s.engine.compactions.filter((c) => c.before !== c.after).length <= 1, true);
    assert.ok(s.engine.antiThrashHeld);
    s.append({ index: b.records.length, role: 'user', content: 'next turn' });
    s.preflight();
    assert.equal(s.engine.antiThrashHeld, false);
  });

  it('an effective compaction resets the counter', async () => {
    const b = longSession(30, 120);
    const s = newSession(budgetOf(20_000));
    const reports = await play(s, b.records);
    assert.ok(reports.some((r) => r.report.tier > 0));
    assert.ok(reports.every((r) => !r.report.held));
  });
});

describe('floor summary through the engine', () => {
  it('falls back to the static checkpoint when the summarizer fails', async () => {
    const failing: Summarizer = { name: 'broken', fold: async () => { throw new Error('model unavailable'); } };
    const b = longSession(30, 100);
    const s = newSession(budgetOf(20_000), { summarizer: failing });
    await play(s, b.records);
    const summary = s.engine.currentSummary!;
    assert.ok(summary, 'a floor was still produced');
    assert.match(summary.current.status, /checkpoint: \d+ tool action/);
    assert.equal(summary.requests[0]!.text, b.records[0]!.content);
    assert.match(String((s.engine.fallbackError as Error).message), /model unavailable/);
  });

  it('stores floors by coverage and restores them at preflight (drift reset from raw)', async () => {
    const snapshots = new InMemorySnapshotStore();
    const tools = new InMemoryToolCompactionStore();
    const b = longSession(40, 80);
    const s = newSession(budgetOf(20_000), { snapshots, tools });
    await play(s, b.records);
    const keys = snapshots.keys(FLOOR_PREFIX);
    assert.ok(keys.length > 0);
    // tamper with the newest stored floor: drop the first request (a summary that drifted)
    const newest = keys.map((k) => ({ k, e: snapshots.get(k)! })).sort((a, b) => (a.e.type === 'floor' && b.e.type === 'floor' ? b.e.floor.coverageEnd - a.e.floor.coverageEnd : 0))[0]!;
    assert.equal(newest.e.type, 'floor');
    if (newest.e.type !== 'floor') return;
    const tampered: SummaryState = { ...newest.e.floor.state, requests: newest.e.floor.state.requests.slice(1) };
    (snapshots as unknown as { entries: Map<string, unknown> }).entries.set(newest.k, { type: 'floor', floor: { ...newest.e.floor, state: tampered } });
    const report = s.preflight();
    assert.ok(report.drifted > 0);
    assert.match(renderSummary(s.engine.currentSummary!), /#1 \(r0\): Refactor the parser\. You must never modify the production database\./);
  });
});

describe('a fold the user asks for (/compact)', () => {
  it('folds everything before the near window under the trigger, and a new derivation restores it', async () => {
    const snapshots = new InMemorySnapshotStore();
    const tools = new InMemoryToolCompactionStore();
    const b = longSession(8, 20);
    const budget = budgetOf(200_000);
    const s = newSession(budget, { snapshots, tools });
    await play(s, b.records);
    assert.equal(s.engine.coverageEnd, 0, 'far under the trigger: nothing folded on its own');
    const report = await s.compactNow(b.records.length);
    assert.equal(report.tier, 2);
    assert.equal(report.compactions.length, 1);
    assert.ok(report.after < report.predicted, `${report.predicted} → ${report.after}`);
    const steps = s.record.units.filter((u) => u.kind === 'step');
    const near = steps.slice(-COMPACTION_PROTECT_RECENT_STEPS);
    assert.equal(s.engine.coverageEnd, near[0]!.firstRecord, 'folded up to the near window, and no further');
    assert.match(renderSummary(s.engine.currentSummary!), /Refactor the parser/);
    // What was folded is listed by tool, file and record (the panel's evidence rows).
    const folded = s.engine.notLoaded().find((e) => e.how === 'folded' && e.kind === 'tool');
    assert.deepEqual(folded && { tool: folded.tool, subject: folded.subject, record: folded.record }, { tool: 'Read', subject: 'src/file0.ts', record: 2 });
    // Derived again from the same records and store (a reload): the fold stands, and the log says it happened.
    const again = newSession(budget, { snapshots, tools });
    for (const r of b.records) again.append(r);
    again.preflight();
    assert.equal(again.engine.coverageEnd, s.engine.coverageEnd);
    assert.equal(again.engine.compactions.at(-1)?.tier, 2);
  });

  it('folds nothing when only the protected last steps are in view', async () => {
    const b = longSession(2, 20);
    const s = newSession(budgetOf(200_000));
    await play(s, b.records);
    const report = await s.compactNow(b.records.length);
    assert.equal(report.tier, 0);
    assert.equal(report.compactions.length, 0);
    assert.equal(report.after, report.predicted);
    assert.equal(s.engine.coverageEnd, 0);
  });
});

describe('determinism', () => {
  it('two runs give byte-identical projections', async () => {
    const b = longSession(45, 90);
    const run = async (): Promise<string> => {
      const s = newSession(budgetOf(16_000, 2000));
      await play(s, b.records);
      await s.step(b.records.length);
      return JSON.stringify({ m: s.engine.project(), n: s.engine.notLoaded(), c: s.engine.compactions });
    };
    assert.equal(await run(), await run());
  });

  it('a crash between steps re-derives the identical view from raw + store', async () => {
    const b = longSession(45, 90);
    for (const crashAt of [40, 97, Math.floor(b.records.length * 0.8), b.records.length - 3]) {
      const snapshots = new InMemorySnapshotStore();
      const tools = new InMemoryToolCompactionStore();
      const live = newSession(budgetOf(16_000, 2000), { snapshots, tools });
      await play(live, b.records, 0, crashAt);
      const liveView = JSON.stringify(live.engine.project());
      // the process dies: only the raw record and the stores survive
      const revived = newSession(budgetOf(16_000, 2000), { snapshots, tools });
      for (const r of b.records.slice(0, crashAt)) revived.append(r);
      revived.preflight();
      assert.equal(JSON.stringify(revived.engine.project()), liveView, `view differs after a crash at record ${crashAt}`);
      assert.equal(revived.engine.predicted(), live.engine.predicted());
    }
  });
});

describe('view_tool_call', () => {
  it('returns the full raw input and output of a shrunk call', async () => {
    const b = longSession(30, 200);
    const s = newSession(budgetOf(20_000));
    await play(s, b.records);
    const shrunk = s.engine.notLoaded().find((n) => n.how === 'shrunk' || (n.how === 'folded' && n.kind === 'tool'));
    assert.ok(shrunk?.toolCallId, 'expected a compacted tool call');
    const view = s.viewToolCall(shrunk.toolCallId!)!;
    const raw = b.records.find((r) => r.role === 'tool' && r.toolCallId === shrunk.toolCallId)!;
    assert.equal(view.output, raw.toolOutput);
    assert.match(view.input, /file_path/);
    assert.match(shrunk.recover, new RegExp(`view_tool_call\\("${shrunk.toolCallId}"\\)`));
    assert.equal(s.viewToolCall('nope'), undefined);
  });
});

describe('the last guard', () => {
  it('clips an oversized tool output with no reducer in the one remaining step, with a pointer', async () => {
    const b = new RecordBuilder().user('Summarize the repo.');
    b.step('', [{ name: 'Task', input: { prompt: 'explore' }, output: 'report line\n'.repeat(3000) }]);
    const s = newSession(budgetOf(8_000, 1_000));
    await play(s, b.records);
    await s.step(b.records.length);
    assert.ok(s.engine.predicted() <= s.budget.effective, `${s.engine.predicted()}`);
    const tool = s.record.units[1]!.parts[0]!;
    assert.match(s.engine.formOf(tool.address)!.output, /characters elided to fit the window; full text: view_tool_call\("call_1"\)/);
    assert.equal(s.viewToolCall('call_1')!.output, 'report line\n'.repeat(3000));
  });

  it('cuts an oversized report to its outline: every section keeps its heading and its first items', async () => {
    const section = (n: number): string => [`## ${n}. Area ${n}`, `Verdict for area ${n}: acceptable with caveats that matter later on.`, ...Array.from({ length: 60 }, (_, i) => `- Finding ${n}.${i}: the module at src/area${n}/file${i}.ts keeps a long explanation of what is wrong here`), '```python', 'x = 1', '```'].join('\n');
    const report = ['# Repository analysis', ...Array.from({ length: 8 }, (_, n) => section(n + 1))].join('\n\n');
    const b = new RecordBuilder().user('Review the repository.').step(report);
    const s = newSession(budgetOf(8_000, 1_000));
    await play(s, b.records);
    // Projected once whole (a fold asks after the view): the clip made afterwards must still reach the projection.
    s.engine.project();
    await s.step(b.records.length);
    const sent = s.engine.project();
    assert.match(sent[sent.length - 1]!.content, /^\[outline of a \d+-character message/, 'the projection shows the clipped form, not a cached whole one');
    assert.ok(s.engine.predicted() <= s.budget.effective, `${s.engine.predicted()}`);
    const part = s.record.units[1]!.parts[0]!;
    const form = s.engine.formOf(part.address)!.output;
    assert.match(form, /^\[outline of a \d+-character message \(headings, the opening words of each item and paragraph\); full text: record r1\]/);
    for (let n = 1; n <= 8; n++) {
      assert.match(form, new RegExp(`^## ${n}\\. Area ${n}$`, 'm'), `section ${n} keeps its heading`);
      assert.match(form, new RegExp(`^- Finding ${n}\\.0: `, 'm'), `section ${n} keeps its first item`);
    }
    assert.match(form, /^\[1-line code block\]$/m);
    // The outline fills what the rest of the view leaves under the trigger: more than the fixed first share, never over it.
    assert.ok(form.length > 8_000, `the outline uses the room (${form.length} characters)`);
    assert.ok(s.engine.predicted() <= s.budget.trigger, `${s.engine.predicted()} <= ${s.budget.trigger}`);
  });
});

describe('the last guard on pathological steps', () => {
  async function lastStepFits(b: RecordBuilder, counter?: import('../../src/core/tokens').TokenCounter): Promise<number> {
    const s = newSession(budgetOf(16_000, 2_000), counter ? { counter } : {});
    await play(s, b.records);
    await s.step(b.records.length);
    return s.engine.predicted();
  }

  it('clips a huge input of a tool with no reducer', async () => {
    const b = new RecordBuilder().user('go');
    b.step('', [{ name: 'mystery_tool', input: { blob: 'q'.repeat(350_000) }, output: 'ok' }]);
    assert.ok((await lastStepFits(b)) <= 14_000);
  });

  it('shares one budget among many large outputs of one step', async () => {
    const b = new RecordBuilder().user('go');
    b.step('', Array.from({ length: 10 }, (_, i) => ({ name: 'mystery_tool', input: { i }, output: `row ${i} `.repeat(6000) })));
    assert.ok((await lastStepFits(b)) <= 14_000);
  });

  it('clips dense text (more than one token a character) until it fits', async () => {
    const dense = { count: (text: string) => text.length };
    const b = new RecordBuilder().user('go');
    b.step('', [{ name: 'mystery_tool', input: {}, output: '漢'.repeat(300_000) }]);
    assert.ok((await lastStepFits(b, dense)) <= 14_000);
  });

  it('view_tool_call keeps calls with a reused id apart', () => {
    const s = newSession(budgetOf(100_000));
    s.append({ index: 0, role: 'assistant', content: '', toolName: 'x', toolCallId: 'ss_1' });
    s.append({ index: 1, role: 'tool', content: '', toolCallId: 'ss_1', toolOutput: 'first' });
    s.append({ index: 2, role: 'user', content: 'again' });
    s.append({ index: 3, role: 'assistant', content: '', toolName: 'x', toolCallId: 'ss_1' });
    s.append({ index: 4, role: 'tool', content: '', toolCallId: 'ss_1', toolOutput: 'second' });
    assert.equal(s.viewToolCall('ss_1')!.output, 'first');
    assert.equal(s.viewToolCall('ss_1#r3')!.output, 'second');
  });
});

describe('the context a fold is asked after', () => {
  it('is the view as projected, or its longest prefix that fits beside the question and still holds the span', async () => {
    const b = longSession(40, 60);
    const counter = new CharRatioTokenCounter();
    const asked: { whole: boolean; prefix: boolean; fits: boolean; holdsSpan: boolean }[] = [];
    let s: ReturnType<typeof newSession> | undefined;
    const inner = new ExtractiveSummarizer(counter, redactor);
    s = newSession(budgetOf(8_000, 1_000), {
      summarizer: {
        name: 'recording',
        async fold(input: FoldInput): Promise<SummaryState> {
          if (input.context) {
            const view = s!.engine.project();
            const tokens = input.context.reduce((n, m) => n + counter.count(m.content) + 4, 0);
            asked.push({
              whole: JSON.stringify(input.context) === JSON.stringify(view),
              prefix: input.context.every((m, i) => m.content === view[i]?.content),
              fits: tokens + 1.3 * continuationQuestionTokens(input.units.length) <= s!.budget.effective * 1.05,
              // The head, then at least a message per unit of the span.
              holdsSpan: input.contextUnits === undefined && input.context.length >= 1 + input.units.length,
            });
          }
          return inner.fold(input);
        },
      },
    });
    await play(s, b.records);
    assert.ok(asked.length >= 2, `folds asked after the context: ${asked.length}`);
    for (const a of asked) assert.ok(a.prefix && a.fits && a.holdsSpan, JSON.stringify(a));
    assert.ok(asked.some((a) => !a.whole), 'some folds were asked after a prefix of the view');
  });

  it('holds the oldest units of a span too large to fit beside the question, and gives the rest to the question, clipped', async () => {
    // Steps of about 800 tokens, then a report of about 9,000 (text: tier ③ cannot shorten it) in an 8,000-token
    // window: the breakthrough fold takes in the step that jumped past the window, and the span no longer fits beside
    // the question whole.
    const b = longSession(12, 60);
    b.step(Array.from({ length: 700 }, (_, i) => `Line ${i} of the report on src/huge.ts: value ${i} holds.`).join('\n'), []);
    b.user('Now summarise what you found.');
    b.read('src/after.ts', 5, 'One more file first.');
    const counter = new CharRatioTokenCounter();
    const inner = new ExtractiveSummarizer(counter, redactor);
    const partial: { input: FoldInput; tokens: number; view: string[]; head: number }[] = [];
    let s: ReturnType<typeof newSession> | undefined;
    s = newSession(budgetOf(8_000, 1_000), {
      summarizer: {
        name: 'recording',
        async fold(input: FoldInput): Promise<SummaryState> {
          if (input.context && input.contextUnits !== undefined) {
            const view = s!.engine.project();
            // The head is what the view holds before its first unit's messages.
            const inView = s!.record.units.slice(s!.engine.firstUnitInView).reduce((n, u) => n + renderUnit(u).length, 0);
            const head = view.length - inView;
            partial.push({ input, tokens: input.context.reduce((n, m) => n + counter.count(m.content) + 4, 0), view: view.map((m) => m.content), head });
          }
          return inner.fold(input);
        },
      },
    });
    await play(s, b.records);
    assert.ok(partial.length >= 1, 'a fold was asked after part of its span');
    for (const { input, tokens, view, head } of partial) {
      const held = input.contextUnits!;
      assert.ok(held >= 1 && held < input.units.length, `units in the context: ${held} of ${input.units.length}`);
      // A prefix of the view, ending where the units it holds end.
      assert.ok(input.context!.every((m, i) => m.content === view[i]), 'the context is a prefix of the view');
      assert.equal(input.context!.length, head + input.units.slice(0, held).reduce((n, u) => n + renderUnit(u).length, 0), 'the context ends after the units it holds');
      // The report is among the units left out, and the context holds none of it.
      assert.ok(input.units.slice(held).some((u) => u.parts.some((p) => p.text.includes('report on src/huge.ts'))), 'the report is left out');
      assert.ok(!input.context!.some((m) => m.content.includes('report on src/huge.ts')), 'the context does not hold it');
      const rest = input.restTokens!;
      assert.ok(rest > 0 && rest <= 0.25 * s.budget.effective, `rest ${rest}`);
      assert.ok(tokens + rest + 1.3 * continuationQuestionTokens(input.units.length) <= s.budget.effective * 1.05, `context ${tokens} + rest ${rest} fit`);
    }
  });
});
