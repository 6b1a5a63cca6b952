/**
 * The @keeper agent's own tools: read, list, find, search, edit, write, run,
 * recover an earlier call, and keep a plan.
 *
 * Plain Node (no `vscode`): the chat glue passes a `ToolContext` in — the
 * workspace root, a confirmation port for anything that changes the disk or runs
 * a command, the turn's cancellation signal and the `view_tool_call` lookup.
 * Every input is validated with zod first; every path is resolved inside the
 * workspace root (symlinks included) or refused. The names are fixed: the
 * compaction engine (`src/core/tools.ts`) recognises them and reduces their
 * outputs by family.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import type { Dirent, Stats } from 'node:fs';
import * as fs from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { Worker } from 'node:worker_threads';
import * as z from '../core/schema';
import { compileGlob, type GlobMatcher } from './glob';
import { messageOf } from '../core/errors';
import { nextTurn } from '../core/turns';

// ---------------------------------------------------------------------------
// Contract
// ---------------------------------------------------------------------------

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

/**
 * Whether a command line may run without asking: it starts with one of the
 * user's allowed prefixes (`npm test`, `git status`) as whole words, and is one
 * simple command — no `;`, `&`, `|`, redirection, substitution or newline that
 * could chain something else after the allowed part.
 */
export function allowListed(command: string, prefixes: readonly string[]): boolean {
  const line = command.trim();
  if (line === '' || /[;&|<>`\n\r]|\$\(/.test(line)) return false;
  return prefixes.some((prefix) => {
    const p = prefix.trim();
    return p !== '' && (line === p || line.startsWith(`${p} `));
  });
}

/** What the model is told when the user declines a change or a command (nothing was written or run). */
export function declinedMessage(request: Pick<ConfirmRequest, 'kind' | 'path' | 'command'>): string {
  if (request.kind === 'run') return `The user declined to run \`${clipOneLine(request.command ?? '', 120)}\`.`;
  return `The user declined the ${request.kind} to ${request.path ?? 'the file'}.`;
}

/**
 * A tool call as one line for the chat: what it does and to what ("Reading
 * src/api.ts, lines 1–80", "Running npm test"). VS Code shows it as the call's
 * line in the response; the turn's progress uses it too.
 */
export function describeToolCall(name: string, raw: unknown): string {
  const input = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const what = typeof input.path === 'string' ? input.path : typeof input.pattern === 'string' ? input.pattern : typeof input.command === 'string' ? input.command : '';
  const verb: Record<string, string> = { read_file: 'Reading', list_dir: 'Listing', glob: 'Finding files', grep: 'Searching for', edit_file: 'Editing', write_file: 'Writing', run_command: 'Running', view_tool_call: 'Recovering tool output', todo: 'Updating the plan' };
  const shown = what.length > 80 ? `${what.slice(0, 79)}…` : what;
  const from = typeof input.startLine === 'number' ? input.startLine : undefined;
  const to = typeof input.endLine === 'number' ? input.endLine : undefined;
  const lines = name === 'read_file' && (from !== undefined || to !== undefined) ? `, lines ${from ?? 1}–${to ?? 'end'}` : '';
  return `${verb[name] ?? `Calling ${name}`}${shown ? ` ${shown}` : ''}${lines}`;
}

/**
 * The change or command as the user is asked to approve it, in markdown: the
 * changed lines of an edit or an overwrite as a diff, the start of a new
 * file, a command in a shell block with its folder.
 */
export function confirmationMarkdown(request: ConfirmRequest): string {
  if (request.kind === 'run') return `\`\`\`sh\n${request.command ?? ''}\n\`\`\`\nin \`${request.cwd ?? '.'}\` of the workspace folder`;
  const fence = (body: string, lang: string): string => `\`\`\`${lang}\n${body.replace(/\`\`\`/g, '`\u200b``')}\n\`\`\``;
  if (request.before === undefined) {
    const lines = (request.after ?? '').split('\n');
    const shown = lines.slice(0, DIFF_MAX_LINES).join('\n');
    return `New file \`${request.path}\` (${plural(lines.length, 'line')}):\n${fence(lines.length > DIFF_MAX_LINES ? `${shown}\n… ${lines.length - DIFF_MAX_LINES} more lines` : shown, '')}`;
  }
  const diff = diffSummary(request.before, request.after ?? '');
  return `\`${request.path}\`: -${plural(diff.removed, 'line')} +${plural(diff.added, 'line')}\n${fence(`${diff.header}\n${diff.body}`, 'diff')}`;
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

/**
 * The version of each file the model last saw, by absolute path: taken when
 * it read the file or changed it itself. A file whose version differs when the
 * model edits it was changed meanwhile — by the user (an open buffer typed in,
 * a save), a formatter, a command — and the edit is refused with a request to
 * read it again: the model's picture of the rest of the file is stale.
 */
export class SeenFiles {
  private readonly versions = new Map<string, string>();

  get(file: string): string | undefined {
    return this.versions.get(file);
  }

  set(file: string, version: string): void {
    this.versions.set(file, version);
  }
}

/** Above this size a file's version is its size and time on disk (hashing it at every read would cost too much). */
const SEEN_HASH_MAX_BYTES = 4 * 1024 * 1024;

function textVersion(text: string): string {
  return `text:${createHash('sha256').update(text).digest('hex')}`;
}

/**
 * The version of a file's text: its hash, or for a file over
 * SEEN_HASH_MAX_BYTES on disk its size and time there (`stats`).
 */
function versionOf(text: string, stats: Stats): string {
  return stats.size > SEEN_HASH_MAX_BYTES ? diskStamp(stats) : textVersion(text);
}

function diskStamp(stats: Stats): string {
  return `disk:${stats.size}:${stats.mtimeMs}`;
}

/** The version of a file's text on disk (what read_file reads when the editor has no buffer of it). */
async function diskVersion(file: string): Promise<string | undefined> {
  const stats = await fs.stat(file).catch(() => undefined);
  if (!stats) return undefined;
  if (stats.size > SEEN_HASH_MAX_BYTES) return diskStamp(stats);
  const text = await fs.readFile(file, 'utf8').catch(() => undefined);
  return text === undefined ? undefined : textVersion(text);
}

/** Notes the version of a file the model has just read or written: `text` (a buffer read, what was written), else its text on disk; no-op without `seen`. */
async function noteSeen(ctx: ToolContext, file: string, text?: string): Promise<void> {
  if (!ctx.seen) return;
  const version = text !== undefined && Buffer.byteLength(text, 'utf8') <= SEEN_HASH_MAX_BYTES ? textVersion(text) : await diskVersion(file);
  if (version !== undefined) ctx.seen.set(file, version);
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

// ---------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------

export const DEFAULT_COMMAND_TIMEOUT_MS = 120_000;
export const MIN_COMMAND_TIMEOUT_MS = 1_000;
export const MAX_COMMAND_TIMEOUT_MS = 1_800_000;
export const DEFAULT_MAX_OUTPUT_CHARS = 100_000;
/** grep with regex: true gives up on a file after this long (a backtracking pattern never blocks the host). */
export const GREP_REGEX_FILE_MS = 5_000;
/** grep with regex: true matches at most this much of one line. */
export const GREP_REGEX_LINE_CHARS = 2_000;
/** The smallest output cap honoured: below it no result could carry its own notes. */
const MIN_MAX_OUTPUT_CHARS = 1_000;

const READ_MAX_LINES = 2_000;
const LIST_MAX_ENTRIES = 1_000;
const GLOB_MAX_PATHS = 1_000;
/** Matches collected before sorting; past it the walk stops and says so. */
const GLOB_MAX_COLLECTED = 50_000;
const GREP_DEFAULT_RESULTS = 200;
const GREP_MAX_RESULTS = 2_000;
const GREP_MAX_FILE_BYTES = 2 * 1024 * 1024;
const GREP_LINE_CHARS = 300;
/** Bytes examined for a NUL to call a file binary. */
const BINARY_PROBE_BYTES = 8_192;
/** Grace after SIGTERM before the process group gets SIGKILL. */
const KILL_GRACE_MS = 2_000;
/** How long a finished command's pipes may stay open (held by a background process) before they are closed. */
const PIPE_DRAIN_MS = 1_000;
const PROGRESS_EVERY_MS = 10_000;
const DIFF_MAX_LINES = 20;
/** Directories no walk enters unless the pattern names them. */
const SKIPPED_DIRS: readonly string[] = ['.git', 'node_modules'];

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/** An expected failure: its message is the whole tool output. */
class ToolError extends Error {
  override readonly name = 'ToolError';
}

/** The rejection of a cancelled call; `outcome` is what the tool had when it stopped, if anything. */
interface AbortErrorWithOutcome extends Error {
  outcome?: ToolOutcome;
}

function abortError(outcome?: ToolOutcome): AbortErrorWithOutcome {
  const error: AbortErrorWithOutcome = new Error('The tool call was cancelled.');
  error.name = 'AbortError';
  if (outcome !== undefined) error.outcome = outcome;
  return error;
}

function isAbortError(error: unknown): error is AbortErrorWithOutcome {
  return error instanceof Error && error.name === 'AbortError';
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortError();
}

/** The user's answer; cancelling the turn while the question is open rejects with an AbortError at once. */
async function askUser(ctx: ToolContext, request: ConfirmRequest): Promise<boolean> {
  throwIfAborted(ctx.signal);
  let onAbort = (): void => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortError());
    ctx.signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return (await Promise.race([ctx.confirm(request), aborted])) === true;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function describeError(tool: string, error: unknown): string {
  if (error instanceof ToolError) return error.message;
  return `${tool} failed: ${messageOf(error)}`;
}

// ---------------------------------------------------------------------------
// Tool definition, validation, dispatch
// ---------------------------------------------------------------------------

interface ToolSpec<S extends z.ZodMiniType> {
  readonly name: string;
  readonly description: string;
  /** Builds the input schema: called once, when the tool is first offered or run (not while the extension activates). */
  readonly schema: () => S;
  readonly run: (input: z.output<S>, ctx: ToolContext) => Promise<ToolOutcome>;
}

function defineTool<S extends z.ZodMiniType>(spec: ToolSpec<S>): AgentTool {
  let schema: S | undefined;
  let json: Record<string, unknown> | undefined;
  const built = (): S => (schema ??= spec.schema());
  const inputSchema = (): Record<string, unknown> => (json ??= modelSchema(built()));
  return {
    name: spec.name,
    description: spec.description,
    get inputSchema(): Record<string, unknown> {
      return inputSchema();
    },
    run: async (input, ctx) => {
      throwIfAborted(ctx.signal);
      const parsed = built().safeParse(input);
      if (!parsed.success) {
        const problems = parsed.error.issues.map((issue) => `- ${describeIssue(issue, input, inputSchema())}`);
        return { isError: true, output: `Invalid input for ${spec.name}:\n${problems.join('\n')}` };
      }
      let outcome: ToolOutcome;
      try {
        outcome = await spec.run(parsed.data, ctx);
      } catch (error) {
        if (ctx.signal.aborted) throw isAbortError(error) ? error : abortError();
        return { isError: true, output: describeError(spec.name, error) };
      }
      if (ctx.signal.aborted) throw abortError(outcome);
      const max = maxOutputChars(ctx);
      return outcome.output.length <= max ? outcome : { ...outcome, output: clipMiddle(outcome.output, max, 'result') };
    },
  };
}

/** The JSON Schema the model reads, derived from the zod schema (no `$schema`, no safe-integer noise, `required` always present). */
function modelSchema(schema: z.ZodMiniType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  if (!Array.isArray(json.required)) json.required = [];
  const strip = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(strip);
    if (node === null || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    if (record.maximum === Number.MAX_SAFE_INTEGER) delete record.maximum;
    if (record.minimum === Number.MIN_SAFE_INTEGER) delete record.minimum;
    Object.values(record).forEach(strip);
  };
  strip(json);
  return json;
}

type Issue = z.core.$ZodIssue;

/** One sentence per problem, naming the field (`todos[1].status`). */
function describeIssue(issue: Issue, input: unknown, schema: Record<string, unknown>): string {
  const issuePath = issue.path as readonly PropertyKey[];
  const field = fieldName(issuePath);
  const value = valueAt(input, issuePath);
  switch (issue.code) {
    case 'invalid_type': {
      if (issuePath.length === 0) return `The input must be a JSON object, but got ${typeName(input)}.`;
      if (value === undefined) return `Missing required field "${field}" (${typeNoun(issue.expected)}).`;
      return `Field "${field}" must be ${typeNoun(issue.expected)}, but got ${typeName(value)}.`;
    }
    case 'unrecognized_keys': {
      const keys = issue.keys.map((key) => `"${fieldName([...issuePath, key])}"`).join(', ');
      const allowed = Object.keys(propertiesAt(schema, issuePath));
      const known = allowed.length > 0 ? ` (known fields: ${allowed.join(', ')})` : '';
      return `Unknown field${issue.keys.length === 1 ? '' : 's'} ${keys}${known}.`;
    }
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'string') {
        return min <= 1 ? `Field "${field}" must not be empty.` : `Field "${field}" must have at least ${min} characters.`;
      }
      if (issue.origin === 'array') return `Field "${field}" must have at least ${min} item${min === 1 ? '' : 's'}.`;
      return `Field "${field}" must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${min}, but got ${show(value)}.`;
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'string') return `Field "${field}" must have at most ${max} characters.`;
      if (issue.origin === 'array') return `Field "${field}" must have at most ${max} item${max === 1 ? '' : 's'}.`;
      return `Field "${field}" must be ${issue.inclusive === false ? 'less than' : 'at most'} ${max}, but got ${show(value)}.`;
    }
    case 'invalid_value':
      return `Field "${field}" must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, but got ${show(value)}.`;
    case 'custom':
      return issue.message;
    default:
      return `Field "${field || '(input)'}": ${issue.message}.`;
  }
}

function fieldName(keys: readonly PropertyKey[]): string {
  let out = '';
  for (const key of keys) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

function valueAt(input: unknown, keys: readonly PropertyKey[]): unknown {
  let node: unknown = input;
  for (const key of keys) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

function propertiesAt(schema: Record<string, unknown>, keys: readonly PropertyKey[]): Record<string, unknown> {
  let node: unknown = schema;
  for (const key of keys) {
    const record = node as Record<string, unknown> | undefined;
    node = typeof key === 'number' ? record?.items : (record?.properties as Record<string, unknown> | undefined)?.[String(key)];
  }
  const properties = (node as Record<string, unknown> | undefined)?.properties;
  return properties !== null && typeof properties === 'object' ? (properties as Record<string, unknown>) : {};
}

function typeNoun(expected: string): string {
  switch (expected) {
    case 'int':
      return 'a whole number';
    case 'array':
    case 'object':
    case 'integer':
      return `an ${expected}`;
    default:
      return `a ${expected}`;
  }
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return `the number ${value}`;
  if (typeof value === 'string') return `the string ${clipOneLine(JSON.stringify(value), 60)}`;
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  try {
    return clipOneLine(JSON.stringify(value) ?? String(value), 60);
  } catch {
    return String(value);
  }
}

/** Dispatch by name. Never throws except when `ctx.signal` is aborted (an Error named 'AbortError'). */
export async function runTool(name: string, input: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  throwIfAborted(ctx.signal);
  const tool = TOOLS_BY_NAME.get(name);
  if (tool === undefined) {
    return {
      isError: true,
      output: `Unknown tool ${JSON.stringify(String(name))}. The tools are: ${AGENT_TOOLS.map((t) => t.name).join(', ')}.`,
    };
  }
  try {
    return await tool.run(input, ctx);
  } catch (error) {
    if (ctx.signal.aborted) throw isAbortError(error) ? error : abortError();
    return { isError: true, output: describeError(name, error) };
  }
}

// ---------------------------------------------------------------------------
// Settings and text helpers
// ---------------------------------------------------------------------------

function maxOutputChars(ctx: ToolContext): number {
  const value = ctx.maxOutputChars;
  if (value === undefined || !Number.isFinite(value)) return DEFAULT_MAX_OUTPUT_CHARS;
  return Math.max(MIN_MAX_OUTPUT_CHARS, Math.floor(value));
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

function clipOneLine(text: string, max: number): string {
  const line = text.replace(/\s*[\r\n]+\s*/g, ' ');
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

function countLines(text: string): number {
  if (text === '') return 0;
  let n = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) n++;
  return text.endsWith('\n') ? n : n + 1;
}

function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

function hasNul(buffer: Buffer): boolean {
  return buffer.subarray(0, BINARY_PROBE_BYTES).includes(0);
}

/**
 * Keeps the first `headMax` and the last `tailMax` characters of a stream,
 * never more than about `headMax + 2·tailMax` in memory, and renders them with
 * a marker saying how many characters were cut.
 */
class HeadTailBuffer {
  private head = '';
  private tail = '';
  private total = 0;

  constructor(
    private readonly headMax: number,
    private readonly tailMax: number,
  ) {}

  get length(): number {
    return this.total;
  }

  push(text: string): void {
    if (text === '') return;
    this.total += text.length;
    if (this.head.length < this.headMax) {
      const room = this.headMax - this.head.length;
      if (text.length <= room) {
        this.head += text;
        return;
      }
      this.head += text.slice(0, room);
      text = text.slice(room);
    }
    this.tail += text;
    if (this.tail.length > 2 * this.tailMax) this.tail = this.tail.slice(-this.tailMax);
  }

  render(what: string): string {
    if (this.total <= this.headMax + this.tailMax) return this.head + this.tail;
    let head = this.head;
    let tail = this.tail.slice(-this.tailMax);
    // Cut at line boundaries when one is near, and never inside a surrogate pair.
    const headBreak = head.lastIndexOf('\n');
    if (headBreak >= head.length * 0.8) head = head.slice(0, headBreak + 1);
    const tailBreak = tail.indexOf('\n');
    if (tailBreak !== -1 && tailBreak < tail.length * 0.2) tail = tail.slice(tailBreak + 1);
    if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
    if (/^[\uDC00-\uDFFF]/.test(tail)) tail = tail.slice(1);
    const cut = this.total - head.length - tail.length;
    return `${head}${head.endsWith('\n') || head === '' ? '' : '\n'}[... ${cut} characters cut from the middle of the ${what} ...]\n${tail}`;
  }
}

/** Room kept for the marker and the tool's own closing note when a text is clipped. */
const CLIP_RESERVE = 200;

function headTailBuffer(max: number): HeadTailBuffer {
  const budget = Math.max(100, max - CLIP_RESERVE);
  const head = Math.floor(budget * 0.4);
  return new HeadTailBuffer(head, budget - head);
}

/** `text` itself when it fits in `max`, else its head and tail with a marker. */
function clipMiddle(text: string, max: number, what: string): string {
  if (text.length <= max) return text;
  const buffer = headTailBuffer(max);
  buffer.push(text);
  return buffer.render(what);
}

// ---------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------

interface Target {
  /** Workspace-relative, forward slashes, '.' for the root: what outputs show. */
  readonly rel: string;
  /** The real path every file operation uses (symlinks resolved, checked inside the root). */
  readonly real: string;
}

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

function toPosix(rel: string): string {
  return rel === '' ? '.' : rel.split(path.sep).join('/');
}

function outside(given: string, ctx: ToolContext): ToolError {
  return new ToolError(`${given} is outside the workspace folder ${ctx.root}; refused`);
}

/**
 * Resolve `given` (workspace-relative, or absolute inside the root) to a path
 * inside the root, following symlinks: anything that lands outside is refused.
 * The file itself need not exist (write_file); its nearest existing ancestor is
 * what gets checked.
 */
async function resolveInside(ctx: ToolContext, given: string): Promise<Target> {
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
async function statTarget(target: Target): Promise<Stats> {
  try {
    return await fs.stat(target.real);
  } catch (error) {
    throw fsProblem(target.rel, error);
  }
}

function fsProblem(rel: string, error: unknown): unknown {
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

async function isBinaryFile(file: string): Promise<boolean> {
  const handle = await fs.open(file, 'r');
  try {
    const probe = Buffer.alloc(BINARY_PROBE_BYTES);
    const { bytesRead } = await handle.read(probe, 0, BINARY_PROBE_BYTES, 0);
    return hasNul(probe.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

/** Write through a temp file in the same folder, fsync'd and renamed over `file`. */
async function writeAtomic(file: string, content: string, mode: number | undefined): Promise<void> {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await fs.open(temp, 'wx', mode ?? 0o666);
  try {
    try {
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (mode !== undefined) await fs.chmod(temp, mode);
    await fs.rename(temp, file);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
}

// ---------------------------------------------------------------------------
// Walking (glob, grep)
// ---------------------------------------------------------------------------

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
async function walk(baseReal: string, options: WalkOptions, relDir = ''): Promise<boolean> {
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

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function joinRel(base: string, rel: string): string {
  return base === '.' ? rel : `${base}/${rel}`;
}

// ---------------------------------------------------------------------------
// read_file
// ---------------------------------------------------------------------------

const pathField = z.described(z.string().check(z.minLength(1)), 'File path, workspace-relative (e.g. "src/index.ts") or absolute inside the workspace folder.');

const readFileSchema = () =>
  z
    .strictObject({
      path: pathField,
      startLine: z.described(z.optional(z.int().check(z.minimum(1))), 'First line to show, 1-based (default 1).'),
      endLine: z.described(z.optional(z.int().check(z.minimum(1))), 'Last line to show, 1-based inclusive (default: the end of the file, within the limits).'),
    })
    .check(
      z.superRefine((input, context) => {
        if (input.startLine !== undefined && input.endLine !== undefined && input.endLine < input.startLine) {
          context.addIssue({
            code: 'custom',
            path: ['endLine'],
            message: `Field "endLine" (${input.endLine}) must not be less than startLine (${input.startLine}).`,
          });
        }
      }),
    );

interface LineWindow {
  readonly lines: string[];
  readonly total: number;
  /** Why the window ended before `to`: a limit, with the next line to read. */
  readonly stoppedAt?: { readonly next: number; readonly why: string };
  readonly clippedLine?: number;
}

/**
 * Stream the file once: collect lines `from..to` formatted `  12| text` within
 * `maxLines` and `budget` characters, and count every line. Memory stays within
 * the budget whatever the file's size or line lengths.
 */
async function readLineWindow(source: string | { readonly text: string }, from: number, to: number, budget: number, signal: AbortSignal): Promise<LineWindow> {
  const lastWanted = Math.min(to, from + READ_MAX_LINES - 1);
  const width = Math.max(4, String(lastWanted).length);
  const lines: string[] = [];
  let used = 0;
  let lineNo = 0;
  let current = '';
  let currentLength = 0;
  let stoppedAt: { next: number; why: string } | undefined;
  let clippedLine: number | undefined;
  let done = false; // the window is complete (reached `to` or a limit)

  const wanted = (n: number): boolean => !done && n >= from && n <= to;
  const complete = (n: number): void => {
    if (!wanted(n)) return;
    const text = current.endsWith('\r') ? current.slice(0, -1) : current;
    let formatted = `${String(n).padStart(width)}| ${text}`;
    if (lines.length >= READ_MAX_LINES) {
      stoppedAt = { next: n, why: `the ${READ_MAX_LINES}-line limit` };
      done = true;
      return;
    }
    if (used + formatted.length + 1 > budget || currentLength > budget) {
      if (lines.length > 0) {
        stoppedAt = { next: n, why: `the ${budget}-character limit` };
        done = true;
        return;
      }
      formatted = `${formatted.slice(0, Math.max(0, budget - 40))} … [line clipped]`;
      clippedLine = n;
      lines.push(formatted);
      stoppedAt = n < to ? { next: n + 1, why: `the ${budget}-character limit` } : undefined;
      done = true;
      return;
    }
    lines.push(formatted);
    used += formatted.length + 1;
    if (n >= to) done = true;
  };
  const consume = (text: string): void => {
    let at = 0;
    for (;;) {
      const newline = text.indexOf('\n', at);
      const end = newline === -1 ? text.length : newline;
      if (wanted(lineNo + 1) && current.length <= budget) current += text.slice(at, Math.min(end, at + budget + 1 - current.length));
      currentLength += end - at;
      if (newline === -1) return;
      lineNo++;
      complete(lineNo);
      current = '';
      currentLength = 0;
      at = newline + 1;
    }
  };

  if (typeof source !== 'string') consume(source.text);
  else {
    const decoder = new StringDecoder('utf8');
    const stream = (await fs.open(source, 'r')).createReadStream({ highWaterMark: 1 << 16 });
    try {
      for await (const chunk of stream) {
        if (signal.aborted) throw abortError();
        consume(decoder.write(chunk as Buffer));
      }
    } finally {
      stream.destroy();
    }
    consume(decoder.end());
  }
  if (currentLength > 0) {
    lineNo++;
    complete(lineNo);
  }
  return { lines, total: lineNo, ...(stoppedAt ? { stoppedAt } : {}), ...(clippedLine !== undefined ? { clippedLine } : {}) };
}

const readFileTool = defineTool({
  name: 'read_file',
  description:
    'Read a text file (UTF-8). Each line is prefixed with its 1-based number ("  12| text"); a closing note gives the range shown and the total line count. ' +
    `At most ${READ_MAX_LINES} lines and the result size limit (100,000 characters by default) per call: when the file is longer, the note says which startLine to pass next. ` +
    'Use startLine/endLine (inclusive) to read part of a large file. Binary files (a NUL byte in the first 8 KB) and folders are refused; use list_dir for folders.',
  schema: readFileSchema,
  run: async (input, ctx) => {
    const target = await resolveInside(ctx, input.path);
    const stats = await statTarget(target);
    if (stats.isDirectory()) throw new ToolError(`${target.rel} is a folder, not a file; use list_dir to see what it holds`);
    if (!stats.isFile()) throw new ToolError(`${target.rel} is not a regular file`);
    if (await isBinaryFile(target.real)) throw new ToolError(`${target.rel} is a binary file (${stats.size} bytes); not shown`);
    const from = input.startLine ?? 1;
    const to = input.endLine ?? Number.MAX_SAFE_INTEGER;
    const budget = Math.max(200, maxOutputChars(ctx) - CLIP_RESERVE);
    // An open buffer is what the user sees, unsaved changes included: it is what is read (and what edit_file changes).
    const open = await ctx.files?.openText(target.real).catch(() => undefined);
    const window = await readLineWindow(open !== undefined ? { text: open } : target.real, from, to, budget, ctx.signal);
    if (window.total === 0) return { isError: false, output: `[${target.rel} is empty: 0 lines]` };
    if (from > window.total) {
      throw new ToolError(`startLine ${from} is past the end of ${target.rel}, which has ${plural(window.total, 'line')}`);
    }
    const last = from + window.lines.length - 1;
    let note: string;
    if (window.stoppedAt !== undefined && window.stoppedAt.next <= Math.min(to, window.total)) {
      note =
        `[lines ${from}-${last} of ${window.total} shown (${window.stoppedAt.why}); ` +
        `to read further, call read_file with startLine ${window.stoppedAt.next}]`;
    } else {
      note = `[lines ${from}-${last} of ${window.total}${last >= window.total ? '; end of file' : ''}]`;
    }
    if (window.clippedLine !== undefined) note += `\n[line ${window.clippedLine} is longer than the limit and was clipped]`;
    await noteSeen(ctx, target.real, open);
    return { isError: false, output: `${window.lines.join('\n')}\n${note}` };
  },
});

// ---------------------------------------------------------------------------
// list_dir
// ---------------------------------------------------------------------------

const listDirTool = defineTool({
  name: 'list_dir',
  description:
    'List a folder (default: the workspace root), entries sorted by name: folders end with "/", files show their size in bytes, symbolic links show their target. ' +
    `At most ${LIST_MAX_ENTRIES} entries; a note says how many were left out. Not recursive: use glob to find files in subfolders.`,
  schema: () =>
    z.strictObject({
      path: z.described(z._default(z.string().check(z.minLength(1)), '.'), 'Folder path, workspace-relative or absolute inside the workspace folder (default ".").'),
    }),
  run: async (input, ctx) => {
    const target = await resolveInside(ctx, input.path);
    const stats = await statTarget(target);
    if (!stats.isDirectory()) throw new ToolError(`${target.rel} is a file, not a folder; use read_file to read it`);
    let entries: Dirent[];
    try {
      entries = await fs.readdir(target.real, { withFileTypes: true });
    } catch (error) {
      throw fsProblem(target.rel, error);
    }
    entries.sort((a, b) => compareNames(a.name, b.name));
    const shown = entries.slice(0, LIST_MAX_ENTRIES);
    const lines: string[] = [];
    for (const entry of shown) {
      throwIfAborted(ctx.signal);
      const abs = path.join(target.real, entry.name);
      if (entry.isDirectory()) {
        lines.push(`${entry.name}/`);
      } else if (entry.isSymbolicLink()) {
        const link = await fs.readlink(abs).catch(() => '?');
        const pointee = await fs.stat(abs).catch(() => undefined);
        lines.push(`${entry.name}${pointee?.isDirectory() === true ? '/' : ''} -> ${link}${pointee === undefined ? ' (broken)' : ''}`);
      } else {
        const size = await fs.lstat(abs).then((s) => s.size, () => undefined);
        lines.push(size === undefined ? entry.name : `${entry.name} (${size} bytes)`);
      }
    }
    const shownDir = target.rel === '.' ? './' : `${target.rel}/`;
    if (entries.length === 0) return { isError: false, output: `${shownDir} is empty` };
    if (entries.length > shown.length) {
      lines.push(`[${shown.length} of ${entries.length} entries shown; list a subfolder or use glob to narrow]`);
    }
    return { isError: false, output: lines.join('\n') };
  },
});

// ---------------------------------------------------------------------------
// glob
// ---------------------------------------------------------------------------

/** Skip .git / node_modules unless the matcher names them. */
function skipsDir(name: string, matcher: GlobMatcher | undefined): boolean {
  return SKIPPED_DIRS.includes(name) && matcher?.names(name) !== true;
}

function compileOrRefuse(pattern: string, field: string, matchBase: boolean): GlobMatcher {
  if (pattern.split(/[\\/]/).includes('..')) {
    throw new ToolError(`The ${field} pattern may not contain ".." segments; pass a folder in "path" instead`);
  }
  try {
    return compileGlob(pattern, { matchBase });
  } catch (error) {
    throw new ToolError(`Invalid ${field} pattern ${JSON.stringify(pattern)}: ${messageOf(error)}`);
  }
}

const globTool = defineTool({
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

// ---------------------------------------------------------------------------
// grep
// ---------------------------------------------------------------------------

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The line clipped to GREP_LINE_CHARS, keeping the match in view. */
function clipMatchLine(line: string, matchAt: number): string {
  if (line.length <= GREP_LINE_CHARS) return line;
  const start = matchAt + 100 > GREP_LINE_CHARS ? Math.max(0, matchAt - 100) : 0;
  const end = Math.min(line.length, start + GREP_LINE_CHARS);
  return `${start > 0 ? '…' : ''}${line.slice(start, end)}${end < line.length ? '…' : ''}`;
}


// ---------------------------------------------------------------------------
// Regular expressions from the model run in a worker thread with a deadline:
// JavaScript regular expressions cannot be interrupted, and a backtracking
// pattern ("(x+x+)+y") on the extension host's thread would freeze every
// extension. The worker splits lines exactly as the literal path does.
// ---------------------------------------------------------------------------

const REGEX_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const re = new RegExp(workerData.source, workerData.flags);
parentPort.on('message', (text) => {
  const hits = [];
  let lineNo = 0;
  for (let at = 0; at < text.length; ) {
    const newline = text.indexOf('\\n', at);
    const end = newline === -1 ? text.length : newline;
    lineNo++;
    let line = text.slice(at, end);
    if (line.endsWith('\\r')) line = line.slice(0, -1);
    at = end + 1;
    const m = re.exec(line.length > workerData.cap ? line.slice(0, workerData.cap) : line);
    if (m !== null) hits.push([lineNo, m.index]);
  }
  parentPort.postMessage(hits);
});
`;

class RegexScanner {
  private worker: Worker | undefined;

  constructor(private readonly source: string, private readonly flags: string) {}

  /** Line number → index of the first match, for every matching line of `text`. */
  scan(text: string, file: string): Promise<Map<number, number>> {
    const worker = (this.worker ??= new Worker(REGEX_WORKER_SOURCE, { eval: true, workerData: { source: this.source, flags: this.flags, cap: GREP_REGEX_LINE_CHARS } }));
    return new Promise((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
      };
      const onMessage = (hits: [number, number][]): void => {
        done();
        resolve(new Map(hits));
      };
      const onError = (error: Error): void => {
        done();
        this.worker = undefined;
        reject(new ToolError(`The regular expression failed on ${file}: ${error.message}`));
      };
      const timer = setTimeout(() => {
        done();
        this.dispose();
        reject(new ToolError(`The regular expression took over ${GREP_REGEX_FILE_MS / 1000} s on ${file} and was stopped (catastrophic backtracking?): simplify it, or search literally (regex: false).`));
      }, GREP_REGEX_FILE_MS);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.postMessage(text);
    });
  }

  dispose(): void {
    void this.worker?.terminate();
    this.worker = undefined;
  }
}

const grepTool = defineTool({
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

/**
 * The files under `dir` (paths relative to it, forward slashes) as ripgrep
 * lists them: hidden ones included, `.git`, `node_modules` (unless `named`) and
 * what `.gitignore` and the user's excludes leave out skipped. Undefined when
 * ripgrep fails (the caller walks the folder itself).
 */
function ripgrepFiles(rg: { readonly path: string; readonly excludes: readonly string[] }, dir: string, named: (dir: string) => boolean, signal: AbortSignal): Promise<string[] | undefined> {
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
async function grepWithRipgrep(
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

// ---------------------------------------------------------------------------
// edit_file
// ---------------------------------------------------------------------------

function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) found.push(at);
  return found;
}

function replaceAt(text: string, positions: readonly number[], oldLength: number, replacement: string): string {
  let out = '';
  let from = 0;
  for (const at of positions) {
    out += text.slice(from, at) + replacement;
    from = at + oldLength;
  }
  return out + text.slice(from);
}

/**
 * A one-hunk unified-style summary: the first to the last changed line, with
 * at most DIFF_MAX_LINES removed and added lines shown.
 */
function diffSummary(before: string, after: string): { header: string; body: string; removed: number; added: number } {
  const a = before.split('\n');
  const b = after.split('\n');
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  const removed = a.slice(prefix, a.length - suffix);
  const added = b.slice(prefix, b.length - suffix);
  const side = (lines: string[], sign: string): string[] => {
    const shown = lines.slice(0, DIFF_MAX_LINES).map((line) => `${sign}${clipOneLine(line.replace(/\r$/, ''), GREP_LINE_CHARS)}`);
    if (lines.length > DIFF_MAX_LINES) shown.push(`${sign}… ${lines.length - DIFF_MAX_LINES} more lines`);
    return shown;
  };
  const header = `@@ -${prefix + 1},${removed.length} +${prefix + 1},${added.length} @@`;
  return { header, body: [...side(removed, '-'), ...side(added, '+')].join('\n'), removed: removed.length, added: added.length };
}

/** 'crlf' when every line break is CRLF, 'lf' when none is, 'mixed' otherwise. */
function lineEndings(text: string): 'crlf' | 'lf' | 'mixed' {
  const crlf = text.split('\r\n').length - 1;
  if (crlf === 0) return 'lf';
  const lf = text.split('\n').length - 1;
  return crlf === lf ? 'crlf' : 'mixed';
}

async function readTextForChange(target: Target): Promise<{ text: string; stats: Stats }> {
  const stats = await statTarget(target);
  if (stats.isDirectory()) throw new ToolError(`${target.rel} is a folder, not a file`);
  if (!stats.isFile()) throw new ToolError(`${target.rel} is not a regular file`);
  let buffer: Buffer;
  try {
    buffer = await fs.readFile(target.real);
  } catch (error) {
    throw fsProblem(target.rel, error);
  }
  if (hasNul(buffer)) throw new ToolError(`${target.rel} is a binary file (${buffer.length} bytes); not edited`);
  return { text: buffer.toString('utf8'), stats };
}

const editFileTool = defineTool({
  name: 'edit_file',
  description:
    'Replace text in an existing file. oldText must match the file exactly (whitespace and indentation included) and occur exactly once, unless replaceAll is true; ' +
    'include enough surrounding lines to make it unique. Line endings are handled for you: the file keeps its own (LF or CRLF). ' +
    'The user is asked to approve the change; if they decline, nothing is written. A file that changed since you last read it (the user, a formatter or a command changed it) is refused: read it again first. ' +
    'Returns a short summary of the changed lines. To create a file or rewrite it whole, use write_file.',
  schema: () =>
    z.strictObject({
      path: pathField,
      oldText: z.described(z.string().check(z.minLength(1)), 'The exact text to replace (read the file first).'),
      newText: z.described(z.string(), 'The replacement text (may be empty to delete).'),
      replaceAll: z.described(z._default(z.boolean(), false), 'Replace every occurrence instead of requiring exactly one (default false).'),
    }),
  run: async (input, ctx) => {
    const target = await resolveInside(ctx, input.path);
    const { text: before, stats } = await readTextForChange(target);
    // An open buffer is what the user sees: its text (unsaved changes included) is what is edited.
    const open = await ctx.files?.openText(target.real);
    const current = open ?? before;
    const seen = ctx.seen?.get(target.real);
    if (seen !== undefined && seen !== versionOf(current, stats)) {
      throw new ToolError(`${target.rel} changed since you last read it (the user, a formatter or a command changed it); nothing was written. Read it again, then edit it.`);
    }
    return editText(input, ctx, target, current, stats.mode & 0o7777);
  },
});

async function editText(input: { path: string; oldText: string; newText: string; replaceAll: boolean }, ctx: ToolContext, target: Target, before: string, mode: number): Promise<ToolOutcome> {
  {
    const endings = lineEndings(before);
    const normalize = (text: string): string => (endings === 'mixed' ? text : text.replace(/\r\n/g, '\n'));
    const work = normalize(before);
    const oldText = normalize(input.oldText);
    const newText = normalize(input.newText);
    if (oldText === newText) throw new ToolError('oldText and newText are the same; nothing to change');
    const positions = occurrences(work, oldText);
    if (positions.length === 0) {
      throw new ToolError(
        `oldText not found in ${target.rel}. It must match the file exactly, whitespace and indentation included; read the file again and copy the text.`,
      );
    }
    if (positions.length > 1 && !input.replaceAll) {
      throw new ToolError(
        `oldText found ${positions.length} times in ${target.rel}; give more context (surrounding lines) so it matches once, or set replaceAll to true.`,
      );
    }
    const changed = replaceAt(work, positions, oldText.length, newText);
    const after = endings === 'crlf' ? changed.replace(/\n/g, '\r\n') : changed;
    const approved = await askUser(ctx, { kind: 'edit', title: `Edit ${target.rel}`, path: target.rel, before, after });
    if (!approved) return { isError: true, output: declinedMessage({ kind: 'edit', path: target.rel }) };
    const note = await replaceText(ctx, target, before, after, mode);
    await noteSeen(ctx, target.real, after);
    const diff = diffSummary(work, changed);
    const count = positions.length === 1 ? '1 replacement' : `${positions.length} replacements`;
    return {
      isError: false,
      output: `Edited ${target.rel}: ${count}, -${plural(diff.removed, 'line')} +${plural(diff.added, 'line')}${note ? ` (${note})` : ''}\n${diff.header}\n${diff.body}`,
    };
  }
}

/**
 * Replaces an existing file's text `before` with `after`: through the editor
 * when there is one (its undo stack, an open buffer), else atomically on disk.
 * A file whose text changed while the change waited is left alone (an error the
 * model reads). Returns the editor's note, if any.
 */
async function replaceText(ctx: ToolContext, target: Target, before: string, after: string, mode: number | undefined): Promise<string | undefined> {
  const changedMeanwhile = new ToolError(`${target.rel} changed while the change waited for approval; nothing was written. Read it again and retry.`);
  if (ctx.files) {
    const done = await ctx.files.replace(target.real, target.rel, before, after);
    if (!done) throw changedMeanwhile;
    return done.note;
  }
  const current = await fs.readFile(target.real, 'utf8').catch(() => undefined);
  if (current !== before) throw changedMeanwhile;
  await writeAtomic(target.real, after, mode);
  return undefined;
}

// ---------------------------------------------------------------------------
// write_file
// ---------------------------------------------------------------------------

const writeFileTool = defineTool({
  name: 'write_file',
  description:
    'Create a file, or replace an existing file\'s whole content, with the given UTF-8 text; missing parent folders are created. ' +
    'The user is asked to approve the write; if they decline, nothing is written. Reports whether the file was created or overwritten and its size. ' +
    'For a small change to an existing file prefer edit_file.',
  schema: () =>
    z.strictObject({
      path: pathField,
      content: z.described(z.string(), 'The whole new content of the file.'),
    }),
  run: async (input, ctx) => {
    const target = await resolveInside(ctx, input.path);
    let existing: { text: string | undefined; bytes: number; mode: number } | undefined;
    try {
      const stats = await fs.stat(target.real);
      if (stats.isDirectory()) throw new ToolError(`${target.rel} is a folder; give a file path`);
      if (!stats.isFile()) throw new ToolError(`${target.rel} is not a regular file`);
      const buffer = await fs.readFile(target.real);
      const open = hasNul(buffer) ? undefined : await ctx.files?.openText(target.real);
      existing = { text: open ?? (hasNul(buffer) ? undefined : buffer.toString('utf8')), bytes: buffer.length, mode: stats.mode & 0o7777 };
    } catch (error) {
      if (error instanceof ToolError) throw error;
      const code = errnoCode(error);
      if (code === 'ENOTDIR') throw new ToolError(`${target.rel} cannot be created: a parent of it is a file`);
      if (code !== 'ENOENT') throw fsProblem(target.rel, error);
    }
    const request: ConfirmRequest = {
      kind: 'write',
      title: `${existing === undefined ? 'Create' : 'Overwrite'} ${target.rel}`,
      path: target.rel,
      ...(existing?.text !== undefined ? { before: existing.text } : {}),
      after: input.content,
    };
    const approved = await askUser(ctx, request);
    if (!approved) return { isError: true, output: declinedMessage(request) };
    let note: string | undefined;
    if (existing?.text !== undefined) note = await replaceText(ctx, target, existing.text, input.content, existing.mode);
    else {
      await fs.mkdir(path.dirname(target.real), { recursive: true });
      // Through the editor when there is one (the new file can be undone); on disk otherwise.
      if (!(existing === undefined && (await ctx.files?.create?.(target.real, target.rel, input.content)))) await writeAtomic(target.real, input.content, existing?.mode);
    }
    // The model wrote it whole: it knows this version.
    await noteSeen(ctx, target.real, input.content);
    const bytes = Buffer.byteLength(input.content, 'utf8');
    const size = `${bytes} bytes, ${plural(countLines(input.content), 'line')}`;
    const noted = note ? ` (${note})` : '';
    return {
      isError: false,
      output: existing === undefined ? `Created ${target.rel} (${size}).` : `Overwrote ${target.rel} (${size}; was ${existing.bytes} bytes)${noted}.`,
    };
  },
});

// ---------------------------------------------------------------------------
// run_command
// ---------------------------------------------------------------------------

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
function execute(options: RunOptions): Promise<Ending> {
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

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1);
}

const runCommandTool = defineTool({
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

// ---------------------------------------------------------------------------
// view_tool_call
// ---------------------------------------------------------------------------

const viewToolCallTool = defineTool({
  name: 'view_tool_call',
  description:
    'Show the full input and output of an earlier tool call of this session, by its id: the way back to anything the context shows shortened or folded (the pointer view_tool_call("<id>")). ' +
    'Long texts are clipped to the result limit (100,000 characters by default), keeping their beginning and end.',
  schema: () =>
    z.strictObject({
      toolCallId: z.described(z.string().check(z.minLength(1)), 'The id of the earlier tool call, as given in view_tool_call("<id>").'),
    }),
  run: async (input, ctx) => {
    const call = ctx.viewToolCall(input.toolCallId);
    if (call === undefined) throw new ToolError(`No tool call with id ${JSON.stringify(input.toolCallId)} in this session`);
    return { isError: false, output: formatToolCallView(input.toolCallId, call, maxOutputChars(ctx)) };
  },
});

/** A recorded tool call in full (clipped to `max` characters, keeping its beginning and end): what view_tool_call returns. */
export function formatToolCallView(id: string, call: { name: string; input: string; output: string | undefined; isError: boolean }, max = DEFAULT_MAX_OUTPUT_CHARS): string {
  const text = `Tool call ${id}: ${call.name}${call.isError ? ' (failed)' : ''}\n` + `Input:\n${call.input}\n` + `Output:\n${call.output ?? '(no output recorded)'}`;
  if (text.length <= max) return text;
  return `${clipMiddle(text, max - 100, 'tool call')}\n[clipped: the full text has ${text.length} characters]`;
}

// ---------------------------------------------------------------------------
// todo
// ---------------------------------------------------------------------------

const TODO_MARKS = { completed: '[x]', in_progress: '[~]', pending: '[ ]' } as const;

const todoTool = defineTool({
  name: 'todo',
  description:
    'Replace the plan for this task with the given list (send the whole list every time). Each item has content and a status: pending, in_progress or completed; at most one item may be in_progress. ' +
    'Mark an item completed as soon as it is done. Returns the plan as a checklist ("- [x]" completed, "- [~]" in progress, "- [ ]" pending).',
  schema: () =>
    z
      .strictObject({
        todos: z.described(
          z.array(
            z.strictObject({
              content: z.described(z.string().check(z.minLength(1)), 'What to do, one short imperative line.'),
              status: z.enum(['pending', 'in_progress', 'completed']),
            }),
          ),
          'The whole plan, in order.',
        ),
      })
      .check(
        z.superRefine((input, context) => {
          const active = input.todos.flatMap((todo, i) => (todo.status === 'in_progress' ? [i + 1] : []));
          if (active.length > 1) {
            context.addIssue({
              code: 'custom',
              path: ['todos'],
              message: `Field "todos" may have at most one item in_progress, but items ${active.join(', ')} are in_progress.`,
            });
          }
        }),
      ),
  run: async (input) => {
    if (input.todos.length === 0) return { isError: false, output: 'Plan cleared (no items).' };
    const done = input.todos.filter((todo) => todo.status === 'completed').length;
    const items = input.todos.map((todo) => `- ${TODO_MARKS[todo.status]} ${clipOneLine(todo.content, 500)}`);
    return { isError: false, output: `Plan (${done}/${input.todos.length} completed):\n${items.join('\n')}` };
  },
});

// ---------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------

export const AGENT_TOOLS: readonly AgentTool[] = [
  readFileTool,
  listDirTool,
  globTool,
  grepTool,
  editFileTool,
  writeFileTool,
  runCommandTool,
  viewToolCallTool,
  todoTool,
];

/**
 * Builds every tool's input schema and the JSON Schema the model reads, one
 * tool a turn of the event loop: the extension starts it at activation, so
 * the first turn, which offers them all, finds them made.
 */
export async function prepareToolSchemas(): Promise<void> {
  for (const tool of AGENT_TOOLS) {
    await nextTurn();
    void tool.inputSchema;
  }
}

const TOOLS_BY_NAME: ReadonlyMap<string, AgentTool> = new Map(AGENT_TOOLS.map((tool) => [tool.name, tool]));

/**
 * @keeper's workspace tools by their name in its model requests, and the
 * VS Code language model tool each runs as (package.json contributes them with
 * these names, descriptions and schemas; a unit test keeps the two the same).
 */
export const WORKSPACE_TOOLS: Readonly<Record<string, string>> = {
  read_file: 'contextKeeper_readFile',
  list_dir: 'contextKeeper_listDir',
  glob: 'contextKeeper_glob',
  grep: 'contextKeeper_grep',
  edit_file: 'contextKeeper_editFile',
  write_file: 'contextKeeper_writeFile',
  run_command: 'contextKeeper_runCommand',
};


