/**
 * Reconstructs the raw record into units and addressable parts, incrementally.
 *
 * - a turn starts at a user record and runs until the next one;
 * - a step is one model generation: a maximal run of assistant records, split
 *   where the response id changes; the tool results that follow belong to it;
 * - a part is one tool call (joined with its result), text block or reasoning
 *   block. Tool parts are addressed by toolCallId, text and reasoning by a hash
 *   of their content. Response ids split steps but never become addresses.
 */
import { contentHash, contentHashOf } from './hash';
import { agentOutputText } from './toolInput';
import type { Part, RawRecord, ToolInvocation, Unit, UnitKind } from './types';

/** The key a tool part is known by (view_tool_call, its reduced forms): its address minus `tool:`, i.e. `<callId>`, or `<callId>#r<record>` for a reused id. */
export function toolKey(part: Part): string {
  return part.address.slice('tool:'.length);
}

interface MutableUnit {
  kind: UnitKind;
  step: number | undefined;
  turn: number;
  firstRecord: number;
  lastRecord: number;
  parts: Part[];
  /** The response id that opened the step (steps only). */
  messageId: string | undefined;
}

/** What one appended record changed, so a live view can update in O(1). */
export type AppendEvent =
  | { readonly type: 'unit'; readonly unitIndex: number }
  | { readonly type: 'part'; readonly unitIndex: number; readonly part: Part }
  | { readonly type: 'result'; readonly unitIndex: number; readonly before: Part; readonly after: Part };

/** The text of a user-role record the user did not write, tagged as injected (core/harness knows the tags). */
export function harnessText(kind: 'sidechain' | 'meta', content: string): string {
  const tag = kind === 'sidechain' ? 'sidechain' : 'harness-meta';
  return `<${tag}>\n${content}\n</${tag}>`;
}

export function textAddress(kind: 'text' | 'reasoning', role: string, content: string): string {
  return `${kind}:${contentHash(`${role}\n${content}`)}`;
}

/**
 * The tool of the record a rewind appends: the user took the turns from
 * `input.fromRecord` on out of the conversation (VS Code's Restore Checkpoint,
 * Start Over or Retry). The record keeps them (append-only); the units leave
 * them out, so no projection, fold or derived state sees them again.
 */
export const REWIND_TOOL = 'rewind_turns';

/**
 * The records rewinds took out: each rewind record's [fromRecord, its own
 * index), except what the user did outside the chat in between (a call whose
 * input says `by: 'user'` — an undo of @keeper's edits, an earlier rewind — and
 * its result): the turns leave the conversation, the user's acts on the files
 * stay known.
 */
export function rewoundRecords(records: readonly RawRecord[]): ReadonlySet<number> {
  const out = new Set<number>();
  for (const r of records) {
    if (r.role !== 'assistant' || r.toolName !== REWIND_TOOL) continue;
    const from = (r.toolInput as { fromRecord?: unknown } | undefined)?.fromRecord;
    if (typeof from !== 'number' || !Number.isInteger(from) || from < 0 || from >= r.index) continue;
    const usersActs = new Set<string>();
    for (let i = from; i < r.index; i++) {
      const x = records[i]!;
      if (x.role === 'assistant' && x.toolCallId !== undefined && (x.toolInput as { by?: unknown } | undefined)?.by === 'user') usersActs.add(x.toolCallId);
      else if (x.role === 'tool' && x.toolCallId !== undefined && usersActs.has(x.toolCallId)) continue;
      else out.add(i);
    }
  }
  return out;
}

/**
 * Where each tool call of the record is, as [unit index, part index]: by call
 * id (the latest call with that id, where a result attaches) and by its part's
 * address, which stays unique when a log reused a call id.
 */
class ToolCalls {
  /** callId → [unit index, part index] of the latest call with that id (where a result attaches). */
  private readonly calls = new Map<string, [number, number]>();
  /** Tool part address → [unit index, part index]. */
  private readonly toolAt = new Map<string, [number, number]>();
  private readonly usedAddresses = new Set<string>();

  /** The address of a new tool part for `callId` at `record`: `tool:<callId>`, or `tool:<callId>#r<record>` for a reused id. */
  address(callId: string, record: number): string {
    let address = `tool:${callId}`;
    if (this.usedAddresses.has(address)) address = `${address}#r${record}`;
    this.usedAddresses.add(address);
    return address;
  }

  /** A tool part was added at `at`. */
  add(callId: string, address: string, at: [number, number]): void {
    this.calls.set(callId, at);
    this.toolAt.set(address, [...at]);
  }

  /** Where the latest call with this id is. */
  byCallId(callId: string): [number, number] | undefined {
    return this.calls.get(callId);
  }

  /** Where the call with this key is: its part address minus `tool:`, else the latest call with that id. */
  byKey(key: string): [number, number] | undefined {
    return this.toolAt.get(`tool:${key}`) ?? this.calls.get(key);
  }
}

export class SessionRecord {
  /** `rewound`: records kept in the record but in no unit (see REWIND_TOOL). */
  constructor(private readonly rewound: ReadonlySet<number> = new Set()) {}

  readonly records: RawRecord[] = [];
  private readonly mutableUnits: MutableUnit[] = [];
  private readonly toolCalls = new ToolCalls();
  /** digests[i] = content address of units [0, i). */
  private readonly digests: string[] = ['0'];
  private stepCount = 0;
  private turnCount = -1;
  private lastRole: RawRecord['role'] | undefined;

  get units(): readonly Unit[] {
    return this.mutableUnits;
  }

  get steps(): number {
    return this.stepCount;
  }

  /** Appends one record (its `index` must be the next position) and reports what changed. */
  append(record: RawRecord): AppendEvent[] {
    if (record.index !== this.records.length) {
      throw new Error(`record index ${record.index} out of order: expected ${this.records.length}`);
    }
    this.records.push(record);
    const events: AppendEvent[] = [];
    if (this.rewound.has(record.index)) return events;
    try {
      switch (record.role) {
        case 'system':
        case 'user':
          if (record.role === 'user') this.turnCount++;
          this.openUnit(record.role, record, events);
          this.addTextPart(record, 'text', events);
          break;
        case 'assistant':
          this.appendAssistant(record, events);
          break;
        case 'tool':
          this.appendToolResult(record, events);
          break;
      }
    } finally {
      this.lastRole = record.role;
    }
    return events;
  }

  /** Index of the first unit whose first record is at or after `record` (units.length if none). */
  unitIndexAtRecord(record: number): number {
    let lo = 0;
    let hi = this.mutableUnits.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.mutableUnits[mid]!.firstRecord < record) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Content address of the coverage made of units [0, unitIndex). */
  coverageDigest(unitIndex: number): string {
    for (let i = this.digests.length; i <= unitIndex; i++) {
      const unit = this.mutableUnits[i - 1]!;
      // The digest of `${previous}|${kind}@${firstRecord}:${addresses joined by ','}`, hashed piece by piece.
      const pieces = unit.parts.map((p) => p.address);
      pieces[0] = `${this.digests[i - 1]}|${unit.kind}@${unit.firstRecord}:${pieces[0] ?? ''}`;
      this.digests.push(contentHashOf(pieces, ','));
    }
    return this.digests[unitIndex]!;
  }

  /**
   * The tool call with this key: the toolCallId for the first call that used it,
   * `<id>#r<record>` for a later call that reused an id (the key its recovery
   * pointer names).
   */
  findTool(key: string): ToolInvocation | undefined {
    const at = this.toolCalls.byKey(key);
    if (!at) return undefined;
    return this.mutableUnits[at[0]]!.parts[at[1]]!.tool;
  }

  private openUnit(kind: UnitKind, record: RawRecord, events: AppendEvent[]): MutableUnit {
    const unit: MutableUnit = {
      kind,
      step: kind === 'step' ? this.stepCount++ : undefined,
      turn: this.turnCount,
      firstRecord: record.index,
      lastRecord: record.index,
      parts: [],
      messageId: kind === 'step' ? record.messageId : undefined,
    };
    this.mutableUnits.push(unit);
    events.push({ type: 'unit', unitIndex: this.mutableUnits.length - 1 });
    return unit;
  }

  private currentStep(): MutableUnit | undefined {
    const last = this.mutableUnits[this.mutableUnits.length - 1];
    return last && last.kind === 'step' ? last : undefined;
  }

  /** Whether appending `record` starts a new step, i.e. a model call happens just before it. */
  opensStep(record: RawRecord): boolean {
    if (record.role !== 'assistant') return false;
    const current = this.currentStep();
    if (!current) return true;
    if (record.messageId !== undefined) return record.messageId !== current.messageId;
    return !(this.lastRole === 'assistant' && current.messageId === undefined);
  }

  private appendAssistant(record: RawRecord, events: AppendEvent[]): void {
    const unit = this.opensStep(record) ? this.openUnit('step', record, events) : this.currentStep()!;
    unit.lastRecord = record.index;
    if (record.toolName !== undefined || record.toolCallId !== undefined) {
      const callId = record.toolCallId ?? `r${record.index}`;
      const tool: ToolInvocation = {
        callId,
        name: record.toolName ?? 'unknown',
        input: record.toolInput,
        output: undefined,
        isError: false,
        callRecord: record.index,
        resultRecord: undefined,
      };
      this.addToolPart(unit, tool, record, events);
      if (record.content.trim() !== '') this.addTextPart(record, 'text', events);
      return;
    }
    this.addTextPart(record, record.thinking ? 'reasoning' : 'text', events);
  }

  private appendToolResult(record: RawRecord, events: AppendEvent[]): void {
    const callId = record.toolCallId;
    const at = callId !== undefined ? this.toolCalls.byCallId(callId) : undefined;
    if (at) {
      const unit = this.mutableUnits[at[0]]!;
      const before = unit.parts[at[1]]!;
      const previous = before.tool!;
      if (previous.resultRecord === undefined) {
        const tool: ToolInvocation = {
          ...previous,
          output: toolOutputOf(record),
          isError: reportsError(record),
          resultRecord: record.index,
        };
        const after: Part = { ...before, tool };
        unit.parts[at[1]] = after;
        unit.lastRecord = Math.max(unit.lastRecord, record.index);
        events.push({ type: 'result', unitIndex: at[0], before, after });
        return;
      }
    }
    // A result with no matching open call: keep it, as its own tool part.
    const unit = this.currentStep() ?? this.openUnit('step', record, events);
    unit.lastRecord = record.index;
    const tool: ToolInvocation = {
      callId: callId ?? `r${record.index}`,
      name: record.toolName ?? 'unknown',
      input: undefined,
      output: toolOutputOf(record),
      isError: reportsError(record),
      callRecord: record.index,
      resultRecord: record.index,
    };
    this.addToolPart(unit, tool, record, events);
  }

  private addToolPart(unit: MutableUnit, tool: ToolInvocation, record: RawRecord, events: AppendEvent[]): void {
    const address = this.toolCalls.address(tool.callId, record.index);
    const part: Part = { address, kind: 'tool', role: 'assistant', record: record.index, text: '', tool };
    unit.parts.push(part);
    const unitIndex = this.mutableUnits.length - 1;
    this.toolCalls.add(tool.callId, address, [unitIndex, unit.parts.length - 1]);
    events.push({ type: 'part', unitIndex, part });
  }

  private addTextPart(record: RawRecord, kind: 'text' | 'reasoning', events: AppendEvent[]): void {
    const unit = this.mutableUnits[this.mutableUnits.length - 1]!;
    unit.lastRecord = record.index;
    if (record.content === '' && record.role === 'assistant') return;
    // A user turn the user did not write reads as injected text (its tag is what every reader of user text knows).
    const text = record.harness && record.role === 'user' ? harnessText(record.harness, record.content) : record.content;
    const part: Part = {
      address: textAddress(kind, record.role, text),
      kind,
      role: record.role,
      record: record.index,
      text,
    };
    unit.parts.push(part);
    events.push({ type: 'part', unitIndex: this.mutableUnits.length - 1, part });
  }
}

/** A tool result's output as the tool part holds it (Codex and Gemini CLI's forms read as any agent's: agentOutputText). */
function toolOutputOf(record: RawRecord): string {
  return record.toolOutput !== undefined ? agentOutputText(record.toolOutput) : record.content;
}

/**
 * Whether a tool result reports an error. Claude Code flags the result of a skill it launched ("Execute skill:
 * sisyphus", "Launching skill: pdf") as an error although the skill ran: that notice is no failure.
 */
function reportsError(record: RawRecord): boolean {
  return record.isError === true && !SKILL_LAUNCHED.test((record.toolOutput ?? record.content ?? '').trim());
}

const SKILL_LAUNCHED = /^(?:Execute|Launching) skill: [\w:.-]+$/;
