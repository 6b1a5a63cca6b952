/** glob: the files whose paths match a pattern. */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as z from '../../core/schema';
import { nextTurn } from '../../core/turns';
import { defineTool } from './defineTool';
import { ToolError } from './errors';
import { GLOB_MAX_COLLECTED, GLOB_MAX_PATHS } from './limits';
import { outside, resolveInside, statTarget, toPosix } from './paths';
import { ripgrepFiles } from './ripgrep';
import { compareNames, compileOrRefuse, joinRel, skipsDir, walk } from './walk';

export const globTool = defineTool({
  name: 'glob',
  description:
    'Find files by name pattern. Syntax: "**" (any number of folders), "*" (any characters within one name), "?" (one character), "{a,b}" (alternatives), "[abc]" / "[a-z]" / "[!abc]" (character classes). ' +
    'The pattern is matched against paths relative to "path" (default: the workspace root): "*.js" matches only at that level, "**/*.js" at any depth. ' +
    `Returns files only, as workspace-relative paths with forward slashes, sorted, at most ${GLOB_MAX_PATHS}. ` +
    '.git and node_modules are skipped unless the pattern names them, and so is what .gitignore and the user\'s exclude settings leave out; symlinked folders are not followed.',
  schema: () =>
    z.strictObject({
      pattern: z.described(z.string().check(z.minLength(1)), 'Glob pattern, e.g. "**/*.test.ts" or "src/{core,store}/*.ts".'),
      path: z.described(z.optional(z.string().check(z.minLength(1))), 'Folder to search from, workspace-relative (default: the workspace root).'),
    }),
  run: async (input, ctx) => {
    const base = await resolveInside(ctx, input.path ?? '.');
    const stats = await statTarget(base);
    if (!stats.isDirectory()) throw new ToolError(`${base.rel} is a file, not a folder; glob searches a folder`);
    let pattern = input.pattern;
    if (path.isAbsolute(pattern)) {
      const relative = path.relative(path.resolve(ctx.root, input.path ?? '.'), pattern);
      if (relative.startsWith('..') || path.isAbsolute(relative)) throw outside(pattern, ctx);
      pattern = toPosix(relative);
    }
    const matcher = compileOrRefuse(pattern, 'glob', false);
    const rootReal = await fs.realpath(ctx.root);
    const found: string[] = [];
    let truncated = false;
    let visited = 0;
    // In VS Code: the files ripgrep lists (.gitignore and the user's excludes honoured), matched by the same pattern.
    const listed = ctx.ripgrep ? await ripgrepFiles(ctx.ripgrep, base.real, (dir) => pattern.includes(dir), ctx.signal) : undefined;
    if (listed) {
      for (const rel of listed) {
        if (!matcher.matches(rel)) continue;
        found.push(joinRel(base.rel, rel));
        if (found.length >= GLOB_MAX_COLLECTED) {
          truncated = true;
          break;
        }
      }
    } else await walk(base.real, {
      signal: ctx.signal,
      rootReal,
      enter: (relDir, name) => !skipsDir(name, matcher) && matcher.mayContain(relDir),
      file: async (rel) => {
        if (++visited % 256 === 0) await nextTurn();
        if (!matcher.matches(rel)) return true;
        found.push(joinRel(base.rel, rel));
        if (found.length >= GLOB_MAX_COLLECTED) {
          truncated = true;
          return false;
        }
        return true;
      },
    });
    if (found.length === 0) return { isError: false, output: `No files match ${JSON.stringify(input.pattern)} in ${base.rel === '.' ? 'the workspace' : base.rel}` };
    found.sort(compareNames);
    const shown = found.slice(0, GLOB_MAX_PATHS);
    if (found.length > shown.length) {
      const total = truncated ? `more than ${found.length}` : String(found.length);
      shown.push(`[${GLOB_MAX_PATHS} of ${total} matching files shown; narrow the pattern or the path]`);
    }
    return { isError: false, output: shown.join('\n') };
  },
});
