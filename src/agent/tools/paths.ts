/** Paths the model gives, resolved inside the workspace folder (symlinks included) or refused, and file-system failures worded for the model. */
import type { Stats } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as z from '../../core/schema';
import type { ToolContext } from './contract';
import { errnoCode, ToolError } from './errors';

export interface Target {
  /** Workspace-relative, forward slashes, '.' for the root: what outputs show. */
  readonly rel: string;
  /** The real path every file operation uses (symlinks resolved, checked inside the root). */
  readonly real: string;
}

export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

export function toPosix(rel: string): string {
  return rel === '' ? '.' : rel.split(path.sep).join('/');
}

export function outside(given: string, ctx: ToolContext): ToolError {
  return new ToolError(`${given} is outside the workspace folder ${ctx.root}; refused`);
}

/**
 * Resolve `given` (workspace-relative, or absolute inside the root) to a path
 * inside the root, following symlinks: anything that lands outside is refused.
 * The file itself need not exist (write_file); its nearest existing ancestor is
 * what gets checked.
 */
export async function resolveInside(ctx: ToolContext, given: string): Promise<Target> {
  const rootAbs = path.resolve(ctx.root);
  const rootReal = await fs.realpath(rootAbs).catch((error: unknown) => {
    throw new ToolError(`The workspace folder ${ctx.root} cannot be opened (${errnoCode(error) ?? String(error)})`);
  });
  const abs = path.isAbsolute(given) ? path.resolve(given) : path.resolve(rootAbs, given);
  let base: string;
  if (isInside(rootAbs, abs)) base = rootAbs;
  else if (isInside(rootReal, abs)) base = rootReal;
  else throw outside(given, ctx);
  const real = await realpathOfPrefix(abs, given);
  if (!isInside(rootReal, real)) throw outside(given, ctx);
  return { rel: toPosix(path.relative(base, abs)), real };
}

/** realpath of the deepest existing ancestor of `abs`, with the rest appended; a broken symlink is refused. */
async function realpathOfPrefix(abs: string, given: string): Promise<string> {
  const rest: string[] = [];
  let current = abs;
  for (;;) {
    try {
      const real = await fs.realpath(current);
      return rest.length === 0 ? real : path.join(real, ...rest.reverse());
    } catch (error) {
      const code = errnoCode(error);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      const link = await fs.lstat(current).catch(() => undefined);
      if (link?.isSymbolicLink() === true) throw new ToolError(`${given} is (or goes through) a broken symbolic link; refused`);
      const parent = path.dirname(current);
      if (parent === current) return abs;
      rest.push(path.basename(current));
      current = parent;
    }
  }
}

/** stat with the usual failures worded for the model. */
export async function statTarget(target: Target): Promise<Stats> {
  try {
    return await fs.stat(target.real);
  } catch (error) {
    throw fsProblem(target.rel, error);
  }
}

export function fsProblem(rel: string, error: unknown): unknown {
  switch (errnoCode(error)) {
    case 'ENOENT':
    case 'ENOTDIR':
      return new ToolError(`${rel} does not exist (use list_dir or glob to find the right path)`);
    case 'EACCES':
    case 'EPERM':
      return new ToolError(`${rel}: permission denied`);
    default:
      return error;
  }
}

export const pathField = z.described(z.string().check(z.minLength(1)), 'File path, workspace-relative (e.g. "src/index.ts") or absolute inside the workspace folder.');
