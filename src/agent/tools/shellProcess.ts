/** A command line run in the platform's shell where no terminal runs it: its output captured, its process group killed on timeout or cancellation. */
import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import type { Ending } from './commandRunner';
import { ToolError } from './errors';
import { KILL_GRACE_MS, PIPE_DRAIN_MS, PROGRESS_EVERY_MS } from './limits';
import type { HeadTailBuffer } from './text';

interface RunOptions {
  readonly command: string;
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  readonly output: HeadTailBuffer;
  readonly progress?: (message: string) => void;
}

/** How a command line is started where no terminal runs it: the program, its arguments, and whether it leads a process group. */
export interface ShellInvocation {
  readonly file: string;
  readonly args: readonly string[];
  /** POSIX: the shell leads its own process group (killed as a whole); Windows: the tree is killed with taskkill. */
  readonly group: boolean;
  /** Windows: the arguments are passed as written (cmd.exe parses its own command line). */
  readonly verbatim: boolean;
}

/**
 * `/bin/sh -c` with stderr joined to stdout (`exec 2>&1`) on POSIX; on Windows
 * the user's command interpreter (`%ComSpec%`, cmd.exe) with `/d /s /c` and the
 * line quoted whole, as Node's `shell: true` does (stderr comes on its own pipe
 * and is captured beside stdout).
 */
export function shellInvocation(command: string, platform: NodeJS.Platform = process.platform, comSpec = process.env.ComSpec): ShellInvocation {
  if (platform === 'win32') return { file: comSpec || 'cmd.exe', args: ['/d', '/s', '/c', `"${command}"`], group: false, verbatim: true };
  return { file: '/bin/sh', args: ['-c', `exec 2>&1; ${command}`], group: true, verbatim: false };
}

/**
 * The command in the platform's shell (see shellInvocation): on POSIX in its
 * own process group (detached), stdout and stderr on one pipe so they
 * interleave as written. Timeout and cancellation send SIGTERM to the whole
 * group, SIGKILL 2 s later if it has not gone, and SIGKILL once more when the
 * pipes close; on Windows `taskkill /T /F` ends the command's process tree.
 */
export function execute(options: RunOptions): Promise<Ending> {
  return new Promise<Ending>((resolve, reject) => {
    const shell = shellInvocation(options.command);
    const child = spawn(shell.file, [...shell.args], {
      cwd: options.cwd,
      detached: shell.group,
      windowsHide: true,
      windowsVerbatimArguments: shell.verbatim,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const decoders = [new StringDecoder('utf8'), new StringDecoder('utf8')] as const;
    child.stdout.on('data', (chunk: Buffer) => options.output.push(decoders[0].write(chunk)));
    child.stderr.on('data', (chunk: Buffer) => options.output.push(decoders[1].write(chunk)));

    const started = Date.now();
    let killed: 'timeout' | 'cancelled' | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const later = (ms: number, action: () => void): void => {
      timers.push(setTimeout(action, ms));
    };

    const killGroup = (signal: NodeJS.Signals): void => {
      if (child.pid === undefined) return;
      if (!shell.group) {
        // Windows has no process groups to signal: end the command's whole tree, once.
        if (signal === 'SIGTERM') spawn('taskkill', ['/pid', String(child.pid), '/T', '/F'], { windowsHide: true, stdio: 'ignore' }).once('error', () => undefined);
        return;
      }
      try {
        process.kill(-child.pid, signal);
      } catch {
        // The group is gone.
      }
    };
    const terminate = (reason: 'timeout' | 'cancelled'): void => {
      if (killed !== undefined || settled) return;
      killed = reason;
      killGroup('SIGTERM');
      later(KILL_GRACE_MS, () => {
        killGroup('SIGKILL');
        later(500, finish); // a process outside the group may hold the pipes: stop waiting for them
      });
    };
    const onAbort = (): void => terminate('cancelled');
    const progress = setInterval(() => {
      const seconds = Math.round((Date.now() - started) / 1000);
      options.progress?.(`Still running (${seconds}s, ${options.output.length} characters of output so far)`);
    }, PROGRESS_EVERY_MS);
    progress.unref();

    function finish(): void {
      if (settled) return;
      settled = true;
      timers.forEach(clearTimeout);
      clearInterval(progress);
      options.signal.removeEventListener('abort', onAbort);
      if (killed !== undefined) killGroup('SIGKILL');
      child.stdout.destroy();
      child.stderr.destroy();
      options.output.push(decoders[0].end());
      options.output.push(decoders[1].end());
      if (killed !== undefined) return resolve({ kind: killed });
      if (exit?.signal) return resolve({ kind: 'exit', code: 128 + (osConstants.signals[exit.signal] ?? 0), signal: exit.signal });
      resolve({ kind: 'exit', code: exit?.code ?? 1 });
    }

    child.once('error', (error) => {
      if (settled) return;
      if (child.pid === undefined) {
        settled = true;
        timers.forEach(clearTimeout);
        clearInterval(progress);
        options.signal.removeEventListener('abort', onAbort);
        reject(new ToolError(`The command could not be started: ${error.message}`));
      }
    });
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      if (killed === undefined) later(PIPE_DRAIN_MS, finish); // a background process may keep the pipes open
    });
    child.once('close', finish);

    later(options.timeoutMs, () => terminate('timeout'));
    options.signal.addEventListener('abort', onAbort, { once: true });
    if (options.signal.aborted) onAbort();
  });
}
