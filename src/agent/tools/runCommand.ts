/** run_command: a shell command in the workspace, after the user approves it, in a terminal or in the background. */
import * as path from 'node:path';
import * as z from '../../core/schema';
import { askUser, declinedMessage } from './confirmation';
import type { ConfirmRequest } from './contract';
import { defineTool } from './defineTool';
import { ToolError } from './errors';
import { DEFAULT_COMMAND_TIMEOUT_MS, MAX_COMMAND_TIMEOUT_MS, MIN_COMMAND_TIMEOUT_MS } from './limits';
import { resolveInside, statTarget } from './paths';
import { execute } from './shellProcess';
import { clamp, clipOneLine, headTailBuffer, maxOutputChars } from './text';

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1);
}

export const runCommandTool = defineTool({
  name: 'run_command',
  description:
    'Run a shell command in the workspace folder (or in cwd, a folder inside it), after the user approves it: in the user\'s terminal (their shell) when VS Code\'s shell integration is available, otherwise with /bin/sh -c (cmd.exe /c on Windows). Standard input is empty; stdout and stderr are captured together in order. ' +
    'The output ends with a line "exit code: N" (or "killed: timeout after Ns" / "killed: cancelled"); a non-zero exit is reported as an error. ' +
    'The default timeout is the user\'s setting (120 seconds unless changed); timeoutSeconds (1 to 1800) overrides it. On timeout the command and the processes it started are killed. Output longer than the result limit (100,000 characters by default) keeps its beginning and end with a marker saying how much was cut. ' +
    'Do not start servers or watchers that never exit; prefer non-interactive flags.',
  schema: () =>
    z.strictObject({
      command: z.described(z.string().check(z.minLength(1)), 'The shell command line, e.g. "npm test -- --grep parser".'),
      cwd: z.described(z.optional(z.string().check(z.minLength(1))), 'Folder to run in, workspace-relative (default: the workspace root).'),
      timeoutSeconds: z.described(z.optional(z.number().check(z.positive())), 'Timeout in seconds, 1 to 1800 (default: the user\'s setting, 120 unless changed).'),
    }),
  run: async (input, ctx) => {
    let cwd = path.resolve(ctx.root);
    if (input.cwd !== undefined) {
      const target = await resolveInside(ctx, input.cwd);
      const stats = await statTarget(target);
      if (!stats.isDirectory()) throw new ToolError(`cwd ${target.rel} is not a folder`);
      cwd = target.real;
    }
    const requested = input.timeoutSeconds !== undefined ? input.timeoutSeconds * 1000 : ctx.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    const timeoutMs = clamp(Number.isFinite(requested) ? Math.round(requested) : DEFAULT_COMMAND_TIMEOUT_MS, MIN_COMMAND_TIMEOUT_MS, MAX_COMMAND_TIMEOUT_MS);
    const shown = clipOneLine(input.command, 120);
    const request: ConfirmRequest = { kind: 'run', title: `Run \`${shown}\``, command: input.command, cwd: path.relative(path.resolve(ctx.root), cwd) || '.' };
    const approved = await askUser(ctx, request);
    if (!approved) return { isError: true, output: declinedMessage(request) };

    const output = headTailBuffer(maxOutputChars(ctx));
    const inTerminal = await ctx.terminal?.run({ command: input.command, cwd, timeoutMs, signal: ctx.signal, output });
    const ending =
      inTerminal ??
      (await execute({
        command: input.command,
        cwd,
        timeoutMs,
        signal: ctx.signal,
        output,
        ...(ctx.progress !== undefined ? { progress: (message: string) => ctx.progress?.(message) } : {}),
      }));
    let text = output.render('output');
    if (text === '') text = '(no output)';
    if (!text.endsWith('\n')) text += '\n';
    switch (ending.kind) {
      case 'timeout':
        return { isError: true, output: `${text}killed: timeout after ${formatSeconds(timeoutMs)}s` };
      case 'cancelled':
        return { isError: true, output: `${text}killed: cancelled` };
      case 'exit': {
        const signalNote = ending.signal !== undefined ? `[terminated by ${ending.signal}]\n` : '';
        if (ending.code === undefined) return { isError: false, output: `${text}exit code: unknown (the terminal did not report it)` };
        return { isError: ending.code !== 0, output: `${text}${signalNote}exit code: ${ending.code}` };
      }
    }
  },
});
