/**
 * What the model is sent: the head message, then each unit in view rendered
 * as messages in its current forms, secrets hidden. The messages are kept
 * between calls, so projecting costs what changed since the last call, not
 * a render and a redaction of the whole view.
 */
import { KeyedMemo, type RevisedView } from './memo';
import { toolKey, type SessionRecord } from './parts';
import type { Redactor } from './redact';
import type { ReducedForm } from './store';
import { outputAsSent, renderToolInput } from './tools';
import type { ToolInvocation, Unit } from './types';

export interface ProjectedMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  /** What is measured and sent: tool calls and results rendered as tagged text. */
  readonly content: string;
  /**
   * The same step in structured form, for providers that take tool calls as
   * parts: an assistant message's own text and its calls (input as rendered,
   * possibly reduced), a tool message's result. `content` stays the source of truth.
   */
  readonly prose?: string;
  readonly calls?: readonly ProjectedCall[];
  readonly result?: ProjectedResult;
  /** The head message's blocks, in order, as data (the panel measures them; `content` is their texts joined). */
  readonly head?: readonly HeadPart[];
}

/** The blocks the head is made of: the Task Context, the protected state, passages retrieved from the record, the evidence not loaded. */
export type HeadBlock = 'summary' | 'protectedState' | 'retrieved' | 'evidence';

export interface HeadPart {
  readonly block: HeadBlock;
  readonly text: string;
}

export interface ProjectedCall {
  readonly callId: string;
  readonly name: string;
  readonly input: string;
}

export interface ProjectedResult {
  readonly callId: string;
  readonly output: string;
  readonly isError: boolean;
}

export function renderToolCall(tool: ToolInvocation, input: string): string {
  return `<tool_call id="${tool.callId}" name="${tool.name}">\n${input}\n</tool_call>`;
}

export function renderToolResult(tool: ToolInvocation, output: string): string {
  return `<tool_result id="${tool.callId}"${tool.isError ? ' error="true"' : ''}>\n${output}\n</tool_result>`;
}

/**
 * The messages of one unit: a user or system message, or a step's assistant
 * message (text, reasoning and tool calls) followed by one tool message per
 * result. `formOf` supplies a reduced form for a part, if one applies.
 */
export function renderUnit(unit: Unit, formOf: (address: string) => ReducedForm | undefined = () => undefined): ProjectedMessage[] {
  if (unit.kind !== 'step') {
    const part = unit.parts[0];
    const text = part ? (formOf(part.address)?.output ?? part.text) : '';
    // An empty message carries nothing, and providers reject one.
    return text.trim() === '' ? [] : [{ role: unit.kind, content: text }];
  }
  const pieces: string[] = [];
  const prose: string[] = [];
  const calls: ProjectedCall[] = [];
  const results: ProjectedMessage[] = [];
  for (const part of unit.parts) {
    const form = formOf(part.address);
    if (part.kind === 'tool' && part.tool) {
      const input = form ? form.input : renderToolInput(part.tool);
      pieces.push(renderToolCall(part.tool, input));
      calls.push({ callId: part.tool.callId, name: part.tool.name, input });
      const output = form ? form.output : outputAsSent(part.tool, toolKey(part));
      if (output !== undefined) {
        results.push({ role: 'tool', content: renderToolResult(part.tool, output), result: { callId: part.tool.callId, output, isError: part.tool.isError } });
      }
    } else if (part.kind === 'reasoning') {
      pieces.push(`<reasoning>\n${form ? form.output : part.text}\n</reasoning>`);
    } else {
      const text = form ? form.output : part.text;
      pieces.push(text);
      prose.push(text);
    }
  }
  const content = pieces.join('\n');
  if (content.trim() === '' && results.length === 0) return [];
  return [{ role: 'assistant', content, prose: prose.join('\n'), calls }, ...results];
}

/** A message with secrets hidden; the structured form carries the same text and is redacted alike, never dropped. */
export function redactMessage(m: ProjectedMessage, redactor: Redactor): ProjectedMessage {
  const redact = (text: string): string => redactor.redact(text).text;
  const content = redact(m.content);
  if (content === m.content) return m;
  return {
    ...m,
    content,
    ...(m.prose !== undefined ? { prose: redact(m.prose) } : {}),
    ...(m.calls ? { calls: m.calls.map((c) => ({ ...c, input: redact(c.input) })) } : {}),
    ...(m.result ? { result: { ...m.result, output: redact(m.result.output) } } : {}),
    ...(m.head ? { head: m.head.map((p) => ({ ...p, text: redact(p.text) })) } : {}),
  };
}

/** The rendered tail: the messages of units [coverage, coverage + starts.length), `starts[k]` where unit coverage + k begins. */
interface RenderedTail {
  readonly coverage: number;
  readonly forms: number;
  readonly starts: number[];
  readonly messages: ProjectedMessage[];
}

/** A unit's messages as last rendered, with what they were rendered from. */
interface UnitView {
  readonly unit: Unit;
  readonly lastRecord: number;
  readonly parts: number;
  readonly forms: (ReducedForm | undefined)[];
  readonly messages: ProjectedMessage[];
}

/**
 * The projection kept between calls: the head message (the same object while
 * its text is unchanged), the messages of every unit in view, and how many
 * leading messages the last projection shared with the one before it.
 */
export class Projection {
  private readonly headMessage = new KeyedMemo<string, ProjectedMessage>();
  private tail: RenderedTail | undefined;
  /** The first unit an append touched since the last projection. */
  private dirtyFrom = Infinity;
  private readonly unitViews = new Map<number, UnitView>();
  private projectedHead: ProjectedMessage | undefined;
  private unchangedCount = 0;
  private projectionCount = 0;

  /** `redactor` is applied to every message (secrets and personal data). */
  constructor(
    private readonly record: SessionRecord,
    private readonly redactor: Redactor,
  ) {}

  /** An append changed unit `unitIndex`: it is rendered again at the next projection. */
  touched(unitIndex: number): void {
    if (unitIndex < this.dirtyFrom) this.dirtyFrom = unitIndex;
  }

  /** The messages sent to the model: the head (its text and blocks), then the raw or reduced tail. */
  project(head: { readonly text: string; readonly parts: readonly HeadPart[] }, coverageUnit: number, forms: RevisedView<string, ReducedForm>): ProjectedMessage[] {
    const message = head.text === '' ? undefined : this.headMessage.get(head.text, () => redactMessage({ role: 'user', content: head.text, head: head.parts }, this.redactor));
    const { messages: tail, kept } = this.tailView(coverageUnit, forms);
    const sameHead = message === this.projectedHead;
    this.projectedHead = message;
    this.unchangedCount = sameHead ? (message ? 1 : 0) + kept : 0;
    this.projectionCount++;
    // A fresh array each call (callers keep the previous one), copied in one block.
    return message ? [message].concat(tail) : tail.slice();
  }

  /**
   * How many leading messages of the last projection are the very objects of
   * the projection before it: a meter counts only what follows, so measuring
   * a call costs what changed, not the whole view.
   */
  get unchanged(): number {
    return this.unchangedCount;
  }

  /** Projections made so far. */
  get count(): number {
    return this.projectionCount;
  }

  /** How many messages of the last projection's tail come before unit `unitIndex` (all of them past its end). */
  tailBefore(unitIndex: number): number {
    const tail = this.tail!;
    return tail.starts[unitIndex - tail.coverage] ?? tail.messages.length;
  }

  /** Messages in the last projection's tail. */
  get tailLength(): number {
    return this.tail!.messages.length;
  }

  /**
   * The messages of the units in view, kept between calls: while the
   * coverage and the forms are unchanged, only the units appended to since
   * the last call are rendered again, so a call costs what changed, not the
   * whole view. Any fold, shrink or restore re-checks every unit in view
   * (a lookup each, a render only where something changed).
   */
  private tailView(coverageUnit: number, forms: RevisedView<string, ReducedForm>): { messages: ProjectedMessage[]; kept: number } {
    const units = this.record.units;
    let t = this.tail;
    let kept = 0;
    if (t && t.coverage === coverageUnit && t.forms === forms.revision) {
      // Units [coverage, coverage + starts.length) are rendered; the ones an append touched since go again.
      const k = Math.max(0, this.dirtyFrom - t.coverage);
      if (k < t.starts.length) {
        t.messages.length = t.starts[k]!;
        t.starts.length = k;
      }
      kept = t.messages.length;
    } else {
      t = { coverage: coverageUnit, forms: forms.revision, starts: [], messages: [] };
      this.tail = t;
    }
    for (let i = t.coverage + t.starts.length; i < units.length; i++) {
      t.starts.push(t.messages.length);
      for (const m of this.unitView(i, units[i]!, forms)) t.messages.push(m);
    }
    this.dirtyFrom = Infinity;
    this.pruneUnitViews(units.length, coverageUnit);
    return { messages: t.messages, kept };
  }

  /**
   * Unit `i` as sent: rendered with its current forms and redacted, computed
   * again only when the unit grew or one of its forms changed. A unit's
   * messages keep their identity from call to call, so projecting costs a
   * lookup per unit in view, not a render and a redaction of the whole view.
   */
  private unitView(i: number, unit: Unit, forms: ReadonlyMap<string, ReducedForm>): readonly ProjectedMessage[] {
    const cached = this.unitViews.get(i);
    if (cached && cached.unit === unit && cached.lastRecord === unit.lastRecord && cached.parts === unit.parts.length && sameForms(unit, cached.forms, forms)) return cached.messages;
    // Every part's form: a text part has one too once the last guard clipped it.
    const current = unit.parts.map((part) => forms.get(part.address));
    const messages = renderUnit(unit, (address) => forms.get(address)).map((m) => redactMessage(m, this.redactor));
    this.unitViews.set(i, { unit, lastRecord: unit.lastRecord, parts: unit.parts.length, forms: current, messages });
    return messages;
  }

  /** Drops the cached views of units folded away (they are never sent again unless the coverage is rebuilt). */
  private pruneUnitViews(units: number, coverageUnit: number): void {
    if (this.unitViews.size <= 2 * Math.max(16, units - coverageUnit)) return;
    for (const i of this.unitViews.keys()) if (i < coverageUnit || i >= units) this.unitViews.delete(i);
  }
}

function sameForms(unit: Unit, cached: readonly (ReducedForm | undefined)[], forms: ReadonlyMap<string, ReducedForm>): boolean {
  for (let k = 0; k < unit.parts.length; k++) if (forms.get(unit.parts[k]!.address) !== cached[k]) return false;
  return true;
}
