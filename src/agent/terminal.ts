/**
 * run_command in a VS Code terminal with shell integration: the user sees the
 * command and its output as it runs, in their own shell and environment (on
 * Windows too). One "@keeper" terminal per folder, reused while it is idle; a
 * busy or closed one is replaced. The output comes from the shell integration's
 * stream (escape sequences removed) into the tool's head + tail buffer; the exit
 * code from the end of the execution. A timeout or a cancellation interrupts
 * the command (Ctrl+C) and, if it does not stop, closes its terminal.
 *
 * When the terminal offers no shell integration within a few seconds (a shell
 * VS Code cannot integrate), `run` resolves to undefined and the tool runs the
 * command in the background as before.
 */
import * as vscode from 'vscode';
import { plainTerminalText, type CommandRunner, type Ending } from './tools/commandRunner';

/** How long a new terminal may take to report its shell integration. */
const INTEGRATION_WAIT_MS = 5_000;
/**
 * After a new terminal reports its shell integration, how long its shell is given to finish drawing the first
 * prompt. Integration turns on as the prompt starts; a command sent before the prompt is complete is typed into
 * it (`root@vm:/tmp/ck-vscecho …`), runs, and is never reported as an execution: the turn would wait for the
 * command's timeout. No event says the prompt is complete, so the wait is bounded and once per terminal.
 */
const FIRST_PROMPT_SETTLE_MS = 750;
/** After Ctrl+C, how long the command has to stop before its terminal is closed. */
const INTERRUPT_GRACE_MS = 2_000;
/**
 * After the execution ends, how long its output stream may take to close (it closes as soon as the last output is
 * in; on a loaded machine that came after 500 ms, and the command's output was lost).
 */
const OUTPUT_DRAIN_MS = 2_000;
/** After the output stream closes, how long a late end event (its exit code) is waited for. */
const END_EVENT_WAIT_MS = 1_000;

export class KeeperTerminals implements CommandRunner, vscode.Disposable {
  private readonly idle = new Map<string, vscode.Terminal>();
  private readonly busy = new Set<vscode.Terminal>();

  async run(options: Parameters<CommandRunner['run']>[0]): Promise<Ending | undefined> {
    const terminal = await this.terminalFor(options.cwd);
    const integration = terminal?.shellIntegration;
    if (!terminal || !integration) return undefined;
    this.busy.add(terminal);
    this.idle.delete(options.cwd);
    terminal.show(true);
    // The terminal is ours while it is busy: what starts or ends in it is this command. The execution that runs may
    // not be the object executeCommand returns: a command sent while the shell still draws its first prompt is typed
    // into it and seen as an execution of its own (its end event then never named ours, and the turn waited for
    // the timeout). Each execution's output is read once; listening starts before the command is sent, as a quick
    // one may end (and VS Code may report its start) before executeCommand returns.
    const readings = new Map<vscode.TerminalShellExecution, Promise<void>>();
    let printed = false;
    const follow = (execution: vscode.TerminalShellExecution): Promise<void> => {
      let reading = readings.get(execution);
      if (!reading) {
        const stream = execution.read();
        reading = (async () => {
          for await (const data of stream) {
            const text = plainTerminalText(data);
            if (text) printed = true;
            options.output.push(text);
          }
        })().catch(() => undefined);
        readings.set(execution, reading);
      }
      return reading;
    };
    const starts = vscode.window.onDidStartTerminalShellExecution((event) => {
      if (event.terminal === terminal) void follow(event.execution);
    });
    const ended = new Promise<{ code: number | undefined; told: string }>((resolve) => {
      const sub = vscode.window.onDidEndTerminalShellExecution((event) => {
        if (event.terminal !== terminal) return;
        sub.dispose();
        resolve({ code: event.exitCode, told: event.execution.commandLine.value });
      });
    });
    const reading = follow(integration.executeCommand(options.command));
    let stopped: 'timeout' | 'cancelled' | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const interrupted = new Promise<void>((resolve) => {
      const stop = (why: 'timeout' | 'cancelled'): void => {
        stopped ??= why;
        resolve();
      };
      timer = setTimeout(() => stop('timeout'), options.timeoutMs);
      if (options.signal.aborted) stop('cancelled');
      else options.signal.addEventListener('abort', () => stop('cancelled'), { once: true });
    });
    // The output stream ends with the command too: if the end event is late (or lost), its exit code is waited for briefly.
    const streamEnded = reading.then(() => Promise.race([ended, delay(END_EVENT_WAIT_MS).then(() => undefined)]));
    const end = await Promise.race([ended, streamEnded, interrupted.then(() => 'stopped' as const)]);
    clearTimeout(timer);
    if (end === 'stopped') {
      terminal.sendText('\x03', false);
      const done = await Promise.race([ended.then(() => true), delay(INTERRUPT_GRACE_MS).then(() => false)]);
      this.busy.delete(terminal);
      // A command that ignores Ctrl+C goes with its terminal; one that stopped leaves the terminal for the next.
      starts.dispose();
      if (!done) terminal.dispose();
      else this.idle.set(options.cwd, terminal);
      return { kind: stopped ?? 'cancelled' };
    }
    // Every execution seen in the terminal while it was ours is this command's: a shell may report `a; b` as two,
    // and the first one's output can still be arriving when the second one's end is told.
    await Promise.race([Promise.all(readings.values()), delay(OUTPUT_DRAIN_MS)]);
    starts.dispose();
    this.busy.delete(terminal);
    this.idle.set(options.cwd, terminal);
    // The terminal told the command as something else and nothing came back: VS Code matched what it told to no
    // execution read here, and what the command printed is on the terminal's screen only (seen before the terminal was
    // shown at creation: `*7))"; exit 3'` for `sh -c 'echo "…$((6*7))"; exit 3'`). The model is told, not shown
    // "(no output)".
    if (!printed && end && end.told.trim() !== options.command.trim()) {
      options.output.push(`[the terminal reported the command as \`${end.told}\` and returned no output: whatever the command printed is in the @keeper terminal, not here]\n`);
    }
    return { kind: 'exit', code: end?.code };
  }

  /** An idle "@keeper" terminal in `cwd` with shell integration, or undefined when none can be had. */
  private async terminalFor(cwd: string): Promise<vscode.Terminal | undefined> {
    const known = this.idle.get(cwd);
    if (known && known.exitStatus === undefined && !this.busy.has(known) && known.shellIntegration) return known;
    const terminal = vscode.window.createTerminal({ name: '@keeper', cwd, iconPath: new vscode.ThemeIcon('terminal') });
    // Shown at once, so that it is laid out at the panel's width while its shell starts: a terminal shown only as the
    // command is sent may still be 80 columns wide when the shell echoes it, and a command line that wraps there was
    // read back as its last row (`*7))"; exit 3'`), which matched no execution the runner listened to.
    terminal.show(true);
    if (terminal.shellIntegration) return terminal;
    const integrated = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        sub.dispose();
        resolve(false);
      }, INTEGRATION_WAIT_MS);
      const sub = vscode.window.onDidChangeTerminalShellIntegration((event) => {
        if (event.terminal !== terminal) return;
        clearTimeout(timer);
        sub.dispose();
        resolve(true);
      });
    });
    if (!integrated) {
      terminal.dispose();
      return undefined;
    }
    await delay(FIRST_PROMPT_SETTLE_MS);
    return terminal;
  }

  dispose(): void {
    for (const terminal of [...this.idle.values(), ...this.busy]) terminal.dispose();
    this.idle.clear();
    this.busy.clear();
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
