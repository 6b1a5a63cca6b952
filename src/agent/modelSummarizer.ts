/**
 * A floor summarizer backed by a chat model, inside the state channel's write
 * rules. The deterministic summarizer runs first and keeps what must be exact
 * (the user's requests and rules verbatim, short replies resolved,
 * deliverables, failed commands with their verbatim errors, commits and
 * configuration applied); the model then writes the narrative of the folded
 * span — findings, decisions with their reasons, approaches ruled out, the
 * status and next step — and its lines replace the deterministic narrative
 * lines of that span rather than being stacked on them.
 *
 * The structure is asked for through a required tool call whose input schema
 * is the fold's schema (`vscode.LanguageModelChatToolMode.Required`); a model
 * that answers in text instead is read for a JSON object. Every line is
 * validated:
 * - it must cite records of the folded span (an unsourced line is dropped);
 * - the model cannot write goals, constraints or permissions (only the user can);
 * - its lines live under `model-` keys: reusing one of those supersedes it, an
 *   extracted line is never overwritten.
 * Any failure (no model, an error, a timeout, an invalid answer) returns the
 * deterministic summary and reports why; the engine's static checkpoint stays
 * the last resort.
 */
import * as z from '../core/schema';
import { renderUnit } from '../core/engine';
import { formatFact, SummaryBuilder, SummaryLineCounter, type FactLine, type FactSection, type SummaryState } from '../core/summary';
import { enforceCap } from '../core/summaryCap';
import { continuationRest, spanText, unitsInContext } from '../core/continuation';
import type { FoldInput, Summarizer } from '../core/summarizer';
import type { TokenCounter } from '../core/tokens';
import { ROLLING_SUMMARY_BUDGET_TOKENS } from '../core/budget';
import type { Redactor } from '../core/redact';
import { statementOf } from '../core/digest';
import { messageOf, type ModelRequest, type ToolSpec } from './model';

/** A structured answer: the tool the model must call, and the schema of its input. */
export interface CompletionTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
}

export interface CompletionRequest {
  readonly prompt: string;
  /** Ask for the answer as a call of this tool (required); without it, the answer is text. */
  readonly tool?: CompletionTool;
  /**
   * The chat's request this question continues: its instructions, tools and
   * messages are sent unchanged before the prompt, so a provider's prompt
   * cache serves what the chat already sent (the chat's tools stay offered and
   * the answer is text).
   */
  readonly after?: ModelRequest;
}

/**
 * Asks the model one question: the input of its call of `request.tool` as
 * JSON text when it made one, otherwise its whole text answer.
 */
export type Complete = (request: CompletionRequest, signal: AbortSignal) => Promise<string>;

/** A line is one statement: about 30 words (the deterministic lines' length), identifiers verbatim. */
const LINE_MAX_WORDS = 32;
const KEY = /^[a-z0-9][a-z0-9-]{0,60}$/;
const MODEL_KEY = 'model-';

const LineSchema = z.lazy(() =>
  z.object({
    key: z.described(z.string().check(z.regex(KEY)), 'kebab-case topic naming the subject (a file, a component, an error), never a record number; reuse a key only for the same subject'),
    text: z.described(z.string().check(z.minLength(1), z.maxLength(2000)), 'one statement, at most 30 words, identifiers, paths, errors and numbers verbatim'),
    sources: z.described(z.array(z.int().check(z.minimum(0))).check(z.minLength(1), z.maxLength(12)), 'the record numbers the statement comes from'),
  }),
);

export const ModelFoldSchema = z.lazy(() =>
  z.object({
    findings: z.described(z._default(z.array(LineSchema).check(z.maxLength(12)), []), 'discovered truths a later step cannot cheaply re-read: causes, behaviours, measured values; a time-bound value ends with (as of rN)'),
    decisions: z.described(z._default(z.array(LineSchema).check(z.maxLength(8)), []), 'choices made, each with why and what it replaced when stated'),
    ruledOut: z.described(z._default(z.array(LineSchema).check(z.maxLength(8)), []), 'approaches tried and abandoned, with the verbatim error or reason and what replaced them'),
    current: z.optional(
      z.partial(
        z.object({
          status: z.described(z.string().check(z.maxLength(400)), 'what is blocked or awaited, plain text'),
          next: z.described(z.string().check(z.maxLength(400)), 'the next step: an open item, the unanswered ask, or the stated next step'),
        }),
      ),
    ),
  }),
);
// Anything else a model adds (a "constraints" list, say) is stripped by the schema, never merged.
export type ModelFold = z.infer<typeof ModelFoldSchema>;

let foldInputSchema: Record<string, unknown> | undefined;

/** The tool the model is asked to call with its summary of the span (its JSON Schema made at the first fold that asks). */
export const FOLD_TOOL: CompletionTool = {
  name: 'record_task_context',
  description: 'Record the Task Context lines for the records leaving the context window.',
  get inputSchema(): Record<string, unknown> {
    return (foldInputSchema ??= z.toJSONSchema(ModelFoldSchema, { io: 'input' }) as Record<string, unknown>);
  },
};

export interface ModelSummarizerOptions {
  readonly complete: Complete;
  readonly base: Summarizer;
  readonly counter: TokenCounter;
  /** Hides secrets in the span the model is shown and in the lines it writes back. */
  readonly redactor: Redactor;
  readonly cap?: number;
  /** Characters of the folded span shown to the model (the oldest part is cut first). */
  readonly spanChars: number;
  readonly timeoutMs: number;
  /** The turn's cancellation: a stopped turn stops waiting for the model (the deterministic summary is kept). */
  readonly signal?: AbortSignal;
  /**
   * The chat's instructions and tools, when this summarizer is the chat's own
   * model: a fold is then asked as the next message of the chat's context (a
   * prompt cache serves it) instead of in a prompt of its own.
   */
  readonly chatFrame?: () => { readonly system: string; readonly tools: readonly ToolSpec[] } | undefined;
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
        this.options.complete(this.request(input, base), controller.signal),
        new Promise<never>((_, reject) =>
          controller.signal.addEventListener('abort', () => reject(new Error(turn?.aborted ? 'the turn was stopped' : `no answer within ${Math.round(this.options.timeoutMs / 1000)} s`))),
        ),
      ]);
      const parsed = parseModelFold(answer);
      const cap = input.cap ?? this.options.cap ?? ROLLING_SUMMARY_BUDGET_TOKENS;
      return enforceCap(mergeModelFold(base, parsed, first, input.coverageEnd, this.options.redactor), this.lines, this.options.redactor, cap).state;
    } catch (error) {
      this.options.onFallback?.(messageOf(error));
      return base;
    } finally {
      clearTimeout(timer);
      turn?.removeEventListener('abort', stop);
      controller.abort();
    }
  }

  /**
   * The question of one fold: after the chat's context when this is the chat's
   * model and the engine passed that context (the span is in it, the Task
   * Context at its head), otherwise in a prompt of its own with the span.
   */
  private request(input: FoldInput, base: SummaryState): CompletionRequest {
    const frame = input.context?.length ? this.options.chatFrame?.() : undefined;
    if (frame && input.context) return { prompt: continuationPrompt(input, this.options.redactor, this.options.counter), after: { system: frame.system, messages: input.context, tools: frame.tools } };
    return { prompt: foldPrompt(input, base, this.options.spanChars, this.options.redactor), tool: FOLD_TOOL };
  }
}

/** The JSON object in a model's answer: a tool call's input, a fenced block, or the outermost braces of its text. */
export function parseModelFold(answer: string): ModelFold {
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

/**
 * The model's lines for the span [spanStart, spanEnd) merged into the
 * deterministic summary. In each section where the model wrote at least one
 * valid line, the deterministic narrative lines of the span (sentences taken
 * from the agent's prose) give way to the model's; exact lines (tool results,
 * the user's words) and lines of earlier spans stay. A line citing no record
 * of the span is dropped; a reused model key supersedes its earlier line.
 */
export function mergeModelFold(base: SummaryState, fold: ModelFold, spanStart: number, spanEnd: number, redactor: Redactor): SummaryState {
  const b = new SummaryBuilder(base, redactor);
  const inSpan = (s: number): boolean => s >= spanStart && s < spanEnd;
  const add = (section: FactSection, lines: readonly z.infer<typeof LineSchema>[]): void => {
    const valid: FactLine[] = [];
    for (const line of lines) {
      const sources = [...new Set(line.sources.filter(inSpan))].sort((x, y) => x - y);
      if (sources.length === 0) continue;
      const text = statementOf(line.text.replace(/\s+/g, ' ').trim(), LINE_MAX_WORDS);
      valid.push({ key: `${MODEL_KEY}${line.key}`, text, sources, priority: section === 'Findings' ? 3 : 2, origin: 'model' });
    }
    if (valid.length === 0) return;
    const kept = b.facts[section].filter((l) => !(l.origin === 'narrative' && l.sources.length > 0 && l.sources.every(inSpan)));
    b.facts[section].splice(0, b.facts[section].length, ...kept);
    for (const line of valid) b.upsert(section, line);
  };
  add('Findings', fold.findings);
  add('Decisions', fold.decisions);
  add('Ruled out', fold.ruledOut);
  const c = fold.current;
  if (c) {
    const plain = (t: string | undefined): string => (t ?? '').replace(/\*\*|__|`/g, '').replace(/\s+/g, ' ').trim();
    b.current = { ...b.current, status: plain(c.status) || b.current.status, next: plain(c.next) || b.current.next };
  }
  return b.build(base.coverageEnd, base.folds);
}

/** The prompt of one fold, built from named parts (seed 002's constitution of the floor summary). */
function foldPrompt(input: FoldInput, base: SummaryState, spanChars: number, redactor: Redactor): string {
  let span = spanText(input.units, redactor);
  if (span.length > spanChars) span = `[… ${span.length - spanChars} earlier characters not shown …]\n${span.slice(span.length - spanChars)}`;
  const first = input.units[0]?.firstRecord ?? 0;
  const earlier = (l: FactLine): boolean => l.sources.some((s) => s < first);
  const kept = [
    ...base.requests.map((r) => `request #${r.ordinal}: ${r.text}`),
    ...base.facts.Constraints.map((f) => `constraint (the user's, verbatim): ${f.text}`),
    ...(['Decisions', 'Ruled out', 'Findings'] as const).flatMap((section) => base.facts[section].filter((l) => l.origin !== 'narrative' || earlier(l)).map((l) => `${section.toLowerCase()}${l.key.startsWith(MODEL_KEY) ? ` [${l.key.slice(MODEL_KEY.length)}]` : ''}: ${formatFact(l)}`)),
  ]
    .join('\n')
    .slice(-8000);
  return [
    SUMMARY_RULES,
    '',
    'Already in the Task Context (kept as is; a bracketed key may be reused to update that same subject):',
    kept || '(nothing yet)',
    '',
    `Records ${first}–${input.coverageEnd - 1}, leaving the context window now:`,
    span,
  ].join('\n');
}

/** Characters of each record's opening in the index a continuation prompt gives of the span. */
const INDEX_CHARS = 70;

/**
 * The question of a fold asked after the chat's context: the same rules, the
 * span named by an index of its records (the model read them above, without
 * their numbers, which its lines must cite), the answer as JSON text.
 */
export function continuationPrompt(input: FoldInput, redactor: Redactor, counter: TokenCounter): string {
  const first = input.units[0]?.firstRecord ?? 0;
  const index = input.units.map((unit) => {
    const said = renderUnit(unit)
      .map((m) => m.content)
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim();
    const range = unit.lastRecord > unit.firstRecord ? `${unit.firstRecord}–${unit.lastRecord}` : `${unit.firstRecord}`;
    return `[record ${range}] ${unit.kind === 'step' ? 'agent' : unit.kind}: ${redactor.redact(said.slice(0, INDEX_CHARS)).text}${said.length > INDEX_CHARS ? '…' : ''}`;
  });
  const shown = unitsInContext(input);
  return [
    'Stop the task for one answer: this message is from Context Keeper, not the user.',
    SUMMARY_RULES.replace(/The records below are leaving/, 'The oldest records above, after the ## Task Context, are leaving').replace(/Call \S+ once with the lines for these records \(or, if you cannot call tools, answer with only that JSON object\)\./, 'Do not call a tool: answer with only a JSON object {"findings": [...], "decisions": [...], "ruledOut": [...], "current": {"status": "...", "next": "..."}}, each line {"key": "kebab-case-subject", "text": "...", "sources": [record numbers]}.').replace('(only records shown below)', '(only the records listed below)'),
    '',
    `Records ${first}–${input.coverageEnd - 1} are leaving; they open the conversation after the Task Context, in this order:`,
    ...index.slice(0, shown),
    ...(shown === input.units.length
      ? []
      : [
          `The conversation above stops before record ${input.units[shown]!.firstRecord}; these records, leaving too, are not in it:`,
          ...index.slice(shown),
          '',
          continuationRest(input, redactor, counter),
        ]),
  ].join('\n');
}

/** What the model is told about the Task Context it writes into (seed 002, "The floor summary constitution"). */
const SUMMARY_RULES = [
  'You maintain the ## Task Context of a coding session that is being compacted. The records below are leaving the context window; the next steps will only see what the Task Context keeps.',
  `Call ${FOLD_TOOL.name} once with the lines for these records (or, if you cannot call tools, answer with only that JSON object).`,
  'Write a digest, not a transcript: keep what cannot be cheaply re-fetched — a discovered truth, a decision and its reason, an approach that failed with its verbatim error and what replaced it. Drop the process: how things were looked up, tool steps, "let me…", pleasantries.',
  'Each line is one statement of at most 30 words with file paths, identifiers, error messages, versions and numbers copied verbatim, and the record numbers it comes from (only records shown below).',
  'The sections are append-only: earlier lines stay unless you reuse their key to supersede them. Before reusing a key, check it names the same subject; a different subject gets a new key. Never delete or weaken a line.',
  'A time-bound value (a status, a count, "currently", "latest") ends with "(as of rN)". A statement only reported, not verified by a tool result, ends with "(reported)".',
  "Do not restate the user's requests or rules (they are kept verbatim elsewhere); never write a goal, a constraint or a permission. Never claim something passed, was fixed or was done unless a record shows it. An open question stays open.",
].join('\n');
