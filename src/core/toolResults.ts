/**
 * What a tool call shows the summary: a command's label and program, whether
 * it failed (by its exit code or by what it printed), what it observed, the
 * test counts, a commit, what it applied; a file's written or read text, an
 * edit's changed line, a todo tool's plan.
 */
import { clipChars, clipCommand, handles, shortenPaths } from './digest';
import type { Redactor } from './redact';
import { planTitle, questionsAsked } from './shortReplies';
import { asRecord, decodeEntities, stringField } from './toolInput';
import { errorLine, outputLines, terminalText, TOOL_ERROR_TAGS } from './terminalOutput';
import { exitCode, fileTouches, shellCommand, TEST_COMMAND, TIDYING_PROGRAMS } from './tools';
import type { ToolInvocation } from './types';
import { commitLine, pushedRefs, pushedText } from './gitLines';

/** A command as a failure or an applied change quotes it. */
const LABEL_CHARS = 72;
/** A question the agent put to the user names its call at this many characters. */
const QUESTION_LABEL_CHARS = 160;

export function firstLine(text: string, max = 200, shell = false): string {
  const lines = text.trim().split('\n');
  // A script's comment ("# 1. Start Qdrant") names no command: its first command does. A here-document it opens at its
  // end says what it holds by its first line (`git commit -m "Update gitleaks config…"` for `"$(cat <<'EOF'`).
  const at = shell ? Math.max(0, lines.findIndex((l) => l.trim() !== '' && !/^\s*#(?:\s|$)/.test(l))) : 0;
  const line = lines[at] ?? '';
  const body = shell && /<<-?\s*['"]?\w+['"]?\W*$/.test(line) ? lines.slice(at + 1).find((l) => l.trim() !== '')?.trim() : undefined;
  return clipChars(body === undefined ? line : /"\$\(cat <<\S*\s*$/.test(line) ? line.replace(/"\$\(cat <<\S*\s*$/, `"${body}…"`) : `${line} … ${body}`, max);
}

/** A command line without the bodies of its here-documents (`cat <<'EOF' … EOF`). */
export function withoutHeredocBodies(cmd: string): string {
  return cmd.includes('<<') ? cmd.replace(/<<-?\s*['"]?(\w+)['"]?[^\n]*\n[\s\S]*?^\s*\1\s*$/gm, '') : cmd;
}

/**
 * A commit that went through: its hash and message, how it was made when that
 * is unusual (unsigned, amended, forced), and whether the same command pushed
 * it (`git commit … && git push`). A milestone the next step builds on.
 */
export function commitOf(cmd: string, output: string, redactor: Redactor): string | undefined {
  if (!/\bgit\b[^|;&]*\bcommit\b/.test(cmd)) return undefined;
  const head = /\[([\w./#-]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] ?(.*)/.exec(output);
  if (!head) return undefined;
  // The flags of the command, not words of its message (a here-document or a quoted `-m` may say `--no-verify`).
  const bare = withoutHeredocBodies(cmd).replace(/(["'])(?:\\.|(?!\1)[^\\])*\1/g, '""');
  const flags = [...bare.matchAll(/--(?:no-gpg-sign|no-verify|amend|allow-empty)\b|(?<=\s)-S\b/g)].map((m) => m[0]).concat(pushedRefs(cmd, output).length > 0 ? ['pushed'] : []);
  // An export that numbered the message's lines and joined them ("[dev d38df25]    1 docs…    2    3 Add…"): line 1 is the subject.
  const subject = /^\s{2,}1\s/.test(head[3]!) ? head[3]!.replace(/^\s+1\s+/, '').split(/\s{2,}\d+(?:\s|$)/)[0]! : head[3]!;
  const message = clipChars(redactor.redact(subject.trim() || (/-m\s+(["'])(.*?)\1/.exec(cmd)?.[2] ?? '')).text, 100);
  return commitLine(head[2]!, head[1]!, message, flags);
}

/**
 * An error a tool's output reports when the tool gives no exit code and no
 * error flag (aider's console, a SpecStory-rendered terminal): a line naming
 * an error class or a fatal condition among the last lines of the output.
 */
const OUTPUT_ERROR =
  /^(?:\S+\.)?\w*(?:Error|Exception)\b(?::|\s-\s)|^\[(?:ERROR|FATAL|ERR)\]|^(?:error|fatal|ERROR|FATAL)\b[:\[ ]|^(?:Error|Fatal) [^\n:]{1,60}: \S|^Traceback \(most recent call last\)|\bcommand not found\b|: No such file or directory\b|\bPermission denied\b|\bis not recognized as (?:an internal|the name)|^Invalid command\b|\bRead-only file system\b|\bSyntaxError\b|^E\d{3,4}\b|\bnpm ERR!|\bSearchReplaceNoExactMatch\b|\bdid not match any file|\bModuleNotFoundError\b|\bCannot find module\b|\bsegmentation fault\b|\brefusing to\b|^\s*✖|\bFAILED\b|\bfile not found\b/m;
/** An error that ended a command is among its last lines: a traceback's verdict can sit some 40 lines up (a list of validation errors). */
const OUTPUT_TAIL_LINES = 40;

/**
 * A tool saying, at the top of its output, that it did not apply the change it
 * was asked for (SWE-agent's linting `edit`: "Your proposed edit has introduced
 * new syntax error(s)", followed by the file as it would have looked; Codex's
 * "apply_patch verification failed: Failed to find expected lines in …"; Gemini
 * CLI's "Failed to edit, 0 occurrences found for old_string in … No edits made.").
 */
const CHANGE_NOT_APPLIED =
  /\bproposed edit has introduced new syntax error|\b(?:changes?|edits?) (?:has|have|was|were) not (?:been )?applied\b|\bwould have looked if applied\b|^apply_patch verification failed:|^Failed to edit, (?:0 occurrences found|expected \d+ occurrences?)\b/i;
/** How much of the start of an output is searched for CHANGE_NOT_APPLIED. */
const OUTPUT_HEAD_CHARS = 1000;

/** The start of an output that says its change was not applied (where it says why), else undefined. */
export function changeNotApplied(output: string): string | undefined {
  const head = output.slice(0, OUTPUT_HEAD_CHARS);
  return CHANGE_NOT_APPLIED.test(head) ? head : undefined;
}

/** Whether a call failed by what it reports: its error flag, a non-zero exit code, or a change it says it did not apply. */
export function callFailed(tool: ToolInvocation): boolean {
  if (tool.isError) return true;
  const code = exitCode(tool);
  return (code !== undefined && code !== 0) || (tool.output !== undefined && changeNotApplied(tool.output) !== undefined);
}

/** A placeholder a command in documentation holds where a real one names a value: `<task-id>`, `<repo_url>`. */
const PLACEHOLDER_WORD = /<[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+>/i;

/** A command that prints something whenever it runs, if only an error: a status, a listing, a version. */
const PRINTS_ALWAYS = /\b(?:systemctl|service|docker|kubectl|brew)\b.*\bstatus\b|\bgit status(?!.*(?:\s-s\b|--short|--porcelain))|^\s*(?:sudo\s+)?(?:pwd|whoami|ps|echo\s+\S)|\s--version\b/;

/**
 * Whether a shell call is a snippet quoted from text rather than a command
 * that ran: an export that turns the code blocks of a message into calls
 * (SpecStory's Cursor logs) leaves them with an empty result, no exit code,
 * and the marks of documentation — a first line that is a patch line
 * (`+  minsky session start`, `+cp a b`), a placeholder (`<task-id>`) outside a
 * here-document, a comment over more comments or indented lines (a
 * block copied out of a list), commands each with a comment after it (a
 * usage listing), or a script ending in a command that always prints (a
 * status, a listing) that printed nothing. Nothing it would have
 * written, run or failed happened as far as the record shows.
 */
export function quotedSnippet(tool: ToolInvocation): boolean {
  if (tool.isError || tool.output === undefined || tool.output.trim() !== '' || exitCode(tool) !== undefined) return false;
  const cmd = shellCommand(tool);
  if (cmd === undefined) return false;
  const script = withoutHeredocBodies(cmd);
  const lines = script.split('\n').filter((l) => l.trim() !== '');
  const first = lines[0] ?? '';
  // A patch's added line may start right after its `+` (`+cp a b`): no shell command starts with one.
  if (/^(?:\+|-(?:\s|#|$))/.test(first) || PLACEHOLDER_WORD.test(script)) return true;
  // A comment heading a script is common in a real one (`# 1. Point git at the key` over `git config …`); a
  // documentation block also has more comments, or the indentation of the list it stood in.
  // A usage listing: commands each with a comment after it (`./manage.sh start    # Start the server`).
  if (lines.filter((l) => /\S\s{2,}#\s/.test(l)).length >= 2) return true;
  // A script whose last command always prints (a status, a listing) showed nothing: it did not run here.
  if (lines.length >= 2 && PRINTS_ALWAYS.test(lines[lines.length - 1]!)) return true;
  if (!/^\s*#(?!!)/.test(first)) return false;
  const comments = lines.filter((l) => /^\s*#(?!!)/.test(l)).length;
  return comments >= 2 || lines.slice(1).some((l) => /^\s{2,}\S/.test(l) && !/^\s*#/.test(l));
}

/** Whether an output with no exit code reports a failure in its last lines, or a change not applied at its start. */
function outputReportsError(output: string): boolean {
  const lines = outputLines(output);
  return OUTPUT_ERROR.test(lines.slice(-OUTPUT_TAIL_LINES).join('\n')) || changeNotApplied(output) !== undefined;
}

/**
 * Whether a command with no exit code failed, by what it printed. A query
 * (`cat`, `grep`, `ls`, `git log`…) prints what it found, errors included: its
 * output is no verdict on itself.
 */
export function commandReportsError(cmd: string | undefined, output: string): boolean {
  if (cmd !== undefined && QUERY_COMMAND.test(commandProper(cmd).trim())) return /^(?:\S+: )?(?:\S+: )?(?:No such file or directory|Permission denied|command not found)\b/m.test(outputLines(output).slice(-3).join('\n'));
  return outputReportsError(output);
}

/** A runner's line counting the tests themselves (after one counting files or suites). */
const TESTS_LINE = /^[ \t]*Tests:?[ \t]+[^\n]*?\d+[ \t]+(?:pass|fail)[^\n]*$/gm;

/**
 * The result line of a test run: counts of passed and failed tests (bun, jest,
 * vitest, mocha, pytest, cargo, go). A time-bound value: the latest run wins.
 */
export function testSummary(output: string): string | undefined {
  // What the terminal printed (a Copilot record wraps it in JSON with its escapes), not the record around it.
  const printed = terminalText(output).slice(-4000);
  // Jest and Vitest count files or suites first ("Test Files  8 passed (8)"), then tests: the tests' line is the count.
  const tail = [...printed.matchAll(TESTS_LINE)].at(-1)?.[0] ?? printed;
  const pass = /(?:^|[\s,;(=:])(\d+)\s+(?:tests?\s+)?(?:pass(?:ed|ing)?)\b/im.exec(tail);
  const fail = /(?:^|[\s,;(=:])(\d+)\s+(?:tests?\s+)?(?:fail(?:ed|ing|ures?)?)\b/im.exec(tail);
  // A result line counts both, or names tests: "3 passed, 1 failed", "Tests: 2 failed", "1 test failed".
  if (!pass && !fail) return undefined;
  if (!(pass && fail) && !/\b(?:tests?|specs?|suites?|examples?)\b/i.test(tail.slice(Math.max(0, (pass ?? fail)!.index - 80), (pass ?? fail)!.index + 80))) return undefined;
  const parts: string[] = [];
  if (pass) parts.push(`${pass[1]} passed`);
  if (fail) parts.push(`${fail[1]} failed`);
  const first = (fail ?? pass)!;
  // The summary must sit on a result line, not in a test's name.
  const line = tail.slice(tail.lastIndexOf('\n', first.index) + 1, tail.indexOf('\n', first.index) >>> 0).trim();
  if (line.length > 160 || /^(?:it|test|describe)\(|['"`]/.test(line)) return undefined;
  return parts.join(', ');
}

/** Commands whose short output is no observation (echoes, moves, navigation): the tidying ones, a checkout, a sourced file. */
const SILENT_COMMAND = new RegExp(`^(?:\\S+=\\S+\\s+)*(?:${TIDYING_PROGRAMS}|git checkout|git switch|source|\\.)\\b(?![^|;&]*[|;&])`);
/** File steps a query runs after (`rm -f tmp-* && git status`): they print nothing when they work, so the output is the query's. */
const SILENT_STEPS = /^(?:(?:rm|mkdir|touch|chmod|cp|mv|git add)\b[^|;&]*&&\s*)+/;
const OBSERVATION_MAX_CHARS = 120;
const OBSERVATION_MAX_LINES = 1;
/** A query's whole answer may be a little longer: its output is the observation, not a log. */
const QUERY_MAX_CHARS = 200;
const QUERY_MAX_LINES = 3;
const QUERY_COMMAND =
  /^(?:\S+=\S+\s+)*(?:cat|head|tail|ls|which|where|type|file|stat|wc|du|df|ps|pgrep|netstat|ss|lsof|dig|nslookup|host|curl|wget|tmutil|sw_vers|uname|whoami|id|env|printenv|defaults read|jq|grep|rg|find|git (?:status|log|rev-parse|branch|remote|show|config --get|describe|tag --list|ls-files)|uci (?:show|get)|systemctl (?:status|is-active|is-enabled)|docker (?:ps|images|inspect)|kubectl get|npm (?:ls|view|list)|pip3? (?:show|list)|\S+ (?:--version|-V|version))\b/;

/** A command that only looks at paths: its failure to find one is what it found. */
const PATH_LOOK = /^(?:\S+=\S+\s+)*(?:ls|stat|file|cat|head|tail|wc|du|test -[edfs]|\[ -[edfs])\s/;
/** A line saying a path is not there, as ls, cat, stat and zsh's globbing say it. */
export const ABSENT_LINE = /(?:no such file or directory|cannot access|cannot stat|does not exist|no matches found)/i;

/**
 * What a look at paths that failed found (`ls -ld CHAT_LOGS transcripts` after
 * a history rewrite removed them, `cat ~/.tmux.conf`; with no command, a read,
 * search or listing tool's "Path does not exist: ~/.tmux.conf"): when every
 * line it printed says a path is not there, their absence, as an observation;
 * otherwise undefined (a failure like any other).
 */
export function absence(cmd: string | undefined, output: string, redactor: Redactor): string | undefined {
  if (cmd !== undefined && !PATH_LOOK.test(commandProper(cmd).trim())) return undefined;
  const lines = outputLines(output.replace(TOOL_ERROR_TAGS, '')).filter((l) => !/^exit code:? -?\d+$/i.test(l));
  if (lines.length === 0 || lines.length > QUERY_MAX_LINES || !lines.every((l) => ABSENT_LINE.test(l))) return undefined;
  return redactor.redact(clipChars(lines.join('; '), QUERY_MAX_CHARS)).text;
}

/**
 * What a command showed, when its whole output is short: a version, a status,
 * a listing of a few names, "No destinations configured". A short output is
 * an observed fact the agent may never restate; a long one is evidence (the
 * record keeps it, the agent's own words say what it meant).
 */
export function observation(cmd: string, output: string, redactor: Redactor): string | undefined {
  if (SILENT_COMMAND.test(cmd.trim())) return undefined;
  // A push's ref updates, an HTML page's title and text: each said whole.
  const refs = pushedRefs(cmd, output);
  const said = refs.length > 0 ? pushedText(refs) : htmlPage(output);
  if (said !== undefined) return redactor.redact(said).text;
  // A terminal's echo of the command (a wrapped prompt line, `</git/local/ 2>/dev/null || true`, a prompt of another
  // shape before the whole command: "linkslate:minsky edobry$ grep '#001' …") is no output.
  const whole = cmd.trim();
  const echoed = (l: string): boolean => {
    const t = l.replace(/^[<>]\s*/, '').trim();
    return t.length >= 8 && (cmd.includes(t) || (whole.length >= 8 && t.includes(whole)));
  };
  const raw = outputLines(output).filter((l) => !/^(?:exit code:? -?\d+|\[?process exited.*|Shell cwd was reset.*)$/i.test(l) && !/^[-=*_~]{3,}$/.test(l) && !GIT_EOL_NOTICE.test(l) && !echoed(l));
  const query = QUERY_COMMAND.test(commandProper(cmd).trim().replace(SILENT_STEPS, ''));
  if (raw.length === 0 || raw.length > (query ? QUERY_MAX_LINES : OBSERVATION_MAX_LINES)) return undefined;
  const names = listingNames(raw);
  const lines = names ?? raw;
  // JSON is one document however a terminal wrapped it ("…,\"mess" / "age\":\"Not Acceptable…"): its lines join as they stood.
  const text = /^[[{]/.test(lines[0] ?? '') ? lines.join('') : lines.join('; ');
  if (text.length > (query ? QUERY_MAX_CHARS : OBSERVATION_MAX_CHARS) || /^(?:ok|done|success(?:ful)?|true|false|yes|no|none|null|nil|undefined)\.?$/i.test(text) || /\b(?:running in (?:the )?background|output is being written)\b/i.test(text)) return undefined;
  // What a listing found is file names (`pre-commit`, `Makefile`), whatever they look like.
  if (names === undefined && handles(text).length === 0 && !/\d|\b(?:no|not|none|empty|missing|disabled|enabled|inactive|active|running|stopped|unknown)\b/i.test(text)) return undefined;
  return redactor.redact(text).text;
}

/** What an HTML page is said by: its title, its text (at most this many characters), where it links and what its forms ask. */
const PAGE_TEXT_CHARS = 160;
const PAGE_MAX_LINKS = 8;

/**
 * An HTML document a command printed (`curl` of a page), said by its title,
 * its visible text, the targets of its links and forms and the names of its
 * fields: `page "Perl Examples": links /cgi-bin/hello.pl, /cgi-bin/forms.pl`.
 * Its markup is the search trace; what the page offers and says is what the
 * next request is built from. Undefined when the output holds no page.
 */
export function htmlPage(output: string): string | undefined {
  // A document: it opens a line, and has a head, a body or its end ("use <html> in the template" is a word).
  const start = output.search(/(?<=^|\n)[ \t]*(?:<!DOCTYPE html|<html[\s>])/i);
  if (start < 0) return undefined;
  const end = output.search(/<\/html>/i);
  const doc = output.slice(start, end > start ? end : undefined);
  if (!/<(?:head|body)[\s>]/i.test(doc) && end < start) return undefined;
  // The entities a transcript's export uses, and the two a page adds.
  const decode = (t: string): string => decodeEntities(t.replace(/&nbsp;/g, ' ').replace(/&apos;/g, "'"));
  const title = decode(/<title[^>]*>([^<]*)<\/title>/i.exec(doc)?.[1]?.trim() ?? '');
  const body = doc.replace(/<head[\s>][\s\S]*?<\/head>|<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>|<!DOCTYPE[^>]*>|<!--[\s\S]*?-->/gi, ' ');
  let text = decode(body.replace(/<[^>]*>/g, ' ')).replace(/\s+/g, ' ').trim();
  if (title && text.startsWith(title)) text = text.slice(title.length).trim();
  const targets = [...new Set([...doc.matchAll(/\b(?:href|action|src)\s*=\s*["']([^"'#][^"']*)["']/gi)].map((m) => m[1]!).filter((t) => !/^(?:https?:)?\/\/(?:www\.)?w3\.org\//i.test(t)))];
  const fields = [...new Set([...doc.matchAll(/<(?:input|select|textarea)\b[^>]*\bname\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1]!))];
  const parts = [
    ...(text ? [`"${clipChars(text, PAGE_TEXT_CHARS)}"`] : []),
    ...(targets.length ? [`links ${targets.slice(0, PAGE_MAX_LINKS).join(', ')}${targets.length > PAGE_MAX_LINKS ? ` and ${targets.length - PAGE_MAX_LINKS} more` : ''}`] : []),
    ...(fields.length ? [`form fields ${fields.slice(0, PAGE_MAX_LINKS).join(', ')}`] : []),
  ];
  if (!title && parts.length === 0) return undefined;
  return `page${title ? ` "${title}"` : ''}${parts.length ? `: ${parts.join('; ')}` : ''}`;
}

/** A line of `ls -l`: mode bits, links, owner, size, date, then the name. */
const LISTING_LINE = /^[-dlcbps][-rwxsStT]{9}[@+.]?\s+\d+\s.*\s(\S+)$/;

/**
 * Output lines with a long listing (`ls -la`) said by its names: the mode
 * bits, owners and dates are the search trace, the names are what it found
 * ("empty directory" when only `.` and `..` are listed). Undefined when the
 * lines are no listing.
 */
function listingNames(lines: readonly string[]): string[] | undefined {
  const listing = lines.filter((l) => LISTING_LINE.test(l) || /^total \d+$/.test(l));
  if (listing.length < 2 || listing.length < lines.length) return undefined;
  const names = listing.map((l) => LISTING_LINE.exec(l)?.[1]).filter((n): n is string => n !== undefined && n !== '.' && n !== '..');
  return [names.length ? names.join(', ') : 'empty directory'];
}

/** What Claude Code, and Cline and Roo, write for a call the user declined. */
const CLAUDE_DECLINED = "The user doesn't want to (?:proceed with this tool use|take this action)";
const CLINE_DENIED = 'The user denied this operation';

/** The start of a result a coding tool wrote for a call the user declined (nothing ran: no tool's output can follow). */
export const DECLINED_START = new RegExp(`^\\s*(?:${CLAUDE_DECLINED}|${CLINE_DENIED})\\b`, 'i');
/** Claude Code's words anywhere in the result (its own text may come first); Cline's open it. */
const CLAUDE_DECLINED_IN = new RegExp(`\\b${CLAUDE_DECLINED}\\b`, 'i');
const CLINE_DENIED_START = new RegExp(`^\\s*${CLINE_DENIED}\\b`, 'i');

/**
 * The user declining a tool call, as the coding tool tells the model (Claude
 * Code: "The user doesn't want to proceed with this tool use. The tool use was
 * rejected… To tell you how to proceed, the user said: …"; Cline and Roo: "The
 * user denied this operation." with their feedback in `<feedback>`; @keeper:
 * "The user declined to run `npm test`."): what the user said with it, '' when
 * nothing, undefined when the output is no rejection.
 */
export function userRejection(output: string): string | undefined {
  if (CLAUDE_DECLINED_IN.test(output)) return /\bthe user said:\s*([\s\S]+)$/i.exec(output)?.[1]!.trim() ?? '';
  if (CLINE_DENIED_START.test(output)) {
    return (/<feedback>\s*([\s\S]*?)\s*<\/feedback>/i.exec(output) ?? /provided the following feedback:\s*"([\s\S]*?)"\s*$/i.exec(output))?.[1]?.trim() ?? '';
  }
  return /^\s*The user declined (?:to run\b|the \w+ to\b)/i.test(output) ? '' : undefined;
}

/** The agent's harness refused the call (read a file before writing it, a file too large to read): no approach failed. */
export const TOOL_PROTOCOL_ERROR = /\bFile has not been read yet\b|\bhas been (?:unexpectedly )?modified since (?:it was )?(?:last )?read\b|\bexceeds (?:the )?maximum allowed (?:size|tokens)\b/i;

/**
 * Where an error was raised: the innermost frame of a Python traceback, or
 * the first frame of a JavaScript stack outside node_modules and Node's own
 * modules — its function and `file:line` (the file's name only).
 */
export function raisedAt(output: string): { fn: string; file: string } | undefined {
  const text = terminalText(output);
  const python = [...text.matchAll(/File "([^"]+)", line (\d+), in ([\w.<>]+)/g)].pop();
  if (python) return { fn: python[3]!, file: `${python[1]!.replace(/^.*[/\\]/, '')}:${python[2]}` };
  for (const m of text.matchAll(/^\s*at (?:async )?([\w$.<>]+) \(([^()\s]+?):(\d+):\d+\)/gm)) {
    if (/node_modules|^(?:node|bun|internal|native):|internal[/\\]/.test(m[2]!)) continue;
    return { fn: m[1]!, file: `${m[2]!.replace(/^.*[/\\]/, '')}:${m[3]}` };
  }
  return undefined;
}

/** A warning line a tool printed: `Warning: …`, `[WARN] …`, `warning[E0599]: …`. */
const WARNING_LINE = /^(?:warning|warn)\b(?:\[[\w-]+\])?\s*[:!]\s*\S|^\[(?:WARN|WARNING)\]\s*\S/i;
/** A warning is worth a line only in a short output: a long build log warns about everything. */
const NOTICE_MAX_LINES = 15;

/**
 * What a command that worked still printed as wrong: an error it went past
 * (`find -exec`, `|| true`, a script that swallows failures) or, in a short
 * output, a warning ("Using ABI version 14 instead"). A query prints what it
 * found (errors in a log it read included), so it has no notice.
 */
export function outputNotice(cmd: string, output: string, redactor: Redactor): string | undefined {
  // `find … -exec`, `… | xargs`: the query runs other commands, whose errors are theirs.
  const runsOthers = /\s-exec(?:dir)?\s|\|\s*xargs\b/.test(cmd);
  if ((QUERY_COMMAND.test(commandProper(cmd).trim()) && !runsOthers) || SILENT_COMMAND.test(cmd.trim())) return undefined;
  const lines = outputLines(output);
  if (OUTPUT_ERROR.test(lines.join('\n'))) return `printed an error: ${redactor.redact(errorLine(output)).text}`;
  if (lines.length > NOTICE_MAX_LINES) return undefined;
  const warning = lines.find((l) => WARNING_LINE.test(l) && !/^npm WARN deprecated\b/i.test(l) && !GIT_EOL_NOTICE.test(l));
  return warning !== undefined ? `warned: ${redactor.redact(clipChars(warning.replace(/^\[?(?:warning|warn)\]?(?:\[[\w-]+\])?\s*[:!]?\s*/i, ''), 200)).text}` : undefined;
}

/** Git's notice that it will convert a file's line endings ("LF will be replaced by CRLF the next time Git touches it"): routine on Windows, never a fact. */
const GIT_EOL_NOTICE = /\b(?:CR)?LF will be replaced by (?:CR)?LF\b/;

/** Commands whose non-zero exit is an answer, not a failure (no match, files differ, not found by a probe). */
export const INFORMATIONAL_EXIT = /^(?:\S+=\S+\s+)*(?:grep|egrep|fgrep|rg|ag|ack|diff|cmp|test|\[|pgrep|pidof|lsof|git diff|git grep|git show-ref|git rev-parse --verify|systemctl is-\w+|getent|dpkg -s|rpm -q|command -v|which|type|hash)\b/;

/**
 * Commands that change the system rather than a file (files changed are Deliverables already). Making a script
 * executable (`chmod +x run.py`) is a step of running it, not a setting: a mode (`chmod 600 key`) is one.
 */
export const CONFIGURING_COMMAND =
  /\b(?:uci (?:set|add_list|del_list|delete|add|commit)|git config (?!.*(?:--get|--list|-l\b))|systemctl (?:restart|enable|disable|stop|start|mask)|service \S+ (?:restart|stop|start)|\/etc\/init\.d\/\S+ (?:restart|stop|start|enable|disable)|git (?:remote (?:add|set-url)|branch -[mMdD]|tag|rebase|reset --hard|filter-repo|filter-branch|lfs)|(?:npm|pnpm|yarn|bun) (?:install|add|remove|uninstall|i) \S|pip3? install|uv (?:add|pip install)|cargo add|go get|gem install|apt(?:-get)? (?:install|remove|purge)|brew (?:install|uninstall|upgrade)|winget (?:install|upgrade)|choco install|docker (?:run|rm|stop|compose up|compose down)|kubectl (?:apply|delete|rollout)|terraform apply|crontab|launchctl (?:load|unload|bootstrap)|defaults write|gpg --(?:import|edit-key|import-ownertrust)|ssh-keygen|netsh|Set-ItemProperty|Add-MpPreference|Set-MpPreference|reg add|ufw (?:allow|deny|enable|disable|delete)|iptables (?:-[AIDRFPN]|--(?:append|insert|delete|flush))|nft (?:add|delete|flush)|sysctl -w|chmod (?:[0-7]|[ugoa]*[+=-](?!x\s))|chown )/;

/**
 * What an installer says it installed ("Successfully installed marshmallow-3.13.0",
 * "added 214 packages", "Installed 3 packages"): the versions a later step may
 * depend on, said on the command's "applied:" line.
 */
const INSTALLED = /^\s*(?:Successfully installed|added \d+ packages?|Installed \d+ packages?|installed \d+ packages?|\d+ packages? installed|installed \S+@\d|\+ \S+@\d)[^\n]*/gm;

/**
 * What an install printed it installed: the line that names a package the command asked for ("installed
 * commander@13.1.0", not the "+ typescript@5.8.3" bun lists first); for an install of everything, its count
 * ("12 packages installed"); else the first such line.
 */
export function installedOutcome(cmd: string, output: string): string | undefined {
  const lines = [...output.slice(-4000).matchAll(INSTALLED)].map((m) => m[0].trim());
  const asked = /\b(?:install|add|i)\s+(.*)$/.exec(cmd.split(/&&|\|\||;|\|/)[0]!)?.[1]?.split(/\s+/).filter((w) => w !== '' && !w.startsWith('-')) ?? [];
  const named = asked.length ? lines.find((l) => asked.some((p) => l.includes(p.replace(/@[^@/]*$/, '')))) : lines.find((l) => /\d+ packages?\b/.test(l));
  return named ?? lines[0];
}

/** Commands that undo work: a discarded change is an approach ruled out. */
export const UNDOING_COMMAND = /\bgit (?:checkout -- |checkout \S+ -- |restore |revert |reset --hard|reset (?:--soft |--mixed )?HEAD[~^]|stash(?: push| save)?\b(?! (?:pop|apply|list|show)))/;

export function toolDescription(tool: ToolInvocation, redactor: Redactor): string | undefined {
  const input = tool.input;
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const d = (input as Record<string, unknown>).description;
    if (typeof d === 'string' && d.trim().length >= 6) return clipChars(redactor.redact(d.trim()).text, 120);
  }
  return undefined;
}

/** The program a command runs (after `cd … &&`, environment assignments and `sudo`): what a replacement shares with it. */
export function programOf(cmd: string): string {
  const words = commandProper(cmd).trim().split(/\s+/).filter((w) => !/^\w+=/.test(w) && w !== 'sudo');
  const first = (words[0] ?? '').replace(/^.*[/\\]/, '');
  // `ssh host "cmd"`, `powershell 'cmd'`, `npx tool`: the program is what runs inside.
  if (/^(?:ssh|npx|bunx|powershell|pwsh|cmd|bash|sh|zsh|docker|kubectl)$/.test(first) && words[1]) return `${first} ${words.slice(1).find((w) => !w.startsWith('-') && !/@/.test(w))?.replace(/^['"]/, '') ?? ''}`;
  // A tool of subcommands is as many programs: `git add` working replaces no failed `git log`.
  if (/^(?:git|cargo|npm|yarn|pnpm|bun|go|dotnet|gh)$/.test(first) && words[1]) return `${first} ${words.slice(1).find((w) => !w.startsWith('-')) ?? ''}`;
  return first;
}

/** A command without its leading `cd <dir> &&` (or `source … &&`): what it runs, not where. */
export function commandProper(cmd: string): string {
  return cmd.replace(/^(?:\s*(?:cd|pushd|source|\.)\s+(?:"[^"]*"|'[^']*'|\S+)\s*(?:&&|;)\s*)+/, '');
}

/**
 * How a command's output was routed to the agent: its streams joined or
 * discarded, its head or tail paged, a message echoed should it fail
 * (`|| echo "Qdrant not running"`).
 */
const OUTPUT_PLUMBING = /\s+[12&]?>\s*\/dev\/null\b|\s+2>&1(?=\s|$)|\s*\|\s*(?:head|tail)(?:\s+-n)?(?:\s+[-+]?\d+)?\s*$|\s*\|\s*(?:cat|less|more)\s*$|\s*\|\|\s*echo\b(?:\s+(?:"[^"\n]*"|'[^'\n]*'|[^\s|&;]+))*\s*$|\s*\|\|\s*(?:true|:)\s*$/g;

/** A command without where it runs and how its output was routed: two runs of it look at one thing. */
export function commandCore(cmd: string): string {
  return withoutPlumbing(commandProper(cmd).replace(/\s+/g, ' ').trim());
}

/** A command line without the plumbing of its output, however much of it is stacked (`x 2>&1 | head -5`). */
function withoutPlumbing(line: string): string {
  let out = line;
  for (let before = ''; before !== out; ) [before, out] = [out, out.replace(OUTPUT_PLUMBING, '')];
  return out.trim();
}

/**
 * A command as a line of the summary names it: its first command line
 * (`commandProper`, a script's comments skipped), without the plumbing of its
 * output (`2>&1`, `| head -50`), cut to `max` characters in its middle so that
 * what it acts on, often at its end, stays. Secrets are hidden before it is
 * cut: a cut token would no longer look like one.
 */
export function commandLabel(cmd: string, redactor: Redactor, max: number): string {
  const line = withoutPlumbing(firstLine(redactor.redact(commandProper(cmd)).text, Number.MAX_SAFE_INTEGER, true));
  // Too long: the directories of its long paths go before its middle does (`git add …/Scripts/redact.py && git status`).
  return clipCommand(shortenPaths(line, max), max);
}

export function toolLabel(tool: ToolInvocation, redactor: Redactor): string {
  const cmd = shellCommand(tool);
  if (cmd !== undefined) return `\`${commandLabel(cmd, redactor, LABEL_CHARS)}\``;
  // aider's console is named by itself: the files it added to the chat along the way are not what it ran on.
  const touches = tool.name === 'aider' ? [] : fileTouches(tool);
  if (touches.length) return `${tool.name} ${redactor.redact(touches[0]!.path).text}`;
  // A result whose call the log lost (a broken line in the original) has no name to give.
  if (tool.name === 'unknown' && tool.input === undefined) return 'a call missing from the record';
  // A question put to the user (AskUserQuestion, ask_followup_question) is named by what it asked, a plan (ExitPlanMode) by its title.
  const asked = questionsAsked(tool.input)[0] ?? planTitle(tool.input);
  return asked ? `${tool.name} "${clipChars(redactor.redact(asked).text, QUESTION_LABEL_CHARS)}"` : tool.name;
}

/**
 * A call that looked at a path and saw `saw`, named with the path: a search or listing tool names no file of its own (`LS` →
 * "LS /home/me/.config/a"), so two looks at two missing folders are not one.
 */
export function lookLabel(tool: ToolInvocation, redactor: Redactor, saw: string): string {
  const label = toolLabel(tool, redactor);
  const where = stringField(asRecord(tool.input), 'path', 'directory', 'dir_path', 'target_directory', 'relative_workspace_path');
  // Unless the label or what it saw names the path already ("Grep → Path does not exist: ~/.tmux.conf").
  return where === undefined || `${label} ${saw}`.includes(redactor.redact(where).text) ? label : `${label} ${redactor.redact(where).text}`;
}

/** The text a write call creates its file with (Claude Code Write, str_replace_editor create, Cursor, Copilot). */
export function writtenContent(tool: ToolInvocation): string | undefined {
  const input = tool.input;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return undefined;
  const r = input as Record<string, unknown>;
  for (const k of ['content', 'file_text', 'contents', 'text', 'code']) if (typeof r[k] === 'string') return r[k] as string;
  // aider creates a file with an empty SEARCH block.
  return r.search === '' && typeof r.replace === 'string' ? r.replace : undefined;
}

/** A here-document short enough to quote whole in a deliverable's note: lines and characters. */
const HEREDOC_NOTE_LINES = 8;
const HEREDOC_NOTE_CHARS = 240;

/**
 * What a shell command wrote with a here-document (`cat > f << 'EOF' … EOF`), its lines joined with "; ",
 * comments left out, when it is short enough to quote; otherwise undefined.
 */
export function heredocBody(cmd: string): string | undefined {
  const m = /<<-?\s*(['"]?)(\w+)\1[^\n]*\n([\s\S]*?)\n\s*\2\b/.exec(cmd);
  if (!m) return undefined;
  const lines = m[3]!.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  const text = lines.join('; ');
  return lines.length > 0 && lines.length <= HEREDOC_NOTE_LINES && text.length <= HEREDOC_NOTE_CHARS ? text : undefined;
}

/** The text of a file as a read tool showed it: without its header line and the line numbers it prefixed. */
export function readContent(output: string): string {
  // The harness appends its reminders to what a read returns (Claude Code): they are no words of the file.
  const lines = output.slice(0, 6000).replace(/<system-reminder>[\s\S]*?(?:<\/system-reminder>|$)/g, '').split('\n');
  // A tool's header names the file, not what it says ("Here's the result of running…", "[File: …]", Copilot's
  // "Read [](file:///…/README.md#1-1), lines 1 to 30", which an export keeps without the lines).
  if (/^(?:Here's the result of running|\s*`[^`\n]+`\s*$|\[File: |Read \[[^\]]*\]\([^)]*\))/.test(lines[0] ?? '')) lines.shift();
  const numbered = /^\s*\d+(?:→|\t|\|\s?|:\s)/;
  const filled = lines.filter((l) => l.trim() !== '');
  if (filled.length > 0 && filled.filter((l) => numbered.test(l)).length * 2 >= filled.length) return lines.map((l) => l.replace(numbered, '')).join('\n');
  return lines.join('\n');
}

/** An edit's old and new text, when the tool says them (Claude Code Edit, str_replace_editor, aider). */
export function editTexts(tool: ToolInvocation): { old: string; new: string } | undefined {
  const input = tool.input;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return undefined;
  const r = input as Record<string, unknown>;
  const o = r.old_string ?? r.old_str ?? r.search;
  const n = r.new_string ?? r.new_str ?? r.replace;
  return typeof o === 'string' && typeof n === 'string' && o !== n ? { old: o, new: n } : undefined;
}

/**
 * The first line an edit changed, as `old` → `new` (each clipped): the patch coordinate a reader needs. An edit
 * that only added lines says what it added and where ("added `*.env.*` after `.credentials.json`"), one that only
 * took lines out what it removed: read as `old` → `new`, an added line would seem to replace the one before it.
 */
export function changedLine(before: string, after: string, redactor: Redactor): string | undefined {
  const a = before.split('\n').map((l) => l.trim());
  const b = after.split('\n').map((l) => l.trim());
  const q = (t: string): string => (t === '' ? '(nothing)' : `\`${clipChars(redactor.redact(t).text.replace(/`/g, "'"), 70)}\``);
  const moved = (verb: string, hit: ReturnType<typeof onlyAdded>): string | undefined => hit && `${verb} ${q(hit.line)}${hit.after ? ` after ${q(hit.after)}` : ''}`;
  const shifted = moved('added', onlyAdded(a, b)) ?? moved('removed', onlyAdded(b, a));
  if (shifted) return shifted;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  let old = a[i] ?? '';
  let now = b[i] ?? '';
  // Where they part is a blank line or a bare comment mark ("`#` → (nothing)"): the first line of substance each side lacks.
  if (bare(old) && bare(now)) {
    const inBefore = new Set(a);
    const inAfter = new Set(b);
    old = a.find((l) => !inAfter.has(l) && !bare(l)) ?? '';
    now = b.find((l) => !inBefore.has(l) && !bare(l)) ?? '';
  }
  if (old === '' && now === '') return undefined;
  return `${q(old)} → ${q(now)}`;
}

/**
 * When `longer` is `shorter` with lines put in (every line of `shorter` in it, in order), the first line of
 * substance put in and the last line of substance before it; otherwise undefined.
 */
function onlyAdded(shorter: readonly string[], longer: readonly string[]): { line: string; after: string | undefined } | undefined {
  if (longer.length <= shorter.length || !shorter.some((l) => !bare(l))) return undefined;
  let j = 0;
  let first: { line: string; after: string | undefined } | undefined;
  let last: string | undefined;
  for (const line of longer) {
    if (j < shorter.length && line === shorter[j]) {
      j++;
      if (!bare(line)) last = line;
    } else if (first === undefined && !bare(line)) first = { line, after: last };
  }
  return j === shorter.length ? first : undefined;
}

/** A line with nothing but punctuation: blank, a comment mark, a brace. */
function bare(line: string): boolean {
  return !/[\p{L}\p{N}]/u.test(line);
}

/**
 * Whether a command's run shows it worked: a test run that printed nothing and gave no exit code was stopped or lost
 * its output (`bun test` always prints its counts), so it proves nothing; any other command that printed nothing did.
 */
export function showsItWorked(cmd: string, output: string, code: number | undefined): boolean {
  // What the terminal printed, not the record around it (Copilot's wraps an empty run in JSON).
  return code === 0 || terminalText(output).trim() !== '' || !TEST_COMMAND.test(cmd);
}

/**
 * Text with its formatting seen through, for the injection check: line-number
 * prefixes (`   3| `, `12:`, `L4:`), diff markers, comment leaders (`//`, `#`,
 * `--`, `;`, `*`, `<!-- -->`), quoting (`>`), HTML tags and comments, markdown
 * link references and zero-width characters are removed, and a sentence
 * broken over comment lines is joined again.
 */
export function unformat(text: string): string {
  return text
    .replace(/[\u200B-\u200D\u2060\uFEFF]/g, '')
    .replace(/<!--([\s\S]*?)-->/g, ' $1 ')
    .replace(/^\s*\[\/\/\]:\s*#\s*\((.*)\)\s*$/gm, '$1')
    .replace(/<\/?[a-zA-Z][^>]*>/g, ' ')
    .split('\n')
    .map((line) =>
      line
        .replace(/^\s*(?:L?\d+\s*[|:→\t]|\d+\s{2,})\s?/, '')
        .replace(/^[+\-](?![+\-])\s?/, '')
        .replace(/^\s*(?:>\s?)+/, '')
        .replace(/^\s*(?:\/\/+|#+(?!\w)|--(?!-)|;+|%+|\/\*+|\*+(?!\*)|rem\s|'\s)\s?/i, '')
        .replace(/\s*(?:\*\/|-->)\s*$/, '')
        .trim(),
    )
    .join('\n')
    .replace(/([^.!?:\n])\n(?=[a-z])/g, '$1 ');
}
