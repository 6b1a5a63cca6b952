/**
 * Tool knowledge: what a tool call is (family), which files it touched, its
 * shell command and exit code, and its deterministic reduced form (the R3
 * "tool compact" lever, computed without an LLM).
 *
 * Pure TypeScript: no `vscode`, no `node:*`. Every exported function is total:
 * it never throws, whatever shape the logged input/output has (real logs carry
 * strings, nulls, nested objects, markdown renderings of calls, …).
 *
 * Reduced forms are shape-preserving (an object input stays valid JSON with the
 * same keys; kept lines are verbatim, line numbers included), gist-keeping
 * (head/tail or top-N), and recoverable: every elision marker carries the
 * pointer `view_tool_call("<callId>")`. The only unrecoverable form is the drop
 * of a tool that declares itself disposable.
 *
 * Everything is linear in the size of the output: head and tail are found by
 * scanning from both ends with indexOf/lastIndexOf, the middle is only counted,
 * never split.
 */
import type { ToolInvocation } from './types';
import { GenerationalCache } from './tokens';

export type ToolFamily = 'read' | 'write' | 'edit' | 'search' | 'list' | 'shell' | 'todo' | 'web' | 'task' | 'other';

export interface ToolKind {
  readonly family: ToolFamily;
  /** The tool declares its output used-once-and-discard: it may be dropped (R2), not only shrunk. */
  readonly disposable: boolean;
}

export interface FileTouch {
  readonly path: string;
  readonly access: 'read' | 'modify' | 'create';
}

export interface ReducedTool {
  readonly how: 'shrunk' | 'dropped';
  /** Rendered (possibly reduced) input. */
  readonly input: string;
  /** Reduced output; its elision marker(s) carry the recovery pointer. */
  readonly output: string;
  /** e.g. `view_tool_call("toolu_123")`; undefined for a drop. */
  readonly recover: string | undefined;
}

// ---------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------

/** Input+output smaller than this (≈ 400 tokens at 4 chars/token) get no reduced form: they ride into the floor summary. */
export const PRECOMPACT_MIN_CHARS = 1600;
/** search / list: result lines kept after the header. */
export const SEARCH_KEEP_LINES = 30;
/** read / write / edit: head and tail lines kept. */
export const FILE_HEAD_LINES = 40;
export const FILE_TAIL_LINES = 20;
/** shell: head and tail lines kept (errors usually sit in the tail). */
export const SHELL_HEAD_LINES = 20;
export const SHELL_TAIL_LINES = 30;
/** todo: lines of the current list kept. */
export const TODO_KEEP_LINES = 40;
/** web: lines kept from the top (results are ranked, pages put title/summary first). */
export const WEB_KEEP_LINES = 40;
/** A kept line longer than this is cut in its middle (head + tail of the line kept). */
export const MAX_LINE_CHARS = 300;
/** write / edit: string fields of the input longer than this are reduced head+tail. */
export const EDIT_INPUT_FIELD_MIN_CHARS = 1000;
/** Other families with a rule: only pathological input strings (a heredoc, a huge query) are reduced. */
export const INPUT_FIELD_MAX_CHARS = 4000;

const LINE_CUT_HEAD = 200;
const LINE_CUT_TAIL = 80;
const DROPPED_OUTPUT = '[output dropped: disposable tool]';
/** Window scanned at each end of an output for exit-code markers and paths. */
const MARKER_WINDOW = 4096;

// ---------------------------------------------------------------------------
// Classification
// ---------------------------------------------------------------------------

/** Tools whose output is used once and may be purged (R2). */
const DISPOSABLE = new Set(['reflect', 'think', 'thinking', 'sequentialthinking']);

const FAMILY_BY_NAME: ReadonlyMap<string, ToolFamily> = (() => {
  const m = new Map<string, ToolFamily>();
  const add = (family: ToolFamily, names: string[]): void => {
    for (const n of names) m.set(n, family);
  };
  add('read', [
    'read', 'readfile', 'readtextfile', 'readmediafile', 'readmultiplefiles', 'readmanyfiles', 'view', 'viewfile',
    'open', 'openfile', 'goto', 'scrollup', 'scrolldown', 'cat', 'notebookread', 'getfile', 'getfilecontents',
  ]);
  add('write', ['write', 'writefile', 'create', 'createfile', 'newfile', 'writetofile', 'savefile']);
  add('edit', [
    'edit', 'editfile', 'multiedit', 'strreplace', 'strreplaceeditor', 'strreplacebasededittool', 'insert', 'append',
    'replace', 'replacestring', 'multireplacestring', 'insertedit', 'inserteditintofile', 'searchreplace',
    'searchandreplace', 'replaceinfile', 'applypatch', 'applydiff', 'insertcontent', 'notebookedit', 'editnotebook',
    'editnotebookfile', 'reapply', 'deletefile',
  ]);
  add('search', [
    'search', 'grep', 'grepsearch', 'ripgrep', 'ripgrepsearch', 'ripgreprawsearch', 'rg', 'codebasesearch',
    'semanticsearch', 'searchcodebase', 'glob', 'globfilesearch', 'filesearch', 'findfile', 'findfiles', 'find',
    'findtextinfiles', 'searchdir', 'searchfile', 'searchfiles', 'searchfilecontent', 'textsearch',
    'listcodedefinitionnames',
  ]);
  add('list', [
    'ls', 'list', 'listdir', 'listdirectory', 'listdirectorywithsizes', 'listfiles', 'directorytree', 'tree',
    'listalloweddirectories',
  ]);
  add('shell', [
    'bash', 'sh', 'shell', 'zsh', 'powershell', 'terminal', 'runterminalcmd', 'runterminalcommand', 'runinterminal',
    'executebash', 'executecommand', 'execcommand', 'exec', 'runcommand', 'runshellcommand', 'localshell',
    'containerexec', 'bashoutput', 'getterminaloutput', 'writestdin', 'executeipythoncell',
  ]);
  add('todo', ['todowrite', 'todoread', 'todo', 'todos', 'updateplan', 'managetodolist', 'updatetodolist']);
  add('web', [
    'websearch', 'webfetch', 'fetch', 'fetchurl', 'fetchwebpage', 'browse', 'browser', 'browseraction', 'searchweb',
    'googlewebsearch', 'bravewebsearch', 'tavilysearch', 'tavilyextract', 'webscrape',
  ]);
  add('task', ['task', 'taskoutput', 'agent', 'dispatchagent', 'subagent', 'runsubagent', 'newtask', 'spawnagent']);
  return m;
})();

/** Lower-case, provider prefixes and version suffixes removed, separators removed: `mcp:read_file` → `readfile`. */
function canonicalName(name: unknown): string {
  if (typeof name !== 'string') return '';
  let canon = CANONICAL_NAMES.get(name);
  if (canon === undefined) {
    // A session uses a few tool names, asked about at every call, result and fold: each is worked out once.
    canon = canonicalNameOf(name);
    CANONICAL_NAMES.set(name, canon);
  }
  return canon;
}

const CANONICAL_NAMES = new GenerationalCache<string, string>(4096);

function canonicalNameOf(name: string): string {
  let n = name.trim().toLowerCase();
  if (n.startsWith('mcp__')) {
    const cut = n.lastIndexOf('__');
    n = cut > 3 ? n.slice(cut + 2) : n.slice(5);
  }
  n = n.replace(/^(?:mcp[:.]|functions\.|default_api[:.]|copilot_|vscode_)/, '');
  n = n.replace(/[_-]?v\d+$/, '');
  return n.replace(/[\s_\-.:]/g, '');
}

/** SWE-agent's own commands, which it logs as the input of a tool named `bash`. */
const SWE_AGENT_COMMANDS: ReadonlyMap<string, ToolFamily> = new Map<string, ToolFamily>([
  ['open', 'read'], ['goto', 'read'], ['scroll_up', 'read'], ['scroll_down', 'read'],
  ['create', 'write'],
  ['edit', 'edit'], ['insert', 'edit'], ['append', 'edit'], ['str_replace', 'edit'],
  ['find_file', 'search'], ['search_dir', 'search'], ['search_file', 'search'],
  ['submit', 'other'],
]);

function firstWord(s: string): string {
  const m = /^\s*(\S+)/.exec(s);
  return m?.[1] ?? '';
}

function asRecord(v: unknown): Record<string, unknown> | undefined {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  if (typeof v === 'string') {
    const t = v.trim();
    if (t.length >= 2 && t.length < 200_000 && t.startsWith('{') && t.endsWith('}')) {
      try {
        const parsed: unknown = JSON.parse(t);
        if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
      } catch {
        /* not JSON */
      }
    }
  }
  return undefined;
}

function getField(rec: Record<string, unknown> | undefined, key: string): unknown {
  if (!rec) return undefined;
  try {
    return rec[key];
  } catch {
    return undefined;
  }
}

function stringField(rec: Record<string, unknown> | undefined, ...keys: string[]): string | undefined {
  for (const k of keys) {
    const v = getField(rec, k);
    if (typeof v === 'string' && v.trim() !== '') return v;
  }
  return undefined;
}

/** The command string a `bash`-like input carries (raw string or `{command}`). */
function rawCommandOf(input: unknown): string | undefined {
  if (typeof input === 'string') return input;
  const v = getField(asRecord(input), 'command');
  return typeof v === 'string' ? v : undefined;
}

/** `str_replace_editor` sub-command: `command` field, or OpenHands' `translated_ipython_code`. */
function editorCommand(input: unknown): string | undefined {
  const rec = asRecord(input);
  const c = stringField(rec, 'command');
  if (c) return c.trim().toLowerCase();
  const code = stringField(rec, 'translated_ipython_code');
  if (code) {
    const m = /['"]command['"]\s*:\s*['"](\w+)['"]/.exec(code.slice(0, MARKER_WINDOW));
    if (m?.[1]) return m[1].toLowerCase();
  }
  return undefined;
}

/**
 * What a `str_replace_editor` call does: its sub-command when it names one
 * (`view` reads, `create` writes, the rest edit); otherwise its fields tell:
 * text for a new file creates, old/new strings or an insert line edit, a bare
 * path (or a view range) only views. A viewed file is read, never modified.
 */
function editorFamily(input: unknown): ToolFamily {
  const sub = editorCommand(input);
  if (sub === 'view') return 'read';
  if (sub === 'create') return 'write';
  if (sub !== undefined) return 'edit';
  const rec = asRecord(input);
  if (!rec) return 'read';
  if (typeof getField(rec, 'file_text') === 'string') return 'write';
  if (getField(rec, 'old_str') !== undefined || getField(rec, 'new_str') !== undefined || getField(rec, 'insert_line') !== undefined) return 'edit';
  return 'read';
}

function isTaskMaster(name: unknown): boolean {
  return typeof name === 'string' && /task[-_]?master/i.test(name);
}

/**
 * Family and disposability of a tool, from its name and (for multiplexed tools)
 * its input. Unknown tools are `other`: no reduction rule, never dropped.
 *
 * Multiplexed tools:
 * - `bash` (exactly, lower-case: SWE-agent / mini-swe-agent) whose command is one
 *   of SWE-agent's own commands (`open`, `create`, `edit`, `find_file`, …) takes that
 *   command's family; Claude Code's `Bash` is never reinterpreted (`open .` there is
 *   the macOS `open`).
 * - `str_replace_editor` / `str_replace_based_edit_tool`: `view` → read, `create` → write, else edit.
 */
export function classifyTool(name: string, input: unknown): ToolKind {
  // A call's kind is asked for by the artifact index, the state channel, the reducers and every fold that
  // covers it: worked out once per input object (inputs are never changed once recorded).
  if (typeof input !== 'object' || input === null) return kindOf(name, input);
  const known = KINDS.get(input);
  if (known?.name === name) return known.kind;
  const kind = kindOf(name, input);
  KINDS.set(input, { name, kind });
  return kind;
}

const KINDS = new WeakMap<object, { readonly name: string; readonly kind: ToolKind }>();

function kindOf(name: string, input: unknown): ToolKind {
  try {
    const canon = canonicalName(name);
    const disposable = DISPOSABLE.has(canon);
    if (disposable) return { family: 'other', disposable: true };
    if (name === 'bash') {
      const cmd = rawCommandOf(input);
      if (cmd !== undefined) {
        const fam = SWE_AGENT_COMMANDS.get(firstWord(cmd));
        if (fam) return { family: fam, disposable: false };
      }
      return { family: 'shell', disposable: false };
    }
    if (canon === 'strreplaceeditor' || canon === 'strreplacebasededittool' || canon === 'fileeditor') {
      return { family: editorFamily(input), disposable: false };
    }
    if (isTaskMaster(name)) return { family: 'todo', disposable: false };
    return { family: FAMILY_BY_NAME.get(canon) ?? 'other', disposable: false };
  } catch {
    return { family: 'other', disposable: false };
  }
}

// ---------------------------------------------------------------------------
// Rendering the input
// ---------------------------------------------------------------------------

/** JSON-safe copy with keys sorted at every level; cycles and absurd depth become markers. */
function normalizeValue(v: unknown, ancestors: Set<object>, depth: number): unknown {
  if (v === null) return null;
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) ? v : String(v);
    case 'bigint':
      return v.toString();
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      break;
  }
  const obj = v as object;
  if (ancestors.has(obj)) return '[Circular]';
  if (depth > 64) return '[MaxDepth]';
  ancestors.add(obj);
  try {
    if (Array.isArray(obj)) {
      const out: unknown[] = [];
      for (let i = 0; i < obj.length; i++) {
        let item: unknown;
        try {
          item = normalizeValue((obj as unknown[])[i], ancestors, depth + 1);
        } catch {
          item = null;
        }
        out.push(item === undefined ? null : item);
      }
      return out;
    }
    if (obj instanceof Date) return Number.isNaN(obj.getTime()) ? null : obj.toISOString();
    const rec = obj as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(rec).sort()) {
      let item: unknown;
      try {
        item = normalizeValue(rec[k], ancestors, depth + 1);
      } catch {
        item = '[Unreadable]';
      }
      if (item !== undefined) out[k] = item;
    }
    return out;
  } finally {
    ancestors.delete(obj);
  }
}

function renderValue(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  const norm = normalizeValue(v, new Set(), 0);
  if (norm === undefined) return '';
  return JSON.stringify(norm) ?? '';
}

/**
 * Deterministic text of the call arguments: a string input as is; an object as
 * compact JSON with keys sorted at every level (so equal inputs render equally
 * whatever the key order in the log); null/undefined as ''.
 */
export function renderToolInput(inv: ToolInvocation): string {
  try {
    return renderValue(inv?.input);
  } catch {
    try {
      return String(inv?.input ?? '');
    } catch {
      return '';
    }
  }
}

// ---------------------------------------------------------------------------
// File touches
// ---------------------------------------------------------------------------

const PATH_KEYS = [
  'file_path', 'filePath', 'path', 'target_file', 'targetFile', 'filename', 'file', 'notebook_path',
  'absolute_path', 'absolutePath', 'uri',
];
const PATH_LIST_KEYS = ['paths', 'file_paths', 'files'];

/** HTML entities of exported transcripts (SpecStory writes `&#96;`, `&gt;`) decoded. */
export function decodeEntities(s: string): string {
  if (s.indexOf('&') < 0) return s;
  return s
    .replace(/&#(\d+);/g, (_m, d: string) => {
      const code = Number(d);
      return code > 0 && code < 0x110000 ? String.fromCodePoint(code) : _m;
    })
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Minimal normalisation: trim, strip wrapping quotes/backticks, file:// URLs to paths. Never resolved against disk. */
function normalizePath(raw: unknown): string {
  if (typeof raw !== 'string') return '';
  let p = raw.trim();
  for (let i = 0; i < 3; i++) {
    const m = /^(["'`])([\s\S]*)\1$/.exec(p);
    if (!m) break;
    p = (m[2] ?? '').trim();
  }
  p = p.replace(/^[`"']+|[`"']+$/g, '').trim();
  if (/^file:\/\//i.test(p)) {
    p = p.replace(/^file:\/\//i, '');
    p = p.replace(/#.*$/, '');
    if (/^\/[A-Za-z]:[\\/]/.test(p)) p = p.slice(1); // file:///c:/x → c:/x
    try {
      p = decodeURIComponent(p);
    } catch {
      /* keep as is */
    }
  }
  if (p === '' || p.length > 4096 || /[\n\r\0]/.test(p)) return '';
  if (p.includes('[object Object]') || /^[•*]/.test(p)) return '';
  // A message where a path should be (aider's "## SearchReplaceNoExactMatch: This SEARCH block failed to match lines in x.ts"): no path.
  if (/^#{1,6}\s|:\s+\S+(?:\s+\S+){3}/.test(p)) return '';
  return p;
}

function pathsFromRecord(rec: Record<string, unknown> | undefined): string[] {
  const out: string[] = [];
  if (!rec) return out;
  for (const k of PATH_KEYS) {
    const v = getField(rec, k);
    if (typeof v === 'string') {
      const p = normalizePath(v);
      if (p) {
        out.push(p);
        break;
      }
    }
  }
  for (const k of PATH_LIST_KEYS) {
    const v = getField(rec, k);
    if (Array.isArray(v)) {
      for (const item of v) {
        const p = normalizePath(typeof item === 'string' ? item : stringField(asRecord(item), ...PATH_KEYS));
        if (p) out.push(p);
      }
    }
  }
  return out;
}

/** Paths in a string input: SpecStory markdown renderings, Copilot links, Cursor "Read file: x", SWE-agent commands. */
function pathsFromString(s: string, family: ToolFamily): string[] {
  const head = s.length > MARKER_WINDOW ? s.slice(0, MARKER_WINDOW) : s;
  // SpecStory MCP rendering: "* path: /x\n  * content: …"
  if (/^\s*\*\s/.test(head)) {
    const star = /^\s*\*\s*(?:path|file_path|filePath|target_file)\s*:\s*(.+)$/m.exec(head);
    if (star?.[1]) return [normalizePath(star[1])];
  }
  // Copilot: "Reading [](file:///x#1-1), lines 1 to 50"
  const link = /\]\((file:\/\/[^)\s]+)\)/.exec(head);
  if (link?.[1]) return [normalizePath(link[1])];
  // Cursor v2: "Read file: x", "Edit file: x"
  const firstLine = head.split('\n', 1)[0] ?? '';
  const verb = /^\s*(?:Read|Edit|Write|Create|Delete)(?:\s+file)?\s*:\s*(.+)$/i.exec(firstLine);
  if (verb?.[1]) return [normalizePath(decodeEntities(verb[1]))];
  // SWE-agent: "open path [line]", "create path"
  const cmd = firstWord(head);
  if ((cmd === 'open' && family === 'read') || (cmd === 'create' && family === 'write')) {
    const m = /^\s*\S+\s+("[^"]*"|'[^']*'|\S+)/.exec(head);
    if (m?.[1]) return [normalizePath(m[1])];
  }
  return [];
}

/** Paths named in the result text, for calls whose input does not carry one. */
function pathsFromOutput(output: string, family: ToolFamily): string[] {
  const head = output.length > MARKER_WINDOW ? output.slice(0, MARKER_WINDOW) : output;
  const patterns = [
    /^\[File: (.+?) \(\d+ lines total\)\]/m, // SWE-agent
    /The file (.+?) has been (?:updated|created)/, // Claude Code Edit / Write
    /File created successfully at: (.+)$/m, // Claude Code Write
    /Successfully wrote to (.+)$/m, // MCP filesystem
    /^Applied edit to (.+)$/m, // aider
  ];
  for (const re of patterns) {
    const m = re.exec(head);
    if (m?.[1]) {
      const p = normalizePath(m[1]);
      if (p) return [p];
    }
  }
  if (family === 'read') {
    // SpecStory Claude Code Read: first line is the path in backticks.
    const m = /^\s*`([^`\n]+)`[ \t]*\r?\n/.exec(head);
    if (m?.[1]) return [normalizePath(m[1])];
  }
  return [];
}

/** apply_patch (Codex / Copilot): "*** Add File: x", "*** Update File: x", "*** Delete File: x", "*** Move to: x". */
function patchTouches(text: string): FileTouch[] {
  const out: FileTouch[] = [];
  const re = /^\*\*\* (Add File|Update File|Delete File|Move to): (.+)$/gm;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const p = normalizePath(m[2]);
    if (!p) continue;
    out.push({ path: p, access: m[1] === 'Add File' || m[1] === 'Move to' ? 'create' : 'modify' });
  }
  return out;
}

function patchText(input: unknown): string | undefined {
  if (typeof input === 'string') return input.includes('*** Begin Patch') ? input : undefined;
  const rec = asRecord(input);
  for (const k of ['input', 'patch', 'diff']) {
    const v = getField(rec, k);
    if (typeof v === 'string' && v.includes('*** Begin Patch')) return v;
  }
  const cmd = getField(rec, 'command');
  if (Array.isArray(cmd)) {
    for (const part of cmd) if (typeof part === 'string' && part.includes('*** Begin Patch')) return part;
  }
  return undefined;
}

/**
 * Paths a call read, modified or created (for the artifact index): read, write
 * and edit calls by their path fields, shell commands by the few forms whose
 * meaning is unambiguous (see shellTouches); searches and listings touch
 * nothing. '' is never returned; duplicates are removed, order of first
 * appearance kept.
 */
export function fileTouches(inv: ToolInvocation): readonly FileTouch[] {
  if (!inv) return [];
  // Asked for at the call, at its result and at every fold covering it: read once per invocation (an
  // invocation is never changed; its result makes a new one).
  let touches = TOUCHES.get(inv);
  if (touches === undefined) {
    touches = Object.freeze(touchesOf(inv));
    TOUCHES.set(inv, touches);
  }
  return touches;
}

const TOUCHES = new WeakMap<ToolInvocation, readonly FileTouch[]>();

function touchesOf(inv: ToolInvocation): FileTouch[] {
  try {
    const kind = classifyTool(inv.name, inv.input);
    const family = kind.family;
    const output = typeof inv.output === 'string' ? inv.output : '';
    let touches: FileTouch[] = [];

    const patch = family === 'edit' || family === 'shell' ? patchText(inv.input) : undefined;
    if (patch !== undefined) {
      touches = patchTouches(patch);
    } else if (family === 'read' || family === 'write' || family === 'edit') {
      const rec = asRecord(inv.input);
      let paths = rec ? pathsFromRecord(rec) : [];
      if (paths.length === 0 && typeof inv.input === 'string') paths = pathsFromString(inv.input, family);
      paths = paths.filter((p) => p !== '');
      if (paths.length === 0 && output) paths = pathsFromOutput(output, family);
      let access: FileTouch['access'] = family === 'read' ? 'read' : family === 'write' ? 'create' : 'modify';
      if (family === 'write' && /has been updated|overwr/i.test(output.slice(0, MARKER_WINDOW))) access = 'modify';
      if (family === 'edit' && rec) {
        // aider: an empty SEARCH block creates a new file.
        const search = getField(rec, 'search');
        if (search === '' && typeof getField(rec, 'replace') === 'string') access = 'create';
      }
      touches = paths.map((path) => ({ path, access }));
    } else if (family === 'shell') {
      const command = shellCommand(inv);
      if (command !== undefined) touches = shellTouches(command);
    }

    const seen = new Set<string>();
    const out: FileTouch[] = [];
    for (const t of touches) {
      if (!t.path) continue;
      const key = `${t.access}\u0000${t.path}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(t);
    }
    return out;
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------------------
// Files a shell command reads or writes
// ---------------------------------------------------------------------------

/** A token that names a file: a path with a '/' or a dotted file name; no globs, variables, URLs or devices. */
function isFileToken(token: string): boolean {
  if (token.length < 3 || token.length > 300) return false;
  if (/[*?$`{}()<>|;&=,]/.test(token) || token.startsWith('-') || /^[a-z]+:\/\//i.test(token)) return false;
  if (/^\/(dev|proc)\//.test(token) || token === '/dev/null') return false;
  if (!/[A-Za-z]/.test(token)) return false;
  return token.includes('/') || /^[\w.-]+\.[A-Za-z][\w]{0,7}$/.test(token);
}

function unquote(token: string): string {
  return token.replace(/^(['"])(.*)\1$/, '$2').replace(/^\\?"|\\?"$/g, '');
}

/**
 * Conservative parse of a command line (including one wrapped in ssh "…"):
 * output redirections (`> f`, `>> f`, heredocs into f), `tee [-a] f`,
 * `sed -i … f` and `touch f` modify; `cat f`, `head … f`, `tail … f` read.
 * Anything else is left alone: a wrong path in the trail is worse than none.
 */
export function shellTouches(command: string): FileTouch[] {
  const out: FileTouch[] = [];
  const text = command.length > 20_000 ? command.slice(0, 20_000) : command;
  // Drop heredoc bodies so their contents are not read as commands.
  const lines = text.split('\n');
  const kept: string[] = [];
  let heredocEnd: string | undefined;
  for (const line of lines) {
    if (heredocEnd !== undefined) {
      if (line.trim() === heredocEnd) heredocEnd = undefined;
      continue;
    }
    kept.push(line);
    const m = /<<-?\s*['"]?(\w+)['"]?/.exec(line);
    if (m) heredocEnd = m[1];
  }
  // Single-quoted strings are masked first, so a sed script or a message with spaces, `;` or `>` stays one word
  // (double quotes often hold a command of their own: `ssh host "cat > /etc/x.yml"`, `bash -c "…"`).
  const quoted: string[] = [];
  const flat = kept.join('\n').replace(/'[^'\n]*'/g, (m) => `\u0001${quoted.push(m) - 1}\u0002`);
  const restore = (w: string): string => w.replace(/\u0001(\d+)\u0002/g, (_, i: string) => quoted[Number(i)] ?? '');
  for (const m of flat.matchAll(/(?:^|[^0-9&<>])>>?\s*([^\s;|&<>]+)/g)) {
    const path = unquote(restore(m[1]!));
    if (isFileToken(path)) out.push({ path, access: 'modify' });
  }
  for (const segment of flat.split(/&&|\|\||;|\||\n/)) {
    const words = segment.trim().split(/\s+/).map((w) => unquote(restore(w))).filter((w) => w.length > 0);
    const verb = words[0];
    if (verb === undefined) continue;
    const args = words.slice(1).filter((w) => !w.startsWith('-'));
    const redirect = words.findIndex((w) => /^1?>>?/.test(w));
    const before = redirect >= 0 ? words.slice(1, redirect).filter((w) => !w.startsWith('-')) : args;
    if (verb === 'tee' || verb === 'touch') {
      for (const a of args) if (isFileToken(a)) out.push({ path: a, access: 'modify' });
    } else if (verb === 'sed' && words.some((w) => /^-i/.test(w)) && args.length >= 2) {
      const target = args[args.length - 1]!;
      if (isFileToken(target)) out.push({ path: target, access: 'modify' });
    } else if (verb === 'cat' || verb === 'head' || verb === 'tail' || verb === 'less') {
      for (const a of before) if (isFileToken(a) && !/^\d*>/.test(a)) out.push({ path: a, access: 'read' });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Shell command and exit code
// ---------------------------------------------------------------------------

function commandFromValue(v: unknown): string | undefined {
  if (typeof v === 'string') return v.trim() === '' ? undefined : v;
  if (Array.isArray(v)) {
    const parts = v.filter((x): x is string => typeof x === 'string');
    if (parts.length === 0) return undefined;
    // Codex: ["bash", "-lc", "<script>"]
    if (parts.length === 3 && /^(?:ba|z)?sh$/.test(parts[0] ?? '') && /^-l?c$/.test(parts[1] ?? '')) return parts[2];
    return parts.join(' ');
  }
  const rec = asRecord(v);
  if (rec) return stringField(rec, 'original', 'command', 'commandLine');
  return undefined;
}

function commandFromOutput(output: string): string | undefined {
  const head = output.length > 2 * MARKER_WINDOW ? output.slice(0, 2 * MARKER_WINDOW) : output;
  // Copilot (SpecStory): "commandLine": { "original": "…" }
  const cop = /"commandLine"\s*:\s*\{\s*"original"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(head);
  if (cop?.[1]) {
    try {
      const s: unknown = JSON.parse(cop[1]);
      if (typeof s === 'string' && s.trim() !== '') return decodeEntities(s);
    } catch {
      /* ignore */
    }
  }
  // SpecStory: a fenced block labelled as a shell, or a line that is one inline-code span, near the top.
  const fence = /^```(?:bash|sh|shell|zsh|console|powershell|pwsh|cmd)[ \t]*\r?\n([\s\S]*?)\r?\n```/m.exec(head);
  const inline = /^`([^`\n]+)`[ \t]*$/m.exec(head.slice(0, 1024));
  const pick =
    fence && inline ? (fence.index < inline.index ? fence[1] : inline[1]) : fence ? fence[1] : inline ? inline[1] : undefined;
  if (pick !== undefined && pick.trim() !== '') return decodeEntities(pick);
  return undefined;
}

function isShellName(name: unknown): boolean {
  return FAMILY_BY_NAME.get(canonicalName(name)) === 'shell';
}

/** What a call is about, for a person scanning a list of calls: the command it ran, else the first file it touched. */
export function toolSubject(inv: ToolInvocation): string | undefined {
  const command = shellCommand(inv);
  if (command !== undefined) return command.split('\n')[0]!;
  return fileTouches(inv)[0]?.path;
}

/**
 * The command line of a shell-family call (any call of a shell tool, so a
 * SWE-agent `bash` call running `open x` yields `open x`). From the input
 * (string, `command`, `cmd`, `commandLine`, Codex argv), else from the
 * SpecStory rendering of the result. HTML entities of the exports are decoded.
 */
export function shellCommand(inv: ToolInvocation): string | undefined {
  try {
    if (!inv) return undefined;
    const kind = classifyTool(inv.name, inv.input);
    if (kind.family !== 'shell' && !isShellName(inv.name)) return undefined;
    const input = inv.input;
    let cmd: string | undefined;
    if (typeof input === 'string') {
      const s = input.replace(/^\s*Run command:\s*/, '');
      cmd = s.trim() === '' ? undefined : decodeEntities(s);
    } else {
      const rec = asRecord(input);
      for (const k of ['command', 'cmd', 'commandLine', 'command_line', 'script']) {
        cmd = commandFromValue(getField(rec, k));
        if (cmd !== undefined) break;
      }
    }
    if (cmd === undefined && typeof inv.output === 'string') cmd = commandFromOutput(inv.output);
    if (cmd === undefined) return undefined;
    const t = cmd.trim();
    return t === '' ? undefined : t;
  } catch {
    return undefined;
  }
}

interface ExitMatch {
  readonly code: number;
  /** Offset of the marker in the output. */
  readonly index: number;
  readonly length: number;
}

function toCode(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}

const GENERIC_EXIT_RE =
  /\b(?:exit(?:ed)?\s+(?:with\s+)?(?:exit\s+)?(?:code|status)|exit\s*code|return\s*code|returncode)\s*[:=]?\s*(-?\d+)(?![\w.])/i;

// Structured exit-code markers, each with a literal that every match contains (undefined for the
// case-insensitive execa marker, which always runs).
const HEAD_MARKERS: ReadonlyArray<readonly [string | undefined, RegExp]> = [
  ['</exit_code>', /<exit_code>\s*(-?\d+)\s*<\/exit_code>/],
  ['</returncode>', /<returncode>\s*(-?\d+)\s*<\/returncode>/],
  ['"exitCode"', /"exitCode"\s*:\s*(-?\d+)/],
  [undefined, /Command failed with exit code (-?\d+)/i],
];
const TAIL_MARKERS: ReadonlyArray<readonly [string, RegExp]> = [
  [':PROCESS-DONE', /PROCESS-DONE:(-?\d+):PROCESS-DONE/],
  ['</exit_code>', /<exit_code>\s*(-?\d+)\s*<\/exit_code>/],
  ['</returncode>', /<returncode>\s*(-?\d+)\s*<\/returncode>/],
];

function findExitCode(output: string): ExitMatch | undefined {
  const headLen = Math.min(output.length, MARKER_WINDOW);
  const head = output.slice(0, headLen);
  const at = (m: RegExpExecArray | null, base: number): ExitMatch | undefined => {
    if (!m) return undefined;
    const code = toCode(m[1]);
    return code === undefined ? undefined : { code, index: base + m.index, length: m[0].length };
  };
  // 1. Claude Code: the result starts with "Exit code N".
  let r = at(/^\s*Exit code:?\s*(-?\d+)(?![\w.])/i.exec(head), 0);
  if (r) return r;
  // 2. Structured markers near the top: Claude Code BashOutput/TaskOutput, mini-swe-agent, Copilot, execa.
  // A literal each marker needs, checked natively before its regex runs (same results, fewer scans).
  for (const [lit, re] of HEAD_MARKERS) {
    if (lit !== undefined && !head.includes(lit)) continue;
    r = at(re.exec(head), 0);
    if (r) return r;
  }
  const tailStart = Math.max(0, output.length - MARKER_WINDOW);
  const tail = tailStart === 0 ? head : output.slice(tailStart);
  // 3. SWE-agent's end-of-process marker and the structured tags in a long result's tail.
  for (const [lit, re] of TAIL_MARKERS) {
    if (!tail.includes(lit)) continue;
    r = at(re.exec(tail), tailStart);
    if (r) return r;
  }
  // 4. A prose marker on one of the last three non-empty lines ("exited with code 1", "Exit code: 2", "exit status 1").
  let end = tail.length;
  for (let seen = 0; seen < 3 && end > 0; ) {
    const nl = tail.lastIndexOf('\n', end - 1);
    const start = nl + 1;
    const line = tail.slice(start, end);
    if (line.trim() !== '') {
      seen++;
      r = at(GENERIC_EXIT_RE.exec(line), tailStart + start);
      if (r) return r;
    }
    if (nl < 0) break;
    end = nl;
  }
  return undefined;
}

const EXIT_CODE_FAMILIES: ReadonlySet<ToolFamily> = new Set<ToolFamily>(['shell', 'task', 'other']);

/**
 * Exit code of a command, when the log states it: Claude Code "Exit code N"
 * (first line) and `<exit_code>`, mini-swe-agent `<returncode>`, Copilot
 * `"exitCode": N`, execa "Command failed with exit code N", SWE-agent
 * `PROCESS-DONE:N:`, and prose markers ("exited with code N", "exit status N")
 * on the last lines. Only for shell / task / unknown tools: a file's content
 * mentioning an exit code is not one. `isError` without a stated code → undefined.
 */
export function exitCode(inv: ToolInvocation): number | undefined {
  try {
    if (!inv || typeof inv.output !== 'string' || inv.output === '') return undefined;
    if (!EXIT_CODE_FAMILIES.has(classifyTool(inv.name, inv.input).family)) return undefined;
    return findExitCode(inv.output)?.code;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// Line machinery (linear; scans from both ends)
// ---------------------------------------------------------------------------

/** Number of lines; a final '\n' terminates the last line rather than starting an empty one. */
function countLines(s: string): number {
  if (s.length === 0) return 0;
  let n = 0;
  let pos = s.indexOf('\n');
  while (pos !== -1) {
    n++;
    pos = s.indexOf('\n', pos + 1);
  }
  return s.charCodeAt(s.length - 1) === 10 ? n : n + 1;
}

function stripCr(line: string): string {
  return line.length > 0 && line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
}

/** First `n` lines and the offset where the next line starts. */
function headLines(s: string, n: number): { lines: string[]; end: number } {
  const lines: string[] = [];
  let pos = 0;
  while (lines.length < n && pos < s.length) {
    const nl = s.indexOf('\n', pos);
    if (nl === -1) {
      lines.push(s.slice(pos));
      pos = s.length;
      break;
    }
    lines.push(s.slice(pos, nl));
    pos = nl + 1;
  }
  return { lines, end: pos };
}

/** Last `n` lines and the offset where the first of them starts. */
function tailLines(s: string, n: number): { lines: string[]; start: number } {
  let end = s.length;
  if (end > 0 && s.charCodeAt(end - 1) === 10) end -= 1;
  const lines: string[] = [];
  let start = end;
  while (lines.length < n) {
    const nl = end > 0 ? s.lastIndexOf('\n', end - 1) : -1;
    start = nl + 1;
    lines.push(s.slice(start, end));
    if (nl < 0) break;
    end = nl;
  }
  lines.reverse();
  return { lines, start };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

interface Capped {
  readonly text: string;
  readonly cut: boolean;
}

/** Cut an over-long line in its middle: its head and tail stay, the cut is marked with the count of chars removed. */
function capLine(line: string, max: number = MAX_LINE_CHARS): Capped {
  const l = stripCr(line);
  if (l.length <= max) return { text: l, cut: false };
  let headEnd = LINE_CUT_HEAD;
  if (isHighSurrogate(l.charCodeAt(headEnd - 1))) headEnd -= 1;
  let tailStart = l.length - LINE_CUT_TAIL;
  if (isHighSurrogate(l.charCodeAt(tailStart - 1))) tailStart -= 1;
  const removed = tailStart - headEnd;
  return { text: `${l.slice(0, headEnd)}…[${removed} chars cut]…${l.slice(tailStart)}`, cut: true };
}

function pointer(callId: unknown): string {
  const id = typeof callId === 'string' ? callId : String(callId ?? '');
  return `view_tool_call(${JSON.stringify(id)})`;
}

/** "12→", "    12\t" (cat -n), "12:" (SWE-agent), "  12| " (@keeper's read_file): the number a line carries, if any. */
const LINE_NUMBER_RE = /^\s*(\d{1,9})(?:→|\t|:|\| )/;

function lineNumberAt(s: string, start: number, end: number): number | undefined {
  const m = LINE_NUMBER_RE.exec(s.slice(start, Math.min(end, start + 32)));
  return m?.[1] !== undefined ? Number(m[1]) : undefined;
}

interface Reduction {
  readonly text: string;
  readonly changed: boolean;
  /** Output offsets of the elided middle (head/tail reductions only). */
  readonly elidedFrom?: number;
  readonly elidedTo?: number;
}

function capAll(lines: string[]): { lines: string[]; cut: boolean } {
  let cut = false;
  const out = lines.map((l) => {
    const c = capLine(l);
    if (c.cut) cut = true;
    return c.text;
  });
  return { lines: out, cut };
}

/**
 * Keep `head` + `tail` lines, elide the middle with a marker stating the elided
 * range: the lines' own numbers when they carry them, else the 1-based range of
 * output lines. `what` is "output" or "input" (which text the pointer restores).
 */
function headTail(s: string, head: number, tail: number, ptr: string, what: string): Reduction {
  const total = countLines(s);
  if (total <= head + tail) {
    const { lines, cut } = capAll(headLines(s, total).lines);
    if (!cut) return { text: s, changed: false };
    return { text: [...lines, `[long lines cut; full ${what}: ${ptr}]`].join('\n'), changed: true };
  }
  const h = headLines(s, head);
  const t = tailLines(s, tail);
  const elided = total - head - tail;
  let from = head + 1;
  let to = total - tail;
  // The elided middle runs from h.end to t.start - 1 (the '\n' ending the last elided line).
  const lastEnd = t.start - 1;
  const lastStart = lastEnd > h.end ? s.lastIndexOf('\n', lastEnd - 1) + 1 : h.end;
  const nFrom = lineNumberAt(s, h.end, lastEnd + 1);
  const nTo = lineNumberAt(s, Math.max(lastStart, h.end), lastEnd + 1);
  if (nFrom !== undefined && nTo !== undefined && nTo >= nFrom) {
    from = nFrom;
    to = nTo;
  }
  const range = from === to ? `line ${from}` : `lines ${from}–${to}`;
  const marker = `[… ${range} elided (${elided} line${elided === 1 ? '' : 's'}); full ${what}: ${ptr}]`;
  const hc = capAll(h.lines).lines;
  const tc = capAll(t.lines).lines;
  return { text: [...hc, marker, ...tc].join('\n'), changed: true, elidedFrom: h.end, elidedTo: t.start };
}

/** Header lines of a search/list result: a count line ("Found 62 files"), a "Directory:" line, a markdown table header. */
function headerLineCount(lines: readonly string[]): number {
  let i = 0;
  const first = lines[0] ?? '';
  if (/^\s*(?:Found \d+|Directory:|Searched|Web search results|Showing|Total\b|\d+ (?:files?|matches|results?)\b|\[File:|No files? )/i.test(first)) {
    i = 1;
    while (i < lines.length && i < 3 && (lines[i] ?? '').trim() === '') i++;
  }
  const row = lines[i] ?? '';
  const sep = lines[i + 1] ?? '';
  if (/^\s*\|.*\|\s*$/.test(row) && /^\s*\|[\s\-:|]+\|\s*$/.test(sep)) i += 2;
  return i;
}

/** Keep the header (if any) and the first `keep` lines after it; report how many more. */
function topN(s: string, keep: number, ptr: string, withHeader: boolean): Reduction {
  const total = countLines(s);
  const probe = headLines(s, Math.min(total, 6)).lines;
  const header = withHeader ? headerLineCount(probe) : 0;
  const keepLines = Math.min(total, header + keep);
  const h = headLines(s, keepLines);
  const { lines, cut } = capAll(h.lines);
  const more = total - keepLines;
  if (more <= 0) {
    if (!cut) return { text: s, changed: false };
    return { text: [...lines, `[long lines cut; full output: ${ptr}]`].join('\n'), changed: true };
  }
  const marker = `[… ${more} more line${more === 1 ? '' : 's'} (${total} total); full output: ${ptr}]`;
  return { text: [...lines, marker].join('\n'), changed: true };
}

// ---------------------------------------------------------------------------
// Binary detection
// ---------------------------------------------------------------------------

function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (isHighSurrogate(c) && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

// Control chars other than \t \n \v \f \r \b and ESC (ANSI colours are text), DEL and U+FFFD:
// U+0000–0007, 000E–001A, 001C–001F, 007F, FFFD. Written as the complement of the good
// characters, which V8 scans faster (about 0.7 vs 1.1 ns/char on one-byte strings); the
// set is the same (a unit test checks all 65,536 code units).
const BAD_CHAR = /[^\u0008-\u000d\u001b\u0020-\u007e\u0080-\ufffc\ufffe\uffff]/;

function badShare(sample: string): number {
  if (sample.length === 0) return 0;
  // Native scan first: ordinary text has no bad character at all.
  if (!BAD_CHAR.test(sample)) return 0;
  let bad = 0;
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i);
    // Control chars other than \t \n \v \f \r \b and ESC (ANSI colours are text), plus U+FFFD.
    if ((c < 32 && c !== 9 && c !== 10 && c !== 11 && c !== 12 && c !== 13 && c !== 8 && c !== 27) || c === 0x7f || c === 0xfffd) bad++;
  }
  return bad / sample.length;
}

/** NUL anywhere, or more than 10% control/replacement chars in the first or last 8 KiB. */
export function isBinary(s: string): boolean {
  const w = 8192;
  // Up to two windows the whole string is scanned anyway: one native pass finds no bad
  // character (so no NUL either) in ordinary text, and the NUL search is skipped.
  if (s.length <= 2 * w && !BAD_CHAR.test(s)) return false;
  if (s.indexOf('\u0000') !== -1) return true;
  if (s.length <= 2 * w) return s.length >= 32 && badShare(s) > 0.1;
  return badShare(s.slice(0, w)) > 0.1 || badShare(s.slice(-w)) > 0.1;
}

// ---------------------------------------------------------------------------
// Input reduction
// ---------------------------------------------------------------------------

const KEEP_INPUT_KEYS = new Set([...PATH_KEYS, ...PATH_LIST_KEYS]);

function reduceInputString(s: string, minChars: number, ptr: string): string {
  if (s.length <= minChars) return s;
  const r = headTail(s, FILE_HEAD_LINES, FILE_TAIL_LINES, ptr, 'input');
  return r.changed && r.text.length < s.length ? r.text : s;
}

function reduceInputTree(v: unknown, minChars: number, ptr: string, key: string | undefined): unknown {
  if (typeof v === 'string') return key !== undefined && KEEP_INPUT_KEYS.has(key) ? v : reduceInputString(v, minChars, ptr);
  if (Array.isArray(v)) return v.map((x) => reduceInputTree(x, minChars, ptr, undefined));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = reduceInputTree(x, minChars, ptr, k);
    return out;
  }
  return v;
}

/** Rendered input, with over-long string fields reduced head+tail; an object input stays JSON of the same shape. */
function reduceInput(input: unknown, minChars: number, ptr: string): string {
  if (input === undefined || input === null) return '';
  if (typeof input === 'string') return reduceInputString(input, minChars, ptr);
  if (typeof input !== 'object') return renderValue(input);
  const norm = normalizeValue(input, new Set(), 0);
  return JSON.stringify(reduceInputTree(norm, minChars, ptr, undefined)) ?? '';
}

// ---------------------------------------------------------------------------
// Reducers
// ---------------------------------------------------------------------------

function shellReduce(output: string, ptr: string): Reduction {
  const r = headTail(output, SHELL_HEAD_LINES, SHELL_TAIL_LINES, ptr, 'output');
  if (!r.changed || r.elidedFrom === undefined || r.elidedTo === undefined) return r;
  // Keep the exit code visible when its marker fell into the elided middle.
  const ex = findExitCode(output);
  if (ex && ex.index >= r.elidedFrom && ex.index < r.elidedTo) {
    return { ...r, text: `[exit code ${ex.code}]\n${r.text}` };
  }
  return r;
}

/**
 * Which families have a deterministic rule.
 * - web: a head-only slice. Search results are ranked and a fetched page puts
 *   its title and summary first; the rest stays recoverable by view_tool_call.
 * - task: none. A sub-agent's report is already its distilled conclusion;
 *   cutting its middle would drop findings arbitrarily. The floor summary
 *   absorbs it.
 * - other: none. Unknown shapes (questions to the user, submit diffs, MCP
 *   tools), and view_tool_call itself: reducing a recovery would point at itself.
 */
function reduceOutput(family: ToolFamily, output: string, ptr: string): Reduction | undefined {
  switch (family) {
    case 'read':
    case 'write':
    case 'edit':
      return headTail(output, FILE_HEAD_LINES, FILE_TAIL_LINES, ptr, 'output');
    case 'search':
    case 'list':
      return topN(output, SEARCH_KEEP_LINES, ptr, true);
    case 'shell':
      return shellReduce(output, ptr);
    case 'todo':
      return topN(output, TODO_KEEP_LINES, ptr, false);
    case 'web':
      return topN(output, WEB_KEEP_LINES, ptr, false);
    case 'task':
    case 'other':
      return undefined;
  }
}

/**
 * The stored compacted form of a tool call (R1/R3), or undefined when there is
 * none — no result, input+output under `minChars` (PRECOMPACT_MIN_CHARS unless a setting says otherwise), no rule for the
 * family, or nothing to gain. undefined is a skip: the engine leaves the part
 * raw, it never drops it. A disposable tool (over the threshold) is dropped: a
 * legal empty shell with no pointer.
 *
 * Binary output (NUL bytes, or mostly control/replacement characters) becomes
 * "[binary content, N bytes; …]" whatever the family: echoing it helps nobody.
 */
export function reduceTool(inv: ToolInvocation, minChars: number = PRECOMPACT_MIN_CHARS): ReducedTool | undefined {
  try {
    if (!inv || typeof inv.output !== 'string') return undefined;
    const output = inv.output;
    // Most results are small: decide without rendering the input when the output alone settles it.
    if (output.length < minChars && (inv.input === undefined || inv.input === null || (typeof inv.input === 'string' && output.length + inv.input.length < minChars))) return undefined;
    const rendered = renderToolInput(inv);
    if (output.length + rendered.length < minChars) return undefined;
    const kind = classifyTool(inv.name, inv.input);
    if (kind.disposable) {
      return {
        how: 'dropped',
        input: inv.input !== null && typeof inv.input === 'object' ? '{}' : '',
        output: DROPPED_OUTPUT,
        recover: undefined,
      };
    }
    const ptr = pointer(inv.callId);
    const binary = isBinary(output);
    let outText: string;
    let input: string;
    if (binary) {
      outText = `[binary content, ${utf8Length(output)} bytes; full output: ${ptr}]`;
    } else {
      const r = reduceOutput(kind.family, output, ptr);
      if (r === undefined) return undefined;
      outText = r.changed ? r.text : output;
    }
    if (kind.family === 'write' || kind.family === 'edit') input = reduceInput(inv.input, EDIT_INPUT_FIELD_MIN_CHARS, ptr);
    else if (kind.family === 'task' || kind.family === 'other') input = rendered;
    else input = reduceInput(inv.input, INPUT_FIELD_MAX_CHARS, ptr);
    // Every shrunk form names its recovery pointer in the output, even when only the input was reduced.
    if (!outText.includes(ptr)) outText = `${outText}\n[input reduced; full input: ${ptr}]`;
    if (outText.length + input.length >= output.length + rendered.length) return undefined;
    return { how: 'shrunk', input, output: outText, recover: ptr };
  } catch {
    return undefined;
  }
}
