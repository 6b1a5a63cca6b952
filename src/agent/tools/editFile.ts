/** edit_file: replaces text in an existing file, after the user approves the change. */
import type { Stats } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as z from '../../core/schema';
import { askUser, declinedMessage, diffSummary } from './confirmation';
import type { ToolContext, ToolOutcome } from './contract';
import { defineTool } from './defineTool';
import { ToolError } from './errors';
import { replaceText } from './fileWrites';
import { fsProblem, pathField, resolveInside, statTarget, type Target } from './paths';
import { noteSeen, versionOf } from './seenFiles';
import { hasNul, plural } from './text';

function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) found.push(at);
  return found;
}

function replaceAt(text: string, positions: readonly number[], oldLength: number, replacement: string): string {
  let out = '';
  let from = 0;
  for (const at of positions) {
    out += text.slice(from, at) + replacement;
    from = at + oldLength;
  }
  return out + text.slice(from);
}

/** 'crlf' when every line break is CRLF, 'lf' when none is, 'mixed' otherwise. */
function lineEndings(text: string): 'crlf' | 'lf' | 'mixed' {
  const crlf = text.split('\r\n').length - 1;
  if (crlf === 0) return 'lf';
  const lf = text.split('\n').length - 1;
  return crlf === lf ? 'crlf' : 'mixed';
}

async function readTextForChange(target: Target): Promise<{ text: string; stats: Stats }> {
  const stats = await statTarget(target);
  if (stats.isDirectory()) throw new ToolError(`${target.rel} is a folder, not a file`);
  if (!stats.isFile()) throw new ToolError(`${target.rel} is not a regular file`);
  let buffer: Buffer;
  try {
    buffer = await fs.readFile(target.real);
  } catch (error) {
    throw fsProblem(target.rel, error);
  }
  if (hasNul(buffer)) throw new ToolError(`${target.rel} is a binary file (${buffer.length} bytes); not edited`);
  return { text: buffer.toString('utf8'), stats };
}

export const editFileTool = defineTool({
  name: 'edit_file',
  description:
    'Replace text in an existing file. oldText must match the file exactly (whitespace and indentation included) and occur exactly once, unless replaceAll is true; ' +
    'include enough surrounding lines to make it unique. Line endings are handled for you: the file keeps its own (LF or CRLF). ' +
    'The user is asked to approve the change; if they decline, nothing is written. A file that changed since you last read it (the user, a formatter or a command changed it) is refused: read it again first. ' +
    'Returns a short summary of the changed lines. To create a file or rewrite it whole, use write_file.',
  schema: () =>
    z.strictObject({
      path: pathField,
      oldText: z.described(z.string().check(z.minLength(1)), 'The exact text to replace (read the file first).'),
      newText: z.described(z.string(), 'The replacement text (may be empty to delete).'),
      replaceAll: z.described(z._default(z.boolean(), false), 'Replace every occurrence instead of requiring exactly one (default false).'),
    }),
  run: async (input, ctx) => {
    const target = await resolveInside(ctx, input.path);
    const { text: before, stats } = await readTextForChange(target);
    // An open buffer is what the user sees: its text (unsaved changes included) is what is edited.
    const open = await ctx.files?.openText(target.real);
    const current = open ?? before;
    const seen = ctx.seen?.get(target.real);
    if (seen !== undefined && seen !== versionOf(current, stats)) {
      throw new ToolError(`${target.rel} changed since you last read it (the user, a formatter or a command changed it); nothing was written. Read it again, then edit it.`);
    }
    return editText(input, ctx, target, current, stats.mode & 0o7777);
  },
});

async function editText(input: { path: string; oldText: string; newText: string; replaceAll: boolean }, ctx: ToolContext, target: Target, before: string, mode: number): Promise<ToolOutcome> {
  {
    const endings = lineEndings(before);
    const normalize = (text: string): string => (endings === 'mixed' ? text : text.replace(/\r\n/g, '\n'));
    const work = normalize(before);
    const oldText = normalize(input.oldText);
    const newText = normalize(input.newText);
    if (oldText === newText) throw new ToolError('oldText and newText are the same; nothing to change');
    const positions = occurrences(work, oldText);
    if (positions.length === 0) {
      throw new ToolError(
        `oldText not found in ${target.rel}. It must match the file exactly, whitespace and indentation included; read the file again and copy the text.`,
      );
    }
    if (positions.length > 1 && !input.replaceAll) {
      throw new ToolError(
        `oldText found ${positions.length} times in ${target.rel}; give more context (surrounding lines) so it matches once, or set replaceAll to true.`,
      );
    }
    const changed = replaceAt(work, positions, oldText.length, newText);
    const after = endings === 'crlf' ? changed.replace(/\n/g, '\r\n') : changed;
    const approved = await askUser(ctx, { kind: 'edit', title: `Edit ${target.rel}`, path: target.rel, before, after });
    if (!approved) return { isError: true, output: declinedMessage({ kind: 'edit', path: target.rel }) };
    const note = await replaceText(ctx, target, before, after, mode);
    await noteSeen(ctx, target.real, after);
    const diff = diffSummary(work, changed);
    const count = positions.length === 1 ? '1 replacement' : `${positions.length} replacements`;
    return {
      isError: false,
      output: `Edited ${target.rel}: ${count}, -${plural(diff.removed, 'line')} +${plural(diff.added, 'line')}${note ? ` (${note})` : ''}\n${diff.header}\n${diff.body}`,
    };
  }
}
