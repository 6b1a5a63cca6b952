/** How edit_file and write_file change a file: through the editor when there is one, else atomically on disk. */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { ToolContext } from './contract';
import { ToolError } from './errors';
import type { Target } from './paths';

/** Write through a temp file in the same folder, fsync'd and renamed over `file`. */
export async function writeAtomic(file: string, content: string, mode: number | undefined): Promise<void> {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await fs.open(temp, 'wx', mode ?? 0o666);
  try {
    try {
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (mode !== undefined) await fs.chmod(temp, mode);
    await fs.rename(temp, file);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
}

/**
 * Replaces an existing file's text `before` with `after`: through the editor
 * when there is one (its undo stack, an open buffer), else atomically on disk.
 * A file whose text changed while the change waited is left alone (an error the
 * model reads). Returns the editor's note, if any.
 */
export async function replaceText(ctx: ToolContext, target: Target, before: string, after: string, mode: number | undefined): Promise<string | undefined> {
  const changedMeanwhile = new ToolError(`${target.rel} changed while the change waited for approval; nothing was written. Read it again and retry.`);
  if (ctx.files) {
    const done = await ctx.files.replace(target.real, target.rel, before, after);
    if (!done) throw changedMeanwhile;
    return done.note;
  }
  const current = await fs.readFile(target.real, 'utf8').catch(() => undefined);
  if (current !== before) throw changedMeanwhile;
  await writeAtomic(target.real, after, mode);
  return undefined;
}
