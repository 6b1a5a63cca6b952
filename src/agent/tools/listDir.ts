/** list_dir: one folder's entries, sorted by name. */
import type { Dirent } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as z from '../../core/schema';
import { defineTool } from './defineTool';
import { throwIfAborted, ToolError } from './errors';
import { LIST_MAX_ENTRIES } from './limits';
import { fsProblem, resolveInside, statTarget } from './paths';
import { compareNames } from './walk';

export const listDirTool = defineTool({
  name: 'list_dir',
  description:
    'List a folder (default: the workspace root), entries sorted by name: folders end with "/", files show their size in bytes, symbolic links show their target. ' +
    `At most ${LIST_MAX_ENTRIES} entries; a note says how many were left out. Not recursive: use glob to find files in subfolders.`,
  schema: () =>
    z.strictObject({
      path: z.described(z._default(z.string().check(z.minLength(1)), '.'), 'Folder path, workspace-relative or absolute inside the workspace folder (default ".").'),
    }),
  run: async (input, ctx) => {
    const target = await resolveInside(ctx, input.path);
    const stats = await statTarget(target);
    if (!stats.isDirectory()) throw new ToolError(`${target.rel} is a file, not a folder; use read_file to read it`);
    let entries: Dirent[];
    try {
      entries = await fs.readdir(target.real, { withFileTypes: true });
    } catch (error) {
      throw fsProblem(target.rel, error);
    }
    entries.sort((a, b) => compareNames(a.name, b.name));
    const shown = entries.slice(0, LIST_MAX_ENTRIES);
    const lines: string[] = [];
    for (const entry of shown) {
      throwIfAborted(ctx.signal);
      const abs = path.join(target.real, entry.name);
      if (entry.isDirectory()) {
        lines.push(`${entry.name}/`);
      } else if (entry.isSymbolicLink()) {
        const link = await fs.readlink(abs).catch(() => '?');
        const pointee = await fs.stat(abs).catch(() => undefined);
        lines.push(`${entry.name}${pointee?.isDirectory() === true ? '/' : ''} -> ${link}${pointee === undefined ? ' (broken)' : ''}`);
      } else {
        const size = await fs.lstat(abs).then((s) => s.size, () => undefined);
        lines.push(size === undefined ? entry.name : `${entry.name} (${size} bytes)`);
      }
    }
    const shownDir = target.rel === '.' ? './' : `${target.rel}/`;
    if (entries.length === 0) return { isError: false, output: `${shownDir} is empty` };
    if (entries.length > shown.length) {
      lines.push(`[${shown.length} of ${entries.length} entries shown; list a subfolder or use glob to narrow]`);
    }
    return { isError: false, output: lines.join('\n') };
  },
});
