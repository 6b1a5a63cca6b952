/** The port run_command runs a command through so the user sees it (a terminal), and how a terminal's output becomes text. */

/** How a command ended; `code` is undefined when the terminal could not tell. */
export type Ending = { readonly kind: 'exit'; readonly code: number | undefined; readonly signal?: string } | { readonly kind: 'timeout' } | { readonly kind: 'cancelled' };

/** CSI, OSC (shell integration's own marks included) and other escape sequences. */
const TERMINAL_ESCAPES = /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]/g;

/** A terminal's output as plain text: escape sequences removed, CRLF as LF. */
export function plainTerminalText(data: string): string {
  return data.replace(TERMINAL_ESCAPES, '').replace(/\r+\n/g, '\n');
}

/**
 * Where run_command runs a command so the user sees it (VS Code: a terminal
 * with shell integration, the user's shell and environment). It resolves to
 * undefined when it cannot run it there (no shell integration): the tool then
 * runs it itself.
 */
export interface CommandRunner {
  run(options: { readonly command: string; readonly cwd: string; readonly timeoutMs: number; readonly signal: AbortSignal; readonly output: { push(text: string): void } }): Promise<Ending | undefined>;
}
