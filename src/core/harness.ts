/**
 * What agents put into the user's turn that the user did not type.
 *
 * Coding agents inject their own text into user messages: Claude Code's
 * background-task notifications, slash-command echoes, system reminders and
 * interruption markers; Roo/Cline's `<task>` and `<environment_details>`
 * wrappers; Codex's AGENTS.md and environment context; Cursor's attached
 * context; aider's yes/no prompts; the task templates of SWE-agent and
 * mini-swe-agent. None of it is the user's request or rule. `splitUserText`
 * separates the user's own words from these pieces: the words become the
 * request, the pieces stay evidence (the raw record keeps them, recoverable),
 * never a goal or a constraint.
 *
 * The recognisers are data (tags, lines, templates), so a new agent's
 * wrapper is a row, not a branch. Pure and linear in the text.
 */

import { commentNote } from './aiderWatch';
import { looksLikeCode, looksLikeLog, withoutMarkdownDocuments } from './classify';
import { errorLine, errorWeight } from './terminalOutput';
import { forwardSlashes } from './paths';
import { codePlaceholder } from './codePaste';

export type HarnessKind =
  | 'task-notification'
  | 'command'
  | 'command-output'
  | 'system-reminder'
  | 'caveat'
  | 'interrupted'
  | 'environment'
  | 'instructions'
  | 'attachment'
  | 'prompt-answer'
  | 'tool-result'
  | 'template'
  | 'demonstration'
  | 'agent-summary'
  | 'subagent'
  | 'placeholder';

export interface HarnessPiece {
  readonly kind: HarnessKind;
  /** The injected text, verbatim. */
  readonly text: string;
}

export interface UserText {
  /** What the user typed, with every injected piece removed (trimmed; '' when nothing is left). */
  readonly words: string;
  /** The injected pieces, in order. */
  readonly harness: readonly HarnessPiece[];
  /** The user stopped the agent ("[Request interrupted by user]"). */
  readonly interrupted: boolean;
}

/** Tags whose whole element is injected text. */
const INJECTED_TAGS: ReadonlyArray<readonly [string, HarnessKind]> = [
  ['task-notification', 'task-notification'],
  ['system-reminder', 'system-reminder'],
  // A sub-agent's conversation (Claude Code `isSidechain`) and a harness-written user turn (`isMeta`), as the reader tags them.
  ['sidechain', 'subagent'],
  ['harness-meta', 'system-reminder'],
  ['command-name', 'command'],
  ['command-message', 'command'],
  ['command-args', 'command'],
  ['command-contents', 'command'],
  ['local-command-stdout', 'command-output'],
  ['local-command-stderr', 'command-output'],
  ['local-command-caveat', 'caveat'],
  ['bash-input', 'command'],
  ['bash-stdout', 'command-output'],
  ['bash-stderr', 'command-output'],
  ['user-prompt-submit-hook', 'system-reminder'],
  ['ide_opened_file', 'attachment'],
  ['ide_selection', 'attachment'],
  ['ide_diagnostics', 'attachment'],
  ['environment_details', 'environment'],
  ['environment_context', 'environment'],
  ['env', 'environment'],
  ['INSTRUCTIONS', 'instructions'],
  ['user_instructions', 'instructions'],
  ['custom_instructions', 'instructions'],
  ['format_example', 'template'],
  ['example_response', 'template'],
  ['additional_data', 'attachment'],
  ['attached_files', 'attachment'],
  ['attachments', 'attachment'],
  ['attachment', 'attachment'],
  ['currentFile', 'attachment'],
  ['current_file', 'attachment'],
  ['open_tabs', 'attachment'],
  ['reminder', 'system-reminder'],
  ['context', 'attachment'],
  ['file_contents', 'attachment'],
  ['manually_added_selection', 'attachment'],
  ['linter_errors', 'attachment'],
  // GitHub Copilot Chat: the editor's state and the user's instruction files beside their request.
  ['editorContext', 'attachment'],
  ['customizationsUpdate', 'instructions'],
  // OpenHands: the runtime, the repository and its instructions, added to the first message.
  ['RUNTIME_INFORMATION', 'environment'],
  ['REPOSITORY_INFO', 'environment'],
  ['REPOSITORY_INSTRUCTIONS', 'instructions'],
  ['CONVERSATION_INSTRUCTIONS', 'instructions'],
  ['EXTRA_INFO', 'attachment'],
  ['uploaded_files', 'environment'],
  ['session_context', 'environment'],
  // Codex: a turn the user stopped, a shell command they ran themselves, the skills it offers.
  ['turn_aborted', 'interrupted'],
  ['user_shell_command', 'command'],
  ['skills_instructions', 'instructions'],
  // Cline: a workflow, skill or slash command's text put before the user's words ("/smol", a .clinerules workflow).
  ['explicit_instructions', 'instructions'],
  // Claude Code: a message from another agent of the team; an MCP server's resource changed.
  ['teammate-message', 'subagent'],
  ['mcp-resource-update', 'system-reminder'],
  ['mcp-polling-update', 'system-reminder'],
];

/** Tags that wrap the user's own words: the wrapper goes, the content stays (Claude Code's `# note` to its memory is the user's). */
const WORD_TAGS = ['task', 'feedback', 'user_query', 'user_message', 'answer', 'user_request', 'userRequest', 'user-memory-input'];

/**
 * Blocks an agent appends to the user's words, blank lines and all: Gemini CLI puts the files a prompt names
 * with `@` after it, between its own markers.
 */
const INJECTED_BLOCKS: ReadonlyArray<readonly [RegExp, HarnessKind]> = [[/^--- Content from referenced files ---$[\s\S]*?(?:^--- End of content ---$|(?![\s\S]))/gm, 'attachment']];

/** Whole paragraphs (up to a blank line) an agent writes into the user's turn. */
const INJECTED_PARAGRAPHS: ReadonlyArray<readonly [RegExp, HarnessKind]> = [
  [/^Caveat: The messages below were generated by the user while running local commands\./, 'caveat'],
  [/^\[TASK RESUMPTION\]/, 'environment'],
  [/^\[ERROR\] You did not use a tool/, 'system-reminder'],
  [/^# AGENTS\.md instructions for /, 'instructions'],
  [/^Read the output file to retrieve the result: /, 'task-notification'],
];

/** Single lines an agent writes into the user's turn. */
const INJECTED_LINES: ReadonlyArray<readonly [RegExp, HarnessKind]> = [
  [/^\[Request interrupted by user[^\]]*\]$/, 'interrupted'],
  [/^\[(?:image|Image #?\d*|Pasted text #?\d*[^\]]*)\]$/, 'placeholder'],
  // aider's confirmations: "Add file to the chat? (Y)es/(N)o/… [Yes]: all"
  [/^.{0,300}\?\s*\(Y\)es\/\(N\)o.*$/, 'prompt-answer'],
  // SWE-agent's shell prompt block after a task statement.
  [/^\((?:Open file|Current directory): .*\)$/, 'template'],
  [/^bash-\$$/, 'template'],
];

/**
 * What Claude Code appends to its summary of an earlier conversation: its own instructions to the model (where
 * the transcript is, to go on without asking), not the user's.
 */
export const AGENT_SUMMARY_TRAILER = /(?:If you need specific details from before compaction[^\n]*\n?)?Please continue the conversation from where we left (?:it )?off without asking the user any further questions\.(?: Continue with the last task that you were asked to work on\.)?/g;

/**
 * Messages that are entirely harness: a demonstration of another task, the
 * agent's own summary of an earlier conversation, a tool result relayed as a
 * user turn (Cline: `[read_file for 'x'] Result:`).
 */
const INJECTED_MESSAGES: ReadonlyArray<readonly [RegExp, HarnessKind]> = [
  [/^Here is a demonstration of how to correctly accomplish this task\./, 'demonstration'],
  [/^This session is being continued from a previous conversation that ran out of context\./, 'agent-summary'],
  // Gemini CLI (and its forks, Qwen Code) before it wrapped this in <session_context>: the date, OS and folder tree.
  [/^This is the [\w .-]{2,40}\. We are setting up the context for our chat\./, 'environment'],
  [/^\[[\w-]+(?: for '[^'\n]*')?\] Result:/, 'tool-result'],
  // A command to the agent's console, which it runs without the model (aider's in-chat commands, and the ones
  // Claude Code, Gemini CLI or Codex print when they are not tagged): what it did is the console's output.
  [/^\/(?:add|drop|ls|tokens|map|map-refresh|clear|reset|model|models|weak-model|editor-model|chat-mode|undo|diff|commit|git|run|test|lint|read-only|exit|quit|settings|paste|copy|copy-context|save|load|voice|editor|edit|multiline-mode|reasoning-effort|think-tokens|report)(?:\s[\s\S]*)?$/, 'command'],
  // A shell command the user ran from the chat (aider's `!cmd`, Gemini CLI's shell mode): its output is the console's.
  [/^![a-z.\/~][^\s!:,]*(?:\s[\s\S]*)?$/, 'command'],
];

/** aider's commands that send the rest of the message to the model in a mode ("/ask why is this slow?"): the rest is the ask. */
const MODE_COMMAND = /^(\/(?:ask|code|architect|context))\s+(\S[\s\S]*)$/;

/**
 * Task templates: the part of a message that is the task statement, and
 * where the template's instructions begin. `lead` is the template's opening,
 * removed; from `instructions` on, the text is the template's.
 */
const TEMPLATES: ReadonlyArray<{ readonly lead: RegExp; readonly instructions: RegExp }> = [
  // SWE-agent: "We're currently solving the following issue within our repository. Here's the issue text:\nISSUE:\n… INSTRUCTIONS: …"
  { lead: /^We're currently solving the following (?:issue within our repository|CTF challenge)\.\s*(?:Here's the issue text:\s*)?(?:ISSUE:\s*)?/, instructions: /\n\s*INSTRUCTIONS:\s*\n/ },
  // mini-swe-agent: "Please solve this issue: … You can execute bash commands and edit files…"
  { lead: /^Please solve this issue:\s*/, instructions: /\n\s*You can execute bash commands and edit files[^\n]*\n|\n## (?:Recommended Workflow|Important Rules)\b/ },
];

function escapeTag(tag: string): string {
  return tag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const INJECTED_TAG_PATTERN = new RegExp(
  `<(${INJECTED_TAGS.map(([t]) => escapeTag(t)).join('|')})(?:\\s[^>]*)?>[\\s\\S]*?(?:</\\1>|$)`,
  'g',
);
const INJECTED_KIND = new Map<string, HarnessKind>(INJECTED_TAGS.map(([t, k]) => [t, k]));
const WORD_TAG_PATTERN = new RegExp(`</?(?:${WORD_TAGS.join('|')})(?:\\s[^>]*)?>`, 'g');

/** A quick test: most user messages carry no harness at all. */
const MAYBE_HARNESS = /<[A-Za-z_][\w-]*[\s>]|^\s*\[|\(Y\)es\/\(N\)o|Caveat: |# AGENTS\.md|^--- Content from referenced files ---$|^(?:We're currently solving|Please solve this issue|Here is a demonstration|This session is being continued|This is the [\w .-]{2,40}\. We are setting up|Find the "AI" comments below)|\n\(Open file: |bash-\$|Read the output file|^[/!][a-z./~]/m;

/**
 * aider's watch mode: a comment the user wrote in a file ("// AI? What is this lib missing?") sent as a prompt
 * that quotes the files around it, the comment lines marked with █. The marked lines are the user's words (with
 * the file each is in); the prompt and the code quoted around them are aider's.
 */
const AIDER_WATCH_PROMPT = /^Find the "AI" comments below \(marked with █\) in the code files I've shared with you\./;

function aiderWatchAsk(text: string): UserText | undefined {
  if (!AIDER_WATCH_PROMPT.test(text)) return undefined;
  const asks: string[] = [];
  let file: string | undefined;
  for (const line of text.split('\n')) {
    const named = /^(\S[^│█⋮]*\.[A-Za-z]\w{0,7}):$/.exec(line.trim());
    if (named) file = forwardSlashes(named[1]!);
    else if (line.startsWith('█')) asks.push(`${line.slice(1).trim()}${file ? commentNote(file) : ''}`);
  }
  return { words: asks.join('\n'), harness: [{ kind: 'template', text }], interrupted: false };
}

/**
 * Splits a user message into the user's own words and what an agent injected.
 * A message with no harness comes back as it is (trimmed).
 */
export function splitUserText(text: string): UserText {
  const trimmed = text.trim();
  // A message with no letter or digit ("---", an exported separator) says nothing.
  if (!/[\p{L}\p{N}]/u.test(trimmed)) return { words: '', harness: [], interrupted: false };
  if (!MAYBE_HARNESS.test(trimmed)) return { words: trimmed, harness: [], interrupted: false };
  const watched = aiderWatchAsk(trimmed);
  if (watched) return watched;
  const mode = MODE_COMMAND.exec(trimmed);
  if (mode) {
    const ask = splitUserText(mode[2]!);
    return { ...ask, harness: [{ kind: 'command', text: mode[1]! }, ...ask.harness] };
  }
  const harness: HarnessPiece[] = [];
  for (const [pattern, kind] of INJECTED_MESSAGES) {
    if (pattern.test(trimmed)) return { words: '', harness: [{ kind, text: trimmed }], interrupted: false };
  }
  let rest = trimmed;
  for (const template of TEMPLATES) {
    const lead = template.lead.exec(rest);
    if (!lead) continue;
    rest = rest.slice(lead[0].length);
    harness.push({ kind: 'template', text: lead[0].trim() });
    const at = template.instructions.exec(rest);
    if (at) {
      harness.push({ kind: 'template', text: rest.slice(at.index).trim() });
      rest = rest.slice(0, at.index);
    }
    break;
  }
  rest = rest.replace(INJECTED_TAG_PATTERN, (whole: string, tag: string) => {
    harness.push({ kind: INJECTED_KIND.get(tag) ?? 'attachment', text: whole });
    return '\n';
  });
  for (const [pattern, kind] of INJECTED_BLOCKS) {
    rest = rest.replace(pattern, (whole: string) => {
      harness.push({ kind, text: whole });
      return '\n';
    });
  }
  rest = rest.replace(WORD_TAG_PATTERN, '\n');
  let interrupted = harness.some((h) => h.kind === 'interrupted');
  const paragraphs = rest.split(/\n[ \t]*\n/);
  const keptParagraphs: string[] = [];
  for (const paragraph of paragraphs) {
    const p = paragraph.trim();
    const injected = INJECTED_PARAGRAPHS.find(([pattern]) => pattern.test(p));
    if (injected) {
      harness.push({ kind: injected[1], text: p });
      continue;
    }
    const lines: string[] = [];
    for (const line of paragraph.split('\n')) {
      const l = line.trim();
      const match = INJECTED_LINES.find(([pattern]) => pattern.test(l));
      if (!match) {
        lines.push(line);
        continue;
      }
      if (match[1] === 'interrupted') interrupted = true;
      harness.push({ kind: match[1], text: l });
    }
    keptParagraphs.push(lines.join('\n'));
  }
  const words = keptParagraphs
    .join('\n\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { words, harness, interrupted };
}

/**
 * Tool results an export prints inside the assistant's text, each from its
 * opening line to the export's next `---` separator: SpecStory renders
 * Cursor's fetched rules as `### Rule: <name>` and the rule file after it.
 * They are workspace instructions the agent looked up, not what it found.
 */
const INJECTED_ASSISTANT_BLOCKS: readonly RegExp[] = [/^### Rule: \S.*$/m];

/**
 * A reply the harness wrote in place of the model's: Claude Code records a
 * failed model call as an assistant message ("API Error: 401 {…} · Please run
 * /login", "API Error (Connection error.)") and writes its own stand-ins
 * ("No response requested.", a usage or credit limit). None of it is what the
 * agent found or chose.
 */
const HARNESS_REPLY = /^(?:API Error(?::| \()[\s\S]*|No response requested\.?|(?:Claude AI usage limit reached|Credit balance is too low|Invalid API key|Prompt is too long)\b.{0,200})$/;

/**
 * aider's report of edits it could not apply, which its chat history records
 * as the assistant's text: "## SearchReplaceNoExactMatch: This SEARCH block
 * failed to exactly match lines in x.ts", the block, then aider's instructions
 * to the model ("Just reply with fixed versions of the block above…"). The
 * failures, one per block; undefined for any other text. None of the rest is
 * the agent's words.
 */
export function editFailureReport(text: string): string[] | undefined {
  if (!/^\s*## SearchReplaceNoExactMatch:/.test(text)) return undefined;
  return [...text.matchAll(/^## (SearchReplaceNoExactMatch: .+)$/gm)].map((m) => m[1]!.trim());
}

/**
 * Cursor's messages about a tool call that did not run, which SpecStory prints inside the assistant's text
 * between its `---` separators: "Tool mcp_c-bash not found. Try enabling the MCP server or switching to Agent
 * mode.", "Error calling tool 'mcp_c-filesystem_write_file'." The tool failed; the rest is Cursor's advice.
 */
const CURSOR_TOOL_ERROR = /^(?:Tool (\S+) not found\.(?: Try enabling the MCP server or switching to Agent mode\.)?|Error calling tool '([^'\n]+)'\.|(Cannot edit files blocked by globalIgnore))[ \t]*$/gm;

/**
 * The footer a Cursor rule has the agent write under its reply ("⚡ Rules Used:" and the rules, one a line): the
 * workspace's rules repeated, which the protected state keeps where the user stated them, not what the agent found.
 */
const RULES_USED_FOOTER = /^[ \t]*(?:⚡\uFE0F?[ \t]*)?Rules used:[ \t]*\n(?:[ \t]*[-*•][^\n]*(?:\n|$))+/gim;

/** Whether a text may hold one of Cursor's tool reports (a cheap test before the pattern runs over it). */
function mayReportCursorTool(text: string): boolean {
  return text.includes('Tool ') || text.includes('Error calling tool') || text.includes('globalIgnore');
}

/** The tool calls Cursor reported as failed inside an assistant text: the tool and Cursor's words. */
export function cursorToolErrors(text: string): { tool: string; error: string }[] {
  if (!mayReportCursorTool(text)) return [];
  // Cursor's refusal to edit an ignored file names no tool: the edit is what failed.
  return [...text.matchAll(CURSOR_TOOL_ERROR)].map((m) => ({ tool: m[1] ?? m[2] ?? 'edit_file', error: m[1] !== undefined ? 'tool not found' : (m[3] ?? 'the call failed') }));
}

/** Assistant text without the tool results an export printed inside it (the record keeps them); '' for a reply the harness wrote. */
export function withoutInjectedBlocks(text: string): string {
  if (HARNESS_REPLY.test(text.trim())) return '';
  let out = mayReportCursorTool(text) ? text.replace(CURSOR_TOOL_ERROR, '') : text;
  if (/rules used:/i.test(out)) out = out.replace(RULES_USED_FOOTER, '');
  for (const opening of INJECTED_ASSISTANT_BLOCKS) {
    for (let m = opening.exec(out); m; m = opening.exec(out)) {
      // The block ends at the next rule (`---`) outside the document it quotes: a rule file's front matter is no end.
      out = `${out.slice(0, m.index)}${withoutMarkdownDocuments(out.slice(m.index), '')}`;
      const end = out.indexOf('\n---\n', m.index);
      out = `${out.slice(0, m.index)}${end < 0 ? '' : out.slice(end + 1)}`;
    }
  }
  return out;
}

/** The user's own words of a message ('' when it holds only harness). */
export function userWords(text: string): string {
  return splitUserText(text).words;
}

/** A pasted block of more than this many lines stands in the request as a placeholder (the record keeps it). */
const PASTED_BLOCK_LINES = 3;
/** A run of pasted lines shorter than this stays verbatim (a command the user typed, a short error). */
const PASTED_RUN_CHARS = 240;

/**
 * A line the user pasted rather than wrote: a shell prompt with its command, a
 * log record, a stack frame, a numbered source line, a caret marker, code.
 */
function pastedLine(line: string): boolean {
  const t = line.trim();
  if (t === '') return false;
  if (/^(?:❯|\$ |% |>>> |PS [A-Z]:\\|[\w.-]+@[\w.-]+(?::|\s+\S+\s+[%$#]))/.test(t)) return true;
  if (/^\d+\s*\|/.test(t) || /\s\d+\s+\|\s/.test(t) || /^[\^~]+$/.test(t) || /^at\s+\S/.test(t)) return true;
  // A record field of a tool's report ("Fingerprint: Docs/a.md:rule:654", "RuleID: hardcoded-ip"): a key and one token.
  if (/^[A-Z][A-Za-z]{1,20}:\s+\S+$/.test(t) && /[\d/._:-]/.test(t.slice(t.indexOf(':') + 1))) return true;
  return looksLikeLog(t) || looksLikeCode(t);
}

/**
 * A line inside a pasted block that does not look pasted on its own: an
 * indented line (a field of an object literal, a loop's body) or a closing
 * keyword or bracket.
 */
function continuesPaste(line: string): boolean {
  return /^(?: {2,}|\t)\S/.test(line) || /^\s*(?:done|fi|esac|end|else|[}\])]+[);,]*)\s*$/.test(line);
}

/** Whether most lines of a paste are code rather than terminal output. */
function mostlyCode(lines: readonly string[]): boolean {
  const filled = lines.filter((l) => l.trim() !== '');
  return filled.filter((l) => !looksLikeLog(l.trim()) && (looksLikeCode(l.trim()) || continuesPaste(l))).length * 2 > filled.length;
}

/**
 * A run of pasted lines as it stands in the ask: its size and what identifies
 * it — the error it shows (output, a stack), else the name it declares (code).
 */
function pastedPlaceholder(lines: readonly string[]): string {
  const text = lines.join('\n');
  const count = lines.filter((l) => l.trim() !== '').length;
  const error = lines.some((l) => errorWeight(l.trim()) >= 2) ? errorLine(text) : '';
  if (!error && mostlyCode(lines)) return codePlaceholder(`pasted code, ${count} lines`, lines);
  return ` [pasted output, ${count} lines${error ? `: ${error}` : ''}] `;
}

/** A terminal's colour and cursor codes: text that has them was copied from a terminal, not typed. */
const ANSI_CODE = /\x1b\[[0-9;?]*[A-Za-z]/;
const ANSI_ESCAPE = new RegExp(ANSI_CODE.source, 'g');

/**
 * The lines a user copied from a terminal (its colour codes came with them): from the first line that has one to the
 * end of the paragraph of the last, so the plain lines between (a hook's "What to do: … you can: …") are the
 * terminal's too. Empty (from = to) when no line has one.
 */
function terminalPaste(lines: readonly string[]): { from: number; to: number } {
  const coloured = (line: string): boolean => ANSI_CODE.test(line);
  const from = lines.findIndex(coloured);
  if (from < 0) return { from: 0, to: 0 };
  let to = lines.length - 1;
  while (!coloured(lines[to]!)) to--;
  to++;
  while (to < lines.length && lines[to]!.trim() !== '') to++;
  return { from, to };
}

/**
 * The user's words as a one-line ask: fenced blocks longer than a few lines
 * and runs of pasted terminal output (two lines or more) become placeholders
 * that keep the error they show, whitespace runs become one space. The
 * wording itself is untouched.
 */
export function askText(words: string): string {
  // What came from a terminal with its colour codes is one paste, the plain lines between included (see terminalPaste).
  const typed = words.split('\n');
  const terminal = terminalPaste(typed);
  if (terminal.to > terminal.from) typed.splice(terminal.from, terminal.to - terminal.from, pastedPlaceholder(typed.slice(terminal.from, terminal.to).map((l) => l.replace(ANSI_ESCAPE, ''))));
  // Terminal colour codes pasted with a log are no words of the user.
  const unfenced = typed.join('\n').replace(ANSI_ESCAPE, '').replace(/```[^\n]*\n([\s\S]*?)(?:```|$)/g, (whole: string, body: string) => {
    const n = body.split('\n').filter((l) => l.trim() !== '').length;
    if (n <= PASTED_BLOCK_LINES) return ` ${body.trim()} `;
    return codePlaceholder(`${n}-line code block`, body.split('\n'));
  });
  const lines = unfenced.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; ) {
    if (!pastedLine(lines[i]!)) {
      out.push(lines[i++]!);
      continue;
    }
    let j = i;
    while (j < lines.length) {
      if (pastedLine(lines[j]!) || (lines[j]!.trim() === '' && j + 1 < lines.length && pastedLine(lines[j + 1]!))) {
        j++;
        continue;
      }
      // Indented lines and closing brackets belong to the paste when it goes on (or ends the message) after them.
      let k = j;
      while (k < lines.length && !pastedLine(lines[k]!) && continuesPaste(lines[k]!)) k++;
      if (k === j || (k < lines.length && !pastedLine(lines[k]!))) break;
      j = k;
    }
    // A long run of pasted lines is the evidence the user showed; a short one reads as part of their words.
    if (j - i >= 2 && lines.slice(i, j).join('\n').length >= PASTED_RUN_CHARS) out.push(pastedPlaceholder(lines.slice(i, j)));
    else out.push(...lines.slice(i, j));
    i = j;
  }
  return out.join('\n').replace(/\s+/g, ' ').trim();
}

/** What the user typed themselves, and what they pasted or quoted into their message. */
export interface QuotedText {
  readonly own: string;
  readonly quoted: readonly string[];
}

/** A lead-in line announcing pasted content: the lines after it, up to a blank line, are the paste. */
const PASTE_LEAD = /^\s*(?:(?:here(?:'s| is| are)|this is|below is|pasting|pasted|attached(?: is)?|i got|i'm getting|i am getting)\b[^\n]{0,80}\b(?:output|log|logs|error|errors|trace|traceback|stack ?trace|file|readme|email|e-mail|mail|message|reply|response|page|docs?|documentation|diff|config|content|text|result|results|report|snippet|code|ticket|issue|comment|thread)\b[^\n]{0,80}|(?:the |our |my |this )?(?:output|log|logs|error|errors|traceback|stack ?trace|readme|email|e-mail|message|reply|response|ticket|comment)(?: (?:is|says|reads|was|shows))?)\s*:\s*$/i;
/** "CI printed this:", "the test says:", "npm gave me:": what follows is what something else wrote. */
const PASTE_VERB = /\b(?:printed|prints|says|said|shows|showed|returned|returns|gave|outputs?|logged|reads|wrote)\b[^\n]{0,60}:\s*$/i;

/** The start of a quoted e-mail or message. */
const QUOTED_MAIL = /^\s*(?:-{2,}\s*(?:original|forwarded) message\s*-{2,}|on .{4,120} wrote:|from: .{1,200}$|subject: .{1,200}$)/i;

/**
 * Splits the user's words into what they wrote and what they pasted: fenced
 * code (``` or ~~~, one line or many), blockquotes, HTML comments, indented
 * code, a paste announced by a lead-in ("here is the log:"), a quoted e-mail,
 * and a long double-quoted passage. A rule inside pasted text is evidence
 * the user showed, never a rule they stated.
 */
export function splitQuoted(words: string): QuotedText {
  if (!/```|~~~|^\s*>|<!--|:\s*$|"|“|^ {4}|^\t|wrote:|from: |subject: |\x1b\[/im.test(words)) return { own: words, quoted: [] };
  const quoted: string[] = [];
  let text = words.replace(/<!--([\s\S]*?)(?:-->|$)/g, (_, inner: string) => {
    quoted.push(inner.trim());
    return '\n';
  });
  text = text.replace(/(```|~~~)[^\n]*?\1|(```|~~~)[\s\S]*?(?:\2|$)/g, (whole: string) => {
    quoted.push(whole.replace(/^(?:```|~~~)[\w+-]*\n|^(?:```|~~~)|(?:```|~~~)$/g, '').trim());
    return '\n';
  });
  const own: string[] = [];
  const lines = text.split('\n');
  const terminal = terminalPaste(lines);
  let paste = false;
  let mail = false;
  let blankBefore = true;
  for (const [i, line] of lines.entries()) {
    if (i >= terminal.from && i < terminal.to) {
      quoted.push(line.replace(ANSI_ESCAPE, ''));
      continue;
    }
    const blank = line.trim() === '';
    if (blank) {
      paste = false;
      mail = false;
      blankBefore = true;
      own.push(line);
      continue;
    }
    if (paste || mail || /^\s*(?:>|›|\|\s)/.test(line) || (blankBefore && /^(?: {4}|\t)\S/.test(line) && own.length > 0)) {
      quoted.push(line.replace(/^\s*(?:>+|›|\|)\s?/, ''));
      blankBefore = false;
      continue;
    }
    if (QUOTED_MAIL.test(line)) {
      mail = true;
      quoted.push(line);
      continue;
    }
    if (PASTE_LEAD.test(line) || PASTE_VERB.test(line)) paste = true;
    own.push(line);
    blankBefore = false;
  }
  const kept = own.join('\n').replace(/(["“])([^"“”\n]{0,2000})(["”])/g, (whole: string, open: string, inner: string, close: string) => {
    // A quoted passage of six words or more is someone else's text; a quoted term stays the user's.
    if (inner.trim().split(/\s+/).length < 6) return whole;
    quoted.push(inner.trim());
    // Its place stays marked: the sentence around it still reads ("the iteration: "…", second, …").
    return `${open}…${close}`;
  });
  return { own: kept.replace(/\n{3,}/g, '\n\n').trim(), quoted: quoted.filter((q) => q !== '') };
}
