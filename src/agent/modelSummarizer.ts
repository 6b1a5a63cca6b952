/**
 * A floor summarizer backed by a chat model, inside the state channel's write
 * rules. The deterministic summarizer runs first and keeps what must be exact
 * (the user's requests and constraints verbatim, deliverables, failed commands);
 * the model then adds the narrative the rules cannot see — findings, decisions
 * with their reasons, approaches ruled out, the current state — as JSON that is
 * validated line by line:
 * - every line must cite records of the folded span (an unsourced line is dropped);
 * - the model cannot write constraints, goals or permissions (only the user can);
 * - its lines live under their own topic keys, so they never supersede an
 *   extracted line.
 * Any failure (no model, an error, a timeout, invalid JSON) returns the
 * deterministic summary and reports why; the engine's static checkpoint stays
 * the last resort.
 */
import { z } from 'zod';
import { renderUnit } from '../core/engine';
import { enforceCap, SummaryBuilder, SummaryLineCounter, type FactSection, type SummaryState } from '../core/summary';
import type { FoldInput, Summarizer } from '../core/summarizer';
import type { TokenCounter } from '../core/tokens';
import { ROLLING_SUMMARY_BUDGET_TOKENS } from '../core/budget';
import { redact } from '../core/redact';
import { messageOf } from './model';

/** Asks the model one question and returns its whole answer. */
export type Complete = (prompt: string, signal: AbortSignal) => Promise<string>;

const LINE_MAX_CHARS = 320;
const KEY = /^[a-z0-9][a-z0-9-]{0,60}$/;

const LineSchema = z.object({
  key: z.string().regex(KEY),
  text: z.string().min(1).max(2000),
  sources: z.array(z.number().int().min(0)).min(1).max(12),
});

export const ModelFoldSchema = z.object({
  findings: z.array(LineSchema).max(12).default([]),
  decisions: z.array(LineSchema).max(8).default([]),
  ruledOut: z.array(LineSchema).max(8).default([]),
  current: z
    .object({ goal: z.string().max(400), deliverable: z.string().max(400), status: z.string().max(400), next: z.string().max(400) })
    .partial()
    .optional(),
});

export interface ModelSummarizerOptions {
  readonly complete: Complete;
  readonly base: Summarizer;
  readonly counter: TokenCounter;
  readonly cap?: number;
  /** Characters of the folded span shown to the model (the oldest part is cut first). */
  readonly spanChars: number;
  readonly timeoutMs: number;
  /** The turn's cancellation: a stopped turn stops waiting for the model (the deterministic summary is kept). */
  readonly signal?: AbortSignal;
  /** Called when a fold asks the model (for progress in the chat). */
  readonly onStart?: () => void;
  /** Called when the model's contribution was dropped, with the reason. */
  readonly onFallback?: (reason: string) => void;
}

export class ModelSummarizer implements Summarizer {
  readonly name = 'model';
  private readonly lines: SummaryLineCounter;

  constructor(private readonly options: ModelSummarizerOptions) {
    this.lines = options.counter instanceof SummaryLineCounter ? options.counter : new SummaryLineCounter(options.counter);
  }

  async fold(input: FoldInput): Promise<SummaryState> {
    const base = await this.options.base.fold(input);
    const first = input.units[0]?.firstRecord ?? input.coverageEnd;
    const turn = this.options.signal;
    if (turn?.aborted) return base;
    this.options.onStart?.();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.options.timeoutMs);
    const stop = (): void => controller.abort();
    turn?.addEventListener('abort', stop, { once: true });
    try {
      const answer = await Promise.race([
        this.options.complete(foldPrompt(input, base, this.options.spanChars), controller.signal),
        new Promise<never>((_, reject) =>
          controller.signal.addEventListener('abort', () => reject(new Error(turn?.aborted ? 'the turn was stopped' : `no answer within ${Math.round(this.options.timeoutMs / 1000)} s`))),
        ),
      ]);
      const parsed = parseModelFold(answer);
      return enforceCap(mergeModelFold(base, parsed, first, input.coverageEnd), this.lines, this.options.cap ?? ROLLING_SUMMARY_BUDGET_TOKENS).state;
    } catch (error) {
      this.options.onFallback?.(messageOf(error));
      return base;
    } finally {
      clearTimeout(timer);
      turn?.removeEventListener('abort', stop);
      controller.abort();
    }
  }
}

/** The JSON object in a model's answer (a fenced block or the outermost braces). */
export function parseModelFold(answer: string): z.infer<typeof ModelFoldSchema> {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(answer);
  const body = fenced ? fenced[1]! : answer.slice(answer.indexOf('{'), answer.lastIndexOf('}') + 1);
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new Error('the model did not answer with a JSON object');
  }
  const result = ModelFoldSchema.safeParse(json);
  if (!result.success) {
    throw new Error(`the model's summary is not in the expected shape: ${result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return result.data;
}

/** Adds the model's lines whose sources lie in the folded span; everything else is dropped. */
export function mergeModelFold(base: SummaryState, fold: z.infer<typeof ModelFoldSchema>, spanStart: number, spanEnd: number): SummaryState {
  const b = new SummaryBuilder(base);
  const add = (section: FactSection, lines: readonly z.infer<typeof LineSchema>[]): void => {
    for (const line of lines) {
      const sources = [...new Set(line.sources.filter((s) => s >= spanStart && s < spanEnd))].sort((x, y) => x - y);
      if (sources.length === 0) continue;
      const text = line.text.replace(/\s+/g, ' ').trim();
      b.upsert(section, { key: `model-${line.key}`, text: text.length > LINE_MAX_CHARS ? `${text.slice(0, LINE_MAX_CHARS - 1)}…` : text, sources, priority: 2 });
    }
  };
  add('Findings', fold.findings);
  add('Decisions', fold.decisions);
  add('Ruled out', fold.ruledOut);
  const c = fold.current;
  if (c) {
    b.current = {
      goal: b.current.goal || (c.goal ?? ''),
      deliverable: c.deliverable || b.current.deliverable,
      status: c.status || b.current.status,
      next: c.next || b.current.next,
    };
  }
  return b.build(base.coverageEnd, base.folds);
}

function foldPrompt(input: FoldInput, base: SummaryState, spanChars: number): string {
  const rendered: string[] = [];
  for (const unit of input.units) {
    // Secrets never leave for a model in a summary prompt either (the chat's context is redacted the same way).
    for (const m of renderUnit(unit)) rendered.push(`[record ${unit.firstRecord}${unit.lastRecord > unit.firstRecord ? `–${unit.lastRecord}` : ''}] ${m.role}: ${redact(m.content).text}`);
  }
  let span = rendered.join('\n\n');
  if (span.length > spanChars) span = `[… ${span.length - spanChars} earlier characters not shown …]\n${span.slice(span.length - spanChars)}`;
  const known = [
    ...base.requests.map((r) => `request #${r.ordinal}: ${r.text}`),
    ...base.facts.Constraints.map((f) => `constraint: ${f.text}`),
    ...base.facts.Decisions.slice(-10).map((f) => `decision: ${f.text}`),
  ]
    .join('\n')
    .slice(0, 6000);
  return [
    'You maintain the running summary of a coding session that is being compacted. The records below are leaving the context window.',
    'Write ONLY a JSON object, no prose, of this shape:',
    '{"findings":[{"key":"kebab-topic","text":"what was learned, with file paths and identifiers","sources":[record numbers]}],',
    ' "decisions":[{"key":"...","text":"what was decided and why","sources":[...]}],',
    ' "ruledOut":[{"key":"...","text":"what was tried and failed, and why","sources":[...]}],',
    ' "current":{"goal":"...","deliverable":"...","status":"...","next":"..."}}',
    'Rules: every line cites the record numbers it comes from (only records shown below). Do not restate the user\'s requests or rules (they are kept verbatim elsewhere). Never claim something passed, was fixed or was done unless a record shows it. Keep each text under 300 characters. Reuse a key to update a topic.',
    '',
    'Already kept:',
    known || '(nothing yet)',
    '',
    `Records ${input.units[0]?.firstRecord ?? 0}–${input.coverageEnd - 1}:`,
    span,
  ].join('\n');
}
