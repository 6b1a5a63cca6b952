/** glob and grep through VS Code's bundled ripgrep: `.gitignore` and the user's exclusions honoured. */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { ToolContext, ToolOutcome } from './contract';
import { abortError, ToolError } from './errors';
import { GLOB_MAX_COLLECTED, GREP_MAX_RESULTS, SKIPPED_DIRS } from './limits';
import type { Target } from './paths';
import { CLIP_RESERVE, clipMatchLine, maxOutputChars, plural } from './text';

/**
 * The files under `dir` (paths relative to it, forward slashes) as ripgrep
 * lists them: hidden ones included, `.git`, `node_modules` (unless `named`) and
 * what `.gitignore` and the user's excludes leave out skipped. Undefined when
 * ripgrep fails (the caller walks the folder itself).
 */
export function ripgrepFiles(rg: { readonly path: string; readonly excludes: readonly string[] }, dir: string, named: (dir: string) => boolean, signal: AbortSignal): Promise<string[] | undefined> {
  const args = ['--files', '--no-config', '--no-require-git', '--hidden'];
  for (const skipped of SKIPPED_DIRS) if (!named(skipped)) args.push('--glob', `!${skipped}`);
  for (const exclude of rg.excludes) args.push('--glob', `!${exclude}`);
  return new Promise((resolve, reject) => {
    const child = spawn(rg.path, args, { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] });
    const onAbort = (): void => void child.kill();
    signal.addEventListener('abort', onAbort, { once: true });
    const decoder = new StringDecoder('utf8');
    let text = '';
    let lines: string[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      text += decoder.write(chunk);
      const cut = text.lastIndexOf('\n');
      if (cut < 0) return;
      lines = lines.concat(text.slice(0, cut).split('\n'));
      text = text.slice(cut + 1);
      if (lines.length > GLOB_MAX_COLLECTED * 20) child.kill();
    });
    child.on('error', () => {
      signal.removeEventListener('abort', onAbort);
      resolve(undefined);
    });
    child.on('close', (code) => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) return reject(abortError());
      if (text) lines.push(text);
      // 1: nothing listed; 2 with output: some folders unreadable (what was listed stands).
      if (code !== 0 && code !== 1 && lines.length === 0) return resolve(undefined);
      resolve(lines.filter((l) => l !== '').map((l) => l.replace(/^\.\//, '').split(path.sep).join('/')));
    });
  });
}

interface RipgrepMatch {
  readonly type: string;
  readonly data: {
    readonly path?: { readonly text?: string };
    readonly lines?: { readonly text?: string };
    readonly line_number?: number;
    readonly submatches?: readonly { readonly start: number }[];
    readonly stats?: { readonly searches?: number };
  };
}

/**
 * grep through ripgrep (VS Code's bundled binary): the same output as the
 * built-in search, in path order, but `.gitignore`, `.ignore` and the user's
 * `files.exclude` / `search.exclude` are honoured. Hidden files are searched
 * (`.git` and `node_modules` are not, unless `include` names them).
 */
export async function grepWithRipgrep(
  rg: { readonly path: string; readonly excludes: readonly string[] },
  input: { pattern: string; include?: string | undefined; regex: boolean; caseSensitive: boolean; maxResults: number },
  base: Target,
  ctx: ToolContext,
): Promise<ToolOutcome> {
  const rootReal = await fs.realpath(ctx.root);
  const budget = Math.max(200, maxOutputChars(ctx) - CLIP_RESERVE);
  const args = ['--json', '--no-config', '--no-require-git', '--sort', 'path', '--hidden', '--max-filesize', '2M', input.caseSensitive ? '--case-sensitive' : '--ignore-case'];
  if (!input.regex) args.push('--fixed-strings');
  if (input.include !== undefined) args.push('--glob', input.include);
  const named = (dir: string): boolean => input.include?.includes(dir) === true;
  for (const dir of SKIPPED_DIRS) if (!named(dir)) args.push('--glob', `!${dir}`);
  for (const exclude of rg.excludes) args.push('--glob', `!${exclude}`);
  args.push('--', input.pattern, base.real === rootReal ? '.' : path.relative(rootReal, base.real));
  const lines: string[] = [];
  const files = new Set<string>();
  let used = 0;
  let searched = 0;
  let stop: string | undefined;
  let errors = '';
  await new Promise<void>((resolve, reject) => {
    const child = spawn(rg.path, args, { cwd: rootReal, stdio: ['ignore', 'pipe', 'pipe'] });
    const onAbort = (): void => void child.kill();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    let pending = '';
    const decoder = new StringDecoder('utf8');
    const handle = (json: string): void => {
      let event: RipgrepMatch;
      try {
        event = JSON.parse(json) as RipgrepMatch;
      } catch {
        return;
      }
      if (event.type === 'summary') searched = event.data.stats?.searches ?? searched;
      if (event.type !== 'match' || stop !== undefined) return;
      const rel = (event.data.path?.text ?? '').replace(/^\.\//, '').split(path.sep).join('/');
      const raw = (event.data.lines?.text ?? '').replace(/\r?\n$/, '');
      const byteAt = event.data.submatches?.[0]?.start ?? 0;
      const at = Buffer.from(raw, 'utf8').subarray(0, byteAt).toString('utf8').length;
      if (lines.length >= input.maxResults) {
        stop = `stopped after ${input.maxResults} matches; there are more: narrow the search (path, include) or raise maxResults (max ${GREP_MAX_RESULTS})`;
        child.kill();
        return;
      }
      const entry = `${rel}:${event.data.line_number ?? 0}: ${clipMatchLine(raw, at)}`;
      if (used + entry.length + 1 > budget) {
        stop = `stopped after ${lines.length} matches at the ${budget}-character limit; narrow the search (path, include)`;
        child.kill();
        return;
      }
      lines.push(entry);
      used += entry.length + 1;
      files.add(rel);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      pending += decoder.write(chunk);
      let newline: number;
      while ((newline = pending.indexOf('\n')) >= 0) {
        handle(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (errors.length < 2_000) errors += chunk.toString('utf8');
    });
    child.on('error', (error) => {
      ctx.signal.removeEventListener('abort', onAbort);
      reject(new ToolError(`ripgrep could not run (${error.message})`));
    });
    child.on('close', (code) => {
      ctx.signal.removeEventListener('abort', onAbort);
      if (pending) handle(pending);
      if (ctx.signal.aborted) reject(abortError());
      else if (code === 2 && stop === undefined && lines.length === 0) {
        const reason = errors.trim().split('\n').filter((l) => l.trim() !== '').slice(-3).join(' ');
        reject(new ToolError(input.regex ? `Invalid regular expression ${JSON.stringify(input.pattern)}: ${reason}. Fix it, or set regex to false to search for the text literally.` : `The search failed: ${reason}`));
      } else resolve();
    });
  });
  const where = base.rel === '.' ? 'the workspace' : base.rel;
  if (lines.length === 0) return { isError: false, output: `No matches for ${JSON.stringify(input.pattern)} in ${where} (${plural(searched, 'file')} searched; ignored files skipped)` };
  // A search stopped early never reports how many files it searched.
  const counted = searched > 0 ? `; ${plural(searched, 'file')} searched` : '';
  const summary = `[${plural(lines.length, 'match', 'matches')} in ${plural(files.size, 'file')}${counted}; ignored files skipped${stop !== undefined ? `; ${stop}` : ''}]`;
  return { isError: false, output: `${lines.join('\n')}\n${summary}` };
}
