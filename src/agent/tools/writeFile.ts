/** write_file: creates a file or replaces its whole content, after the user approves the write. */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as z from '../../core/schema';
import { askUser, declinedMessage } from './confirmation';
import type { ConfirmRequest } from './contract';
import { defineTool } from './defineTool';
import { errnoCode, ToolError } from './errors';
import { replaceText, writeAtomic } from './fileWrites';
import { fsProblem, pathField, resolveInside } from './paths';
import { noteSeen } from './seenFiles';
import { countLines, hasNul, plural } from './text';

export const writeFileTool = defineTool({
  name: 'write_file',
  description:
    'Create a file, or replace an existing file\'s whole content, with the given UTF-8 text; missing parent folders are created. ' +
    'The user is asked to approve the write; if they decline, nothing is written. Reports whether the file was created or overwritten and its size. ' +
    'For a small change to an existing file prefer edit_file.',
  schema: () =>
    z.strictObject({
      path: pathField,
      content: z.described(z.string(), 'The whole new content of the file.'),
    }),
  run: async (input, ctx) => {
    const target = await resolveInside(ctx, input.path);
    let existing: { text: string | undefined; bytes: number; mode: number } | undefined;
    try {
      const stats = await fs.stat(target.real);
      if (stats.isDirectory()) throw new ToolError(`${target.rel} is a folder; give a file path`);
      if (!stats.isFile()) throw new ToolError(`${target.rel} is not a regular file`);
      const buffer = await fs.readFile(target.real);
      const open = hasNul(buffer) ? undefined : await ctx.files?.openText(target.real);
      existing = { text: open ?? (hasNul(buffer) ? undefined : buffer.toString('utf8')), bytes: buffer.length, mode: stats.mode & 0o7777 };
    } catch (error) {
      if (error instanceof ToolError) throw error;
      const code = errnoCode(error);
      if (code === 'ENOTDIR') throw new ToolError(`${target.rel} cannot be created: a parent of it is a file`);
      if (code !== 'ENOENT') throw fsProblem(target.rel, error);
    }
    const request: ConfirmRequest = {
      kind: 'write',
      title: `${existing === undefined ? 'Create' : 'Overwrite'} ${target.rel}`,
      path: target.rel,
      ...(existing?.text !== undefined ? { before: existing.text } : {}),
      after: input.content,
    };
    const approved = await askUser(ctx, request);
    if (!approved) return { isError: true, output: declinedMessage(request) };
    let note: string | undefined;
    if (existing?.text !== undefined) note = await replaceText(ctx, target, existing.text, input.content, existing.mode);
    else {
      await fs.mkdir(path.dirname(target.real), { recursive: true });
      // Through the editor when there is one (the new file can be undone); on disk otherwise.
      if (!(existing === undefined && (await ctx.files?.create?.(target.real, target.rel, input.content)))) await writeAtomic(target.real, input.content, existing?.mode);
    }
    // The model wrote it whole: it knows this version.
    await noteSeen(ctx, target.real, input.content);
    const bytes = Buffer.byteLength(input.content, 'utf8');
    const size = `${bytes} bytes, ${plural(countLines(input.content), 'line')}`;
    const noted = note ? ` (${note})` : '';
    return {
      isError: false,
      output: existing === undefined ? `Created ${target.rel} (${size}).` : `Overwrote ${target.rel} (${size}; was ${existing.bytes} bytes)${noted}.`,
    };
  },
});
