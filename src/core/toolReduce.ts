/**
 * The deterministic reduced form of a tool call (the R3 "tool compact" lever,
 * computed without an LLM).
 *
 * Reduced forms are shape-preserving (an object input stays valid JSON with the
 * same keys; kept lines are verbatim, line numbers included), gist-keeping
 * (head/tail or top-N), and recoverable: every elision marker carries the
 * pointer `view_tool_call("<callId>")`. The only unrecoverable form is the drop
 * of a tool that declares itself disposable.
 *
 * Everything is linear in the size of the output: head and tail are found by
 * scanning from both ends with indexOf/lastIndexOf, the middle is only counted,
 * never split.
 */
import { findExitCode } from './toolCommands';
import { PATH_KEYS, PATH_LIST_KEYS } from './toolFiles';
import { normalizeValue, renderToolInput, renderValue } from './toolInput';
import { classifyTool, type ToolFamily } from './toolKinds';
import type { ToolInvocation } from './types';

export interface ReducedTool {
  readonly how: 'shrunk' | 'dropped';
  /** Rendered (possibly reduced) input. */
  readonly input: string;
  /** Reduced output; its elision marker(s) carry the recovery pointer. */
  readonly output: string;
  /** e.g. `view_tool_call("toolu_123")`; undefined for a drop. */
  readonly recover: string | undefined;
}

// ---------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------

/** Input+output smaller than this (≈ 400 tokens at 4 chars/token) get no reduced form: they ride into the floor summary. */
export const PRECOMPACT_MIN_CHARS = 1600;
/** search / list: result lines kept after the header. */
export const SEARCH_KEEP_LINES = 30;
/** read / write / edit: head and tail lines kept. */
export const FILE_HEAD_LINES = 40;
export const FILE_TAIL_LINES = 20;
/** shell: head and tail lines kept (errors usually sit in the tail). */
export const SHELL_HEAD_LINES = 20;
export const SHELL_TAIL_LINES = 30;
/** todo: lines of the current list kept. */
export const TODO_KEEP_LINES = 40;
/** web: lines kept from the top (results are ranked, pages put title/summary first). */
export const WEB_KEEP_LINES = 40;
/** A kept line longer than this is cut in its middle (head + tail of the line kept). */
export const MAX_LINE_CHARS = 300;
/** write / edit: string fields of the input longer than this are reduced head+tail. */
export const EDIT_INPUT_FIELD_MIN_CHARS = 1000;
/** Other families with a rule: only pathological input strings (a heredoc, a huge query) are reduced. */
export const INPUT_FIELD_MAX_CHARS = 4000;

const LINE_CUT_HEAD = 200;
const LINE_CUT_TAIL = 80;
const DROPPED_OUTPUT = '[output dropped: disposable tool]';

// ---------------------------------------------------------------------------
// Line machinery (linear; scans from both ends)
// ---------------------------------------------------------------------------

/** Number of lines; a final '\n' terminates the last line rather than starting an empty one. */
function countLines(s: string): number {
  if (s.length === 0) return 0;
  let n = 0;
  let pos = s.indexOf('\n');
  while (pos !== -1) {
    n++;
    pos = s.indexOf('\n', pos + 1);
  }
  return s.charCodeAt(s.length - 1) === 10 ? n : n + 1;
}

function stripCr(line: string): string {
  return line.length > 0 && line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
}

/** First `n` lines and the offset where the next line starts. */
function headLines(s: string, n: number): { lines: string[]; end: number } {
  const lines: string[] = [];
  let pos = 0;
  while (lines.length < n && pos < s.length) {
    const nl = s.indexOf('\n', pos);
    if (nl === -1) {
      lines.push(s.slice(pos));
      pos = s.length;
      break;
    }
    lines.push(s.slice(pos, nl));
    pos = nl + 1;
  }
  return { lines, end: pos };
}

/** Last `n` lines and the offset where the first of them starts. */
function tailLines(s: string, n: number): { lines: string[]; start: number } {
  let end = s.length;
  if (end > 0 && s.charCodeAt(end - 1) === 10) end -= 1;
  const lines: string[] = [];
  let start = end;
  while (lines.length < n) {
    const nl = end > 0 ? s.lastIndexOf('\n', end - 1) : -1;
    start = nl + 1;
    lines.push(s.slice(start, end));
    if (nl < 0) break;
    end = nl;
  }
  lines.reverse();
  return { lines, start };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

interface Capped {
  readonly text: string;
  readonly cut: boolean;
}

/** Cut an over-long line in its middle: its head and tail stay, the cut is marked with the count of chars removed. */
function capLine(line: string, max: number = MAX_LINE_CHARS): Capped {
  const l = stripCr(line);
  if (l.length <= max) return { text: l, cut: false };
  let headEnd = LINE_CUT_HEAD;
  if (isHighSurrogate(l.charCodeAt(headEnd - 1))) headEnd -= 1;
  let tailStart = l.length - LINE_CUT_TAIL;
  if (isHighSurrogate(l.charCodeAt(tailStart - 1))) tailStart -= 1;
  const removed = tailStart - headEnd;
  return { text: `${l.slice(0, headEnd)}…[${removed} chars cut]…${l.slice(tailStart)}`, cut: true };
}

function pointer(callId: unknown): string {
  const id = typeof callId === 'string' ? callId : String(callId ?? '');
  return `view_tool_call(${JSON.stringify(id)})`;
}

/** "12→", "    12\t" (cat -n), "12:" (SWE-agent), "  12| " (@keeper's read_file): the number a line carries, if any. */
const LINE_NUMBER_RE = /^\s*(\d{1,9})(?:→|\t|:|\| )/;

function lineNumberAt(s: string, start: number, end: number): number | undefined {
  const m = LINE_NUMBER_RE.exec(s.slice(start, Math.min(end, start + 32)));
  return m?.[1] !== undefined ? Number(m[1]) : undefined;
}

interface Reduction {
  readonly text: string;
  readonly changed: boolean;
  /** Output offsets of the elided middle (head/tail reductions only). */
  readonly elidedFrom?: number;
  readonly elidedTo?: number;
}

function capAll(lines: string[]): { lines: string[]; cut: boolean } {
  let cut = false;
  const out = lines.map((l) => {
    const c = capLine(l);
    if (c.cut) cut = true;
    return c.text;
  });
  return { lines: out, cut };
}

/**
 * Keep `head` + `tail` lines, elide the middle with a marker stating the elided
 * range: the lines' own numbers when they carry them, else the 1-based range of
 * output lines. `what` is "output" or "input" (which text the pointer restores).
 */
function headTail(s: string, head: number, tail: number, ptr: string, what: string): Reduction {
  const total = countLines(s);
  if (total <= head + tail) {
    const { lines, cut } = capAll(headLines(s, total).lines);
    if (!cut) return { text: s, changed: false };
    return { text: [...lines, `[long lines cut; full ${what}: ${ptr}]`].join('\n'), changed: true };
  }
  const h = headLines(s, head);
  const t = tailLines(s, tail);
  const elided = total - head - tail;
  let from = head + 1;
  let to = total - tail;
  // The elided middle runs from h.end to t.start - 1 (the '\n' ending the last elided line).
  const lastEnd = t.start - 1;
  const lastStart = lastEnd > h.end ? s.lastIndexOf('\n', lastEnd - 1) + 1 : h.end;
  const nFrom = lineNumberAt(s, h.end, lastEnd + 1);
  const nTo = lineNumberAt(s, Math.max(lastStart, h.end), lastEnd + 1);
  if (nFrom !== undefined && nTo !== undefined && nTo >= nFrom) {
    from = nFrom;
    to = nTo;
  }
  const range = from === to ? `line ${from}` : `lines ${from}–${to}`;
  const marker = `[… ${range} elided (${elided} line${elided === 1 ? '' : 's'}); full ${what}: ${ptr}]`;
  const hc = capAll(h.lines).lines;
  const tc = capAll(t.lines).lines;
  return { text: [...hc, marker, ...tc].join('\n'), changed: true, elidedFrom: h.end, elidedTo: t.start };
}

/** Header lines of a search/list result: a count line ("Found 62 files"), a "Directory:" line, a markdown table header. */
function headerLineCount(lines: readonly string[]): number {
  let i = 0;
  const first = lines[0] ?? '';
  if (/^\s*(?:Found \d+|Directory:|Searched|Web search results|Showing|Total\b|\d+ (?:files?|matches|results?)\b|\[File:|No files? )/i.test(first)) {
    i = 1;
    while (i < lines.length && i < 3 && (lines[i] ?? '').trim() === '') i++;
  }
  const row = lines[i] ?? '';
  const sep = lines[i + 1] ?? '';
  if (/^\s*\|.*\|\s*$/.test(row) && /^\s*\|[\s\-:|]+\|\s*$/.test(sep)) i += 2;
  return i;
}

/** Keep the header (if any) and the first `keep` lines after it; report how many more. */
function topN(s: string, keep: number, ptr: string, withHeader: boolean): Reduction {
  const total = countLines(s);
  const probe = headLines(s, Math.min(total, 6)).lines;
  const header = withHeader ? headerLineCount(probe) : 0;
  const keepLines = Math.min(total, header + keep);
  const h = headLines(s, keepLines);
  const { lines, cut } = capAll(h.lines);
  const more = total - keepLines;
  if (more <= 0) {
    if (!cut) return { text: s, changed: false };
    return { text: [...lines, `[long lines cut; full output: ${ptr}]`].join('\n'), changed: true };
  }
  const marker = `[… ${more} more line${more === 1 ? '' : 's'} (${total} total); full output: ${ptr}]`;
  return { text: [...lines, marker].join('\n'), changed: true };
}

// ---------------------------------------------------------------------------
// Binary detection
// ---------------------------------------------------------------------------

function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (isHighSurrogate(c) && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

// Control chars other than \t \n \v \f \r \b and ESC (ANSI colours are text), DEL and U+FFFD:
// U+0000–0007, 000E–001A, 001C–001F, 007F, FFFD. Written as the complement of the good
// characters, which V8 scans faster (about 0.7 vs 1.1 ns/char on one-byte strings); the
// set is the same (a unit test checks all 65,536 code units).
const BAD_CHAR = /[^\u0008-\u000d\u001b\u0020-\u007e\u0080-\ufffc\ufffe\uffff]/;

function badShare(sample: string): number {
  if (sample.length === 0) return 0;
  // Native scan first: ordinary text has no bad character at all.
  if (!BAD_CHAR.test(sample)) return 0;
  let bad = 0;
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i);
    // Control chars other than \t \n \v \f \r \b and ESC (ANSI colours are text), plus U+FFFD.
    if ((c < 32 && c !== 9 && c !== 10 && c !== 11 && c !== 12 && c !== 13 && c !== 8 && c !== 27) || c === 0x7f || c === 0xfffd) bad++;
  }
  return bad / sample.length;
}

/** What stands for binary bytes in what the model reads: their size and the way to them (the record keeps them). */
export function binaryNote(output: string, callId: unknown): string {
  return `[binary content, ${utf8Length(output)} bytes; full output: ${pointer(callId)}]`;
}

const sentOutputs = new WeakMap<ToolInvocation, string>();

/**
 * A tool's output as the model reads it in full (raw) form: binary bytes as binaryNote, any other output as it is. An
 * image a tool printed is noise to a model, costs thousands of tokens, and some providers reject a NUL in a message.
 * Remembered per invocation: the view renders and counts a part again at every call.
 */
export function outputAsSent(tool: ToolInvocation, key: string): string | undefined {
  const output = tool.output;
  if (output === undefined) return undefined;
  let sent = sentOutputs.get(tool);
  if (sent === undefined) {
    sent = isBinary(output) ? binaryNote(output, key) : output;
    sentOutputs.set(tool, sent);
  }
  return sent;
}

/** NUL anywhere, or more than 10% control/replacement chars in the first or last 8 KiB. */
export function isBinary(s: string): boolean {
  const w = 8192;
  // Up to two windows the whole string is scanned anyway: one native pass finds no bad
  // character (so no NUL either) in ordinary text, and the NUL search is skipped.
  if (s.length <= 2 * w && !BAD_CHAR.test(s)) return false;
  if (s.indexOf('\u0000') !== -1) return true;
  if (s.length <= 2 * w) return s.length >= 32 && badShare(s) > 0.1;
  return badShare(s.slice(0, w)) > 0.1 || badShare(s.slice(-w)) > 0.1;
}

// ---------------------------------------------------------------------------
// Input reduction
// ---------------------------------------------------------------------------

const KEEP_INPUT_KEYS = new Set([...PATH_KEYS, ...PATH_LIST_KEYS]);

function reduceInputString(s: string, minChars: number, ptr: string): string {
  if (s.length <= minChars) return s;
  const r = headTail(s, FILE_HEAD_LINES, FILE_TAIL_LINES, ptr, 'input');
  return r.changed && r.text.length < s.length ? r.text : s;
}

function reduceInputTree(v: unknown, minChars: number, ptr: string, key: string | undefined): unknown {
  if (typeof v === 'string') return key !== undefined && KEEP_INPUT_KEYS.has(key) ? v : reduceInputString(v, minChars, ptr);
  if (Array.isArray(v)) return v.map((x) => reduceInputTree(x, minChars, ptr, undefined));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = reduceInputTree(x, minChars, ptr, k);
    return out;
  }
  return v;
}

/** Rendered input, with over-long string fields reduced head+tail; an object input stays JSON of the same shape. */
function reduceInput(input: unknown, minChars: number, ptr: string): string {
  if (input === undefined || input === null) return '';
  if (typeof input === 'string') return reduceInputString(input, minChars, ptr);
  if (typeof input !== 'object') return renderValue(input);
  const norm = normalizeValue(input, new Set(), 0);
  return JSON.stringify(reduceInputTree(norm, minChars, ptr, undefined)) ?? '';
}

// ---------------------------------------------------------------------------
// Reducers
// ---------------------------------------------------------------------------

function shellReduce(output: string, ptr: string): Reduction {
  const r = headTail(output, SHELL_HEAD_LINES, SHELL_TAIL_LINES, ptr, 'output');
  if (!r.changed || r.elidedFrom === undefined || r.elidedTo === undefined) return r;
  // Keep the exit code visible when its marker fell into the elided middle.
  const ex = findExitCode(output);
  if (ex && ex.index >= r.elidedFrom && ex.index < r.elidedTo) {
    return { ...r, text: `[exit code ${ex.code}]\n${r.text}` };
  }
  return r;
}

/**
 * Which families have a deterministic rule.
 * - web: a head-only slice. Search results are ranked and a fetched page puts
 *   its title and summary first; the rest stays recoverable by view_tool_call.
 * - task: none. A sub-agent's report is already its distilled conclusion;
 *   cutting its middle would drop findings arbitrarily. The floor summary
 *   absorbs it.
 * - other: none. Unknown shapes (questions to the user, submit diffs, MCP
 *   tools), and view_tool_call itself: reducing a recovery would point at itself.
 */
function reduceOutput(family: ToolFamily, output: string, ptr: string): Reduction | undefined {
  switch (family) {
    case 'read':
    case 'write':
    case 'edit':
      return headTail(output, FILE_HEAD_LINES, FILE_TAIL_LINES, ptr, 'output');
    case 'search':
    case 'list':
      return topN(output, SEARCH_KEEP_LINES, ptr, true);
    case 'shell':
      return shellReduce(output, ptr);
    case 'todo':
      return topN(output, TODO_KEEP_LINES, ptr, false);
    case 'web':
      return topN(output, WEB_KEEP_LINES, ptr, false);
    case 'task':
    case 'other':
      return undefined;
  }
}

/**
 * The stored compacted form of a tool call (R1/R3), or undefined when there is
 * none — no result, input+output under `minChars` (PRECOMPACT_MIN_CHARS unless a setting says otherwise), no rule for the
 * family, or nothing to gain. undefined is a skip: the engine leaves the part
 * raw, it never drops it. A disposable tool (over the threshold) is dropped: a
 * legal empty shell with no pointer.
 *
 * Binary output (NUL bytes, or mostly control/replacement characters) becomes
 * "[binary content, N bytes; …]" whatever the family: echoing it helps nobody.
 */
export function reduceTool(inv: ToolInvocation, minChars: number = PRECOMPACT_MIN_CHARS): ReducedTool | undefined {
  try {
    if (!inv || typeof inv.output !== 'string') return undefined;
    const output = inv.output;
    // Most results are small: decide without rendering the input when the output alone settles it.
    if (output.length < minChars && (inv.input === undefined || inv.input === null || (typeof inv.input === 'string' && output.length + inv.input.length < minChars))) return undefined;
    const rendered = renderToolInput(inv);
    if (output.length + rendered.length < minChars) return undefined;
    const kind = classifyTool(inv.name, inv.input);
    if (kind.disposable) {
      return {
        how: 'dropped',
        input: inv.input !== null && typeof inv.input === 'object' ? '{}' : '',
        output: DROPPED_OUTPUT,
        recover: undefined,
      };
    }
    const ptr = pointer(inv.callId);
    const binary = isBinary(output);
    let outText: string;
    let input: string;
    if (binary) {
      outText = binaryNote(output, inv.callId);
    } else {
      const r = reduceOutput(kind.family, output, ptr);
      if (r === undefined) return undefined;
      outText = r.changed ? r.text : output;
    }
    if (kind.family === 'write' || kind.family === 'edit') input = reduceInput(inv.input, EDIT_INPUT_FIELD_MIN_CHARS, ptr);
    else if (kind.family === 'task' || kind.family === 'other') input = rendered;
    else input = reduceInput(inv.input, INPUT_FIELD_MAX_CHARS, ptr);
    // Every shrunk form names its recovery pointer in the output, even when only the input was reduced.
    if (!outText.includes(ptr)) outText = `${outText}\n[input reduced; full input: ${ptr}]`;
    if (outText.length + input.length >= output.length + rendered.length) return undefined;
    return { how: 'shrunk', input, output: outText, recover: ptr };
  } catch {
    return undefined;
  }
}
