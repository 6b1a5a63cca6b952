/**
 * Ablations of ours measured side by side in the eval: the original-text
 * channel at larger shares and with a query built from the current task
 * (issue 11, item 12), and the seed's fixed cap of the Task Context against
 * the cap that scales with the window, and the seed's ratios against the
 * small-window defaults (issue 12). Each is the same replay as ours with
 * one option changed.
 */
import { computeBudget, ROLLING_SUMMARY_BUDGET_TOKENS } from '../core/budget';
import { formatCount } from '../core/formatCount';
import type { OursVariant } from './ours';

export interface Ablation {
  readonly name: string;
  readonly description: string;
  readonly variant: OursVariant;
}

export const ABLATIONS: readonly Ablation[] = [
  { name: 'no block', description: 'no original-text block at any window: what the default block buys', variant: { retrieval: { share: 0, minEffective: 0, query: 'request' } } },
  { name: 'task query', description: "today's block (4% of wEff, above a 10k window), searched with the current task (request, goal, status, next step, last failures)", variant: { retrieval: { share: 0.04, minEffective: 10_000, query: 'task' } } },
  { name: 'block 10%', description: 'a block of 10% of wEff at every window, task query', variant: { retrieval: { share: 0.1, minEffective: 0, query: 'task' } } },
  { name: 'block 25%', description: "about a third of the history budget, as in seed 000's worked budget (25% of wEff), task query", variant: { retrieval: { share: 0.25, minEffective: 0, query: 'task' } } },
  { name: 'seed ratios', description: "the seed's trigger 0.65, stop 0.50 and 5 raw steps at every window (the defaults a user gets above 32k; at 32k and below the engine triggers at 0.90 and keeps 3 raw steps)", variant: { budget: (window, reserve) => computeBudget({ window, reserve }) } },
  { name: 'fixed cap', description: `the seed's fixed ${formatCount(ROLLING_SUMMARY_BUDGET_TOKENS)}-token Task Context at every window`, variant: { summaryCap: () => ROLLING_SUMMARY_BUDGET_TOKENS } },
];

export const ABLATION_WINDOWS: readonly number[] = [8_000, 16_000];
