/**
 * Transcript reader: turns the text of a session file into raw records.
 *
 * Two on-disk formats are understood, detected from the content (never the
 * file name):
 *  - the interchange JSONL of `corpus/FORMAT.md` (one part per line, `role` at
 *    top level);
 *  - Claude Code's own session JSONL (`~/.claude/projects/…`): every line has a
 *    top-level `type`, conversation lines carry a `message` whose `content` is a
 *    string or an array of blocks. Each block becomes one record.
 *
 * Pure: no file system, no VS Code. Linear in the size of the input. A bad line
 * never stops the reader: it is skipped and reported as a warning with its
 * 1-based line number; only a file with no usable record at all is an error.
 */

import type { RawRecord, RecordRole } from './types';
import { userWords } from './harness';
import type { Redactor } from './redact';
import { messageOf } from './errors';
import { formatCount } from './formatCount';

export type TranscriptFormat = 'interchange' | 'claude-code';

export interface TranscriptWarning {
  /** 1-based line number in the file. */
  readonly line: number;
  /** One line of text, starting with `line <n>: `. */
  readonly message: string;
  /** The line was read all the same (the warning is about what it holds, not a skip). */
  readonly kept?: boolean;
}

export interface ParsedTranscript {
  readonly format: TranscriptFormat;
  readonly records: RawRecord[];
  readonly warnings: TranscriptWarning[];
  /** First line of the first user message, at most 80 characters; undefined when there is none. */
  readonly title: string | undefined;
}

/** The file holds no usable record. The message is one line. */
export class TranscriptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TranscriptError';
  }
}

type Draft = { -readonly [K in keyof RawRecord]: RawRecord[K] };
type DraftRecord = Omit<Draft, 'index'>;

type JsonObject = Record<string, unknown>;

interface ParsedLine {
  readonly line: number;
  /** The parsed value, when the line is valid JSON. */
  readonly value?: unknown;
  /** Why JSON.parse failed. */
  readonly error?: string;
}

const ROLES: ReadonlySet<string> = new Set<RecordRole>(['system', 'user', 'assistant', 'tool']);
const TITLE_MAX = 80;
const DETAIL_MAX = 120;

export function parseTranscript(text: string, redactor: Redactor): ParsedTranscript {
  const lines = splitLines(text);
  if (lines.length === 0) {
    throw new TranscriptError('no usable record in transcript (empty file)');
  }

  const format = detectFormat(lines);
  const sink = new Sink();
  if (format === undefined) {
    for (const entry of lines) {
      const obj = asObject(entry, sink);
      if (obj !== undefined) {
        sink.warn(entry.line, 'neither an interchange record (no "role") nor a Claude Code line (no "type")');
      }
    }
  } else if (format === 'interchange') {
    for (const entry of lines) {
      sink.line = entry.line;
      const obj = asObject(entry, sink);
      if (obj !== undefined) readInterchange(obj, entry.line, sink);
    }
  } else {
    const reader = new ClaudeCodeReader(sink);
    for (const entry of lines) {
      sink.line = entry.line;
      const obj = asObject(entry, sink);
      if (obj !== undefined) reader.read(obj, entry.line);
    }
  }

  if (sink.records.length === 0) {
    throw new TranscriptError(noRecordMessage(lines.length, format, sink));
  }
  return {
    format: format ?? 'interchange',
    records: sink.records,
    warnings: sink.warnings,
    title: titleFromRecords(sink.records, redactor),
  };
}

// ---------------------------------------------------------------------------
// Lines, JSON and detection

/** Non-blank lines with their 1-based numbers, parsed. Handles LF, CRLF and a leading BOM. */
function splitLines(text: string): ParsedLine[] {
  const out: ParsedLine[] = [];
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    let stop = end;
    if (stop > start && text.charCodeAt(stop - 1) === 0x0d) stop--;
    const raw = text.slice(start, stop);
    if (raw.length > MAX_LINE_CHARS) {
      out.push({ line, error: `the line is ${formatCount(raw.length)} characters long, over the limit of ${formatCount(MAX_LINE_CHARS)}` });
    } else if (raw.length > 2 * MAX_NESTING && nestingDepth(raw) > MAX_NESTING) {
      out.push({ line, error: `JSON nested deeper than ${MAX_NESTING} levels` });
    } else if (raw.trim() !== '') {
      try {
        out.push({ line, value: JSON.parse(raw) as unknown });
      } catch (err) {
        out.push({ line, error: messageOf(err) });
      }
    }
    start = end + 1;
    line++;
  }
  return out;
}

/** A line longer than this is refused with its number (a transcript line is one message; 64 MiB is far past any real one). */
export const MAX_LINE_CHARS = 64 * 1024 * 1024;
/** Deeper JSON is refused: nothing in a transcript nests like this, and walking it would exhaust the stack. */
export const MAX_NESTING = 256;

/** The deepest bracket nesting of a JSON text, strings skipped (linear, stops early past the limit). */
function nestingDepth(raw: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) {
        max = depth;
        if (max > MAX_NESTING) return max;
      }
    } else if (c === 125 || c === 93) depth--;
  }
  return max;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The line's object, or undefined after a warning. */
function asObject(entry: ParsedLine, sink: Sink): JsonObject | undefined {
  if (entry.error !== undefined) {
    sink.warn(entry.line, `invalid JSON (${oneLine(entry.error)})`);
    return undefined;
  }
  if (!isObject(entry.value)) {
    sink.warn(entry.line, `not a JSON object (got ${describe(entry.value)})`);
    return undefined;
  }
  return entry.value;
}

/**
 * The format of the first line that tells: a top-level `role` means interchange;
 * a top-level string `type` (every Claude Code line has one) or a `message`
 * object means Claude Code.
 */
function detectFormat(lines: readonly ParsedLine[]): TranscriptFormat | undefined {
  for (const entry of lines) {
    const value = entry.value;
    if (!isObject(value)) continue;
    if ('role' in value) return 'interchange';
    if (typeof value['type'] === 'string' || isObject(value['message'])) return 'claude-code';
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Output

class Sink {
  readonly records: RawRecord[] = [];
  readonly warnings: TranscriptWarning[] = [];
  /** The line being read (for warnings raised while a record is pushed). */
  line = 0;
  private readonly callIds = new Map<string, number>();

  push(record: DraftRecord): void {
    if (record.role === 'assistant' && record.toolCallId !== undefined) {
      const earlier = this.callIds.get(record.toolCallId);
      if (earlier !== undefined) {
        this.warn(this.line, `tool call id ${quote(record.toolCallId)} was already used by record ${earlier}; both calls are kept, this one as ${quote(`${record.toolCallId}#r${this.records.length}`)}`, true);
      } else this.callIds.set(record.toolCallId, this.records.length);
    }
    this.records.push({ index: this.records.length, ...record });
  }

  warn(line: number, detail: string, kept = false): void {
    this.warnings.push({ line, message: `line ${line}: ${detail}`, ...(kept ? { kept: true } : {}) });
  }
}

function noRecordMessage(lineCount: number, format: TranscriptFormat | undefined, sink: Sink): string {
  const lines = `${lineCount} line${lineCount === 1 ? '' : 's'}`;
  const first = sink.warnings[0];
  if (first === undefined) {
    const what = format === 'claude-code' ? 'Claude Code metadata only' : 'none is a conversation message';
    return `no usable record in transcript (${lines}, ${what})`;
  }
  const skipped = new Set(sink.warnings.map((w) => w.line)).size;
  const firstProblem = first.message.replace(/^line (\d+): /, 'first problem at line $1: ');
  return `no usable record in transcript (${lines}, ${skipped} skipped: ${firstProblem})`;
}

/** A session's title: the first line of its first user message, secrets hidden before it is cut. */
export function titleFromRecords(records: readonly RawRecord[], redactor: Redactor): string | undefined {
  for (const record of records) {
    if (record.role !== 'user' || record.compactSummary === true || record.harness !== undefined) continue;
    const line = userWords(record.content.slice(0, 65_536)).split('\n', 64).find((l) => l.trim() !== '');
    if (line === undefined) continue;
    // eslint-disable-next-line no-control-regex
    const flat = redactor.redact(line.slice(0, 4096)).text.trimStart().slice(0, TITLE_MAX * 4).replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
    if (flat === '') continue;
    return clip(flat, TITLE_MAX);
  }
  return undefined;
}

/** At most `max` UTF-16 units, ending with an ellipsis when cut; never splits a surrogate pair. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/** A safe one-line rendering of a detail (error text, a value from the file). */
function oneLine(text: string, max = DETAIL_MAX): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
  return clip(flat, max);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

function quote(value: string): string {
  return JSON.stringify(oneLine(value, 40));
}

// ---------------------------------------------------------------------------
// Interchange format

function readInterchange(obj: JsonObject, line: number, sink: Sink): void {
  const role = obj['role'];
  if (role === undefined) return sink.warn(line, 'missing "role"');
  if (typeof role !== 'string') return sink.warn(line, `"role" must be a string (got ${describe(role)})`);
  // OpenAI's name for the system's instructions.
  const known = role === 'developer' ? 'system' : role;
  if (!ROLES.has(known)) return sink.warn(line, `unknown role ${quote(role)}`);

  // Content as a list of parts (the chat APIs' shape) is its text parts joined: nothing of it is dropped.
  const content = Array.isArray(obj['content']) ? textOfParts(obj['content']) : obj['content'];
  if (content === undefined && Array.isArray(obj['content'])) return sink.warn(line, '"content" is a list with no text part');
  for (const [key, value] of [['content', content], ['tool_name', obj['tool_name']], ['tool_call_id', obj['tool_call_id']]] as const) {
    if (value !== undefined && value !== null && typeof value !== 'string') {
      return sink.warn(line, `"${key}" must be a string or null (got ${describe(value)})`);
    }
  }
  const meta = obj['meta'];
  if (meta !== undefined && meta !== null && !isObject(meta)) {
    return sink.warn(line, `"meta" must be an object or null (got ${describe(meta)})`);
  }

  const record: DraftRecord = { role: known as RecordRole, content: stringOr(content, '') };
  const toolName = obj['tool_name'];
  if (typeof toolName === 'string') record.toolName = toolName;
  const toolCallId = obj['tool_call_id'];
  if (typeof toolCallId === 'string') record.toolCallId = toolCallId;
  const toolInput = obj['tool_input'];
  if (toolInput !== undefined && toolInput !== null) record.toolInput = toolInput;
  const toolOutput = obj['tool_output'];
  if (toolOutput !== undefined && toolOutput !== null) {
    record.toolOutput = typeof toolOutput === 'string' ? toolOutput : stringify(toolOutput);
  }
  if (isObject(meta)) {
    if (meta['is_error'] === true) record.isError = true;
    if (meta['thinking'] === true) record.thinking = true;
    if (typeof meta['message_id'] === 'string') record.messageId = meta['message_id'];
    if (typeof meta['ts'] === 'string') record.timestamp = meta['ts'];
    if (meta['compact_summary'] === true) record.compactSummary = true;
    if (meta['session_start'] === true) record.sessionStart = true;
    if (meta['harness'] === 'sidechain' || meta['harness'] === 'meta') record.harness = meta['harness'];
  }
  sink.push(record);
}

/**
 * The text of a content list (`[{ "type": "text", "text": "…" }, …]`, or strings): its text parts joined by a
 * blank line, each other part (an image, a file) said by its type; undefined when no part has text.
 */
function textOfParts(parts: readonly unknown[]): string | undefined {
  const out: string[] = [];
  let text = false;
  for (const part of parts) {
    if (typeof part === 'string') {
      out.push(part);
      text = true;
    } else if (isObject(part) && typeof part['text'] === 'string') {
      out.push(part['text']);
      text = true;
    } else out.push(`[${isObject(part) && typeof part['type'] === 'string' ? oneLine(part['type'], 20) : 'non-text'} part]`);
  }
  return text ? out.join('\n\n') : undefined;
}

/** One record as an interchange line (the inverse of readInterchange: parsing it gives the record back). */
export function interchangeLine(record: RawRecord): string {
  const meta: Record<string, unknown> = {};
  if (record.isError) meta['is_error'] = true;
  if (record.thinking) meta['thinking'] = true;
  if (record.messageId !== undefined) meta['message_id'] = record.messageId;
  if (record.timestamp !== undefined) meta['ts'] = record.timestamp;
  if (record.compactSummary) meta['compact_summary'] = true;
  if (record.sessionStart) meta['session_start'] = true;
  if (record.harness) meta['harness'] = record.harness;
  return JSON.stringify({
    role: record.role,
    content: record.content,
    tool_name: record.toolName ?? null,
    tool_call_id: record.toolCallId ?? null,
    tool_input: record.toolInput ?? null,
    tool_output: record.toolOutput ?? null,
    meta: Object.keys(meta).length ? meta : null,
  });
}

/** A whole session as interchange JSONL (one line per record, newline-terminated). */
export function formatInterchange(records: readonly RawRecord[]): string {
  return records.map((r) => `${interchangeLine(r)}\n`).join('');
}

// ---------------------------------------------------------------------------
// Claude Code session JSONL

class ClaudeCodeReader {
  /** tool_use id → tool name, to name the results. */
  private readonly toolNames = new Map<string, string>();

  constructor(private readonly sink: Sink) {}

  read(obj: JsonObject, line: number): void {
    const type = obj['type'];
    if (type === undefined) return this.sink.warn(line, 'missing "type"');
    if (typeof type !== 'string') return this.sink.warn(line, `"type" must be a string (got ${describe(type)})`);
    if (type === 'user' || type === 'assistant') return this.readMessage(obj, type, line);
    if (type === 'system') return this.readSystem(obj, line);
    // summary, file-history-snapshot, queue-operation, progress and any future
    // metadata line type: not conversation, not an error.
  }

  /** Only the compaction boundary is kept; turn_duration, api_error, stop_hook_summary… are telemetry. */
  private readSystem(obj: JsonObject, line: number): void {
    if (obj['subtype'] !== 'compact_boundary') return;
    const record: DraftRecord = { role: 'system', content: stringOr(obj['content'], 'Conversation compacted') };
    this.stamp(record, obj);
    this.sink.push(record);
  }

  private readMessage(obj: JsonObject, type: 'user' | 'assistant', line: number): void {
    const message = obj['message'];
    if (!isObject(message)) {
      return this.sink.warn(line, `${type} line without a "message" object (got ${describe(message)})`);
    }
    const content = message['content'];
    if (typeof content === 'string') {
      const record: DraftRecord = { role: type, content };
      this.decorate(record, obj, message, type);
      return this.sink.push(record);
    }
    if (!Array.isArray(content)) {
      return this.sink.warn(line, `${type} message "content" must be a string or an array (got ${describe(content)})`);
    }
    if (type === 'user') this.readUserBlocks(content, obj, message, line);
    else this.readAssistantBlocks(content, obj, message, line);
  }

  /**
   * A user message: consecutive text/image blocks are joined (one line each)
   * into one user record; each tool_result block is one tool record.
   */
  private readUserBlocks(blocks: unknown[], obj: JsonObject, message: JsonObject, line: number): void {
    let pending: string[] = [];
    const flush = (): void => {
      if (pending.length === 0) return;
      const record: DraftRecord = { role: 'user', content: pending.join('\n') };
      this.decorate(record, obj, message, 'user');
      this.sink.push(record);
      pending = [];
    };
    blocks.forEach((block, i) => {
      const type = this.blockType(block, i, line);
      if (type === undefined) return;
      const b = block as JsonObject;
      if (type === 'tool_result') {
        flush();
        this.pushToolResult(b, i, obj, line);
        return;
      }
      const text = this.inlineText(b, type, i, line);
      if (text !== undefined) pending.push(text);
    });
    flush();
  }

  /** An assistant message: one record per block. */
  private readAssistantBlocks(blocks: unknown[], obj: JsonObject, message: JsonObject, line: number): void {
    blocks.forEach((block, i) => {
      const type = this.blockType(block, i, line);
      if (type === undefined) return;
      const b = block as JsonObject;
      if (type === 'thinking') {
        const thinking = b['thinking'];
        if (typeof thinking !== 'string') {
          return this.sink.warn(line, `block ${i}: thinking block without a "thinking" string`);
        }
        const record: DraftRecord = { role: 'assistant', content: thinking, thinking: true };
        this.decorate(record, obj, message, 'assistant');
        return this.sink.push(record);
      }
      if (type === 'redacted_thinking') return; // encrypted, nothing readable
      if (type === 'tool_use' || type === 'server_tool_use') {
        const id = b['id'];
        const name = b['name'];
        if (typeof id !== 'string' || typeof name !== 'string') {
          return this.sink.warn(line, `block ${i}: ${type} block without string "id" and "name"`);
        }
        this.toolNames.set(id, name);
        const record: DraftRecord = { role: 'assistant', content: '', toolName: name, toolCallId: id };
        if (b['input'] !== undefined) record.toolInput = b['input'];
        this.decorate(record, obj, message, 'assistant');
        return this.sink.push(record);
      }
      if (type.endsWith('_tool_result')) {
        // server tool results (web search…) arrive inside the assistant message
        return this.pushToolResult(b, i, obj, line);
      }
      const text = this.inlineText(b, type, i, line);
      if (text === undefined) return;
      const record: DraftRecord = { role: 'assistant', content: text };
      this.decorate(record, obj, message, 'assistant');
      this.sink.push(record);
    });
  }

  private pushToolResult(b: JsonObject, i: number, obj: JsonObject, line: number): void {
    const id = b['tool_use_id'];
    if (typeof id !== 'string') {
      return this.sink.warn(line, `block ${i}: ${String(b['type'])} block without a "tool_use_id" string`);
    }
    const record: DraftRecord = { role: 'tool', content: '' };
    const name = this.toolNames.get(id);
    if (name !== undefined) record.toolName = name;
    record.toolCallId = id;
    record.toolOutput = flattenToolContent(b['content']);
    if (b['is_error'] === true) record.isError = true;
    this.stamp(record, obj);
    this.sink.push(record);
  }

  /** Text of a text/image/document block, or undefined after a warning. */
  private inlineText(b: JsonObject, type: string, i: number, line: number): string | undefined {
    if (type === 'text') {
      const text = b['text'];
      if (typeof text === 'string') return text;
      this.sink.warn(line, `block ${i}: text block without a "text" string`);
      return undefined;
    }
    if (type === 'image') return '[image]';
    if (type === 'document') return '[document]';
    this.sink.warn(line, `block ${i}: unknown content block type ${quote(type)} skipped`);
    return undefined;
  }

  private blockType(block: unknown, i: number, line: number): string | undefined {
    if (!isObject(block)) {
      this.sink.warn(line, `block ${i}: not an object (got ${describe(block)})`);
      return undefined;
    }
    const type = block['type'];
    if (typeof type !== 'string') {
      this.sink.warn(line, `block ${i}: missing block "type"`);
      return undefined;
    }
    return type;
  }

  private decorate(record: DraftRecord, obj: JsonObject, message: JsonObject, type: 'user' | 'assistant'): void {
    if (type === 'assistant') {
      const id = message['id'];
      if (typeof id === 'string') record.messageId = id;
    } else if (obj['isCompactSummary'] === true) {
      record.compactSummary = true;
    } else if ((obj['isSidechain'] === true || obj['isMeta'] === true) && record.role === 'user' && record.toolCallId === undefined && record.content !== '') {
      // A sub-agent's prompt or a harness-written turn is not the user.
      record.harness = obj['isSidechain'] === true ? 'sidechain' : 'meta';
    }
    this.stamp(record, obj);
  }

  private stamp(record: DraftRecord, obj: JsonObject): void {
    const ts = obj['timestamp'];
    if (typeof ts === 'string') record.timestamp = ts;
  }
}

/** A tool_result's content as text: a string, or text blocks joined by newlines (images as "[image]"). */
function flattenToolContent(content: unknown): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return stringify(content);
  const parts: string[] = [];
  for (const block of content) {
    if (typeof block === 'string') {
      parts.push(block);
    } else if (isObject(block) && block['type'] === 'text' && typeof block['text'] === 'string') {
      parts.push(block['text']);
    } else if (isObject(block) && block['type'] === 'image') {
      parts.push('[image]');
    } else if (isObject(block) && block['type'] === 'document') {
      parts.push('[document]');
    } else {
      parts.push(stringify(block));
    }
  }
  return parts.join('\n');
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}

function stringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
