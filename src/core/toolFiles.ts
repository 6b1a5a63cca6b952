/**
 * The files a tool call read, modified or created: from the path fields of
 * its input, a patch it applied, the SpecStory / Copilot / Cursor renderings
 * of a call, its result's wording, or the few shell command forms whose
 * meaning is unambiguous. Never resolved against disk.
 */
import { shellCommand } from './toolCommands';
import { MARKER_WINDOW, asRecord, decodeEntities, firstWord, getField, stringField } from './toolInput';
import { classifyTool, type ToolFamily } from './toolKinds';
import type { ToolInvocation, Unit } from './types';
import { forwardSlashes } from './paths';

export interface FileTouch {
  readonly path: string;
  readonly access: 'read' | 'modify' | 'create';
  /**
   * The file only catches a program's output for the agent to read
   * (`cargo test > test_output.txt 2>&1`): written, but no deliverable.
   */
  readonly capture?: true;
}

/** The files a tool wrote (or was to write), of all it touched. */
export function writtenPaths(touches: readonly FileTouch[]): string[] {
  return touches.filter((t) => t.access !== 'read').map((t) => t.path);
}

// ---------------------------------------------------------------------------
// File touches
// ---------------------------------------------------------------------------

export const PATH_KEYS = [
  'file_path', 'filePath', 'path', 'target_file', 'targetFile', 'filename', 'file', 'notebook_path',
  'absolute_path', 'absolutePath', 'uri',
];
export const PATH_LIST_KEYS = ['paths', 'file_paths', 'files'];

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
      const p = proseAsPath(v) ? '' : normalizePath(v);
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

/**
 * A sentence an export put in a path field: aider's converter took the heading of its own error report ("## SearchReplaceNoExactMatch: This SEARCH
 * block failed to exactly match lines in a.ts") for the file of an edit. A heading mark, a colon and a space, or a run of words is no file name.
 */
function proseAsPath(value: string): boolean {
  return /^#+\s|:\s|\n/.test(value) || value.trim().split(/\s+/).length > 6;
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

/** aider's report of an edit it applied: "Applied edit to packages\\es\\src\\index.ts". */
const AIDER_APPLIED = /^Applied edit to (\S.*?)\s*$/gm;

/**
 * The files aider says it applied an edit to. An edit its converter gave no
 * result of its own wrote its file only when an output of its step says so;
 * otherwise aider asked to add the file to the chat first, the user said no to
 * editing it, or its SEARCH block matched nothing, and the edit was never made.
 */
export function aiderAppliedEdits(output: string): string[] {
  return [...output.matchAll(AIDER_APPLIED)].map((m) => samePathKey(m[1]!));
}

/** A path compared whatever its separators ("a\\b.ts" and "a/b.ts" are one file). */
export function samePathKey(path: string): string {
  return forwardSlashes(normalizePath(path));
}

/** aider's reply when some SEARCH/REPLACE blocks of a step matched nothing: the others were applied. */
const AIDER_OTHERS_APPLIED = /^# The other \d+ SEARCH\/REPLACE blocks? (?:were|was) applied successfully\b/m;
/** A block aider names as failed: its file, then the block (its SEARCH part up to the divider). */
const AIDER_NO_MATCH = /\bfailed to (?:exactly )?match lines in (\S+)\s*\n<{5,9} SEARCH\n([\s\S]*?)\n={5,9}\n/g;

/** The blocks aider held back from a step whose other blocks it applied: their files and their SEARCH texts. */
export interface HeldBack {
  readonly files: ReadonlySet<string>;
  readonly searches: ReadonlySet<string>;
}

/** A SEARCH text as compared: trailing spaces of its lines and blank edges dropped. */
function searchKey(search: string): string {
  return search.replace(/[ \t]+$/gm, '').trim();
}

/**
 * When aider says the other blocks of the step before were applied ("…failed to exactly match lines in
 * cli_hooks/validator_invoker.ts <<<<<<< SEARCH … # The other 2 SEARCH/REPLACE blocks were applied successfully."),
 * the blocks that failed; undefined when it does not say so.
 */
export function aiderHeldBack(text: string): HeldBack | undefined {
  if (!AIDER_OTHERS_APPLIED.test(text)) return undefined;
  const failed = [...text.matchAll(AIDER_NO_MATCH)];
  return { files: new Set(failed.map((m) => samePathKey(m[1]!))), searches: new Set(failed.map((m) => searchKey(m[2]!))) };
}

/** Whether an edit was among the blocks `held` names: by its SEARCH text when it has one, else by its file. */
export function heldBackEdit(held: HeldBack, input: unknown, path: string): boolean {
  const search = typeof input === 'object' && input !== null ? (input as { search?: unknown }).search : undefined;
  if (typeof search !== 'string') return held.files.has(samePathKey(path));
  // A block whose own text holds a divider is read up to it, by aider's report or by the export: its start names it.
  const key = searchKey(search);
  return [...held.searches].some((s) => s !== '' && key !== '' && (s.startsWith(key) || key.startsWith(s)));
}

/**
 * Whether a call did what it set out to: a call with no result of its own
 * that writes a file did only when an output of its step says so (aider
 * prints "Applied edit to x" once for all the edits of one file, so its
 * converter gives that result to the last; an edit it held back gets none),
 * or aider's reply opening the `next` step says the blocks it did not name as failed were applied.
 */
export function madeInStep(unit: Unit, tool: ToolInvocation, touches: readonly FileTouch[], next?: Unit): boolean {
  const writes = touches.filter((t) => t.access !== 'read');
  if (tool.output !== undefined || writes.length === 0) return true;
  const applied = new Set(unit.parts.flatMap((p) => (p.tool?.output !== undefined ? aiderAppliedEdits(p.tool.output) : [])));
  if (writes.some((t) => applied.has(samePathKey(t.path)))) return true;
  const reply = next?.kind === 'step' ? next.parts[0] : undefined;
  const held = reply?.kind === 'text' ? aiderHeldBack(reply.text) : undefined;
  return held !== undefined && writes.some((t) => !heldBackEdit(held, tool.input, t.path));
}

/** aider asking to add a file its model named ("frontend/main.ts" on the line before), and the answer. */
const AIDER_ADD_ASK = /^Add file to the chat\? \(Y\)es\/\(N\)o[^\n]*\[Yes\]: *(\S*)\s*$/i;
/** aider's report of a file added by `/add`, or by a yes at the ask. */
const AIDER_ADDED = /^Added (\S.*?) to the chat$/;

/**
 * The files aider's console says it added to the chat, which its model then
 * reads whole: "Added x.ts to the chat" (`/add`), and a file named on the line
 * before "Add file to the chat? (Y)es/(N)o/(A)ll… [Yes]: y". After an "a"
 * (all), aider adds the files it names next without asking, one a line; "s"
 * (skip all), "n" or "d" (don't ask again) add nothing.
 */
export function aiderChatFiles(output: string): string[] {
  const lines = output.split(/\r?\n/);
  const out: string[] = [];
  let all = false;
  lines.forEach((line, i) => {
    const added = AIDER_ADDED.exec(line);
    if (added) out.push(normalizePath(added[1]!));
    const asked = AIDER_ADD_ASK.exec(line);
    if (asked) {
      const answer = asked[1]!.toLowerCase();
      const named = lines[i - 1]?.trim() ?? '';
      if (/^(?:y|yes|a|all|)$/.test(answer) && isFileToken(named)) out.push(normalizePath(named));
      all = answer === 'a' || answer === 'all';
      return;
    }
    // Under an "all", the next files are added as they are named.
    if (all && !added && isFileToken(line.trim()) && !AIDER_ADD_ASK.test(lines[i + 1] ?? '')) out.push(normalizePath(line.trim()));
    else if (!added && line.trim() !== '' && !isFileToken(line.trim())) all = false;
  });
  return [...new Set(out.filter((p) => p !== ''))];
}

const TOUCHES = new WeakMap<ToolInvocation, readonly FileTouch[]>();

function touchesOf(inv: ToolInvocation): FileTouch[] {
  try {
    if (inv.name === 'aider' && typeof inv.output === 'string') return aiderChatFiles(inv.output).map((path) => ({ path, access: 'read' }));
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
  // A name with an extension, or a dotfile (`.gitignore`, `.env`, `.zshrc`).
  return token.includes('/') || /^[\w.-]+\.[A-Za-z][\w]{0,7}$/.test(token) || /^\.[A-Za-z][\w.-]{1,30}$/.test(token);
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
  const { flat, restore, segments } = shellWords(command);
  for (const m of flat.matchAll(/(?:^|[^0-9&<>])>>?\s*([^\s;|&<>]+)/g)) {
    const path = unquote(restore(m[1]!));
    if (!isFileToken(path)) continue;
    const segment = flat.slice(0, m.index).split(/&&|\|\||;|\||\n/).pop()!.trim();
    const rest = flat.slice(m.index + m[0].length).split(/&&|\|\||;|\||\n/)[0]!;
    out.push({ path, access: 'modify', ...(capturesOutput(segment, rest, path) ? { capture: true as const } : {}) });
  }
  for (const words of segments) {
    const verb = words[0];
    if (verb === undefined) continue;
    const args = words.slice(1).filter((w) => !w.startsWith('-'));
    const redirect = words.findIndex((w) => /^1?>>?/.test(w));
    const before = redirect >= 0 ? words.slice(1, redirect).filter((w) => !w.startsWith('-')) : args;
    if (verb === 'tee' || verb === 'touch') {
      // `… 2>&1 | tee /tmp/filter-output.log` keeps a run's output for the agent to read: no file the task is for.
      for (const a of args) if (isFileToken(a)) out.push({ path: a, access: 'modify', ...(verb === 'tee' && OUTPUT_NAME.test(a) ? { capture: true as const } : {}) });
    } else if (verb === 'sed' && words.some((w) => /^-i/.test(w)) && args.length >= 2) {
      const target = args[args.length - 1]!;
      if (isFileToken(target)) out.push({ path: target, access: 'modify' });
    } else if (verb === 'cat' || verb === 'head' || verb === 'tail' || verb === 'less') {
      for (const a of before) if (isFileToken(a) && !/^\d*>/.test(a)) out.push({ path: a, access: 'read' });
    }
  }
  return out;
}

/** A program that writes what it is given: its redirection authors the file (`echo`, `printf`, `cat <<EOF`). */
const AUTHORING = /^(?:sudo\s+)?(?:echo|printf|cat|tee|envsubst)\b/;
/** A name that says the file holds a run's output: `test_output.txt`, `build.log`, `git_status.txt`. */
const OUTPUT_NAME = /(?:^|[\\/_.-])(?:logs?|output|out|stdout|stderr|status|results?)[_.-]?[^\\/]*\.(?:txt|log|out)$|\.(?:log|out)$/i;

/**
 * Whether a redirection catches a program's output for the agent to read
 * rather than writing a file the task is for: the program is no authoring
 * command, and the file takes its errors too (`2>&1`) or its name says it is
 * output. `bun run cli.ts git pr > pr.md` writes a deliverable;
 * `cargo test > test_output.txt 2>&1` a log.
 */
function capturesOutput(segment: string, rest: string, path: string): boolean {
  if (segment === '' || AUTHORING.test(segment) || /<</.test(segment)) return false;
  return /(?:^|\s)2>&1\b/.test(rest) || OUTPUT_NAME.test(path);
}

/**
 * A command line read for its files (including one wrapped in ssh "…"): heredoc bodies dropped, single-quoted strings
 * kept whole (a sed script or a message with spaces, `;` or `>` stays one word; double quotes often hold a command of
 * their own: `ssh host "cat > /etc/x.yml"`, `bash -c "…"`), and the words of each simple command.
 */
function shellWords(command: string): { flat: string; restore: (w: string) => string; segments: string[][] } {
  const text = command.length > 20_000 ? command.slice(0, 20_000) : command;
  const kept: string[] = [];
  let heredocEnd: string | undefined;
  for (const line of text.split('\n')) {
    if (heredocEnd !== undefined) {
      if (line.trim() === heredocEnd) heredocEnd = undefined;
      continue;
    }
    kept.push(line);
    const m = /<<-?\s*['"]?(\w+)['"]?/.exec(line);
    if (m) heredocEnd = m[1];
  }
  const quoted: string[] = [];
  const flat = kept.join('\n').replace(/'[^'\n]*'/g, (m) => `\u0001${quoted.push(m) - 1}\u0002`);
  const restore = (w: string): string => w.replace(/\u0001(\d+)\u0002/g, (_, i: string) => quoted[Number(i)] ?? '');
  const segments = flat.split(/&&|\|\||;|\||\n/).map((segment) => segment.trim().split(/\s+/).map((w) => unquote(restore(w))).filter((w) => w.length > 0));
  return { flat, restore, segments };
}

/**
 * The simple commands of a command line (`sudo` left out), each with how a path it names resolves: as given when
 * absolute, in the directory a `cd /dir` before it went to, and not at all after a `cd` it cannot follow (`cd ~/x`,
 * `cd $DIR`): a wrong file named is worse than none.
 */
function commandsOf(command: string): { words: string[]; at: (path: string) => string | undefined }[] {
  const out: { words: string[]; at: (path: string) => string | undefined }[] = [];
  let dir: string | null = '';
  for (const segment of shellWords(command).segments) {
    const words = segment[0] === 'sudo' ? segment.slice(1) : segment;
    if (words[0] === 'cd') {
      const to = words[1] ?? '';
      dir = to.startsWith('/') ? to.replace(/\/+$/, '') : null;
      continue;
    }
    const base = dir;
    out.push({ words, at: (p) => (p.startsWith('/') ? p : base === null ? undefined : base ? `${base}/${p.replace(/^\.\//, '')}` : p) });
  }
  return out;
}

/**
 * The files a command line removes: `rm [-f|-r…] f…` and `git rm f…` (with or without sudo; no globs; `git rm
 * --cached` keeps the file). A relative path is taken where a `cd` before it went (see commandsOf). `leadingOnly`:
 * the removals before any other command only (in a line that failed, they ran whatever failed after them).
 */
export function shellRemovals(command: string, leadingOnly = false): string[] {
  const out: string[] = [];
  for (const { words: w, at } of commandsOf(command)) {
    const from = w[0] === 'rm' ? 1 : w[0] === 'git' && w[1] === 'rm' ? 2 : -1;
    if (leadingOnly && from < 0) break;
    if (from < 0 || (from === 2 && w.includes('--cached'))) continue;
    for (const a of w.slice(from)) {
      if (a.startsWith('-') || !isFileToken(a)) continue;
      const path = at(a);
      if (path !== undefined) out.push(path);
    }
  }
  return out;
}

/**
 * The files a command line puts back as a commit holds them: `git checkout [<commit>] -- path…` and `git restore
 * [options] path…` (not `--staged` alone, which only unstages). Relative paths are taken as for removals.
 */
export function shellRestores(command: string): string[] {
  const out: string[] = [];
  for (const { words: w, at } of commandsOf(command)) {
    if (w[0] !== 'git' || (w[1] !== 'checkout' && w[1] !== 'restore')) continue;
    const dashes = w.indexOf('--');
    if (w[1] === 'checkout' && dashes < 0) continue;
    if (w[1] === 'restore' && w.includes('--staged') && !w.includes('--worktree') && !w.includes('-W')) continue;
    const operands = dashes >= 0 ? w.slice(dashes + 1) : w.slice(2).filter((a, i, all) => !a.startsWith('-') && !['-s', '--source'].includes(all[i - 1] ?? ''));
    for (const a of operands) {
      const path = isFileToken(a) ? at(a) : undefined;
      if (path !== undefined) out.push(path);
    }
  }
  return out;
}

/**
 * The files a command line moves: `mv [-f|-v…] src… dest` and `git mv` (with or without sudo; no globs). Several
 * sources, or a destination ending in `/` or with no extension, go into that directory under their own names;
 * one source to a file name is a rename. Relative paths are taken as for removals.
 */
export function shellMoves(command: string): { from: string; to: string }[] {
  const out: { from: string; to: string }[] = [];
  for (const { words: w, at } of commandsOf(command)) {
    const from = w[0] === 'mv' ? 1 : w[0] === 'git' && w[1] === 'mv' ? 2 : -1;
    if (from < 0) continue;
    const operands = w.slice(from).filter((a) => !a.startsWith('-'));
    if (operands.length < 2) continue;
    const dest = operands[operands.length - 1]!;
    if (/[*?$`{}]/.test(dest) || !/[A-Za-z]/.test(dest)) continue;
    const sources = operands.slice(0, -1);
    const intoDirectory = sources.length > 1 || dest.endsWith('/') || !/\.[A-Za-z][\w]{0,7}$/.test(dest.replace(/^.*\//, ''));
    for (const source of sources) {
      if (!isFileToken(source)) continue;
      const a = at(source);
      const b = at(intoDirectory ? `${dest.replace(/\/+$/, '')}/${source.replace(/^.*\//, '')}` : dest);
      if (a !== undefined && b !== undefined) out.push({ from: a, to: b });
    }
  }
  return out;
}
