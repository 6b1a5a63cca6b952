/**
 * Writes the evaluation report: Markdown tables, SVG charts and the JSON of
 * every metric. Deterministic: no dates, no timings, stable ordering.
 */
import { ABLATIONS, ABLATION_WINDOWS } from './ablations';
import { aggregate, type Aggregate, type DriftResult, type SessionResult, type VariantResult } from './harness';
import { scoreClassifier, type LabelContext, type LabelledSentence } from './labels';
import { HAND_LABELS, lineKey, NOISE_KINDS, noiseOf, type SummaryLineLabel } from './noise';
import { PRICES, UTILITY_WEIGHTS } from './metrics';
import { PROBE_KINDS } from './probes';
import { formatCount } from '../core/formatCount';
import { STRATEGY_LABELS, STRATEGY_NAMES, type StrategyName } from './strategies';
import { groupedBarChart, lineChart, scatterChart } from './svg';

export interface ReportFiles {
  readonly 'report.md': string;
  readonly 'report.json': string;
  readonly 'recall-vs-tokens.svg': string;
  readonly 'cost-per-session.svg': string;
  readonly 'cumulative-cost.svg': string;
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
/** A share beside its target, with as many decimals (up to 4) as it takes not to read as the target when it is not. */
export function pctBeside(x: number, goal: number): string {
  if (x === goal || pct(x) !== pct(goal)) return pct(x);
  let digits = 2;
  while (digits < 4 && (100 * x).toFixed(digits) === (100 * goal).toFixed(digits)) digits++;
  return `${(100 * x).toFixed(digits)}%`;
}
const usd = (x: number): string => `$${x.toFixed(4)}`;
const int = (x: number): string => formatCount(Math.round(x));

function table(header: string[], rows: string[][], align?: string[]): string {
  const a = align ?? header.map((_, i) => (i === 0 ? '---' : '---:'));
  return [`| ${header.join(' | ')} |`, `|${a.join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

function shortSession(name: string): string {
  return name.replace(/\.jsonl$/, '').replace(/^(claude-code-jsonl|specstory-[a-z-]+|aider)__/, '').slice(0, 48);
}

/** The acceptance comparisons of the issue, computed and stated plainly. */
export function verdicts(results: readonly SessionResult[], windows: readonly number[]): string[] {
  const out: string[] = [];
  for (const window of [16_000, 8_000].filter((w) => windows.includes(w))) {
    const ours = aggregate(results, window, 'ours');
    const label = `${window / 1000}k`;
    const beaten: string[] = [];
    const notBeaten: string[] = [];
    for (const name of STRATEGY_NAMES) {
      if (name === 'ours') continue;
      const b = aggregate(results, window, name);
      if (name === 'none' && b.sessionsOverflowed > 0) {
        out.push(
          `- ${label}: no compaction overflows the window in ${b.sessionsOverflowed} of ${results.length} sessions (a provider rejects those calls); its recall, ${pct(b.recall)}, is what the transcript itself holds: the ceiling, not a strategy a user can run at this window.`,
        );
        continue;
      }
      const better = ours.recall > b.recall;
      const cheaperContext = ours.meanTokensEnd <= b.meanTokensEnd;
      const text = `${STRATEGY_LABELS[name]} (recall ${pct(b.recall)}, ${int(b.meanTokensEnd)} tokens at the end)`;
      (better && cheaperContext ? beaten : notBeaten).push(text);
    }
    out.push(
      `- ${label}: Context Keeper keeps ${pct(ours.recall)} of the probes with ${int(ours.meanTokensEnd)} tokens of context at the end (mean). ` +
        (notBeaten.length === 0
          ? `It beats every runnable baseline at equal or lower projected tokens: ${beaten.join('; ')}.`
          : `It beats ${beaten.length ? beaten.join('; ') : 'no baseline'}; it does NOT beat ${notBeaten.join('; ')} on both recall and tokens.`),
    );
    const costs = STRATEGY_NAMES.filter((n) => n !== 'ours' && n !== 'none').map((n) => {
      const b = aggregate(results, window, n);
      return `${STRATEGY_LABELS[n]} ${usd(b.dollars)} (ours ${(ours.dollars / b.dollars).toFixed(2)}×)`;
    });
    out.push(`- ${label}: replay cost over ${results.length} sessions — Context Keeper ${usd(ours.dollars)}; ${costs.join('; ')}.`);
    const reaching = STRATEGY_NAMES.filter((n) => n !== 'ours')
      .map((n) => aggregate(results, window, n))
      .filter((b) => b.recall >= ours.recall && b.sessionsOverflowed === 0);
    if (reaching.length === 0) {
      out.push(`- ${label}: no baseline that fits the window reaches our recall, so the cost condition (≤ 0.6× the cheapest baseline at our recall) has no comparator; our replay cost is ${usd(ours.dollars)} over ${results.length} sessions.`);
    } else {
      const cheapest = reaching.reduce((a, b) => (b.dollars < a.dollars ? b : a));
      const ratio = ours.dollars / cheapest.dollars;
      out.push(
        `- ${label}: the cheapest baseline that reaches our recall is ${STRATEGY_LABELS[cheapest.strategy]} at ${usd(cheapest.dollars)}; ours costs ${usd(ours.dollars)}, ${ratio.toFixed(2)}× — ${ratio <= 0.6 ? 'within' : 'NOT within'} the 0.6× target.`,
      );
    }
  }
  return out;
}

function overallTable(results: readonly SessionResult[], window: number): string {
  const rows = STRATEGY_NAMES.map((name) => {
    const a = aggregate(results, window, name);
    return [
      STRATEGY_LABELS[name],
      `${pct(a.recall)} (${a.kept}/${a.probes})`,
      String(a.criticalLost),
      String(a.staleAsCurrent),
      `${pct(a.modifiedPrecision)} / ${pct(a.modifiedRecall)}`,
      `${pct(a.readPrecision)} / ${pct(a.readRecall)}`,
      a.citedFacts ? `${a.validCitations}/${a.citedFacts}` : '–',
      String(a.unsourced),
      int(a.meanTokensEnd),
      int(a.inputTokens),
      a.inputTokens ? pct(a.cacheReadTokens / a.inputTokens) : '–',
      usd(a.dollars),
      String(a.compactions),
      a.floorsPer100Steps.toFixed(2),
      String(a.antiThrash),
      String(a.sessionsOverflowed),
      a.utility.toFixed(3),
    ];
  });
  return table(
    ['strategy', 'probe recall', 'critical lost', 'stale as current', 'modified P / R', 'read P / R', 'valid citations', 'unsourced', 'tokens at end (mean)', 'input tokens sent', 'cache-read share', 'cost', 'compactions', 'floors / 100 steps', 'anti-thrash', 'sessions overflowed', 'U (mean)'],
    rows,
  );
}

function kindTable(results: readonly SessionResult[], window: number): string {
  const aggs = STRATEGY_NAMES.map((n) => aggregate(results, window, n));
  const rows = PROBE_KINDS.map((kind) => [
    kind,
    String(aggs[0]!.byKind[kind]?.total ?? 0),
    ...aggs.map((a) => {
      const k = a.byKind[kind];
      return k && k.total ? pct(k.kept / k.total) : '–';
    }),
  ]);
  return table(['kind', 'probes', ...STRATEGY_NAMES.map((n) => STRATEGY_LABELS[n])], rows);
}

function tierLine(results: readonly SessionResult[], window: number): string {
  const tiers: Record<string, number> = {};
  for (const r of results) {
    const m = r.windows.find((w) => w.window === window)?.strategies.find((x) => x.strategy === 'ours');
    for (const [k, v] of Object.entries(m?.compactions ?? {})) tiers[k] = (tiers[k] ?? 0) + v;
  }
  return ['tier 1', 'tier 2', 'tier 3', 'tier 4'].map((t) => `${t} × ${tiers[t] ?? 0}`).join(', ');
}

function stateLine(results: readonly SessionResult[], window: number): string {
  let boundaries = 0, omitted = 0, unsupported = 0, conflicts = 0, active = 0, pending = 0;
  for (const r of results) {
    const m = r.windows.find((w) => w.window === window)?.strategies.find((x) => x.strategy === 'ours');
    if (!m?.state) continue;
    boundaries += m.state.boundaries;
    omitted += m.state.omitted;
    unsupported += m.state.unsupported;
    conflicts += m.state.conflicts;
    active += m.state.activeFacts;
    pending += m.state.pendingFacts;
  }
  return `${active} active and ${pending} pending facts at the end; over ${boundaries} compaction boundaries the loss ledger found ${omitted} omitted critical facts and ${unsupported} unsourced summary lines; ${conflicts} summary lines contradicted a fact (the fact won)`;
}

function sessionTable(results: readonly SessionResult[], window: number): string {
  const rows = results.map((r) => {
    const w = r.windows.find((x) => x.window === window)!;
    return [
      shortSession(r.session),
      String(r.records),
      String(r.probes),
      ...STRATEGY_NAMES.map((n) => {
        const m = w.strategies.find((s) => s.strategy === n)!;
        return `${pct(m.probes.recall)} · ${int(m.tokensEnd)} · ${usd(m.cost.dollars)}${m.overflowAt !== null ? ' ⚠' : ''}`;
      }),
    ];
  });
  return table(['session', 'records', 'probes', ...STRATEGY_NAMES.map((n) => STRATEGY_LABELS[n])], rows);
}

function driftSection(drift: readonly DriftResult[]): string {
  if (drift.length === 0) return '_No session was long enough for the drift test._';
  const rows = drift.map((d) => [
    shortSession(d.session),
    d.drift.protectedIdentical ? 'identical' : `DIFFERS: ${d.drift.protectedDiff.join('; ')}`,
    ...['Deliverables', 'Decisions', 'Constraints', 'Ruled out', 'Findings'].map((s) => {
      const x = d.drift.sections[s]!;
      return `${x.shared} shared, +${x.onlyGenerations} / −${x.onlyRebuild}`;
    }),
  ]);
  return table(['session', 'request log + safety rules', 'Deliverables', 'Decisions', 'Constraints', 'Ruled out', 'Findings'], rows);
}

/** What the report shows beside the replays: ablations, the classifier, the hand labels, the numbers before. */
export interface ReportExtras {
  readonly ablations: Readonly<Record<string, Readonly<Record<number, readonly VariantResult[]>>>>;
  readonly classifier: { readonly labels: readonly LabelledSentence[]; readonly context: (l: LabelledSentence) => LabelContext };
  readonly summaryLines: readonly SummaryLineLabel[];
  /** eval/before.json: the engine's aggregates before issue 11, on the same probes. */
  readonly before: unknown;
}

interface BeforeAggregate {
  readonly window: number;
  readonly strategies: readonly { strategy: StrategyName; recall: number; kept: number; probes: number; byKind: Record<string, { total: number; kept: number }>; meanTokensEnd: number; dollars: number }[];
}

function beforeOf(extras: ReportExtras | undefined): { commit: string; aggregates: BeforeAggregate[] } | undefined {
  const b = extras?.before as { commit?: unknown; aggregates?: unknown } | undefined;
  if (!b || typeof b.commit !== 'string' || !Array.isArray(b.aggregates)) return undefined;
  return { commit: b.commit, aggregates: b.aggregates as BeforeAggregate[] };
}

/** The acceptance targets of issue 11, stated as met or not. */
function targets(results: readonly SessionResult[], windows: readonly number[]): string[] {
  const out: string[] = [];
  const kindShare = (a: Aggregate, kind: string): number => (a.byKind[kind]?.total ? a.byKind[kind]!.kept / a.byKind[kind]!.total : 1);
  for (const [window, goal] of [
    [8_000, 0.85],
    [16_000, 0.9],
  ] as const) {
    if (!windows.includes(window)) continue;
    const ours = aggregate(results, window, 'ours');
    const rivals = (['clear-summarize', 'opencode'] as const).map((n) => aggregate(results, window, n));
    const beats = rivals.every((r) => ours.recall > r.recall);
    out.push(
      `- ${window / 1000}k: overall recall ${pct(ours.recall)} (target ${pct(goal)}: ${ours.recall >= goal ? 'met' : 'NOT met'}); ` +
        `${beats ? 'beats' : 'does NOT beat'} ${rivals.map((r) => `${STRATEGY_LABELS[r.strategy]} (${pct(r.recall)})`).join(' and ')} on recall.`,
    );
    if (window === 16_000) {
      const kinds = ['finding', 'decision', 'ruled_out'].map((k) => `${k.replace('_', '-')} ${pct(kindShare(ours, k))} (${kindShare(ours, k) >= 0.75 ? 'met' : 'NOT met'})`);
      out.push(`- 16k by kind, target 75% each: ${kinds.join(', ')}.`);
    }
  }
  return out;
}

function beforeAfter(results: readonly SessionResult[], windows: readonly number[], extras: ReportExtras | undefined): string[] {
  const before = beforeOf(extras);
  if (!before) return [];
  const out: string[] = [];
  out.push('## Before and after the digest (issue 11)');
  out.push('');
  out.push(`The same probe files, replayed with the engine as of commit ${before.commit} (numbers kept in \`eval/before.json\`) and with this one. The summarizing baselines use our summarizer, so their numbers move with it.`);
  out.push('');
  const rows: string[][] = [];
  for (const window of windows) {
    const then = before.aggregates.find((a) => a.window === window);
    if (!then) continue;
    for (const name of ['ours', 'clear-summarize', 'opencode'] as const) {
      const b = then.strategies.find((x) => x.strategy === name);
      const a = aggregate(results, window, name);
      if (!b) continue;
      rows.push([`${window / 1000}k`, STRATEGY_LABELS[name], pct(b.recall), pct(a.recall), int(b.meanTokensEnd), int(a.meanTokensEnd), usd(b.dollars), usd(a.dollars)]);
    }
  }
  out.push(table(['window', 'strategy', 'recall before', 'recall now', 'tokens at end before', 'now', 'replay cost before', 'now'], rows, ['---', '---', '---:', '---:', '---:', '---:', '---:', '---:']));
  out.push('');
  const kindRows: string[][] = [];
  for (const kind of PROBE_KINDS) {
    const cells: string[] = [kind];
    for (const window of [8_000, 16_000].filter((w) => windows.includes(w))) {
      const b = before.aggregates.find((x) => x.window === window)?.strategies.find((x) => x.strategy === 'ours')?.byKind[kind];
      const a = aggregate(results, window, 'ours').byKind[kind];
      cells.push(b && b.total ? pct(b.kept / b.total) : '–', a && a.total ? pct(a.kept / a.total) : '–');
    }
    kindRows.push(cells);
  }
  out.push('Context Keeper by kind:');
  out.push('');
  out.push(table(['kind', '8k before', '8k now', '16k before', '16k now'], kindRows));
  out.push('');
  return out;
}

/** How many of the labelled lines the engine of this run still writes, and how many of those the people called noise. */
function stillWritten(results: readonly SessionResult[], labels: readonly SummaryLineLabel[]): string {
  const written = new Set<string>();
  for (const r of results) for (const [window, lines] of Object.entries(r.finalLines)) for (const l of lines) written.add(lineKey({ session: r.session, window, ...l }));
  if (written.size === 0) return '';
  const kept = labels.filter((l) => written.has(lineKey(l)));
  const noisy = kept.filter((l) => l.label !== 'content').length;
  return ` This run's engine still writes ${kept.length} of the ${labels.length} labelled lines, ${noisy} of them labelled noise${kept.length < labels.length ? ' (the rest it writes otherwise or no longer)' : ''}.`;
}

function noiseSection(results: readonly SessionResult[], windows: readonly number[], extras: ReportExtras | undefined): string[] {
  const out: string[] = ['## Noise in the Task Context', ''];
  out.push('Of the Task Context lines after the last fold (every fact section, each archived gist counted as a line; requests checked for harness text), the share a reader gains nothing from, by the sentence classifier, over all sessions:');
  out.push('');
  const rows: string[][] = [];
  for (const window of windows.filter((w) => w <= 32_000)) {
    let lines = 0;
    const noise: Record<string, number> = Object.fromEntries(NOISE_KINDS.map((k) => [k, 0]));
    for (const r of results) {
      const m = r.windows.find((w) => w.window === window)?.strategies.find((x) => x.strategy === 'ours');
      if (!m?.noise) continue;
      lines += m.noise.lines;
      for (const k of NOISE_KINDS) noise[k]! += m.noise.noise[k];
    }
    const total = NOISE_KINDS.reduce((a, k) => a + noise[k]!, 0);
    rows.push([`${window / 1000}k`, int(lines), ...NOISE_KINDS.map((k) => int(noise[k]!)), `${pct(lines ? total / lines : 0)} (target ≤ 2%: ${lines && total / lines <= 0.02 ? 'met' : 'NOT met'})`]);
  }
  out.push(table(['window', 'lines', ...NOISE_KINDS, 'noise share'], rows));
  out.push('');
  const labels = extras?.summaryLines ?? [];
  if (labels.length) {
    const by = Object.fromEntries(HAND_LABELS.map((k) => [k, labels.filter((l) => l.label === k).length]));
    const noisy = labels.length - by.content!;
    // The classifier's call on the same lines (duplicates need their neighbours: they are left to the people).
    let agree = 0;
    let compared = 0;
    for (const l of labels) {
      if (l.label === 'duplicate') continue;
      compared++;
      const ours = noiseOf({ section: l.section, text: l.text }, []) ?? 'content';
      if ((ours === 'content') === (l.label === 'content')) agree++;
    }
    out.push(`A hand-labelled sample of ${labels.length} of these lines (\`eval/labels/summary-lines.jsonl\`, drawn by content hash from the 8k, 16k and 32k summaries of every session as one commit wrote them — \`npm run eval -- --draw-lines FILE\` draws this commit's; see \`eval/labels/README.md\`): ${HAND_LABELS.map((k) => `${k} ${by[k]}`).join(', ')} — noise share ${pct(noisy / labels.length)} (target ≤ 2%: ${noisy / labels.length <= 0.02 ? 'met' : 'NOT met'}). The people find more noise than the classifier: mostly semantic duplicates (two wordings of one fact, an agent restating the user's request, a gist that says less than a live line), of which the fold merges those that share their rare words (a rarity-weighted overlap) and a new statement whose every word other lines already hold; the rest it cannot tell from two related facts, then narration the cues miss. The classifier agrees with them on noise vs content for ${agree} of ${compared} lines (duplicates excluded).${stillWritten(results, labels)}`);
    out.push('');
  }
  return out;
}

function classifierSection(extras: ReportExtras | undefined): string[] {
  if (!extras) return [];
  const { labels, context } = extras.classifier;
  const all = scoreClassifier(labels, context);
  const random = scoreClassifier(labels.filter((l) => !l.sample.startsWith('rare')), context);
  const out: string[] = ['## The sentence classifier', ''];
  out.push(
    `On ${labels.length} hand-labelled sentences of ${new Set(labels.map((l) => l.session.split('__')[0])).size} agents (\`eval/labels/sentences.jsonl\`; ${labels.filter((l) => !l.sample.startsWith('rare')).length} drawn at random or from sentences with identifiers and numbers, ${labels.filter((l) => l.sample.startsWith('rare')).length} from pools enriched for the rarer classes). ` +
      `${all.inHarness} user sentences lie in text an agent injected (harness): they are evidence and are not classified. Accuracy ${pct(all.accuracy)} (${pct(all.lenientAccuracy)} counting the labeller's second choice); ` +
      `of the sentences classified as content, ${pct(all.noiseInContent)} were labelled process, pleasantry or other.`,
  );
  out.push('');
  out.push(table(['class', 'labelled', 'predicted', 'precision', 'recall', 'precision (random sample)', 'recall (random sample)'], all.classes.map((c) => {
    const r = random.classes.find((x) => x.cls === c.cls)!;
    return [c.cls, int(c.support), int(c.predicted), pct(c.precision), pct(c.recall), pct(r.precision), pct(r.recall)];
  })));
  out.push('');
  return out;
}

/** Issue 12's acceptance: cost against the incumbents, folds, cache, the background floor. */
function costSection(results: readonly SessionResult[], windows: readonly number[]): string[] {
  const out: string[] = ['## Cost, folds and the background floor', ''];
  out.push(
    "Every strategy that summarizes pays for its summaries here: clear-then-summarize and opencode ask the chat's model with the conversation as it stands (the prefix sent last is a cache read) and generate the whole summary; Context Keeper, with the chat's own model (the default), asks after the context it last sent when the question still fits the window beside it (that context is a cache read; the question — its rules and an index of the records leaving — is not), otherwise with a prompt of its own (instructions, the lines already kept, the span; nothing cached), and generates only the lines it adds; its background summaries count whether they were used or not. **Tokens per task** (seed 004) adds to every token sent and generated what re-reading the lost facts that came from a tool's output would take: one more call with the final context and the output again, per source.",
  );
  out.push('');
  const rows: string[][] = [];
  const verdict: string[] = [];
  for (const window of windows) {
    const ours = aggregate(results, window, 'ours');
    const rivals = (['clear-summarize', 'opencode'] as const).map((n) => aggregate(results, window, n));
    for (const a of [ours, ...rivals]) {
      const share = a.inputTokens ? a.cacheReadTokens / a.inputTokens : 0;
      rows.push([`${window / 1000}k`, STRATEGY_LABELS[a.strategy], pct(a.recall), usd(a.dollars), `${a.summarizerCalls} (${usd(a.summarizerDollars)})`, int(a.tokensPerTask), String(a.rereadProbes), a.floorsPer100Steps.toFixed(2), pct(share)]);
    }
    const cheaper = rivals.reduce((a, b) => (b.dollars < a.dollars ? b : a));
    const ratio = ours.dollars / cheaper.dollars;
    const cts = rivals[0]!;
    const floorLimit = window === 8_000 ? 2 : 1.5;
    const floorRatio = cts.floorsPer100Steps ? ours.floorsPer100Steps / cts.floorsPer100Steps : Infinity;
    const share = ours.inputTokens ? ours.cacheReadTokens / ours.inputTokens : 0;
    const shareGoal = window === 8_000 ? 0.8 : window === 16_000 ? 0.88 : undefined;
    const sources = ours.floorSources;
    const folds = (sources.precomputed ?? 0) + (sources.awaited ?? 0) + (sources.synchronous ?? 0);
    const parts = [
      `cost ${ratio.toFixed(2)}× ${STRATEGY_LABELS[cheaper.strategy]} (target ≤ 0.90×: ${ratio <= 0.9 ? 'met' : 'NOT met'})`,
      `recall ${pct(ours.recall)} vs ${rivals.map((r) => pct(r.recall)).join(' / ')} (${rivals.every((r) => ours.recall > r.recall) ? 'higher than both' : 'NOT higher than both'})`,
    ];
    if (window <= 32_000) parts.push(`floors ${floorRatio.toFixed(2)}× clear-then-summarize's (target ≤ ${floorLimit}×: ${floorRatio <= floorLimit ? 'met' : 'NOT met'})`);
    if (shareGoal !== undefined) parts.push(`cache-read share ${pctBeside(share, shareGoal)} (target ≥ ${pct(shareGoal)}: ${share >= shareGoal ? 'met' : 'NOT met'})`);
    parts.push(
      folds
        ? `folds restored from the background ${pct((sources.precomputed ?? 0) / folds)} (${sources.precomputed ?? 0} precomputed, ${sources.awaited ?? 0} awaited, ${sources.synchronous ?? 0} asked for at the fold; target ≥ 90%: ${(sources.precomputed ?? 0) / folds >= 0.9 ? 'met' : 'NOT met'})`
        : 'no fold',
    );
    parts.push(`head appended at ${ours.headLayouts.appended ?? 0} folds, rendered in full at ${ours.headLayouts.rendered ?? 0}; ${ours.foldsSkipped} folds not made (they would have saved less than 5% of wEff)`);
    verdict.push(`- ${window / 1000}k: ${parts.join('; ')}.`);
  }
  out.push(table(['window', 'strategy', 'recall', 'replay cost (all calls)', 'summarizer calls (cost)', 'tokens per task', 'lost re-readable probes', 'floors / 100 steps', 'cache-read share'], rows, ['---', '---', '---:', '---:', '---:', '---:', '---:', '---:', '---:']));
  out.push('');
  out.push(...verdict);
  out.push('');
  return out;
}

function ablationSection(results: readonly SessionResult[], extras: ReportExtras | undefined): string[] {
  if (!extras) return [];
  const out: string[] = ['## The original-text channel and the cap (ablations)', ''];
  out.push('Ours with one option changed, replayed on every session; recall per 1,000 tokens of the final context, and what each change buys against the default per 1,000 tokens it adds.');
  out.push('');
  const rows: string[][] = [];
  for (const window of ABLATION_WINDOWS) {
    const base = aggregate(results, window, 'ours');
    rows.push([`${window / 1000}k`, 'default', pct(base.recall), int(base.meanTokensEnd), usd(base.dollars), (100 * base.recall / (base.meanTokensEnd / 1000)).toFixed(2), '–']);
    for (const ablation of ABLATIONS) {
      const runs = extras.ablations[ablation.name]?.[window] ?? [];
      if (runs.length === 0) continue;
      const kept = runs.reduce((a, r) => a + r.kept, 0);
      const total = runs.reduce((a, r) => a + r.total, 0);
      const tokens = runs.reduce((a, r) => a + r.tokensEnd, 0) / runs.length;
      const dollars = runs.reduce((a, r) => a + r.dollars, 0);
      const recall = total ? kept / total : 0;
      const dTokens = (tokens - base.meanTokensEnd) / 1000;
      const marginal = Math.abs(dTokens) < 0.005 ? '–' : `${((100 * (recall - base.recall)) / dTokens).toFixed(2)} pts/1k`;
      rows.push([`${window / 1000}k`, ablation.name, pct(recall), int(tokens), usd(dollars), (100 * recall / (tokens / 1000)).toFixed(2), marginal]);
    }
  }
  out.push(table(['window', 'variant', 'recall', 'tokens at end', 'replay cost', 'recall pts / 1k tokens', 'Δrecall / Δtokens'], rows, ['---', '---', '---:', '---:', '---:', '---:', '---:']));
  out.push('');
  out.push(...ABLATIONS.map((a) => `- **${a.name}**: ${a.description}.`));
  out.push('');
  out.push('What is kept: the block stays at 4% of wEff above a 10k window, searched with the latest request, and the Task Context cap scales with the window (a quarter of wEff, 3,000 to 8,000 tokens) — a larger block or a task-built query buys less recall per token than the same tokens spent on the Task Context.');
  out.push('');
  return out;
}

export function buildReport(results: readonly SessionResult[], drift: readonly DriftResult[], windows: readonly number[], extras?: ReportExtras): ReportFiles {
  const md: string[] = [];
  md.push('# Context Keeper — evaluation report');
  md.push('');
  md.push('Generated by `npm run eval` from the probe files in `eval/probes/` and the sessions of `../shared/corpus/sessions`. The same inputs give this file byte for byte. Every strategy is replayed as if live (a model call before every step); the probes are checked against the context each strategy would send for the next call after the last record.');
  md.push('');
  md.push(`Sessions: ${results.length}. Probes: ${results.reduce((a, r) => a + r.probes, 0)}. Windows: ${windows.map((w) => `${w / 1000}k`).join(', ')} (reserve = window/8, at most 8k).`);
  md.push('');
  md.push('## Strategies');
  md.push('');
  md.push('- **Context Keeper**: this engine (restore → measure → four-tier ladder, extractive floor summary, artifact index).');
  md.push('- **no compaction**: the whole history every call. Past the window a provider rejects the call; shown as the ceiling of what the transcript holds (⚠ marks sessions that overflowed).');
  md.push('- **sliding window**: the newest whole steps and messages that fit in window − reserve.');
  md.push('- **observation masking** (JetBrains, "The Complexity Trap"): tool outputs older than the newest 10 steps become a placeholder; truncated from the front if still too large.');
  md.push('- **clear-then-summarize** (Claude Code / Codex): at 90% of window − reserve the history is replaced by one summary plus the most recent user messages (up to 20k tokens, at most 20% of the window).');
  md.push('- **opencode prune**: old tool outputs are cleared (sparing the last 2 user turns and the newest 40k tool-output tokens, only when that frees more than 20k); on overflow, a summary pivot.');
  md.push('');
  md.push('Both summarizing baselines use the same deterministic summarizer as Context Keeper, so the comparison isolates the strategy.');
  md.push('');
  md.push('## Verdict');
  md.push('');
  md.push(...verdicts(results, windows));
  md.push(...targets(results, windows));
  md.push('');
  md.push(...beforeAfter(results, windows, extras));
  for (const window of windows) {
    md.push(`## Window ${window / 1000}k`);
    md.push('');
    md.push(overallTable(results, window));
    md.push('');
    md.push(`Context Keeper's compactions by tier: ${tierLine(results, window)}.`);
    md.push('');
    md.push(`Context Keeper's state channel: ${stateLine(results, window)}.`);
    md.push('');
    md.push('Probe recall by kind:');
    md.push('');
    md.push(kindTable(results, window));
    md.push('');
  }
  md.push(...costSection(results, windows));
  md.push(...noiseSection(results, windows, extras));
  md.push(...classifierSection(extras));
  md.push(...ablationSection(results, extras));
  md.push('## Per session at 16k (recall · tokens at the end · replay cost)');
  md.push('');
  md.push(sessionTable(results, windows.includes(16_000) ? 16_000 : windows[0]!));
  md.push('');
  md.push('## Multi-generation drift');
  md.push('');
  md.push('Each session is folded in 10 consecutive generations (Σn = fold(Σn−1, span n)) and rebuilt in one fold from the raw record. The request log and the safety rules must be identical; for the other sections, "+a / −b" counts lines only the 10-generation summary has / only the rebuild has.');
  md.push('');
  md.push(driftSection(drift));
  md.push('');
  md.push('## Charts');
  md.push('');
  md.push('![Probe recall against the tokens of the context at the end, per window](recall-vs-tokens.svg)');
  md.push('');
  md.push('![Replay cost per session at 16k](cost-per-session.svg)');
  md.push('');
  md.push('![Cumulative cost over the replay of the longest session at 16k](cumulative-cost.svg)');
  md.push('');
  md.push('## Definitions');
  md.push('');
  md.push('- **probe recall**: probes whose phrases all appear (or, for `any`, one of them; for artifacts, the path in the index or the context) in the final context. **critical lost**: request and constraint probes not kept. **stale as current**: `notCurrent` phrases found in a summary\'s current sections (Deliverables, Decisions, Constraints, Findings, Current state; not the request log, which quotes the user in order with record numbers, nor Ruled out and Archived).');
  md.push('- **modified / read P / R**: precision and recall (mean over sessions) of the files the final view shows as modified or read — the artifact index, the visible tool calls, and a summary\'s Deliverables — against the hand-read truth in the probe file.');
  md.push('- **valid citations**: summary facts whose sources are real records (a request must be the text of its record). **unsourced**: facts with no source (must be 0).');
  md.push('- **tokens**: o200k tokens of the message contents. **cache-read share**: tokens of the longest unchanged prefix of messages since the previous call, over all input tokens (5-minute TTL ignored).');
  md.push(`- **cost** (prices below): cache reads at the cache-read price, other input at the cache-write price, the steps\' output at the output price. **U** = recall − λ·cost − μ·critical lost, with λ = ${UTILITY_WEIGHTS.lambda} per dollar and μ = ${UTILITY_WEIGHTS.mu} per lost critical probe — reported beside the raw metrics, never instead of them.`);
  md.push('');
  md.push(table(['model', 'input $/M', 'cache write $/M', 'cache read $/M', 'output $/M'], PRICES.map((p) => [p.model, p.input.toFixed(2), p.cacheWrite.toFixed(2), p.cacheRead.toFixed(2), p.output.toFixed(2)])));
  md.push('');

  // charts
  const recallSeries = STRATEGY_NAMES.map((name) => ({
    name: STRATEGY_LABELS[name],
    points: windows.map((w) => {
      const a: Aggregate = aggregate(results, w, name);
      return { x: a.meanTokensEnd, y: a.recall, label: `${w / 1000}k` };
    }),
  }));
  const costWindow = windows.includes(16_000) ? 16_000 : windows[0]!;
  const costSeries = STRATEGY_NAMES.map((name) => ({
    name: STRATEGY_LABELS[name],
    values: results.map((r) => r.windows.find((w) => w.window === costWindow)!.strategies.find((s) => s.strategy === name)!.cost.dollars),
  }));
  const longest = [...results].sort((a, b) => b.records - a.records || (a.session < b.session ? -1 : 1))[0];
  const cumulative = longest
    ? STRATEGY_NAMES.map((name) => ({
        name: STRATEGY_LABELS[name],
        values: longest.windows.find((w) => w.window === costWindow)!.strategies.find((s) => s.strategy === name)!.cumulativeDollars,
      }))
    : [];

  const json = {
    windows,
    strategies: STRATEGY_NAMES,
    prices: PRICES,
    utilityWeights: UTILITY_WEIGHTS,
    aggregates: windows.map((w) => ({ window: w, strategies: STRATEGY_NAMES.map((n) => aggregate(results, w, n)) })),
    // Per-call cumulative costs feed the replay chart only; the JSON keeps the totals.
    sessions: results.map(({ finalLines: _lines, ...r }) => ({ ...r, windows: r.windows.map((w) => ({ ...w, strategies: w.strategies.map(({ cumulativeDollars: _unused, ...m }) => m) })) })),
    drift,
  };
  return {
    'report.md': md.join('\n'),
    'report.json': JSON.stringify(json, null, 1) + '\n',
    'recall-vs-tokens.svg': scatterChart('Probe recall vs tokens of the final context (one point per window)', 'tokens of the context at the end (mean over sessions)', 'probe recall', recallSeries, 1),
    'cost-per-session.svg': groupedBarChart(`Replay cost per session at ${costWindow / 1000}k (Sonnet prices, prompt caching)`, 'dollars', results.map((r) => shortSession(r.session).slice(0, 22)), costSeries),
    'cumulative-cost.svg': lineChart(`Cumulative cost over the replay of ${longest ? shortSession(longest.session).slice(0, 30) : '–'} at ${costWindow / 1000}k`, 'model call', 'dollars', cumulative),
  };
}

export type { StrategyName };
