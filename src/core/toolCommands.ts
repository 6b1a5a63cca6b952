/**
 * The command line a shell-family call ran and the exit code its output
 * states, from the input in any agent's shape or from an exported rendering
 * of the result.
 */
import { MARKER_WINDOW, asRecord, decodeEntities, getField, stringField } from './toolInput';
import { classifyTool, isShellName, type ToolFamily } from './toolKinds';
import type { ToolInvocation } from './types';

/** A command that runs tests: a test runner by name, or any command with a word `test` (`npm test`, `cargo test`, `bun test`). */
export const TEST_COMMAND = /\b(?:test|tests|jest|vitest|mocha|pytest|rspec|phpunit|ctest|npm t)\b/i;

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

export interface ExitMatch {
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

// A code ends a sentence ("[The command completed with exit code 1.]", OpenHands) but is not a hex status or a decimal.
const GENERIC_EXIT_RE =
  /\b(?:exit(?:ed)?\s+(?:with\s+)?(?:exit\s+)?(?:code|status)|exit\s*code|return\s*code|returncode)\s*[:=]?\s*(-?\d+)(?!\w|\.\d)/i;

// Structured exit-code markers, each with a literal that every match contains (undefined for the
// case-insensitive execa marker, which always runs).
const HEAD_MARKERS: ReadonlyArray<readonly [string | undefined, RegExp]> = [
  ['</exit_code>', /<exit_code>\s*(-?\d+)\s*<\/exit_code>/],
  ['</returncode>', /<returncode>\s*(-?\d+)\s*<\/returncode>/],
  ['"exitCode"', /"exitCode"\s*:\s*(-?\d+)/],
  [undefined, /Command failed with exit code (-?\d+)/i],
  // Roo Code's execute_command: "Command executed in terminal within working directory '…'. Exit code: N" (a failure
  // says so first, on its own line), then "Output:"; its output saved aside: "Command executed in '…'. Exit code: N".
  ['Command executed in', /^Command executed in (?:terminal within working directory )?'[^'\n]*'\.\s*(?:Command execution was not successful[^\n]*\n)?Exit code:\s*(-?\d+)/],
  // Cline: "[Command exited with code N]" before the output (its SDK), "Command failed with exit code N." (above).
  ['[Command exited with code', /^\[Command exited with code (-?\d+)\]/],
];
const TAIL_MARKERS: ReadonlyArray<readonly [string, RegExp]> = [
  [':PROCESS-DONE', /PROCESS-DONE:(-?\d+):PROCESS-DONE/],
  ['</exit_code>', /<exit_code>\s*(-?\d+)\s*<\/exit_code>/],
  ['</returncode>', /<returncode>\s*(-?\d+)\s*<\/returncode>/],
];

export function findExitCode(output: string): ExitMatch | undefined {
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
 * (first line) and `<exit_code>`, mini-swe-agent `<returncode>`, Roo's first line, Cline's
 * `[Command exited with code N]`, Copilot
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
// Commands that only look
// ---------------------------------------------------------------------------

/**
 * A step of a command line that changes nothing: it prints files, listings, searches, processes, versions, a
 * repository's state. `git branch` only as a listing; `find` only without an action that runs or deletes; `curl`
 * only as a GET whose answer is printed (no method, data, form, upload or output file).
 */
const LOOK_STEP =
  /^(?:\S+=\S+\s+)*(?:cd|pwd|cat|head|tail|less|more|ls|tree|which|where|type|file|stat|wc|du|df|ps|pgrep|lsof|netstat|ss|dig|nslookup|host|uname|sw_vers|whoami|id|hostname|date|printenv|defaults read|jq|grep|egrep|fgrep|rg|ag|find|fd|diff|cmp|sort|uniq|cut|tr|nl|column|echo|printf|sed -n|git (?:status|log|diff|show|rev-parse|describe|ls-files|blame|grep|shortlog|reflog|config --get|remote -v|submodule status|stash list|branch(?:\s+(?:-a|-r|-v|-vv|--list|--show-current|--all))*\s*$)|curl(?![^|;&]*\s(?:-[a-zA-Z]*[XdFTOo]\b|--(?:data|form|request|upload|output|remote-name)))|systemctl (?:status|is-active|is-enabled)|docker (?:ps|images|inspect|logs)|kubectl (?:get|describe|logs)|npm (?:ls|list|view|outdated)|pip3? (?:show|list|freeze)|\S+ (?:--version|-V|version))(?:\s|$)/;
/** What makes a looking step act: an action of find, sed editing in place. */
const ACTING = /\s-(?:delete|exec|execdir|ok|okdir|fprint\S*)\b|\bsed\s+(?:-\S*\s+)*-i/;
/** Programs that only tidy files or the shell (`rm tmp.txt`, `mkdir -p out`, `git add -A`): they say nothing of the task's state. */
export const TIDYING_PROGRAMS = 'echo|printf|cd|mkdir|rm|rmdir|cp|mv|touch|chmod|chown|ln|git add|sleep|clear|true|export';
const TIDYING_STEP = new RegExp(`^(?:\\S+=\\S+\\s+)*(?:${TIDYING_PROGRAMS})(?:\\s|$)`);
/** A subshell, which may run anything. */
const SUBSHELL = /\$\(|`/;
/** A redirection that writes a file (not 2>&1, not >/dev/null). */
const WRITES_FILE = />>?\s*(?!&|\/dev\/null\b)\S/;

/**
 * Whether every step of a command line (split at `&&`, `||`, `;`, `|` and line breaks) is a `step`, with no
 * subshell and no file written by a redirection. Quoted text is not parsed: a `>` or `;` inside quotes makes
 * the answer no.
 */
function everyStep(cmd: string, step: RegExp): boolean {
  if (SUBSHELL.test(cmd) || WRITES_FILE.test(cmd.replace(/\d?>&\d/g, ''))) return false;
  const steps = cmd.split(/&&|\|\||[;|\n]/).map((s) => s.trim()).filter((s) => s !== '');
  return steps.length > 0 && steps.every((s) => step.test(s));
}

/**
 * Whether a command line only looks (`ls -la`, `cat a | grep b`, `git status && git log -1`): every step of
 * it changes nothing and nothing is written to a file. Such a command has no effect to record when it works.
 */
export function onlyLooks(cmd: string): boolean {
  return !ACTING.test(cmd) && everyStep(cmd, LOOK_STEP);
}

/** Whether every step of a command line only tidies (see TIDYING_STEP). */
export function onlyTidies(cmd: string): boolean {
  return everyStep(cmd, TIDYING_STEP);
}

/**
 * The Current state's Status after a command that worked: "last command `x` → what it said", or, when it only
 * tidied and said nothing, the status before it stands (what the last command that said something, or the failure
 * still open, says) with "then `rm …` finished" after it.
 */
export function commandStatus(previous: string, label: string, outcome: string, tidies: boolean): string {
  if (tidies && /^(?:last command |blocked: |last change)/.test(previous)) return `${previous.replace(/; then `[^`]*` [^;]*$/, '')}; then ${label} ${outcome}`;
  return `last command ${label} ${outcome}`;
}
