/** grep: the lines of the workspace's files that match a text or a regular expression. */
import * as fs from 'node:fs/promises';
import * as z from '../../core/schema';
import { messageOf } from '../../core/errors';
import { nextTurn } from '../../core/turns';
import { defineTool } from './defineTool';
import { throwIfAborted, ToolError } from './errors';
import { GREP_DEFAULT_RESULTS, GREP_MAX_FILE_BYTES, GREP_MAX_RESULTS } from './limits';
import { resolveInside, statTarget } from './paths';
import { RegexScanner } from './regexScanner';
import { grepWithRipgrep } from './ripgrep';
import { CLIP_RESERVE, clipMatchLine, hasNul, maxOutputChars, plural } from './text';
import { compileOrRefuse, joinRel, skipsDir, walk } from './walk';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export const grepTool = defineTool({
  name: 'grep',
  description:
    'Search file contents line by line. By default the pattern is literal text and case-insensitive; set regex: true for a regular expression (ripgrep syntax: no look-around or backreferences), caseSensitive: true to match case. ' +
    'Output lines are "path:line: text" (workspace-relative path, 1-based line, text clipped to 300 characters), in path order. ' +
    `At most maxResults matches (default ${GREP_DEFAULT_RESULTS}, up to ${GREP_MAX_RESULTS}). ` +
    'Skips binary files, files over 2 MB, .git, node_modules and what .gitignore and the user\'s exclude settings leave out. "include" limits the search to files matching a glob ("*.ts" matches at any depth; "src/**/*.ts" relative to path).',
  schema: () =>
    z.strictObject({
      pattern: z.described(z.string().check(z.minLength(1)), 'Text to find (or a regular expression with regex: true). Matches within one line.'),
      path: z.described(z.optional(z.string().check(z.minLength(1))), 'File or folder to search, workspace-relative (default: the workspace root).'),
      include: z.described(z.optional(z.string().check(z.minLength(1))), 'Glob of files to search, e.g. "*.ts" or "src/**/*.{js,ts}".'),
      regex: z.described(z._default(z.boolean(), false), 'Treat pattern as a regular expression (default false: literal text).'),
      caseSensitive: z.described(z._default(z.boolean(), false), 'Match case (default false).'),
      maxResults: z.described(z._default(z.int().check(z.minimum(1), z.maximum(GREP_MAX_RESULTS)), GREP_DEFAULT_RESULTS), `Most matches to return (default ${GREP_DEFAULT_RESULTS}, max ${GREP_MAX_RESULTS}).`),
    }),
  run: async (input, ctx) => {
    if (ctx.ripgrep) {
      const base = await resolveInside(ctx, input.path ?? '.');
      return grepWithRipgrep(ctx.ripgrep, input, base, ctx);
    }
    let matcher: RegExp;
    try {
      matcher = new RegExp(input.regex ? input.pattern : escapeRegExp(input.pattern), input.caseSensitive ? '' : 'i');
    } catch (error) {
      const reason = messageOf(error).replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
      throw new ToolError(`Invalid regular expression ${JSON.stringify(input.pattern)}: ${reason}. Fix it, or set regex to false to search for the text literally.`);
    }
    const literal = input.regex ? undefined : input.caseSensitive ? input.pattern : input.pattern.toLowerCase();
    const scanner = input.regex ? new RegexScanner(matcher.source, matcher.flags) : undefined;
    const include = input.include === undefined ? undefined : compileOrRefuse(input.include, 'include', true);
    const base = await resolveInside(ctx, input.path ?? '.');
    const stats = await statTarget(base);
    const rootReal = await fs.realpath(ctx.root);
    const budget = Math.max(200, maxOutputChars(ctx) - CLIP_RESERVE);

    const lines: string[] = [];
    let used = 0;
    let matches = 0;
    let matchedFiles = 0;
    let searched = 0;
    let skippedLarge = 0;
    let skippedBinary = 0;
    let stop: string | undefined;

    const searchFile = async (rel: string, abs: string): Promise<boolean> => {
      throwIfAborted(ctx.signal);
      if (searched % 64 === 63) await nextTurn();
      if (searched > 0 && searched % 5_000 === 0) ctx.progress?.(`grep: ${searched} files searched, ${matches} matches`);
      const size = await fs.stat(abs).then((s) => s.size, () => -1);
      if (size < 0) return true;
      if (size > GREP_MAX_FILE_BYTES) {
        skippedLarge++;
        return true;
      }
      const buffer = await fs.readFile(abs).catch(() => undefined);
      if (buffer === undefined) return true;
      if (hasNul(buffer)) {
        skippedBinary++;
        return true;
      }
      searched++;
      const text = buffer.toString('utf8');
      if (literal !== undefined && !(input.caseSensitive ? text : text.toLowerCase()).includes(literal)) return true;
      const hits = scanner ? await scanner.scan(text, rel) : undefined;
      if (hits && hits.size === 0) return true;
      let inFile = false;
      let lineNo = 0;
      for (let at = 0; at < text.length; ) {
        const newline = text.indexOf('\n', at);
        const end = newline === -1 ? text.length : newline;
        lineNo++;
        let line = text.slice(at, end);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        at = end + 1;
        const index = hits ? hits.get(lineNo) : matcher.exec(line)?.index;
        if (index === undefined) continue;
        const found = { index };
        if (matches >= input.maxResults) {
          stop = `stopped after ${input.maxResults} matches; there are more: narrow the search (path, include) or raise maxResults (max ${GREP_MAX_RESULTS})`;
          return false;
        }
        const entry = `${rel}:${lineNo}: ${clipMatchLine(line, found.index)}`;
        if (used + entry.length + 1 > budget) {
          stop = `stopped after ${matches} matches at the ${budget}-character limit; narrow the search (path, include)`;
          return false;
        }
        lines.push(entry);
        used += entry.length + 1;
        matches++;
        if (!inFile) {
          inFile = true;
          matchedFiles++;
        }
      }
      return true;
    };

    try {
      if (stats.isDirectory()) {
        await walk(base.real, {
          signal: ctx.signal,
          rootReal,
          enter: (relDir, name) => !skipsDir(name, include) && (include?.mayContain(relDir) ?? true),
          file: (rel, abs) => (include === undefined || include.matches(rel) ? searchFile(joinRel(base.rel, rel), abs) : true),
        });
      } else if (stats.isFile()) {
        await searchFile(base.rel, base.real);
      } else {
        throw new ToolError(`${base.rel} is neither a file nor a folder`);
      }
    } finally {
      scanner?.dispose();
    }

    const skipped = [
      skippedLarge > 0 ? `${plural(skippedLarge, 'file')} over 2 MB skipped` : '',
      skippedBinary > 0 ? `${plural(skippedBinary, 'binary file')} skipped` : '',
    ].filter((s) => s !== '');
    const where = base.rel === '.' ? 'the workspace' : base.rel;
    if (matches === 0) {
      return {
        isError: false,
        output: `No matches for ${JSON.stringify(input.pattern)} in ${where} (${plural(searched, 'file')} searched${skipped.map((s) => `; ${s}`).join('')})`,
      };
    }
    const summary = `[${plural(matches, 'match', 'matches')} in ${plural(matchedFiles, 'file')}; ${plural(searched, 'file')} searched${skipped.map((s) => `; ${s}`).join('')}${stop !== undefined ? `; ${stop}` : ''}]`;
    return { isError: false, output: `${lines.join('\n')}\n${summary}` };
  },
});
