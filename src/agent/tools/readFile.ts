/** read_file: a text file's lines, numbered, within the line and size limits. */
import * as fs from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import * as z from '../../core/schema';
import { defineTool } from './defineTool';
import { abortError, ToolError } from './errors';
import { BINARY_PROBE_BYTES, READ_MAX_LINES } from './limits';
import { pathField, resolveInside, statTarget } from './paths';
import { noteSeen } from './seenFiles';
import { CLIP_RESERVE, hasNul, maxOutputChars, plural } from './text';

async function isBinaryFile(file: string): Promise<boolean> {
  const handle = await fs.open(file, 'r');
  try {
    const probe = Buffer.alloc(BINARY_PROBE_BYTES);
    const { bytesRead } = await handle.read(probe, 0, BINARY_PROBE_BYTES, 0);
    return hasNul(probe.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

const readFileSchema = () =>
  z
    .strictObject({
      path: pathField,
      startLine: z.described(z.optional(z.int().check(z.minimum(1))), 'First line to show, 1-based (default 1).'),
      endLine: z.described(z.optional(z.int().check(z.minimum(1))), 'Last line to show, 1-based inclusive (default: the end of the file, within the limits).'),
    })
    .check(
      z.superRefine((input, context) => {
        if (input.startLine !== undefined && input.endLine !== undefined && input.endLine < input.startLine) {
          context.addIssue({
            code: 'custom',
            path: ['endLine'],
            message: `Field "endLine" (${input.endLine}) must not be less than startLine (${input.startLine}).`,
          });
        }
      }),
    );

interface LineWindow {
  readonly lines: string[];
  readonly total: number;
  /** Why the window ended before `to`: a limit, with the next line to read. */
  readonly stoppedAt?: { readonly next: number; readonly why: string };
  readonly clippedLine?: number;
}

/**
 * Stream the file once: collect lines `from..to` formatted `  12| text` within
 * `maxLines` and `budget` characters, and count every line. Memory stays within
 * the budget whatever the file's size or line lengths.
 */
async function readLineWindow(source: string | { readonly text: string }, from: number, to: number, budget: number, signal: AbortSignal): Promise<LineWindow> {
  const lastWanted = Math.min(to, from + READ_MAX_LINES - 1);
  const width = Math.max(4, String(lastWanted).length);
  const lines: string[] = [];
  let used = 0;
  let lineNo = 0;
  let current = '';
  let currentLength = 0;
  let stoppedAt: { next: number; why: string } | undefined;
  let clippedLine: number | undefined;
  let done = false; // the window is complete (reached `to` or a limit)

  const wanted = (n: number): boolean => !done && n >= from && n <= to;
  const complete = (n: number): void => {
    if (!wanted(n)) return;
    const text = current.endsWith('\r') ? current.slice(0, -1) : current;
    let formatted = `${String(n).padStart(width)}| ${text}`;
    if (lines.length >= READ_MAX_LINES) {
      stoppedAt = { next: n, why: `the ${READ_MAX_LINES}-line limit` };
      done = true;
      return;
    }
    if (used + formatted.length + 1 > budget || currentLength > budget) {
      if (lines.length > 0) {
        stoppedAt = { next: n, why: `the ${budget}-character limit` };
        done = true;
        return;
      }
      formatted = `${formatted.slice(0, Math.max(0, budget - 40))} … [line clipped]`;
      clippedLine = n;
      lines.push(formatted);
      stoppedAt = n < to ? { next: n + 1, why: `the ${budget}-character limit` } : undefined;
      done = true;
      return;
    }
    lines.push(formatted);
    used += formatted.length + 1;
    if (n >= to) done = true;
  };
  const consume = (text: string): void => {
    let at = 0;
    for (;;) {
      const newline = text.indexOf('\n', at);
      const end = newline === -1 ? text.length : newline;
      if (wanted(lineNo + 1) && current.length <= budget) current += text.slice(at, Math.min(end, at + budget + 1 - current.length));
      currentLength += end - at;
      if (newline === -1) return;
      lineNo++;
      complete(lineNo);
      current = '';
      currentLength = 0;
      at = newline + 1;
    }
  };

  if (typeof source !== 'string') consume(source.text);
  else {
    const decoder = new StringDecoder('utf8');
    const stream = (await fs.open(source, 'r')).createReadStream({ highWaterMark: 1 << 16 });
    try {
      for await (const chunk of stream) {
        if (signal.aborted) throw abortError();
        consume(decoder.write(chunk as Buffer));
      }
    } finally {
      stream.destroy();
    }
    consume(decoder.end());
  }
  if (currentLength > 0) {
    lineNo++;
    complete(lineNo);
  }
  return { lines, total: lineNo, ...(stoppedAt ? { stoppedAt } : {}), ...(clippedLine !== undefined ? { clippedLine } : {}) };
}

export const readFileTool = defineTool({
  name: 'read_file',
  description:
    'Read a text file (UTF-8). Each line is prefixed with its 1-based number ("  12| text"); a closing note gives the range shown and the total line count. ' +
    `At most ${READ_MAX_LINES} lines and the result size limit (100,000 characters by default) per call: when the file is longer, the note says which startLine to pass next. ` +
    'Use startLine/endLine (inclusive) to read part of a large file. Binary files (a NUL byte in the first 8 KB) and folders are refused; use list_dir for folders.',
  schema: readFileSchema,
  run: async (input, ctx) => {
    const target = await resolveInside(ctx, input.path);
    const stats = await statTarget(target);
    if (stats.isDirectory()) throw new ToolError(`${target.rel} is a folder, not a file; use list_dir to see what it holds`);
    if (!stats.isFile()) throw new ToolError(`${target.rel} is not a regular file`);
    if (await isBinaryFile(target.real)) throw new ToolError(`${target.rel} is a binary file (${stats.size} bytes); not shown`);
    const from = input.startLine ?? 1;
    const to = input.endLine ?? Number.MAX_SAFE_INTEGER;
    const budget = Math.max(200, maxOutputChars(ctx) - CLIP_RESERVE);
    // An open buffer is what the user sees, unsaved changes included: it is what is read (and what edit_file changes).
    const open = await ctx.files?.openText(target.real).catch(() => undefined);
    const window = await readLineWindow(open !== undefined ? { text: open } : target.real, from, to, budget, ctx.signal);
    if (window.total === 0) return { isError: false, output: `[${target.rel} is empty: 0 lines]` };
    if (from > window.total) {
      throw new ToolError(`startLine ${from} is past the end of ${target.rel}, which has ${plural(window.total, 'line')}`);
    }
    const last = from + window.lines.length - 1;
    let note: string;
    if (window.stoppedAt !== undefined && window.stoppedAt.next <= Math.min(to, window.total)) {
      note =
        `[lines ${from}-${last} of ${window.total} shown (${window.stoppedAt.why}); ` +
        `to read further, call read_file with startLine ${window.stoppedAt.next}]`;
    } else {
      note = `[lines ${from}-${last} of ${window.total}${last >= window.total ? '; end of file' : ''}]`;
    }
    if (window.clippedLine !== undefined) note += `\n[line ${window.clippedLine} is longer than the limit and was clipped]`;
    await noteSeen(ctx, target.real, open);
    return { isError: false, output: `${window.lines.join('\n')}\n${note}` };
  },
});
