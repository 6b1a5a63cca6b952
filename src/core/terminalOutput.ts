/**
 * What a command printed, as its terminal showed it (escapes decoded, colour
 * codes, wraps and prompts gone), and the lines of it that say why it failed:
 * the most telling error lines and their signatures, so two failures with one
 * cause are known as one.
 */
import { clipChars, shortenPaths } from './digest';
import { decodeEntities } from './tools';

/** Lines that name an error: what a failed tool's output says about why. */
const ERROR_WORDS = /error|exception|fail|traceback|not found|denied|cannot|can't|refus|invalid|unable|no such|not allowed|blocked|timed? ?out|requires approval|does not exist|doesn't exist|not permitted|rejected|forbidden|missing|unknown|not a valid|no module|fatal/i;

/** How much of a long output's end is read for what it printed. */
const TAIL_CHARS = 6000;
/** How far back the tail reaches for the start of the line it cut. */
const LINE_BACK_CHARS = 1000;

/** Output text as a terminal showed it: JSON string escapes of an exported render decoded, colour codes removed. */
export function terminalText(output: string): string {
  // Copilot (SpecStory) wraps what the terminal printed in its tool record: `"terminalCommandOutput": { "text": "…" }`.
  // A record with no such field showed nothing (the output went to a file); the rest of it is the tool's bookkeeping.
  const wrapped = output.includes('"terminalCommandOutput"') ? /"terminalCommandOutput"\s*:\s*\{\s*"text"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(output) : null;
  if (!wrapped && output.includes('"terminalToolSessionId"') && output.includes('"terminalCommandState"')) return '';
  if (wrapped?.[1]) {
    try {
      output = decodeEntities(JSON.parse(wrapped[1]) as string);
    } catch {
      /* read as it stands */
    }
  }
  // The last 6,000 characters, from the start of the line they cut: a line cut at its head would pass for another error.
  const from = Math.max(0, output.length - TAIL_CHARS);
  const head = output.slice(Math.max(0, from - LINE_BACK_CHARS), from);
  const escaped = head.lastIndexOf('\\n');
  const lineEnd = Math.max(head.lastIndexOf('\n'), escaped >= 0 ? escaped + 1 : -1);
  const tail = output.slice(lineEnd >= 0 ? from - head.length + lineEnd + 1 : from);
  const decoded = /\\[rnt]|\\u00[0-9a-f]{2}/i.test(tail) ? tail.replace(/\\r\\n|\\n|\\r/g, '\n').replace(/\\t/g, ' ').replace(/\\u001b/gi, '\u001b').replace(/\\"/g, '"') : tail;
  // eslint-disable-next-line no-control-regex
  return unwrapped(decoded.replace(/\u001b\[[0-9;?]*[A-Za-z]|\[\d+(?:;\d+)*m/g, ''));
}

/** Narrowest width a terminal is taken to wrap at. */
const WRAP_MIN_COLUMNS = 78;
/** Narrowest width read as a wrap at all, where several lines end at it. */
const NARROW_WRAP_MIN_COLUMNS = 40;

/**
 * Lines a terminal wrapped at its width joined again: an export keeps the wrap mid-word ("…tasks.md: No such
 * file or di" / "rectory"). A line as long as the longest, ending inside a word the next line goes on with.
 */
function unwrapped(text: string): string {
  const lines = text.split('\n');
  let width = 0;
  for (const line of lines) width = Math.max(width, line.length);
  // The longest line is a wrap only at a terminal's width: one more line as long, or a usual column count; a
  // narrower width only where three lines or more end at it (an export that wrapped a log at 65 columns).
  const atWidth = lines.filter((l) => l.length === width).length;
  if (width < WRAP_MIN_COLUMNS ? width < NARROW_WRAP_MIN_COLUMNS || atWidth < 3 : atWidth < 2 && !TERMINAL_COLUMNS.has(width)) return text;
  const out: string[] = [];
  for (const line of lines) {
    const previous = out[out.length - 1];
    // A word cut by the wrap goes on in its own case: "…is missing" then "Exit code: 1" are two lines.
    // Or cut after an opening bracket: "…bind on address ('" / "127.0.0.1', 8000): address already in use".
    // At a narrow width a line of one word (a hash, a path, a listed name) is no wrap: lines of them are often as long.
    const cut = previous !== undefined && previous.length % width === 0 && (width >= WRAP_MIN_COLUMNS || / /.test(previous));
    const wraps = cut && ((/\w$/.test(previous) && /^\w/.test(line) && !(/[a-z]$/.test(previous) && /^[A-Z]/.test(line))) || (/[(\[{]['"]?$/.test(previous) && /^[\w'"]/.test(line)));
    if (wraps && !PROMPT_LINE.test(previous) && !PROMPT_LINE.test(line)) out[out.length - 1] = previous + line;
    else out.push(line);
  }
  return out.join('\n');
}

/** Column counts terminals are commonly set to. */
const TERMINAL_COLUMNS = new Set([80, 100, 120, 132, 160]);

/**
 * A shell prompt a terminal capture shows before a command or after it ends:
 * `user@host dir % cmd`, `user@host:~/dir$ cmd`, `(venv) user@host dir %`,
 * `PS C:\\dir> cmd`, macOS bash's `host:dir user$ cmd`. Exported transcripts
 * (SpecStory, Cursor) keep them in a command's output; they are the terminal,
 * not what the command said.
 */
const PROMPT_LINE = /^(?:\([\w.-]+\)\s*)?[\w.-]+@[\w.-]+(?::[^\s$%>]*)?(?:\s+[^\s$%>]+)?\s*[%$#>](?:\s|$)|^PS [A-Za-z]:\\[^>]*>(?:\s|$)|^[\w.-]+:[^\s$%>]*\s+[\w.-]+\s*[$#](?:\s|$)/;

/**
 * What a harness prints around every command's output (exit codes are read apart: findExitCode): SWE-agent's open
 * file, directory and prompt; OpenHands' "[The command completed with exit code 1.]", "[Command finished with exit
 * code 1]", working directory, interpreter and its notes of output cut or shown before; Roo Code's "Command executed
 * in terminal within working directory '…'. Exit code: 1", its "not successful" notice and "Output:"; Cline's status
 * line.
 */
const HARNESS_LINE = new RegExp(
  [
    /^\((?:Open file|Current directory): [^)]*\)$|^bash-\$$/,
    /^\[(?:The command completed with exit code -?\d+\.[^\]]*|Command finished with exit code -?\d+|Command exited with code -?\d+|Current working directory: [^\]]*|Python interpreter: [^\]]*|Below is the output of the previous command\.|Previous command outputs are truncated\. Showing the last \d+ lines of the output below\.)\]$|^(?:EXECUTION RESULT of \[[\w-]+\]|Observed result of command executed by user):$/,
    /^Command executed in (?:terminal within working directory )?'[^']*'\..*$|^Command execution was not successful, inspect the cause and adjust as needed\.$|^Output:$/,
    /^Command (?:executed successfully \(exit code 0\)|failed with exit code -?\d+|executed)\.$/,
  ]
    .map((re) => re.source)
    .join('|'),
);
/** SWE-agent's end-of-command marker, glued to the last line ("Hello World from Perl!///PROCESS-DONE:0:PROCESS-DONE///"). */
const PROCESS_DONE = /\/{3}PROCESS-DONE:-?\d+:PROCESS-DONE\/{3}/g;
/** curl's progress meter on stderr: its two header lines and its rows of counts and times. */
const CURL_PROGRESS = /^% Total\s+% Received|^Dload\s+Upload\s+Total|^\d+(?:\.\d+)?[kMG]?(?:\s+\d+(?:\.\d+)?[kMG]?){7}\s+(?:[\d:-]{7,8}\s+){3}\d/;

/** The lines a command printed: the terminal's text, trimmed, without blank lines, prompts, the harness's trailer and markers, curl's progress meter and the echoed command. */
export function outputLines(output: string): string[] {
  return terminalText(output)
    .replace(PROCESS_DONE, '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !PROMPT_LINE.test(l) && !HARNESS_LINE.test(l) && !CURL_PROGRESS.test(l));
}

/** How telling an output line is about why a tool failed. */
export function errorWeight(raw: string): number {
  // A git server's lines come prefixed ("remote: error: GH013: Repository rule violations found"): the prefix is no part of them.
  const line = raw.replace(/^remote:\s*/, '');
  // Stack frames, a test runner's code frame ("65 |   expect(…)"), passing tests: never why.
  // A traceback's header and the `raise …(` line of its last frame say where, not why.
  // A compiler's code frame ("| |____- argument #5 of type `&str` is missing", "--> src/lib.rs:3:1") points, it does not say.
  // A numbered listing of the file ("282:    \"Unable to convert the pixel data…\"") quotes the code, not what went wrong.
  // A pointer to the docs ("For further information visit https://errors.pydantic.dev/…/extra_forbidden") says where to read, not why.
  if (/^(?:For (?:more|further) information\b|See https?:\/\/)/i.test(line)) return -5;
  if (/^\s*(?:at\s|File "|\^+$|~+$|-{3,}|={3,}|✓|✔|√|PASS\b|ok\s|\d+\s*\||\d+:\s|\||-->|Traceback \(most recent call last\)|raise\b)/.test(line)) return -5;
  // What only says that the command failed ("error: failed to push some refs to …") ranks below why it did.
  let w = /^error: failed to push some refs\b|^error: script "[^"]*" exited with code \d+/.test(line) ? -3 : 0;
  // A tally of the errors above ("could not compile `x` due to 12 previous errors", "Found 3 errors") is none of its own.
  if (/\b(?:could not compile\b.*\bdue to|aborting due to)\b.*\berrors?\b|^(?:Found|\d+) \d* ?errors?(?: generated| in \d+ files?)?\.?$|^error: build failed$|^error: (?:test|doctest) failed, to rerun\b/i.test(line)) w -= 5;
  // An assertion's message says what differed: "Expected to not contain: \"Initial commit\"", "AssertionError: …".
  if (/^(?:Expected\b.*:|Received\b.*:|AssertionError\b|assert(?:ion)? failed\b)/.test(line)) w += 3;
  if (/\b\w*(?:Error|Exception)\b:|\berror TS\d+|^\s*\d+:\d+\s+error\s|\[(?:ERROR|FATAL|ERR)\]|^(?:error|fatal|ERROR)\b[:\[ ]|^E\d{3,4}\b|npm ERR!|^✗|^FAIL\b/.test(line)) w += 3;
  if (/not found|denied|refus|invalid|unable|no such|not permitted|not a function|is not set|cannot|can't|missing|not allowed|rejected|forbidden|no module|does not exist|doesn't exist|timed? ?out|requires approval|not a valid|unknown|ignored by|unrecognized|illegal option|usage error/i.test(line)) w += 2;
  if (ERROR_WORDS.test(line)) w += 1;
  return w;
}

/** What a failure says when its output shows a Python traceback but not the exception it ends with. */
export const CUT_TRACEBACK = 'a Python traceback (its exception is not in the output)';

/**
 * The lines of a failed tool's output that say why: the two most telling
 * lines naming an error (an error class, a cause), in the order they came,
 * else the last line. Stack frames never.
 */
/** Claude Code's wrapper around a tool's error ("<tool_use_error>File does not exist.</tool_use_error>"): no part of what it says. */
export const TOOL_ERROR_TAGS = /<\/?tool_use_error>/g;

export function errorLine(output: string): string {
  // Column padding ("252:47  error    Strings must use doublequote        quotes") is no content.
  // Python's markers under a frame's source ("~~~~^^^^^") point at a column; they say nothing.
  const lines = outputLines(output.replace(TOOL_ERROR_TAGS, ''))
    .filter((l) => !/^(?:exit code:? -?\d+|\[?process exited|status: \*\*\w+\*\*|```\w*|[{}\[\],]+|"\w+": .{0,40},?|[~^\s]+)$/i.test(l))
    .map((l) => l.replace(/ {3,}/g, '  '));
  const weighed = lines.map((line, at) => ({ line, at, w: errorWeight(line) + causeWeight(lines, at), key: repeatKey(line) }));
  // An error printed again and again (a lint rule broken on 74 lines, one missing field in every config a loop read)
  // is what the run is about: it ranks above an error printed once, and says how often it came.
  const repeats = new Map<string, number>();
  for (const x of weighed) if (x.w > 0) repeats.set(x.key, (repeats.get(x.key) ?? 0) + 1);
  const ranked = weighed
    .map((x) => ({ ...x, times: repeats.get(x.key) ?? 1 }))
    // Only a line that names an error gains by repeating: a runner's help line ("For further information visit …") does not.
    .map((x) => ({ ...x, w: x.w >= 2 ? x.w + (x.times >= 3 ? 2 : x.times - 1) : x.w }))
    .filter((x) => x.w > 0)
    .sort((a, b) => b.w - a.w || a.at - b.at);
  const picked: { line: string; at: number; times: number }[] = [];
  for (const x of ranked) {
    if (picked.length >= 2) break;
    // A second line must name an error or its cause, not merely use the word ("For more information about this error…").
    if (picked.length === 1 && x.w < 2) break;
    if (picked.some((p) => errorSignature(p.line) === errorSignature(x.line))) continue;
    picked.push(x);
  }
  // Nothing names an error: a Python traceback cut before its exception (`| head`) says so rather than quote a frame's
  // source line; otherwise the last line, unless it is a tool's advice ("hint: Turn this message off…").
  if (picked.length === 0 && /^Traceback \(most recent call last\):/m.test(output)) return CUT_TRACEBACK;
  if (picked.length === 0) return clipChars([...lines].reverse().find((l) => !/^(?:hint|help|note):/i.test(l)) ?? lines[lines.length - 1] ?? '', 140);
  picked.sort((a, b) => a.at - b.at);
  const said = (p: (typeof picked)[number], max: number): string => `${clipChars(shortenPaths(p.line, max), max)}${p.times > 1 ? ` (×${p.times})` : ''}`;
  return picked.length === 1 ? said(picked[0]!, 140) : picked.map((p) => said(p, 100)).join(' … ');
}

/**
 * An error wrapped around its cause ("Error: Error when generating parser" / "Caused by:" / "Failed to parse
 * `tree-sitter.json` -- missing field `metadata`", as Rust's anyhow and Java print it): the cause says why, the
 * wrapper only what failed.
 */
function causeWeight(lines: readonly string[], at: number): number {
  if (/^Caused by:$/i.test(lines[at - 1] ?? '')) return 2;
  if (/^Caused by:$/i.test(lines[at + 1] ?? '')) return -2;
  return 0;
}

/** Two printings of one error (a path, a quoted name, a number apart) share this. */
function repeatKey(line: string): string {
  return line
    .replace(/(['"`])[^'"`\n]*\1/g, 'Q')
    .replace(/\S*[/\\]\S*/g, 'P')
    .replace(/\d+(?:\.\d+)?/g, '#')
    .toLowerCase()
    .replace(/\s+/g, ' ');
}

/** An error line with its variable parts (numbers, hex, paths' tails) removed: two failures with one cause share it. */
export function errorSignature(line: string): string {
  // The clause after the last colon names the cause ("… child_copy: cygheap read copy failed, …").
  const clauses = line.split(/:\s+/);
  const tail = clauses.length > 1 && (clauses[clauses.length - 1]!.match(/[a-z]{3,}/gi)?.length ?? 0) >= 2 ? clauses[clauses.length - 1]! : line;
  const words = tail
    .replace(/(['"`])[^'"`\n]*\1/g, ' ')
    .replace(/\S*[/\\]\S*/g, ' ')
    .toLowerCase()
    .match(/[a-z][a-z_-]{2,}/g);
  const signature = (words ?? []).slice(0, 6).join(' ') || tail.toLowerCase().replace(/\d+/g, '#').trim().slice(0, 40);
  // A system error says what went wrong with something the clause before names ("cannot change to '/test/repo': No such
  // file or directory"): two of them are one cause only about one thing.
  const before = tail !== line && SYSTEM_ERROR.test(tail.trim()) ? clauses[clauses.length - 2]!.trim() : '';
  const subject = /^\S+$/.exec(before) ?? /(['"`])([^'"`\n]+)\1|\S*[/\\.]\S*/.exec(before);
  return subject ? `${signature} @${subject[2] ?? subject[0]}` : signature;
}

/** An operating system's error message: the same words for any file, host or command it is about. */
const SYSTEM_ERROR = /^(?:no such file or directory|permission denied|is a directory|not a directory|file exists|directory not empty|operation not permitted|connection refused|command not found|no such host|name or service not known)\.?$/i;

/** The signatures of every error a line quotes (its pieces are joined by " … ", its causes by " · "): two failures with one cause share one. */
export function errorSignatures(text: string): Set<string> {
  // A test run's counts ("3 passed, 4 failed") are no cause: every failing run of a suite has them.
  const pieces = text.split(/ … |; | · /).filter((piece) => !/^\d+ (?:passed|failed)(?:, \d+ failed)?$/.test(piece.trim()));
  return new Set(pieces.map((piece) => errorSignature(piece.replace(/^…|…$/g, ''))).filter((sig) => sig !== ''));
}
