/**
 * What a tool call is: its family (read, edit, search, shell…) and whether it
 * declares its output disposable, from its name across agents' naming
 * conventions and, for multiplexed tools, from its input.
 */
import { GenerationalCache } from './tokens';
import { MARKER_WINDOW, asRecord, firstWord, getField, stringField } from './toolInput';

export type ToolFamily = 'read' | 'write' | 'edit' | 'search' | 'list' | 'shell' | 'todo' | 'web' | 'task' | 'other';

export interface ToolKind {
  readonly family: ToolFamily;
  /** The tool declares its output used-once-and-discard: it may be dropped (R2), not only shrunk. */
  readonly disposable: boolean;
}

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
    'executebash', 'executecommand', 'execcommand', 'shellcommand', 'exec', 'runcommand', 'runshellcommand', 'localshell',
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

export function isShellName(name: unknown): boolean {
  return FAMILY_BY_NAME.get(canonicalName(name)) === 'shell';
}
