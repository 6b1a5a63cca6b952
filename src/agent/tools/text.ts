/** The text helpers of the tools: the output cap, clipping (head and tail kept), counting, plurals, the binary check. */
import type { ToolContext } from './contract';
import { BINARY_PROBE_BYTES, DEFAULT_MAX_OUTPUT_CHARS, GREP_LINE_CHARS, MIN_MAX_OUTPUT_CHARS } from './limits';

export function maxOutputChars(ctx: ToolContext): number {
  const value = ctx.maxOutputChars;
  if (value === undefined || !Number.isFinite(value)) return DEFAULT_MAX_OUTPUT_CHARS;
  return Math.max(MIN_MAX_OUTPUT_CHARS, Math.floor(value));
}

export function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

export function clipOneLine(text: string, max: number): string {
  const line = text.replace(/\s*[\r\n]+\s*/g, ' ');
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

export function countLines(text: string): number {
  if (text === '') return 0;
  let n = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) n++;
  return text.endsWith('\n') ? n : n + 1;
}

export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

export function hasNul(buffer: Buffer): boolean {
  return buffer.subarray(0, BINARY_PROBE_BYTES).includes(0);
}

/**
 * Keeps the first `headMax` and the last `tailMax` characters of a stream,
 * never more than about `headMax + 2·tailMax` in memory, and renders them with
 * a marker saying how many characters were cut.
 */
export class HeadTailBuffer {
  private head = '';
  private tail = '';
  private total = 0;

  constructor(
    private readonly headMax: number,
    private readonly tailMax: number,
  ) {}

  get length(): number {
    return this.total;
  }

  push(text: string): void {
    if (text === '') return;
    this.total += text.length;
    if (this.head.length < this.headMax) {
      const room = this.headMax - this.head.length;
      if (text.length <= room) {
        this.head += text;
        return;
      }
      this.head += text.slice(0, room);
      text = text.slice(room);
    }
    this.tail += text;
    if (this.tail.length > 2 * this.tailMax) this.tail = this.tail.slice(-this.tailMax);
  }

  render(what: string): string {
    if (this.total <= this.headMax + this.tailMax) return this.head + this.tail;
    let head = this.head;
    let tail = this.tail.slice(-this.tailMax);
    // Cut at line boundaries when one is near, and never inside a surrogate pair.
    const headBreak = head.lastIndexOf('\n');
    if (headBreak >= head.length * 0.8) head = head.slice(0, headBreak + 1);
    const tailBreak = tail.indexOf('\n');
    if (tailBreak !== -1 && tailBreak < tail.length * 0.2) tail = tail.slice(tailBreak + 1);
    if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
    if (/^[\uDC00-\uDFFF]/.test(tail)) tail = tail.slice(1);
    const cut = this.total - head.length - tail.length;
    return `${head}${head.endsWith('\n') || head === '' ? '' : '\n'}[... ${cut} characters cut from the middle of the ${what} ...]\n${tail}`;
  }
}

/** Room kept for the marker and the tool's own closing note when a text is clipped. */
export const CLIP_RESERVE = 200;

export function headTailBuffer(max: number): HeadTailBuffer {
  const budget = Math.max(100, max - CLIP_RESERVE);
  const head = Math.floor(budget * 0.4);
  return new HeadTailBuffer(head, budget - head);
}

/** `text` itself when it fits in `max`, else its head and tail with a marker. */
export function clipMiddle(text: string, max: number, what: string): string {
  if (text.length <= max) return text;
  const buffer = headTailBuffer(max);
  buffer.push(text);
  return buffer.render(what);
}

/** The line clipped to GREP_LINE_CHARS, keeping the match in view. */
export function clipMatchLine(line: string, matchAt: number): string {
  if (line.length <= GREP_LINE_CHARS) return line;
  const start = matchAt + 100 > GREP_LINE_CHARS ? Math.max(0, matchAt - 100) : 0;
  const end = Math.min(line.length, start + GREP_LINE_CHARS);
  return `${start > 0 ? '…' : ''}${line.slice(start, end)}${end < line.length ? '…' : ''}`;
}
