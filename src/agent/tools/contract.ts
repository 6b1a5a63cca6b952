/**
 * What a tool is and what it is given: the context the chat glue passes in
 * (the workspace root, the confirmation port, the turn's cancellation signal,
 * the ports to the editor, ripgrep and a terminal) and the outcome it gives
 * back.
 */
import type { CommandRunner } from './commandRunner';
import type { SeenFiles } from './seenFiles';

export interface ConfirmRequest {
  readonly kind: 'edit' | 'write' | 'run';
  /** One line, e.g. "Edit src/math.js" / "Run `npm test`". */
  readonly title: string;
  /** Workspace-relative, for edit/write. */
  readonly path?: string;
  /** The whole file before (edit; write over an existing text file). */
  readonly before?: string;
  /** The whole file after (edit/write). */
  readonly after?: string;
  /** run. */
  readonly command?: string;
  /** run: the folder, workspace-relative ('.' for the root). */
  readonly cwd?: string;
}

export interface ToolContext {
  /** Absolute workspace folder. */
  readonly root: string;
  /** The user's answer (false = declined). */
  confirm(request: ConfirmRequest): Promise<boolean>;
  /** Cancellation of the chat turn. */
  readonly signal: AbortSignal;
  /** view_tool_call: the full raw input/output of an earlier call, or undefined. */
  viewToolCall(toolCallId: string): { name: string; input: string; output: string | undefined; isError: boolean } | undefined;
  /** Optional progress line for long tools (shown in the chat). */
  progress?(message: string): void;
  /** Default 120_000, clamped to [1_000, 1_800_000]. */
  readonly commandTimeoutMs?: number;
  /** Default 100_000 (per tool result). */
  readonly maxOutputChars?: number;
  /**
   * The editor's files (VS Code): an open buffer is what is read and edited,
   * and a change goes through the editor (its undo stack). Without it, the disk.
   */
  readonly files?: FilePort;
  /**
   * VS Code's bundled ripgrep and the user's exclusions (`files.exclude`,
   * `search.exclude`): grep runs it, honouring `.gitignore` too. Without it, the
   * built-in search (no ignore files).
   */
  readonly ripgrep?: { readonly path: string; readonly excludes: readonly string[] };
  /** Runs commands where the user sees them (a terminal); without it, or when it cannot, /bin/sh in the background. */
  readonly terminal?: CommandRunner;
  /** What the model last saw of each file (a task's): edit_file refuses a file changed since. */
  readonly seen?: SeenFiles;
}

/** How edit_file and write_file reach a file the editor may have open. */
export interface FilePort {
  /** The text of the file's open buffer (unsaved changes included), or undefined when it is not open. */
  openText(file: string): Promise<string | undefined>;
  /**
   * Replaces the text `before` (what the tool read) of an existing file with
   * `after`; resolves to undefined when the text is no longer `before` (nothing
   * changed), else to a note for the model (e.g. the buffer was left unsaved).
   */
  replace(file: string, rel: string, before: string, after: string): Promise<{ note?: string } | undefined>;
  /** Creates a new file with `text` (on the editor's undo stack, and undone with the turn); resolves to false when it could not. */
  create?(file: string, rel: string, text: string): Promise<boolean>;
}

export interface ToolOutcome {
  readonly output: string;
  readonly isError: boolean;
}

export interface AgentTool {
  /** snake_case. */
  readonly name: string;
  /** What the model reads: precise, with the limits. */
  readonly description: string;
  /** JSON Schema object for the model (type 'object', properties, required, additionalProperties: false). */
  readonly inputSchema: Record<string, unknown>;
  /** Validates `input` with zod first; resolves to an error outcome rather than throwing, except on cancellation. */
  run(input: unknown, ctx: ToolContext): Promise<ToolOutcome>;
}
