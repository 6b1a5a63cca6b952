/**
 * The @keeper agent loop, free of VS Code: a turn appends the user's request,
 * restores the task's checkpoint (preflight), then alternates model calls and
 * tool runs. Before every model call the engine projects the record into a
 * context under the budget (the step operation); the model's own count of what
 * was sent becomes the calibration anchor. Everything the model said and every
 * tool result is recorded, including a turn cut short by an error or a
 * cancellation, so the record never has a call without its result.
 */
import type { ProjectedMessage, StepReport } from '../core/engine';
import type { CompactionSession } from '../core/session';
import { REWIND_TOOL } from '../core/parts';
import { nextTurn } from '../core/turns';
import {
  AbortError,
  abortable,
  isAbort,
  messageOf,
  throwIfAborted,
  type ChatModelPort,
  type ModelRequest,
  type ToolSpec,
} from './model';
import { isTransientModelError, MODEL_RETRIES, retryDelayMs } from './retry';
import type { TaskSession } from './taskSession';
import { formatCount } from '../core/formatCount';

export interface ToolRunner {
  readonly specs: readonly ToolSpec[];
  /** Runs one tool call; rejects only with an AbortError (cancellation). */
  run(name: string, input: unknown, signal: AbortSignal): Promise<{ output: string; isError: boolean }>;
}

/** Where a turn reports to (the chat response stream in VS Code). */
export interface TurnIO {
  markdown(text: string): void;
  progress(message: string): void;
  /** A tool is about to run. */
  toolCall(name: string, input: unknown): void;
  /** The context was compacted before a model call; `folded` says how much of the record the Task Context now stands for. */
  compacted(report: StepReport, folded: FoldedSoFar): void;
  /** What was sent at a model call (for the status-bar gauge and the panel). */
  sent(info: SentInfo): void;
}

export interface SentInfo {
  readonly step: number;
  readonly messages: readonly ProjectedMessage[];
  /** The model's count of the request, or undefined when counting failed. */
  readonly tokens: number | undefined;
  readonly predicted: number;
  readonly window: number;
}

export interface TurnOptions {
  readonly system: string;
  /** Model calls allowed in one turn before the agent stops and says so. */
  readonly maxSteps: number;
  /** Waits before a retry (tests pass one that does not wait); default a real timer. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** The jitter of retry delays, in [0, 1) (tests pass a fixed one); default Math.random. */
  readonly random?: () => number;
  /** Told of each retry of a model call that failed transiently (logged by the participant). */
  readonly onRetry?: (attempt: number, delayMs: number, error: unknown) => void;
  /** What the user attached to the request (`#file`, a selection): recorded after it, as reads the user made. */
  readonly attachments?: readonly Attachment[];
}

/**
 * A file or a selection the user attached to a request. It is recorded as a
 * `read_file` call marked `attachedBy: "user"` with the text as its result, so
 * it is evidence like any read (shrunk and folded by the same rules, redacted,
 * counted in the artifact index), never part of the request's own words.
 */
export interface Attachment {
  /** Workspace-relative path (or the reference's name when it is no file). */
  readonly path: string;
  /** 1-based lines of a selection. */
  readonly lines?: { readonly from: number; readonly to: number };
  readonly text: string;
}

export interface TurnResult {
  readonly steps: number;
  readonly stoppedAt: 'answer' | 'max-steps';
  readonly compactions: number;
}

/** A model call failed (not a cancellation); the partial turn is in the record. */
export class ModelCallError extends Error {
  constructor(message: string, override readonly cause: unknown) {
    super(message);
    this.name = 'ModelCallError';
  }
}

/** Records a request and runs the agent until the model answers without calling a tool. */
/** How much of the record is folded into the Task Context: records, and tool calls among them. */
export interface FoldedSoFar {
  readonly records: number;
  readonly toolCalls: number;
}

/** The line a response keeps where the context was compacted: tokens before → after, and what the Task Context now stands for. */
export function describeCompaction(report: StepReport, folded: FoldedSoFar): string {
  const tokens = `${formatCount(report.predicted)} → ${formatCount(report.after)} tokens`;
  if (report.tier <= 1) return `🗜 Compacted the context: ${tokens}; older tool outputs shortened (each still recoverable with \`view_tool_call\`).`;
  const what = `${folded.records <= 1 ? 'record 0' : `records 0–${folded.records - 1}`}${folded.toolCalls ? ` (${folded.toolCalls} tool call${folded.toolCalls === 1 ? '' : 's'})` : ''}`;
  const how = report.tier === 2 ? 'folded into the Task Context' : 'folded into the Task Context, and what still did not fit was cut';
  return `🗜 Compacted the context: ${tokens}; ${what} ${how}. Rules and requests are kept word for word.`;
}

/**
 * The line a response keeps at its end for the compactions of its turn: the one
 * compaction's line, or how many there were with the last one's tokens and what
 * the Task Context stands for after them.
 */
export function describeTurnCompactions(compactions: readonly { readonly report: StepReport; readonly folded: FoldedSoFar }[]): string {
  const last = compactions.at(-1);
  if (!last) return '';
  if (compactions.length === 1) return describeCompaction(last.report, last.folded);
  const deepest = compactions.reduce((a, b) => (b.report.tier > a.report.tier ? b : a));
  const line = describeCompaction({ ...last.report, tier: deepest.report.tier }, last.folded);
  return line.replace(/^🗜 Compacted the context: /, `🗜 Compacted the context ${compactions.length} times in this turn, the last time `);
}

/** How much of the record the Task Context stands for now. */
export function foldedSoFar(session: CompactionSession): FoldedSoFar {
  const units = session.record.units;
  let toolCalls = 0;
  for (let i = 0; i < session.engine.firstUnitInView; i++) for (const part of units[i]!.parts) if (part.kind === 'tool') toolCalls++;
  return { records: session.engine.coverageEnd, toolCalls };
}

export async function runTurn(
  task: TaskSession,
  prompt: string,
  model: ChatModelPort,
  tools: ToolRunner,
  io: TurnIO,
  options: TurnOptions,
  signal: AbortSignal,
): Promise<TurnResult> {
  const session = task.session;
  await task.append({ role: 'user', content: prompt });
  session.preflight();
  await recordAttachments(task, options.attachments ?? []);

  let compactions = 0;
  for (let step = 0; step < options.maxSteps; step++) {
    throwIfAborted(signal);
    const atRecord = task.nextIndex;
    // The step (a fold, a projection) is a turn of the event loop of its own, after the appends before it.
    await nextTurn();
    const { report, messages, boundary } = await session.prepareCall(atRecord);
    if (boundary) {
      compactions += report.compactions.length;
      task.ledger.push(boundary.counts);
      io.compacted(report, foldedSoFar(session));
    }
    const request: ModelRequest = { system: options.system, messages, tools: tools.specs };
    const messageId = `keeper-${task.id}-${atRecord}`;

    const answer = await callModelRetrying(task, model, request, io, messageId, signal, options);
    const tokens = await countSent(model, request, signal);
    if (tokens !== undefined) session.observeSent(tokens);
    io.sent({ step, messages, tokens, predicted: report.after, window: model.maxInputTokens });

    if (answer.calls.length === 0) return { steps: step + 1, stoppedAt: 'answer', compactions };
    for (let i = 0; i < answer.calls.length; i++) {
      const call = answer.calls[i]!;
      if (signal.aborted) {
        await recordUnrun(task, answer.calls.slice(i), 'not run: the user cancelled the turn');
        throw new AbortError();
      }
      io.toolCall(call.name, call.input);
      let outcome: { output: string; isError: boolean };
      try {
        outcome = await tools.run(call.name, call.input, signal);
      } catch (error) {
        const cancelled = isAbort(error);
        // A cancelled tool may carry what it produced before it was stopped (a command's output so far).
        const partial = (error as { outcome?: { output?: unknown } }).outcome?.output;
        const output = cancelled
          ? `${typeof partial === 'string' && partial !== '' ? `${partial}\n` : ''}cancelled: the user stopped the turn while this tool ran`
          : `the tool failed: ${messageOf(error)}`;
        await task.append({ role: 'tool', content: '', toolName: call.name, toolCallId: call.callId, toolOutput: output, isError: true });
        await recordUnrun(task, answer.calls.slice(i + 1), 'not run: the turn stopped before this call');
        if (cancelled) throw new AbortError();
        throw error;
      }
      await task.append({ role: 'tool', content: '', toolName: call.name, toolCallId: call.callId, toolOutput: outcome.output, isError: outcome.isError });
    }
  }
  io.markdown(`\n\n_Stopped after ${options.maxSteps} model calls in this turn. Send another message to continue._`);
  return { steps: options.maxSteps, stoppedAt: 'max-steps', compactions };
}

/**
 * callModel, tried again after a transient failure (rate limit, overload, the
 * network) when nothing of the answer was streamed yet, up to MODEL_RETRIES
 * times with growing delays (src/agent/retry.ts), saying so in the chat.
 */
async function callModelRetrying(task: TaskSession, model: ChatModelPort, request: ModelRequest, io: TurnIO, messageId: string, signal: AbortSignal, options: TurnOptions): Promise<Answer> {
  for (let attempt = 1; ; attempt++) {
    try {
      // The last attempt fails as any model call does (recorded, reported).
      return await callModel(task, model, request, io, messageId, signal, attempt <= MODEL_RETRIES);
    } catch (error) {
      if (!(error instanceof RetryableModelError)) throw error;
      const delay = retryDelayMs(attempt, options.random);
      options.onRetry?.(attempt, delay, error.cause);
      io.progress(`The model did not answer (${messageOf(error.cause)}); trying again in ${Math.ceil(delay / 1000)} s (retry ${attempt} of ${MODEL_RETRIES})…`);
      await (options.sleep ?? sleep)(delay, signal);
    }
  }
}

/** A transient failure before anything was streamed or recorded: callModelRetrying sends the request again. */
class RetryableModelError extends Error {
  constructor(override readonly cause: unknown) {
    super(messageOf(cause));
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return abortable(new Promise<void>((resolve) => setTimeout(resolve, ms)), signal);
}

interface Answer {
  readonly text: string;
  readonly calls: { callId: string; name: string; input: unknown }[];
}

/**
 * Streams one model call into the chat and the record. Text is recorded once
 * the call ends (whole, or as far as it got when it failed); tool calls are
 * recorded as they are complete.
 */
async function callModel(task: TaskSession, model: ChatModelPort, request: ModelRequest, io: TurnIO, messageId: string, signal: AbortSignal, mayRetry = false): Promise<Answer> {
  let text = '';
  const calls: Answer['calls'] = [];
  const seen = new Set<string>();
  try {
    for await (const event of model.send(request, signal)) {
      if (signal.aborted) throw new AbortError();
      if (event.type === 'text') {
        text += event.text;
        io.markdown(event.text);
      } else {
        // Providers may reuse or omit ids; the record needs them unique within the task.
        let callId = event.callId || `call-${task.nextIndex}-${calls.length}`;
        while (seen.has(callId) || task.session.record.findTool(callId)) callId = `${callId}~${task.nextIndex}`;
        seen.add(callId);
        calls.push({ callId, name: event.name, input: event.input });
      }
    }
  } catch (error) {
    const cancelled = isAbort(error) || signal.aborted;
    // Nothing streamed and nothing recorded: the same request can go again.
    if (!cancelled && mayRetry && text === '' && calls.length === 0 && isTransientModelError(error)) {
      throw new RetryableModelError(error);
    }
    if (text !== '') await task.append({ role: 'assistant', content: text, messageId });
    await recordCalls(task, calls, messageId);
    await recordUnrun(task, calls, cancelled ? 'not run: the user cancelled the turn' : 'not run: the model call failed');
    if (cancelled) throw new AbortError();
    throw new ModelCallError(`The model failed: ${messageOf(error)}`, error);
  }
  if (text !== '') await task.append({ role: 'assistant', content: text, messageId });
  await recordCalls(task, calls, messageId);
  return { text, calls };
}

async function recordCalls(task: TaskSession, calls: Answer['calls'], messageId: string): Promise<void> {
  for (const call of calls) {
    await task.append({ role: 'assistant', content: '', toolName: call.name, toolCallId: call.callId, toolInput: call.input, messageId });
  }
}

async function recordAttachments(task: TaskSession, attachments: readonly Attachment[]): Promise<void> {
  if (attachments.length === 0) return;
  const messageId = `keeper-${task.id}-${task.nextIndex}-attached`;
  const calls = attachments.map((a, i) => ({
    callId: `attached-${task.nextIndex}-${i}`,
    input: { path: a.path, ...(a.lines ? { offset: a.lines.from, limit: a.lines.to - a.lines.from + 1 } : {}), attachedBy: 'user' },
    output: a.text,
  }));
  for (const call of calls) await task.append({ role: 'assistant', content: '', toolName: 'read_file', toolCallId: call.callId, toolInput: call.input, messageId });
  for (const call of calls) await task.append({ role: 'tool', content: '', toolName: 'read_file', toolCallId: call.callId, toolOutput: call.output, isError: false });
}

/**
 * Records in the task that the user undid @keeper's edits (the turn's Undo
 * button, or the undo offered after a rewind): a tool call attributed to the
 * user, as attachments are, so the model sees that the files are back as they
 * were and the record, append-only, stays in step with the files.
 */
export async function recordUndo(task: TaskSession, turns: readonly number[], undone: readonly string[], changedSince: readonly string[]): Promise<void> {
  if (undone.length === 0 && changedSince.length === 0) return;
  const callId = `undo-${task.nextIndex}`;
  const lines: string[] = [];
  if (undone.length) lines.push(`Undone by the user: @keeper's edits of turn ${turns.join(', ')} to ${undone.join(', ')} were reverted; these files are back as they were before them.`);
  if (changedSince.length) lines.push(`Left as they are (changed since @keeper edited them): ${changedSince.join(', ')}.`);
  await task.append({ role: 'assistant', content: '', toolName: 'undo_edits', toolCallId: callId, toolInput: { turns, files: [...undone, ...changedSince], by: 'user' }, messageId: `keeper-${task.id}-${task.nextIndex}-undo` });
  await task.append({ role: 'tool', content: '', toolName: 'undo_edits', toolCallId: callId, toolOutput: lines.join('\n'), isError: false });
}

/**
 * Records in the task that the user took turns `turns` (from record
 * `fromRecord` on) out of the chat: an appended call attributed to the user
 * (REWIND_TOOL), after which the task, derived again, leaves those turns out of
 * every view while its record keeps them. `files` are the files those turns
 * changed that are still as they left them.
 */
export async function recordRewind(task: TaskSession, fromRecord: number, turns: readonly number[], files: readonly string[]): Promise<void> {
  const callId = `rewind-${task.nextIndex}`;
  const said = turns.length === 1 ? `turn ${turns[0]}` : `turns ${turns[0]}–${turns[turns.length - 1]}`;
  const output =
    `The user took ${said} (records r${fromRecord}–r${task.nextIndex - 1}) out of the chat (Restore Checkpoint, Start Over or Retry): ` +
    `they are left out of this conversation; the record keeps them.` +
    (files.length ? ` The files they changed still hold those changes unless the user undoes them: ${files.join(', ')}.` : '');
  await task.append({ role: 'assistant', content: '', toolName: REWIND_TOOL, toolCallId: callId, toolInput: { fromRecord, turns, files, by: 'user' }, messageId: `keeper-${task.id}-${task.nextIndex}-rewind` });
  await task.append({ role: 'tool', content: '', toolName: REWIND_TOOL, toolCallId: callId, toolOutput: output, isError: false });
}

/** Closes calls that will never run, so every call in the record has its result. */
async function recordUnrun(task: TaskSession, calls: Answer['calls'], why: string): Promise<void> {
  for (const call of calls) {
    await task.append({ role: 'tool', content: '', toolName: call.name, toolCallId: call.callId, toolOutput: why, isError: true });
  }
}

/** The model's count of a request: system, messages and tool schemas. Undefined if the provider cannot count. */
async function countSent(model: ChatModelPort, request: ModelRequest, signal: AbortSignal): Promise<number | undefined> {
  // A cancellation here is noticed by the caller, which first closes the calls just recorded.
  try {
    return await abortable(model.countTokens(request, signal), signal);
  } catch {
    return undefined;
  }
}
