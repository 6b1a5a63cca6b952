/** Walking the workspace's folders for glob and grep: name order, skipped folders, glob patterns from the model. */
import type { Dirent } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { messageOf } from '../../core/errors';
import { compileGlob, type GlobMatcher } from '../glob';
import { throwIfAborted, ToolError } from './errors';
import { SKIPPED_DIRS } from './limits';
import { isInside } from './paths';

interface WalkOptions {
  readonly signal: AbortSignal;
  readonly rootReal: string;
  /** Whether to enter the folder at `relDir` (relative to the walk's base) named `name`. */
  enter(relDir: string, name: string): boolean;
  /** Called for every file in name order; return false to stop the walk. */
  file(relPath: string, abs: string): Promise<boolean> | boolean;
}

/**
 * Depth-first, entries in code-point order. Symlinked folders are not entered;
 * a symlinked file is visited only when its target is inside the workspace.
 * Unreadable folders are skipped. Returns false when `file` stopped the walk.
 */
export async function walk(baseReal: string, options: WalkOptions, relDir = ''): Promise<boolean> {
  throwIfAborted(options.signal);
  let entries: Dirent[];
  try {
    entries = await fs.readdir(relDir === '' ? baseReal : path.join(baseReal, relDir), { withFileTypes: true });
  } catch {
    return true;
  }
  entries.sort((a, b) => compareNames(a.name, b.name));
  for (const entry of entries) {
    const rel = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
    const abs = path.join(baseReal, rel);
    if (entry.isDirectory()) {
      if (options.enter(rel, entry.name) && !(await walk(baseReal, options, rel))) return false;
    } else if (entry.isFile()) {
      if (!(await options.file(rel, abs))) return false;
    } else if (entry.isSymbolicLink()) {
      const real = await fs.realpath(abs).catch(() => undefined);
      if (real === undefined || !isInside(options.rootReal, real)) continue;
      const stats = await fs.stat(real).catch(() => undefined);
      if (stats?.isFile() === true && !(await options.file(rel, real))) return false;
    }
  }
  return true;
}

export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function joinRel(base: string, rel: string): string {
  return base === '.' ? rel : `${base}/${rel}`;
}

/** Skip .git / node_modules unless the matcher names them. */
export function skipsDir(name: string, matcher: GlobMatcher | undefined): boolean {
  return SKIPPED_DIRS.includes(name) && matcher?.names(name) !== true;
}

export function compileOrRefuse(pattern: string, field: string, matchBase: boolean): GlobMatcher {
  if (pattern.split(/[\\/]/).includes('..')) {
    throw new ToolError(`The ${field} pattern may not contain ".." segments; pass a folder in "path" instead`);
  }
  try {
    return compileGlob(pattern, { matchBase });
  } catch (error) {
    throw new ToolError(`Invalid ${field} pattern ${JSON.stringify(pattern)}: ${messageOf(error)}`);
  }
}
