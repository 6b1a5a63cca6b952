/**
 * Summarizers fold a span of units into the running Task Context.
 *
 * Σn = fold(Σn−1, span). The extractive summarizer needs no model. It
 * classifies before it summarizes (seed 000, differentiated compression):
 * - the user's own words (agents' injected text removed, see harness.ts) are
 *   the request, kept verbatim; a short reply is resolved against the options
 *   it answers; every prescriptive sentence is a constraint, verbatim;
 * - the agent's prose is split into sentences and classified (classify.ts):
 *   findings, decisions (with their reason when the next sentence gives it),
 *   failures and plans become statements of at most ~30 words with their
 *   identifiers; process narration and pleasantries never become lines;
 * - tool results give the exact things: files written (Deliverables), commands
 *   that failed with their verbatim error and were not later made to succeed,
 *   edits undone (Ruled out), configuration applied, the plan (todo).
 * Repeated statements merge (sources and references add up). The static
 * checkpoint always produces something; the engine falls back to it when a
 * summarizer fails.
 */
import { ROLLING_SUMMARY_BUDGET_TOKENS } from './budget';
import { CONTENT_CLASSES, classifySentence, isFragment, isRuleSentence, looksLikeCode, ruleKind, looksLikeLog, sentencesOf, splitThoughts, SUSPECTED_LEAD, type Sentence, type SentenceClass } from './classify';
import { awaitedChoice, clipChars, errorLine, STATEMENT_MAX_WORDS, words, errorSignatures, handles, PLACEHOLDER, lastQuestion, outputLines, purposeOf, resolveReply, restatedBy, salience, sameStatement, saysNothing, significant, statementOf, stems, subjectKey, terminalText } from './digest';
import { askText, editFailureReport, splitQuoted, splitUserText, withoutInjectedBlocks, type QuotedText, type UserText } from './harness';
import { enforceCap, gistsOf, gistWordsFor, mergeSources, SOURCES_SUFFIX, SummaryBuilder, SummaryLineCounter, emptySummary, type FactLine, type FactSection, type LineOrigin, type RequestLine, type SummaryState } from './summary';
import { knownPathOf, touchesInStep } from './artifacts';
import { exitCode, fileTouches, shellCommand, classifyTool, type FileTouch } from './tools';
import { redact } from './redact';
import type { TokenCounter } from './tokens';
import type { Part, ToolInvocation, Unit } from './types';
import type { ProjectedMessage } from './engine';

export interface FoldInput {
  /** The summary being extended (undefined for the first fold). */
  readonly previous: SummaryState | undefined;
  /** The units to fold, oldest first; they start where `previous` ends. */
  readonly units: readonly Unit[];
  /** Records [0, coverageEnd) are covered after this fold. */
  readonly coverageEnd: number;
  /** The head's cap for this fold (the engine's, which scales with the window); a summarizer's own cap is the fallback. */
  readonly cap?: number;
  /**
   * The context as the engine projects it when the fold is asked for, when it
   * fits the window: it holds the span (the oldest raw records after the head)
   * and the Task Context the model last read. A summarizer that is the chat's
   * own model asks after it, so a prompt cache serves what the chat sent.
   */
  readonly context?: readonly ProjectedMessage[];
}

/** A fold's question asked after the chat's context: its rules, and one line of the span's index per unit. */
export const CONTINUATION_QUESTION_TOKENS = 450;
export const CONTINUATION_INDEX_TOKENS_PER_UNIT = 25;

/** The tokens a fold's question adds after the chat's context (what must still fit the window with it). */
export function continuationQuestionTokens(units: number): number {
  return CONTINUATION_QUESTION_TOKENS + CONTINUATION_INDEX_TOKENS_PER_UNIT * units;
}

export interface Summarizer {
  readonly name: string;
  fold(input: FoldInput): Promise<SummaryState>;
}

/** Requests longer than this keep their verbatim head; the record keeps the rest. */
export const REQUEST_MAX_CHARS = 1200;
const MAX_CONSTRAINTS_PER_MESSAGE = 24;
/** Lines one step may contribute per class (a turn's closing report no more: it mostly restates what the steps found). */
const PER_STEP: Partial<Record<SentenceClass, number>> = { finding: 5, decision: 4, failure: 3, change: 2 };
/** A statement must carry at least this much to be kept (see digest.salience). */
const MIN_SALIENCE: Partial<Record<SentenceClass, number>> = { finding: 1, decision: 0, failure: 0, change: 1 };
const CURRENT_MAX_WORDS = 40;
/** A statement of the agent's private reasoning must carry this much to be kept. */
const REASONING_MIN_SALIENCE = 3;
/** A classifier vote this strong keeps a statement that names no identifier (a cause, a contrast, a failure). */
const STRONG_CUE = 2;

const SAFETY_PATTERN =
  /\b(never|must not|mustn't|do not|don't|not allowed|forbidden|prohibited|under no circumstances)\b.*|\b(production|prod db|secret|password|credential|api key|private key|delete|drop table|force[- ]push|rm -rf|security|privacy|personal data|pii|destructive|backup|sign(?:ed|ing)?)\b/i;
/**
 * A rule that keeps the agent from changing anything for now ("DO NOT modify
 * code, JUST identify where the issue lies", "I do not wish to make changes at
 * this point"): a phase of looking, which the user's later ask for the change
 * ends. A rule about one thing ("never touch package.json", "don't change the
 * tests") is not one.
 */
export const READ_ONLY_RULE =
  /\b(?:do not|don't|dont|never)\b[^.!?\n]{0,15}?\b(?:modify|change|edit|touch|write|alter)\s+(?:any(?:thing)?\s+)?(?:of\s+)?(?:the\s+)?(?:code(?:base)?|files?|anything)\b|\b(?:do not|don't|dont|never)\b[^.!?\n]{0,25}?\bmake\s+(?:any\s+)?(?:code\s+)?changes\b|\bnot\s+(?:want|wish)\s+to\s+(?:make\s+)?(?:any\s+)?changes\b/i;
/** An ask for the change itself: "please go ahead and implement everything discussed", "now fix it". */
const ASKS_FOR_CHANGES =
  /\b(?:go ahead and (?:implement|make|apply|fix|change|update|do)|(?:please |now |ok,? )?implement (?:it|this|that|them|these|those|everything|all|the (?:fix|changes?|plan))|make (?:the|these|those) changes|apply (?:the |these |those )?(?:changes|fix(?:es)?)|start (?:fixing|implementing|coding|making the changes)|you (?:can|may) (?:now )?(?:edit|change|modify|implement|make (?:the )?changes))\b/i;

/** Whether a user message ends a read-only phase: it asks for the change and does not restate the rule. */
export function liftsReadOnly(text: string): boolean {
  return ASKS_FOR_CHANGES.test(text) && !READ_ONLY_RULE.test(text);
}

/** Removes the read-only rules stated before `record` (whose ask for the change lifted them) from `lines`. */
function dropLiftedRules(lines: FactLine[], record: number): void {
  for (let i = lines.length - 1; i >= 0; i--) if (READ_ONLY_RULE.test(lines[i]!.text) && lines[i]!.sources.every((s) => s < record)) lines.splice(i, 1);
}

const PROHIBITIVE = /\b(never|must not|mustn't|do not|don't|dont|not allowed|forbidden|prohibited|under no circumstances|no\s+\w+\s+(?:allowed|permitted)|without)\b/i;

export { looksLikeCode };

/** Sentences of a text, for callers outside the digest (the protected state, injection checks). */
export function splitSentences(text: string): string[] {
  return sentencesOf(text)
    .map((s) => s.text)
    .filter((s) => s.length >= 12);
}

/** A stable kebab topic key naming the subject of a statement. */
export function topicKey(text: string, words = 5): string {
  return subjectKey(text, words);
}

/** Is a user message a request: does it hold any of the user's own words? */
export function isRequestText(text: string): boolean {
  return splitUserText(text).words !== '';
}

export function requestLine(ordinal: number, record: number, text: string): RequestLine {
  const t = redact(askText(splitUserText(text).words)).text;
  if (t.length <= REQUEST_MAX_CHARS) return { ordinal, text: t, record, elided: 0 };
  return { ordinal, text: t.slice(0, REQUEST_MAX_CHARS), record, elided: t.length - REQUEST_MAX_CHARS };
}

/**
 * The user-stated constraints of one message, verbatim, with their safety
 * flag: every prescriptive sentence of the user's own words, wherever it
 * stands ("Also, never…" and "From now on, always…" included). Pasted code,
 * logs, quoted text and agent-injected text are not rules the user stated.
 */
export function extractConstraints(text: string | UserMessage, limit = MAX_CONSTRAINTS_PER_MESSAGE): { sentence: string; safety: boolean }[] {
  const message = typeof text === 'string' ? readUserMessage(text) : text;
  if (message.split.words === '') return [];
  return ruleSentences(message.quoted.own, limit);
}

/** A user message read once: what an agent injected into it, and the user's own words apart from what they pasted. */
export interface UserMessage {
  readonly split: UserText;
  readonly quoted: QuotedText;
}

export function readUserMessage(text: string): UserMessage {
  const split = splitUserText(text);
  return { split, quoted: splitQuoted(split.words) };
}

/** A reply that only says to go on with the work under way ("continue", "i agree, continue", "keep going"). */
const CONTINUATION = /^(?:(?:ok(?:ay)?|yes|yeah|sure|great|good|perfect|thanks|thank you|i agree|agreed|looks good|sounds good|lgtm)[,.!]?\s*)*(?:please\s+)?(?:continue|go on|keep going|carry on|proceed|resume|next|go ahead|do it|do so|continue please|please continue)(?:\s+(?:please|then|as (?:planned|discussed|agreed|proposed|suggested|before)|and do (?:so|it|that)|with (?:the|that|it)(?: \w+)?|where you left off))?[.!]*$/i;
const CONTINUED_SUFFIX = / — continued at #\d+ \(r\d+\)$/;

/** Whether the user's own words are rules and courtesy only, no ask. */
function onlyRules(words: string): boolean {
  let rules = 0;
  for (const { text } of sentencesOf(splitQuoted(words).own)) {
    const { cls } = classifySentence(text, 'user');
    // A rule in a clause of an ask ("run them in order, but only one at a time") asks for the work too.
    if (cls === 'rule' && ruleKind(text) !== 'clause') rules++;
    else if (cls !== 'pleasantry' && cls !== 'other') return false;
  }
  return rules > 0;
}

/** The prescriptive sentences of `text` (code and log lines left out). */
function ruleSentences(text: string, limit: number): { sentence: string; safety: boolean }[] {
  const out: { sentence: string; safety: boolean }[] = [];
  for (const { text: sentence } of sentencesOf(text)) {
    if (sentence.length < 6 || looksLikeCode(sentence) || looksLikeLog(sentence) || !isRuleSentence(sentence)) continue;
    const safety = PROHIBITIVE.test(sentence) && SAFETY_PATTERN.test(sentence);
    out.push({ sentence, safety });
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * The rules inside what a user message carries but the user did not write:
 * text an agent injected into their turn and text they pasted or quoted.
 * Each is a candidate the user must confirm, never an active rule.
 */
export function quotedRules(text: string | UserMessage, limit = MAX_CONSTRAINTS_PER_MESSAGE): string[] {
  const { split, quoted } = typeof text === 'string' ? readUserMessage(text) : text;
  const pieces = [...split.harness.filter((h) => h.kind !== 'interrupted' && h.kind !== 'placeholder').map((h) => h.text), ...quoted.quoted];
  const out: string[] = [];
  for (const piece of pieces) {
    // Tags and log prefixes (a timestamp, `##[warning]`, `[ERROR]`) go: the sentence after them is what could be obeyed.
    const plain = piece
      .slice(0, 20_000)
      .replace(/<\/?[a-zA-Z_-]+[^>]*>/g, '\n')
      .replace(/^\s*(?:\S*\d{4}-\d\d-\d\d[T ]\d\d:\d\d\S*\s+)?(?:##\[\w+\]\s*|\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|NOTICE)\]?:?\s+)?/gim, '');
    for (const { sentence } of ruleSentences(plain, limit - out.length)) {
      if (sentence.length <= 300) out.push(sentence);
    }
    if (out.length >= limit) break;
  }
  return out;
}

/** The last assistant prose of a step: what a short reply right after it answers. */
function offerOf(unit: Unit): { record: number; text: string } | undefined {
  for (let i = unit.parts.length - 1; i >= 0; i--) {
    const p = unit.parts[i]!;
    if (p.kind === 'text' && p.text.trim() !== '') return { record: p.record, text: p.text.slice(-6000) };
  }
  return undefined;
}

/** A request line with its short reply resolved against what the assistant last offered. */
function resolvedRequest(ordinal: number, part: Part, offer: { record: number; text: string } | undefined, words = splitUserText(part.text).words): RequestLine {
  const line = requestLine(ordinal, part.record, part.text);
  const resolved = line.elided === 0 ? resolveReply(line.text, offer) : undefined;
  if (resolved) return { ...line, resolved: { chose: redact(resolved.chose).text, offered: resolved.offered, assent: resolved.assent } };
  // After the first ask, a reply that only says to go on asks for nothing new.
  return ordinal > 1 && CONTINUATION.test(words.trim()) ? { ...line, continuation: true } : line;
}

/** The protected lines of a covered prefix, derived from the raw units alone. */
export interface ProtectedLines {
  readonly requests: RequestLine[];
  readonly safety: FactLine[];
  /** What the last folded assistant message offered (for a reply right after the boundary). */
  readonly offer?: { readonly record: number; readonly text: string };
}

/**
 * Re-derives the P0 lines (request log, safety constraints) from the raw units
 * of a covered prefix. Preflight compares them with a restored summary so that
 * a summary of a summary can never drift away from what the user said.
 * `continueFrom` extends the lines of the units before `units` (a left fold).
 */
export function protectedFromRaw(units: readonly Unit[], continueFrom?: ProtectedLines): ProtectedLines {
  const requests: RequestLine[] = continueFrom ? [...continueFrom.requests] : [];
  const safety: FactLine[] = continueFrom ? [...continueFrom.safety] : [];
  let offer = continueFrom?.offer;
  for (const unit of units) {
    if (unit.kind === 'step') {
      offer = offerOf(unit) ?? offer;
      continue;
    }
    if (unit.kind !== 'user') continue;
    for (const part of unit.parts) {
      if (!isRequestText(part.text)) continue;
      const { words } = splitUserText(part.text);
      requests.push(resolvedRequest(requests.length + 1, part, offer, words));
      // A read-only rule the user's ask for the change ended is not put back.
      if (liftsReadOnly(words)) dropLiftedRules(safety, part.record);
      for (const c of extractConstraints(part.text)) {
        if (c.safety) safety.push({ key: topicKey(c.sentence), text: c.sentence, sources: [part.record], priority: 0, origin: 'exact' });
      }
    }
  }
  return { requests, safety, ...(offer ? { offer } : {}) };
}

/**
 * Restores the raw-derived P0 lines into a summary: the request log is taken
 * from the raw as is, missing or altered safety constraints are put back.
 * Returns the repaired state and how many lines had drifted.
 */
export function resetDrift(state: SummaryState, raw: ProtectedLines): { state: SummaryState; drifted: number } {
  let drifted = 0;
  const b = new SummaryBuilder(state);
  const same =
    raw.requests.length === state.requests.length &&
    raw.requests.every((r, i) => {
      const s = state.requests[i]!;
      return s.ordinal === r.ordinal && s.record === r.record && r.text.startsWith(s.text) && s.resolved?.chose === r.resolved?.chose;
    });
  if (!same) {
    drifted += Math.max(1, Math.abs(raw.requests.length - state.requests.length));
    b.requests.splice(0, b.requests.length, ...raw.requests);
  }
  for (const line of raw.safety) {
    const existing = b.facts.Constraints.find((l) => l.key === line.key);
    if (existing && existing.text === line.text) continue;
    drifted++;
    b.upsert('Constraints', existing ? { ...line, sources: [...existing.sources, ...line.sources] } : line);
  }
  return { state: drifted ? b.build(state.coverageEnd, state.folds) : state, drifted };
}

/**
 * A list item with the sentence it finishes ("…the code might be: taking the entire current application state
 * rather than just the profile-specific settings"): the item whole, the sentence's closing words before it
 * (clipped from the front with "…" to fit one statement). Undefined when the item leaves no room for them.
 */
function withIntro(intro: string, item: string): string | undefined {
  const room = STATEMENT_MAX_WORDS - words(item).length;
  if (room < 5) return undefined;
  const w = words(intro);
  const head = w.length <= room ? w.join(' ') : `…${w.slice(w.length - room).join(' ')}`;
  return `${head}: ${/^[A-Z][a-z]/.test(item) ? item[0]!.toLowerCase() + item.slice(1) : item}`;
}

/** Items a sentence that opens a list takes into its line. */
const LISTED_ITEMS = 4;

/**
 * A sentence as a summary line reads it. One that ends with a colon says
 * little alone ("Move it to a shared utility module, such as:"): the short
 * items under it (up to LISTED_ITEMS) finish it ("…such as:
 * `src/domain/repo-utils.ts`; `src/utils/repo.ts`"). Items that are sentences
 * of their own stand on their own.
 */
function listed(sentences: readonly Sentence[], i: number): string {
  const s = sentences[i]!;
  if (!/[:：]$/.test(s.text)) return s.text;
  const items: string[] = [];
  for (let j = i + 1; j < sentences.length && items.length < LISTED_ITEMS; j++) {
    const item = sentences[j]!;
    if (!item.item || (s.item && !item.lead?.endsWith(s.text))) break;
    if (isFragment(item.text)) items.push(item.text.replace(/[.;,]$/, ''));
  }
  return items.length ? `${s.text} ${items.join('; ')}` : s.text;
}

// ------------------------------------------------------------------ tools

/** A command as a failure or an applied change quotes it. */
const LABEL_CHARS = 72;

function firstLine(text: string, max = 200, shell = false): string {
  const lines = text.trim().split('\n');
  // A script's comment ("# 1. Start Qdrant") names no command: its first command does.
  const line = (shell ? lines.find((l) => l.trim() !== '' && !/^\s*#(?:\s|$)/.test(l)) : undefined) ?? lines[0] ?? '';
  return clipChars(line, max);
}

/** Between the causes one command failed with, on its Ruled out line; the newest this many are kept. */
const CAUSE_JOIN = ' · ';
const MAX_CAUSES = 3;

/** The tail of a failure that a later run of the same command overcame (the line is then a finding). */
const RESOLVED = /; later it worked \(r\d+\)$/;

/** A failed-tool line: `label[ and N more] failed (code)[ ×n]: error`. */
const FAILED_LINE = /^(.*?)(?: and (\d+) more)? failed \((exit -?\d+|error)\)(?: ×(\d+))?: (.*)$/;
/** The agent saying the command that just failed reproduced the bug: the failure was the aim. */
const REPRODUCED = /\breproduced (?:the |this |our )?(?:bug|issue|error|problem|behaviou?r)\b|\b(?:bug|issue|error|problem) (?:is|was|has been) (?:successfully )?reproduced\b/i;
/** A sentence that only says so again ("This confirms the issue described."): it joins the line already moved. */
const CONFIRMS = /\bconfirms (?:the |this |our )?(?:bug|issue|error|problem|behaviou?r)\b/i;
const REPRODUCES = ' reproduced the bug ';
/** A plan sentence that says it is the next step. */
const NEXT_MARKER = /^(?:(?:ok(?:ay)?|so|now)[,]?\s+)?(?:next|then|after (?:that|this)|afterwards|first|now|the next step)\b/i;
/** What replaced a failed command, as its line says it (`noteReplacement`). */
const REPLACED_TAIL = / → then `[^`]*` worked \(r\d+\)$/;

/** A commit line as `commitOf` writes it: hash, branch, message, flags. */
const COMMIT_LINE = /^committed ([0-9a-f]{7,40}) on (\S+): "(.*)"(?: \(([^)]*)\))?$/;

/**
 * A commit that went through: its hash and message, and how it was made when
 * that is unusual (unsigned, amended, forced). A milestone the next step
 * builds on.
 */
function commitOf(cmd: string, output: string): string | undefined {
  if (!/\bgit\b[^|;&]*\bcommit\b/.test(cmd)) return undefined;
  const head = /\[([\w./#-]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] ?(.*)/.exec(output);
  if (!head) return undefined;
  const flags = [...cmd.matchAll(/--(?:no-gpg-sign|no-verify|amend|allow-empty)\b|-S\b/g)].map((m) => m[0]);
  const message = clipChars(redact(head[3]!.trim() || (/-m\s+(["'])(.*?)\1/.exec(cmd)?.[2] ?? '')).text, 100);
  return `committed ${head[2]} on ${head[1]}: "${message}"${flags.length ? ` (${flags.join(' ')})` : ''}`;
}

/**
 * An error a tool's output reports when the tool gives no exit code and no
 * error flag (aider's console, a SpecStory-rendered terminal): a line naming
 * an error class or a fatal condition among the last lines of the output.
 */
const OUTPUT_ERROR =
  /^(?:\S+\.)?\w*(?:Error|Exception)\b(?::|\s-\s)|^\[(?:ERROR|FATAL|ERR)\]|^(?:error|fatal|ERROR|FATAL)\b[:\[ ]|^Traceback \(most recent call last\)|\bcommand not found\b|: No such file or directory\b|\bPermission denied\b|\bis not recognized as (?:an internal|the name)|^Invalid command\b|\bRead-only file system\b|\bSyntaxError\b|^E\d{3,4}\b|\bnpm ERR!|\bSearchReplaceNoExactMatch\b|\bdid not match any file|\bModuleNotFoundError\b|\bCannot find module\b|\bsegmentation fault\b|\brefusing to\b|^\s*✖|\bFAILED\b|\bfile not found\b/m;
/** An error that ended a command is among its last lines: a traceback's verdict can sit some 40 lines up (a list of validation errors). */
const OUTPUT_TAIL_LINES = 40;

/** Whether an output with no exit code reports a failure in its last lines. */
function outputReportsError(output: string): boolean {
  const lines = outputLines(output);
  return OUTPUT_ERROR.test(lines.slice(-OUTPUT_TAIL_LINES).join('\n'));
}

/**
 * Whether a command with no exit code failed, by what it printed. A query
 * (`cat`, `grep`, `ls`, `git log`…) prints what it found, errors included: its
 * output is no verdict on itself.
 */
function commandReportsError(cmd: string | undefined, output: string): boolean {
  if (cmd !== undefined && QUERY_COMMAND.test(commandProper(cmd).trim())) return /^(?:\S+: )?(?:\S+: )?(?:No such file or directory|Permission denied|command not found)\b/m.test(outputLines(output).slice(-3).join('\n'));
  return outputReportsError(output);
}

/**
 * The result line of a test run: counts of passed and failed tests (bun, jest,
 * vitest, mocha, pytest, cargo, go). A time-bound value: the latest run wins.
 */
export function testSummary(output: string): string | undefined {
  // What the terminal printed (a Copilot record wraps it in JSON with its escapes), not the record around it.
  const tail = terminalText(output).slice(-4000);
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

/** Commands whose short output is no observation (echoes, moves, navigation). */
const SILENT_COMMAND = /^(?:\S+=\S+\s+)*(?:echo|printf|cd|mkdir|rm|rmdir|cp|mv|touch|chmod|chown|ln|git add|git checkout|git switch|sleep|clear|true|export|source|\.)\b(?![^|;&]*[|;&])/;
const OBSERVATION_MAX_CHARS = 120;
const OBSERVATION_MAX_LINES = 1;
/** A query's whole answer may be a little longer: its output is the observation, not a log. */
const QUERY_MAX_CHARS = 200;
const QUERY_MAX_LINES = 3;
const QUERY_COMMAND =
  /^(?:\S+=\S+\s+)*(?:cat|head|tail|ls|which|where|type|file|stat|wc|du|df|ps|pgrep|netstat|ss|lsof|dig|nslookup|host|curl|wget|tmutil|sw_vers|uname|whoami|id|env|printenv|defaults read|jq|grep|rg|find|git (?:status|log|rev-parse|branch|remote|show|config --get|describe|tag --list|ls-files)|uci (?:show|get)|systemctl (?:status|is-active|is-enabled)|docker (?:ps|images|inspect)|kubectl get|npm (?:ls|view|list)|pip3? (?:show|list)|\S+ (?:--version|-V|version))\b/;

/**
 * What a command showed, when its whole output is short: a version, a status,
 * a listing of a few names, "No destinations configured". A short output is
 * an observed fact the agent may never restate; a long one is evidence (the
 * record keeps it, the agent's own words say what it meant).
 */
function observation(cmd: string, output: string): string | undefined {
  if (SILENT_COMMAND.test(cmd.trim())) return undefined;
  // A terminal's echo of the command (a wrapped prompt line, `</git/local/ 2>/dev/null || true`) is no output.
  const echoed = (l: string): boolean => {
    const t = l.replace(/^[<>]\s*/, '').trim();
    return t.length >= 8 && cmd.includes(t);
  };
  const raw = outputLines(output).filter((l) => !/^(?:exit code:? -?\d+|\[?process exited.*|Shell cwd was reset.*)$/i.test(l) && !/^[-=*_~]{3,}$/.test(l) && !GIT_EOL_NOTICE.test(l) && !echoed(l));
  const query = QUERY_COMMAND.test(commandProper(cmd).trim());
  if (raw.length === 0 || raw.length > (query ? QUERY_MAX_LINES : OBSERVATION_MAX_LINES)) return undefined;
  const lines = listingNames(raw);
  const text = lines.join('; ');
  if (text.length > (query ? QUERY_MAX_CHARS : OBSERVATION_MAX_CHARS) || /^(?:ok|done|success(?:ful)?|true|false|yes|no)\.?$/i.test(text) || /\b(?:running in (?:the )?background|output is being written)\b/i.test(text)) return undefined;
  if (handles(text).length === 0 && !/\d|\b(?:no|not|none|empty|missing|disabled|enabled|inactive|active|running|stopped|unknown)\b/i.test(text)) return undefined;
  return redact(text).text;
}

/** A line of `ls -l`: mode bits, links, owner, size, date, then the name. */
const LISTING_LINE = /^[-dlcbps][-rwxsStT]{9}[@+.]?\s+\d+\s.*\s(\S+)$/;

/**
 * Output lines with a long listing (`ls -la`) said by its names: the mode
 * bits, owners and dates are the search trace, the names are what it found
 * ("empty directory" when only `.` and `..` are listed).
 */
function listingNames(lines: readonly string[]): string[] {
  const listing = lines.filter((l) => LISTING_LINE.test(l) || /^total \d+$/.test(l));
  if (listing.length < 2 || listing.length < lines.length) return [...lines];
  const names = listing.map((l) => LISTING_LINE.exec(l)?.[1]).filter((n): n is string => n !== undefined && n !== '.' && n !== '..');
  return [names.length ? names.join(', ') : 'empty directory'];
}

/** The agent's harness refused the call (read a file before writing it, a file too large to read): no approach failed. */
const TOOL_PROTOCOL_ERROR = /\bFile has not been read yet\b|\bhas been (?:unexpectedly )?modified since (?:it was )?(?:last )?read\b|\bexceeds (?:the )?maximum allowed (?:size|tokens)\b/i;

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
function outputNotice(cmd: string, output: string): string | undefined {
  // `find … -exec`, `… | xargs`: the query runs other commands, whose errors are theirs.
  const runsOthers = /\s-exec(?:dir)?\s|\|\s*xargs\b/.test(cmd);
  if ((QUERY_COMMAND.test(commandProper(cmd).trim()) && !runsOthers) || SILENT_COMMAND.test(cmd.trim())) return undefined;
  const lines = outputLines(output);
  if (OUTPUT_ERROR.test(lines.join('\n'))) return `printed an error: ${redact(errorLine(output)).text}`;
  if (lines.length > NOTICE_MAX_LINES) return undefined;
  const warning = lines.find((l) => WARNING_LINE.test(l) && !/^npm WARN deprecated\b/i.test(l) && !GIT_EOL_NOTICE.test(l));
  return warning !== undefined ? `warned: ${redact(clipChars(warning.replace(/^\[?(?:warning|warn)\]?(?:\[[\w-]+\])?\s*[:!]?\s*/i, ''), 200)).text}` : undefined;
}

/** Git's notice that it will convert a file's line endings ("LF will be replaced by CRLF the next time Git touches it"): routine on Windows, never a fact. */
const GIT_EOL_NOTICE = /\b(?:CR)?LF will be replaced by (?:CR)?LF\b/;

/** Commands whose non-zero exit is an answer, not a failure (no match, files differ, not found by a probe). */
const INFORMATIONAL_EXIT = /^(?:\S+=\S+\s+)*(?:grep|egrep|fgrep|rg|ag|ack|diff|cmp|test|\[|pgrep|pidof|lsof|git diff|git grep|git show-ref|git rev-parse --verify|systemctl is-\w+|getent|dpkg -s|rpm -q|command -v|which|type|hash)\b/;

/** Commands that change the system rather than a file (files changed are Deliverables already). */
const CONFIGURING_COMMAND =
  /\b(?:uci (?:set|add_list|del_list|delete|add|commit)|git config (?!.*(?:--get|--list|-l\b))|systemctl (?:restart|enable|disable|stop|start|mask)|service \S+ (?:restart|stop|start)|\/etc\/init\.d\/\S+ (?:restart|stop|start|enable|disable)|git (?:remote (?:add|set-url)|branch -[mMdD]|tag|rebase|reset --hard|filter-repo|filter-branch|lfs)|(?:npm|pnpm|yarn|bun) (?:install|add|remove|uninstall|i) \S|pip3? install|uv (?:add|pip install)|cargo add|go get|gem install|apt(?:-get)? (?:install|remove|purge)|brew (?:install|uninstall|upgrade)|winget (?:install|upgrade)|choco install|docker (?:run|rm|stop|compose up|compose down)|kubectl (?:apply|delete|rollout)|terraform apply|crontab|launchctl (?:load|unload|bootstrap)|defaults write|gpg --(?:import|edit-key|import-ownertrust)|ssh-keygen|netsh|Set-ItemProperty|Add-MpPreference|Set-MpPreference|reg add|ufw (?:allow|deny|enable|disable|delete)|iptables (?:-[AIDRFPN]|--(?:append|insert|delete|flush))|nft (?:add|delete|flush)|sysctl -w|chmod [0-7+]|chown )/;

/**
 * What an installer says it installed ("Successfully installed marshmallow-3.13.0",
 * "added 214 packages", "Installed 3 packages"): the versions a later step may
 * depend on, said on the command's "applied:" line.
 */
const INSTALLED = /^\s*(?:Successfully installed|added \d+ packages?|Installed \d+ packages?|installed \d+ packages?|\+ \S+@\d)[^\n]*/m;

/** Commands that undo work: a discarded change is an approach ruled out. */
const UNDOING_COMMAND = /\bgit (?:checkout -- |checkout \S+ -- |restore |revert |reset --hard|stash(?: push| save)?\b(?! (?:pop|apply|list|show)))/;

function toolDescription(tool: ToolInvocation): string | undefined {
  const input = tool.input;
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const d = (input as Record<string, unknown>).description;
    if (typeof d === 'string' && d.trim().length >= 6) return clipChars(redact(d.trim()).text, 120);
  }
  return undefined;
}

/** The program a command runs (after `cd … &&`, environment assignments and `sudo`): what a replacement shares with it. */
function programOf(cmd: string): string {
  const words = commandProper(cmd).trim().split(/\s+/).filter((w) => !/^\w+=/.test(w) && w !== 'sudo');
  const first = (words[0] ?? '').replace(/^.*[/\\]/, '');
  // `ssh host "cmd"`, `powershell 'cmd'`, `npx tool`: the program is what runs inside.
  if (/^(?:ssh|npx|bunx|powershell|pwsh|cmd|bash|sh|zsh|docker|kubectl)$/.test(first) && words[1]) return `${first} ${words.slice(1).find((w) => !w.startsWith('-') && !/@/.test(w))?.replace(/^['"]/, '') ?? ''}`;
  return first;
}

/** A command without its leading `cd <dir> &&` (or `source … &&`): what it runs, not where. */
function commandProper(cmd: string): string {
  return cmd.replace(/^(?:\s*(?:cd|pushd|source|\.)\s+(?:"[^"]*"|'[^']*'|\S+)\s*(?:&&|;)\s*)+/, '');
}

function toolLabel(tool: ToolInvocation): string {
  const cmd = shellCommand(tool);
  // Secrets are hidden before the label is cut: a cut token would no longer look like one.
  if (cmd !== undefined) return `\`${firstLine(redact(commandProper(cmd)).text, LABEL_CHARS, true)}\``;
  const touches = fileTouches(tool);
  if (touches.length) return `${tool.name} ${redact(touches[0]!.path).text}`;
  // A result whose call the log lost (a broken line in the original) has no name to give.
  if (tool.name === 'unknown' && tool.input === undefined) return 'a call missing from the record';
  return tool.name;
}

/** The text a write call creates its file with (Claude Code Write, str_replace_editor create, Cursor, Copilot). */
function writtenContent(tool: ToolInvocation): string | undefined {
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
function heredocBody(cmd: string): string | undefined {
  const m = /<<-?\s*(['"]?)(\w+)\1[^\n]*\n([\s\S]*?)\n\s*\2\b/.exec(cmd);
  if (!m) return undefined;
  const lines = m[3]!.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  const text = lines.join('; ');
  return lines.length > 0 && lines.length <= HEREDOC_NOTE_LINES && text.length <= HEREDOC_NOTE_CHARS ? text : undefined;
}

/** The text of a file as a read tool showed it: without its header line and the line numbers it prefixed. */
function readContent(output: string): string {
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
function editTexts(tool: ToolInvocation): { old: string; new: string } | undefined {
  const input = tool.input;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return undefined;
  const r = input as Record<string, unknown>;
  const o = r.old_string ?? r.old_str ?? r.search;
  const n = r.new_string ?? r.new_str ?? r.replace;
  return typeof o === 'string' && typeof n === 'string' && o !== n ? { old: o, new: n } : undefined;
}

/** The first line an edit changed, as `old` → `new` (each clipped): the patch coordinate a reader needs. */
function changedLine(before: string, after: string): string | undefined {
  const a = before.split('\n').map((l) => l.trim());
  const b = after.split('\n').map((l) => l.trim());
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const old = a[i] ?? '';
  const now = b[i] ?? '';
  if (old === '' && now === '') return undefined;
  const q = (t: string): string => (t === '' ? '(nothing)' : `\`${clipChars(redact(t).text.replace(/`/g, "'"), 70)}\``);
  return `${q(old)} → ${q(now)}`;
}

/** The open items of a todo tool's plan: `{todos: [{content, status}]}`. */
function planOf(input: unknown): { open: string[]; active: string | undefined } | undefined {
  const todos = (input as { todos?: unknown } | undefined)?.todos;
  if (!Array.isArray(todos)) return undefined;
  const open: string[] = [];
  let active: string | undefined;
  for (const item of todos) {
    const content = typeof item?.content === 'string' ? item.content.trim() : '';
    if (content === '' || item.status === 'completed') continue;
    open.push(content);
    if (item.status === 'in_progress' && active === undefined) active = content;
  }
  return { open, active };
}

// --------------------------------------------------------------- the fold

/** Abstract base of the summarizers that need no model: synchronous folds, capped by demotion. */
abstract class LocalSummarizer implements Summarizer {
  abstract readonly name: string;
  protected readonly counter: SummaryLineCounter;

  constructor(counter: TokenCounter, protected readonly cap?: number) {
    this.counter = counter instanceof SummaryLineCounter ? counter : new SummaryLineCounter(counter);
  }

  async fold(input: FoldInput): Promise<SummaryState> {
    return this.foldSync(input);
  }

  abstract foldSync(input: FoldInput): SummaryState;
}

/** A statement found in a step, before the step's best are kept. */
/** A candidate's mark when its sentence stands under a lead-in of suspected causes ("Likely causes:"). */
function suspicionOf(sentence: Sentence): { readonly suspected?: true } {
  return sentence.lead !== undefined && SUSPECTED_LEAD.test(sentence.lead) ? { suspected: true } : {};
}

interface Candidate {
  readonly cls: SentenceClass;
  /** How strongly the classifier's cues voted for the class. */
  readonly score: number;
  readonly text: string;
  readonly record: number;
  readonly salience: number;
  readonly order: number;
  /** Said under a lead-in of suspected causes ("Likely causes:"): a finding only assumed. */
  readonly suspected?: boolean;
}

const SECTION_OF: Partial<Record<SentenceClass, FactSection>> = { finding: 'Findings', decision: 'Decisions', failure: 'Ruled out', change: 'Decisions' };
const PRIORITY_OF: Record<FactSection, 0 | 1 | 2 | 3> = { Deliverables: 1, Decisions: 2, Constraints: 2, 'Ruled out': 2, Findings: 3, Archived: 3 };

/** The sentence after a decision that gives its reason ("This avoids…", "Because…"). */
const REASON = /^(?:this|that|it|because|since|so that|so |which|the reason|otherwise)\b.*\b(?:because|so that|avoid\w*|prevent\w*|ensur\w*|keep\w*|mean\w*|since|otherwise|simpler|safer|faster|cleaner|works?|breaks?|fails?|requir\w*|needs?|saves?|removes?|reduces?|fix\w*)\b/i;

/**
 * Adds a statement to the summary, or merges it into the line that already
 * says it (anywhere in the fact sections): the sources and references add up
 * and the wording with more identifiers wins. A new statement gets a key that
 * names its subject; a key already used for a different subject is never
 * reused (the topic self-check), it gets a suffix.
 */
export function addStatement(b: SummaryBuilder, section: FactSection, line: Omit<FactLine, 'key'>, origin: LineOrigin): void {
  for (const name of ['Findings', 'Decisions', 'Ruled out', 'Constraints', 'Archived'] as const) {
    const lines = b.facts[name];
    // An archived line may group several gists: any of them may be the statement.
    const at = lines.findIndex((l) => gistsOf(l).some((g) => sameFact(g.replace(/^…|…$/g, ''), line.text)));
    if (at < 0) continue;
    const before = lines[at]!;
    const richer = handles(line.text).length > handles(before.text).length && name === section && !before.members;
    lines[at] = { ...before, ...(richer ? { text: line.text } : {}), sources: mergeSources(before.sources, line.sources), refs: (before.refs ?? 0) + 1 };
    return;
  }
  // The agent's own words about a failure recorded exactly a step before ("BFG installation failed due to a lock"
  // after `brew install bfg` failed … locked) say it again, with less: they join the exact line.
  if (section === 'Ruled out' && origin === 'narrative') {
    const restated = b.facts['Ruled out'].findIndex((l) => l.origin === 'exact' && restatesFailure(line, l));
    if (restated >= 0) {
      const exact = b.facts['Ruled out'][restated]!;
      b.facts['Ruled out'][restated] = { ...exact, sources: mergeSources(exact.sources, line.sources), refs: (exact.refs ?? 0) + 1 };
      return;
    }
  }
  let key = subjectKey(line.text);
  for (let n = 2; b.has(key); n++) key = `${subjectKey(line.text)}-${n}`;
  b.upsert(section, { ...line, key, origin });
}

/**
 * Whether two lines state one fact. A command's failure and its result are two, however alike their words
 * ("`bun test x` failed (error): 1 failed; error: TypeError: …" and "`bun test x` → 2 passed"): the error is
 * what the next attempt needs.
 */
export function sameFact(a: string, b: string): boolean {
  if (FAILED_LINE.test(a) !== FAILED_LINE.test(b) || eventOf(a) !== eventOf(b)) return false;
  // Two commands applied, two commits: the same event only when they quote the same command or hash.
  if (eventOf(a) !== '') return eventSubject(a) === eventSubject(b);
  // Two failures of one command are one only when they share a cause: a run that fails for another reason is news.
  const fa = FAILED_LINE.exec(a);
  const fb = fa ? FAILED_LINE.exec(b) : null;
  if (fa && fb) {
    const why = (error: string): Set<string> => errorSignatures(error.replace(RESOLVED, '').replace(REPLACED_TAIL, ''));
    const causes = why(fb[5]!);
    if (fa[1] !== fb[1] || ![...why(fa[5]!)].some((sig) => causes.has(sig))) return false;
  }
  return sameStatement(a, b);
}

/** What an event line names: a commit its hash, a command applied its quoted command, anything else its text. */
function eventSubject(text: string): string {
  if (text.startsWith('committed')) return /\b[0-9a-f]{7,40}\b/.exec(text)?.[0] ?? text;
  if (text.startsWith('applied')) return /`[^`]+`/.exec(text)?.[0] ?? text;
  return text.replace(SOURCES_SUFFIX, '');
}

/** The kind of event an exact line records: a commit and the undo that discards it are two facts. */
function eventOf(text: string): string {
  return /^(?:committed|work discarded|applied|edit of)\b/.exec(text)?.[0] ?? '';
}

/** A failure's record is this close before the agent's sentence about it. */
const RESTATED_WITHIN_RECORDS = 4;

/** Whether a sentence of the agent says again, in its words, what a failed tool's exact line just recorded. */
function restatesFailure(line: Omit<FactLine, 'key'>, exact: FactLine): boolean {
  const first = Math.min(...line.sources);
  if (!exact.sources.some((s) => s < first && s >= first - RESTATED_WITHIN_RECORDS)) return false;
  const recorded = stems(exact.text);
  const covered = (text: string): [number, number] => {
    const said = stems(text);
    let shared = 0;
    for (const w of said) if (recorded.has(w)) shared++;
    return [shared, said.size];
  };
  const [shared, size] = covered(line.text);
  if (size === 0 || shared < 2 || shared * 2 < size) return false;
  // A cause the exact line does not show ("because the private key field has spaces") is the agent's diagnosis: it stays.
  const cause = /\b(?:because|due to|caused by|since|as)\b(.*)$/i.exec(line.text)?.[1];
  if (cause === undefined) return true;
  const [explained, words] = covered(cause);
  return explained * 2 > words;
}

export class ExtractiveSummarizer extends LocalSummarizer {
  readonly name = 'extractive';

  foldSync(input: FoldInput): SummaryState {
    const previous = input.previous ?? emptySummary();
    const b = new SummaryBuilder(previous);
    const fold = new Fold(b, previous, gistWordsFor(input.cap ?? this.cap ?? ROLLING_SUMMARY_BUDGET_TOKENS));
    for (const unit of input.units) {
      if (unit.kind === 'user') fold.user(unit);
      else if (unit.kind === 'step') fold.step(unit);
    }
    fold.finish(input.units);
    dedupe(b);
    mergeRestated(b);
    countReferences(b, input.units);
    const state = b.build(input.coverageEnd, previous.folds + 1);
    return enforceCap(state, this.counter, input.cap ?? this.cap).state;
  }
}

/** The working state of one fold: the builder, and what Current state is made of. */
class Fold {
  private goal: string;
  private status: string;
  private next: string;
  private readonly writes = new Map<string, { created: boolean; writes: number; sources: number[]; note: string; edit?: string; purpose?: string; written?: string }>();
  private readonly modified: string[] = [];
  private plan: { open: string[]; active: string | undefined } | undefined;
  private lastPlanSentence: string | undefined;
  /** The user's latest ask: `answered` once a step followed it, `closed` while the latest step made no tool call (the agent replied). */
  private lastAsk: { ordinal: number; text: string; answered: boolean; closed?: boolean } | undefined;
  /** The latest step of this span made no tool call: the agent replied. */
  private replied = false;
  private question: string | undefined;
  private interrupted: number | undefined;

  constructor(
    private readonly b: SummaryBuilder,
    previous: SummaryState,
    /** How many words a created file's purpose keeps (a gist's length for this head's cap). */
    private readonly purposeWords: number,
  ) {
    this.goal = previous.current.goal;
    this.status = previous.current.status;
    this.next = previous.current.next;
    for (const line of b.facts.Deliverables) {
      const m = /^(created)?(?:, )?(?:modified ×(\d+))?(?: — (.*))?$/.exec(line.text);
      this.writes.set(line.key, { created: m?.[1] === 'created', writes: Number(m?.[2] ?? 0), sources: [...line.sources], note: m?.[3] ?? '' });
    }
  }

  user(unit: Unit): void {
    for (const part of unit.parts) {
      const split = splitUserText(part.text);
      if (split.interrupted) this.interrupted = part.record;
      if (split.words === '') continue;
      const req = resolvedRequest(this.b.requests.length + 1, part, this.b.offer, split.words);
      this.b.requests.push(req);
      // "Go ahead and implement it" ends an earlier "do not modify any code": that rule no longer stands.
      if (liftsReadOnly(split.words)) dropLiftedRules(this.b.facts.Constraints, part.record);
      if (req.continuation && this.goal !== '') {
        // "continue", "i agree, continue": the work asked before goes on; the goal says it was taken up again.
        this.goal = `${this.goal.replace(CONTINUED_SUFFIX, '')} — continued at #${req.ordinal} (r${part.record})`;
      } else if (req.resolved || this.goal === '' || !onlyRules(split.words)) {
        // A message that only lays down rules ("Do not reinit task-master") leaves the goal where it was:
        // its rules are constraints, and the work asked before goes on.
        this.lastAsk = { ordinal: req.ordinal, text: req.text, answered: false };
        this.goal = `#${req.ordinal} (r${part.record}): ${goalText(req)}`;
        // A next step the agent stated before this ask is overtaken by it; one stated since will say what comes next.
        this.lastPlanSentence = undefined;
      }
      this.question = undefined;
      // A failure the user has since asked past ("hi", a new question) no longer blocks: Ruled out keeps it.
      if (this.status.startsWith('blocked:')) this.status = '';
      this.interrupted = split.interrupted ? part.record : undefined;
      for (const c of extractConstraints(part.text)) {
        this.b.upsert('Constraints', { key: topicKey(c.sentence), text: c.sentence, sources: [part.record], priority: c.safety ? 0 : 2, origin: 'exact' });
      }
    }
  }

  step(unit: Unit): void {
    const candidates: Candidate[] = [];
    let order = 0;
    // The next step a message states: the first one that says it comes next ("Next, I'll X", "Then run Y"),
    // otherwise its last one.
    let marked = false;
    for (const part of unit.parts) {
      // aider's report of the edits it could not apply: its failures, and nothing of its instructions to the model.
      const rejected = part.kind === 'text' ? editFailureReport(part.text) : undefined;
      if (rejected) {
        for (const why of rejected) this.failure('aider', 'error', clipChars(redact(why).text, 200), [part.record]);
        continue;
      }
      // Thought summaries printed among the answer are reasoning, kept only for their most telling statements.
      const { thoughts, answer } = part.kind === 'text' ? splitThoughts(withoutInjectedBlocks(part.text)) : { thoughts: '', answer: part.text };
      if (thoughts !== '') this.reasoning(thoughts, part.record, candidates, () => order++);
      if (part.kind === 'text') {
        const sentences = sentencesOf(answer);
        for (let i = 0; i < sentences.length; i++) {
          const s = sentences[i]!;
          // An item that finishes the sentence above its list is read with it; a bare fragment says nothing.
          const whole = s.intro !== undefined ? withIntro(s.intro, s.text) : undefined;
          if (s.heading || (s.item && whole === undefined && isFragment(s.text))) continue;
          // The sentence a list finishes is said by its items, each with it.
          const next = sentences[i + 1];
          if (next?.intro !== undefined && next.intro === s.text.replace(/[:：]$/, '') && withIntro(next.intro, next.text) !== undefined) continue;
          const { cls, score } = classifySentence(whole ?? s.text, 'assistant', s.lead);
          if (!CONTENT_CLASSES.has(cls)) continue;
          const read = whole ?? listed(sentences, i);
          if (cls === 'plan') {
            const says = NEXT_MARKER.test(read);
            if (!marked) this.lastPlanSentence = statementOf(read, 24);
            marked ||= says;
            continue;
          }
          let text = statementOf(read);
          // A decision keeps its reason when the next sentence gives it.
          const after = sentences[i + 1];
          if (cls === 'decision' && after && !/\b(?:because|since|so that|to avoid|to prevent|to ensure)\b/i.test(text) && REASON.test(after.text)) {
            text = statementOf(`${text.replace(/[.…]$/, '')} — ${after.text}`);
          }
          if (saysNothing(text)) continue;
          candidates.push({ cls, score, text, record: part.record, salience: salience(text), order: order++, ...suspicionOf(s) });
        }
        const choice = awaitedChoice(part.text);
        const asked = /\?\s*$/.test(part.text.trim()) ? lastQuestion(part.text) : undefined;
        this.question = choice !== undefined ? `choice of ${choice}` : asked !== undefined ? `answer: ${asked}` : undefined;
        continue;
      }
      if (part.kind === 'reasoning') {
        this.reasoning(part.text, part.record, candidates, () => order++);
        continue;
      }
      if (part.kind === 'tool' && part.tool) this.tool(part.tool, touchesInStep(unit, unit.parts.indexOf(part)));
    }
    const offer = offerOf(unit);
    if (offer) this.b.offer = offer;
    if (this.lastAsk) this.lastAsk.answered = true;
    // Whether the agent's latest step replied (no tool call) or its work goes on.
    this.replied = !unit.parts.some((p) => p.kind === 'tool');
    if (this.lastAsk) this.lastAsk.closed = this.replied;
    this.keep(candidates, PER_STEP);
  }

  /** Private reasoning often holds the diagnosis; only its most telling statements are candidates. */
  private reasoning(text: string, record: number, candidates: Candidate[], next: () => number): void {
    for (const s of sentencesOf(text)) {
      const { cls, score } = classifySentence(s.text, 'assistant', s.lead);
      if (cls !== 'finding' && cls !== 'failure' && cls !== 'decision') continue;
      const statement = statementOf(s.text);
      if (saysNothing(statement)) continue;
      const carried = salience(statement);
      if (carried >= REASONING_MIN_SALIENCE || (score >= STRONG_CUE && carried >= 1)) candidates.push({ cls, score, text: statement, record, salience: carried - 1, order: next(), ...suspicionOf(s) });
    }
  }

  /** Keeps the step's best statements of each class: the most salient, in their order. */
  private keep(candidates: readonly Candidate[], limits: Partial<Record<SentenceClass, number>>): void {
    const chosen: Candidate[] = [];
    for (const cls of ['finding', 'decision', 'failure', 'change'] as const) {
      // A plain statement the cues vote for strongly ("This lists all commits, not just those since the merge base") is kept without identifiers.
      const pool = candidates.filter((c) => c.cls === cls && (c.salience >= (MIN_SALIENCE[cls] ?? 0) || (c.score >= STRONG_CUE && c.salience >= 0)));
      pool.sort((x, y) => y.salience - x.salience || x.order - y.order);
      chosen.push(...pool.slice(0, limits[cls] ?? 0));
    }
    chosen.sort((x, y) => x.order - y.order);
    for (const c of chosen) {
      // A commit or a push is said by its exact line (hash, branch, message), not by the prose about it.
      if (c.cls === 'change' && /^(?:committed|pushed)\b/i.test(c.text)) continue;
      if (c.cls === 'change' && this.noteChange(c)) continue;
      if (c.cls === 'change' && handles(c.text).length === 0) continue;
      const section = SECTION_OF[c.cls]!;
      if (c.cls === 'finding' && this.reproduced(c)) continue;
      const text = c.cls === 'finding' && (c.suspected || /\b(?:might|may|could|perhaps|possibly|probably|likely|seems|appears)\b/i.test(c.text)) ? `${c.text} (assumed)` : c.text;
      addStatement(this.b, section, { text, sources: [c.record], priority: PRIORITY_OF[section] }, 'narrative');
    }
  }

  /**
   * "The script has reproduced the bug": the command that just failed was the
   * reproduction, meant to fail. Its line moves from Ruled out to Findings as
   * what reproduces the bug, with its verbatim error; the sentence joins it.
   */
  private reproduced(c: Candidate): boolean {
    const confirms = CONFIRMS.test(c.text);
    if (!confirms && !REPRODUCED.test(c.text)) return false;
    const near = (l: FactLine): boolean => l.sources.some((r) => r < c.record && r >= c.record - RESTATED_WITHIN_RECORDS);
    // A second sentence saying so ("This confirms the issue described.") joins the line already moved.
    const moved = this.b.facts.Findings.findIndex((l) => l.text.includes(REPRODUCES) && near(l));
    if (moved >= 0) {
      const line = this.b.facts.Findings[moved]!;
      this.b.facts.Findings[moved] = { ...line, sources: mergeSources(line.sources, [c.record]) };
      return true;
    }
    if (!REPRODUCED.test(c.text)) return false;
    const lines = this.b.facts['Ruled out'];
    let at = lines.length - 1;
    while (at >= 0 && !(lines[at]!.origin === 'exact' && near(lines[at]!))) at--;
    const m = at >= 0 ? FAILED_LINE.exec(lines[at]!.text) : null;
    if (!m || m[2] !== undefined || m[4] !== undefined || m[5]!.includes(' → then ')) return false;
    const line = lines.splice(at, 1)[0]!;
    this.b.upsert('Findings', { ...line, text: `${m[1]}${REPRODUCES}(${m[3]}): ${m[5]}`, sources: mergeSources(line.sources, [c.record]), priority: PRIORITY_OF.Findings });
    return true;
  }

  /** A change report that names a file written in the session becomes that deliverable's note. */
  private noteChange(c: Candidate): boolean {
    const named = handles(c.text);
    for (const [path, entry] of this.writes) {
      const base = path.split(/[/\\]/).pop()!.toLowerCase();
      if (named.some((h) => h === path.toLowerCase() || h.endsWith(`/${base}`) || h === base)) {
        entry.note = statementOf(c.text, 16);
        return true;
      }
    }
    return false;
  }

  private tool(tool: ToolInvocation, touches: readonly FileTouch[]): void {
    const sources = tool.resultRecord !== undefined && tool.resultRecord !== tool.callRecord ? [tool.callRecord, tool.resultRecord] : [tool.callRecord];
    const code = exitCode(tool);
    const family = classifyTool(tool.name, tool.input).family;
    const cmd = shellCommand(tool);
    const counts = tool.output !== undefined ? testSummary(tool.output) : undefined;
    const failed =
      tool.isError ||
      (code !== undefined && code !== 0) ||
      (code === undefined && tool.output !== undefined && (commandReportsError(cmd, tool.output) || /\b[1-9]\d* failed\b/.test(counts ?? '')));
    if (!failed) {
      const targets = touches.length ? touches : fileTouches(tool);
      // A here-document describes the file when the command writes one file only.
      const body = targets.filter((t) => t.access !== 'read').length === 1 ? heredocBody(cmd ?? '') : undefined;
      for (const touch of targets) {
        if (touch.access === 'read') {
          if (family === 'read' && tool.output !== undefined) this.read(touch.path, tool.output, sources);
          continue;
        }
        const key = this.deliverableKey(touch.path);
        const entry = this.writes.get(key) ?? { created: false, writes: 0, sources: [], note: '' };
        if (touch.access === 'create') {
          entry.created = true;
          // What the file is for, as its own header says it (a docstring, a leading comment, a title).
          const content = writtenContent(tool);
          if (content !== undefined && entry.purpose === undefined) {
            const purpose = purposeOf(touch.path, content, this.purposeWords);
            if (purpose !== undefined) entry.purpose = redact(purpose).text;
          }
        } else entry.writes++;
        // A short file a shell command wrote whole (a here-document: a config, a unit file) is said by its lines.
        if (body !== undefined) {
          const description = toolDescription(tool);
          entry.written = `${description ? `${description}: ` : ''}\`${redact(body).text}\``;
        }
        entry.sources.push(tool.callRecord);
        this.writes.set(key, entry);
        this.modified.push(key);
      }
      const edit = family === 'edit' ? editTexts(tool) : undefined;
      if (edit) {
        this.checkUndo(tool, edit, sources);
        const path = (touches[0] ?? fileTouches(tool)[0])?.path;
        const entry = path !== undefined ? this.writes.get(this.deliverableKey(path)) : undefined;
        const diff = changedLine(edit.old, edit.new);
        if (entry && diff) entry.edit = diff;
      }
    }
    if (family === 'todo' && !failed) {
      const plan = planOf(tool.input);
      if (plan) this.plan = plan;
    }
    if (tool.output === undefined) return;
    // Only a failure, a command or a change names the call (a read that worked says nothing about itself).
    let labelText: string | undefined;
    const label = (): string => (labelText ??= toolLabel(tool));
    // A test run's counts, when the tool is a command.
    const tests = cmd !== undefined ? counts : undefined;
    // A coding tool's console, not a file or a page it showed (a read file may hold "Commit …" lines).
    if (cmd === undefined && (family === 'other' || family === 'task')) this.consoleEvents(tool.output, sources, tool.resultRecord ?? tool.callRecord);
    if (failed) {
      if (cmd !== undefined && INFORMATIONAL_EXIT.test(cmd.trim()) && code === 1) return;
      const error = errorLine(tool.output);
      const at = raisedAt(tool.output);
      const where = at === undefined || !error || error.includes(at.fn) ? '' : /<(?:anonymous|module)>/.test(at.fn) ? ` — at ${at.file}` : ` — at ${at.fn} (${at.file})`;
      const why = redact(`${tests ? `${tests}; ` : ''}${error}${where}`).text;
      const codeText = code !== undefined ? `exit ${code}` : 'error';
      this.status = `blocked: ${label()} failed (${codeText})${why ? `: ${why}` : ''}`;
      this.failure(label(), codeText, why, sources);
      if (cmd !== undefined) this.unreplaced.set(programOf(cmd), { label: label(), record: tool.callRecord });
      return;
    }
    // What the command's output says, one finding per command (a later run supersedes it): a test run's
    // counts, a short answer, or what a command that worked still printed as wrong.
    const commit = cmd !== undefined ? commitOf(cmd, tool.output) : undefined;
    // A commit or a configuration applied is said by its own line (hash, command); its output is no other fact.
    const recorded = cmd !== undefined && (commit !== undefined || (CONFIGURING_COMMAND.test(cmd) && !UNDOING_COMMAND.test(cmd)));
    const observed = cmd !== undefined && tests === undefined && !recorded ? observation(cmd, tool.output) : undefined;
    const notice = cmd !== undefined && tests === undefined && observed === undefined ? outputNotice(cmd, tool.output) : undefined;
    const said = tests !== undefined ? ['tests', `→ ${tests}`] : observed !== undefined ? ['seen', `→ ${observed}`] : notice !== undefined ? ['notice', `worked but ${notice}`] : undefined;
    if (said) {
      const label60 = firstLine(redact(commandProper(cmd!)).text, 60, true);
      this.b.upsert('Findings', { key: `${said[0]}-${subjectKey(label60, 6)}`, text: `\`${label60}\` ${said[1]} (as of r${tool.resultRecord ?? tool.callRecord})`, sources, priority: 3, origin: 'exact' });
    }
    if (cmd !== undefined) {
      const replaced = this.noteReplacement(cmd, label(), tool.resultRecord ?? tool.callRecord);
      if (/\bgit (?:reset|rebase)\b/.test(cmd)) this.rewrittenAt = tool.callRecord;
      // A command that failed before and now succeeds is no longer ruled out; what it failed with
      // stays a finding (the error and that it was overcome), so the same error is recognised next time.
      const worked = tool.resultRecord ?? tool.callRecord;
      for (const line of [...this.b.facts['Ruled out']]) {
        const m = line.origin === 'exact' ? FAILED_LINE.exec(line.text) : null;
        if (!m || m[1] !== label() || m[2]) continue;
        this.b.upsert('Findings', { ...line, text: `${line.text.replace(/ → then .* worked \(r\d+\)$/, '')}; later it worked (r${worked})`, sources: [...line.sources, worked], priority: 3 });
      }
      this.status = `last command ${label()}${code !== undefined ? ` exited ${code}` : ' finished'}`;
      if (commit) {
        addStatement(this.b, 'Decisions', { text: commit, sources: mergeSources(this.replacedCommits(commit), sources), priority: 2 }, 'exact');
      } else if (UNDOING_COMMAND.test(cmd)) {
        addStatement(this.b, 'Ruled out', { text: `work discarded: ${label()}`, sources, priority: 2 }, 'exact');
      } else if (CONFIGURING_COMMAND.test(cmd) && !replaced) {
        // A command that replaced a failed one is said on the failure's line ("… → then `brew install
        // git-filter-repo` worked"): an "applied:" line would say it twice.
        const description = toolDescription(tool);
        const installed = tool.output !== undefined ? INSTALLED.exec(tool.output.slice(-4000))?.[0].trim() : undefined;
        const outcome = installed ? ` → ${firstLine(redact(installed).text, 120)}` : '';
        addStatement(this.b, 'Decisions', { text: `applied: ${description ? `${description} — ` : ''}\`${firstLine(redact(cmd).text, 160, true)}\`${outcome}`, sources, priority: 2 }, 'exact');
      }
    } else if (family === 'write' || family === 'edit') {
      this.status = `last change: ${label()}`;
    }
  }

  /**
   * What a coding tool's own console reports, in aider's words: the commits it made ("Commit dd581c5 refactor:
   * …"), a commit undone ("Removed: 2bae9da … / Now at: dd581c5 …"), the model it runs ("Aider v0.84.0 / Main
   * model: …", the latest start wins).
   */
  private consoleEvents(output: string, sources: number[], record: number): void {
    const said = (text: string): string => clipChars(redact(text.trim()).text, 100);
    for (const m of output.matchAll(/^Commit ([0-9a-f]{7,40}) (.+)$/gm)) addStatement(this.b, 'Decisions', { text: `committed ${m[1]}: "${said(m[2]!)}"`, sources, priority: 2 }, 'exact');
    const undo = /^Removed: ([0-9a-f]{7,40}) (.+)\r?\n\s*Now at:\s+([0-9a-f]{7,40}) (.+)$/m.exec(output);
    if (undo) {
      // The commit undone is no decision any more: its line goes, the undo says what it was.
      const decisions = this.b.facts.Decisions;
      const at = decisions.findIndex((l) => l.text.startsWith(`committed ${undo[1]}`));
      const before = at >= 0 ? decisions.splice(at, 1)[0]!.sources : [];
      addStatement(this.b, 'Ruled out', { text: `work discarded: commit ${undo[1]} "${said(undo[2]!)}" undone; now at ${undo[3]} "${said(undo[4]!)}"`, sources: mergeSources(before, sources), priority: 2 }, 'exact');
    }
    const model = /^Main model: (\S+)/m.exec(output);
    if (model) {
      const version = /^Aider (v\d+(?:\.\d+)+)/m.exec(output)?.[1];
      this.b.upsert('Findings', { key: 'console-main-model', text: `${version ? `aider ${version}, ` : ''}main model ${model[1]} (as of r${record})`, sources, priority: 3, origin: 'exact' });
    }
  }

  /**
   * A failed tool: one Ruled out line per command, with the verbatim error of
   * each cause it failed with. The same command failing again counts up (×n);
   * other commands failing with the same error join the line ("and 3 more").
   * An interruption by the user is not an approach that failed.
   */
  private failure(label: string, codeText: string, why: string, sources: number[]): void {
    // An interruption by the user is no failed approach; a failure that says nothing about why is no line
    // (a remote command exiting 1 in silence, dozens of times, would bury the failures that say why).
    if (/\binterrupted by (?:the )?user\b/i.test(why) || why.trim() === '' || TOOL_PROTOCOL_ERROR.test(why)) return;
    const signatures = errorSignatures(why);
    const shared = (error: string): boolean => [...errorSignatures(error)].some((sig) => signatures.has(sig));
    const lines = this.b.facts['Ruled out'];
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.origin !== 'exact') continue;
      const m = FAILED_LINE.exec(line.text);
      if (!m) continue;
      const [, first, more, code, times, error] = m;
      const kept = mergeSources(line.sources, sources);
      // The same command again (a bare tool name — aider's console, an unnamed result — is no command: only the
      // error can match it). One line per command: what replaced it stays said, the line being the only place
      // that names it.
      if (first === label && !more && label.startsWith('`') && !label.endsWith('…`')) {
        const replaced = REPLACED_TAIL.exec(line.text)?.[0] ?? '';
        const prior = error!.replace(REPLACED_TAIL, '').split(CAUSE_JOIN);
        // A cause it failed with again is said in its latest words, the others stay; a new cause joins them in
        // order (the newest MAX_CAUSES), so a run that fails on something new is news without a line of its own.
        const causes = shared(error!) ? [...new Set(prior.map((cause) => (shared(cause) ? why : cause)))] : [...prior, why].slice(-MAX_CAUSES);
        lines[i] = { ...line, text: `${first} failed (${codeText}) ×${Number(times ?? 1) + 1}: ${causes.join(CAUSE_JOIN)}${replaced}`, sources: kept, refs: (line.refs ?? 0) + 1 };
        return;
      }
      // A bare tool name says nothing of the attempt but its error: two different errors are two attempts.
      const bare = !label.startsWith('`') || !first!.startsWith('`');
      if (shared(error!) && (!bare || error!.replace(/\d+/g, '#') === why.replace(/\d+/g, '#'))) {
        const others = Number(more ?? 0) + (first === label ? 0 : 1);
        lines[i] = { ...line, text: `${first}${others ? ` and ${others} more` : ''} failed (${code})${times ? ` ×${times}` : ''}: ${error}`, sources: kept, refs: (line.refs ?? 0) + 1 };
        return;
      }
    }
    // The same failure after it was once overcome is ruled out again (its finding moves back).
    const resolved = this.b.facts.Findings.find((l) => l.origin === 'exact' && l.text.startsWith(`${label} failed (`) && RESOLVED.test(l.text) && shared(l.text.replace(RESOLVED, '')));
    if (resolved) {
      this.b.upsert('Ruled out', { ...resolved, text: `${label} failed (${codeText}): ${why}`, sources: mergeSources(resolved.sources, sources), priority: 2 });
      return;
    }
    addStatement(this.b, 'Ruled out', { text: `${label} failed (${codeText}): ${why}`, sources, priority: 2 }, 'exact');
  }

  /** The last failed command of each program, until another command of that program works. */
  private readonly unreplaced = new Map<string, { label: string; record: number }>();

  /**
   * What replaced a failed approach: the next command of the same program that
   * worked, said on the failure's line ("→ then `…` worked (r52)"), so the next
   * attempt starts from what worked rather than from what failed.
   */
  private noteReplacement(cmd: string, label: string, record: number): boolean {
    const program = programOf(cmd);
    const failed = this.unreplaced.get(program);
    if (!failed) return false;
    this.unreplaced.delete(program);
    if (failed.label === label) return false;
    const lines = this.b.facts['Ruled out'];
    const at = lines.findIndex((l) => l.origin === 'exact' && FAILED_LINE.exec(l.text)?.[1] === failed.label && !/ → then `/.test(l.text));
    if (at < 0) return false;
    const line = lines[at]!;
    lines[at] = { ...line, text: `${line.text} → then ${label} worked (r${record})`, sources: [...new Set([...line.sources, record])].sort((x, y) => x - y) };
    return true;
  }

  /** The record of the latest command that rewrote a branch's history (`git reset`, `git rebase`). */
  private rewrittenAt = -1;

  /**
   * The commits a new commit replaces on its branch, removed (their sources are
   * returned for the new line): with `--amend` the branch's latest commit, and
   * an earlier commit with the same message when the branch was rewritten since
   * (the work redone after a reset). A branch holds one of them, so the summary
   * says one.
   */
  private replacedCommits(commit: string): number[] {
    const parsed = COMMIT_LINE.exec(commit);
    if (!parsed) return [];
    const [, , branch, message, flags] = parsed;
    const gone: FactLine[] = [];
    const ofBranch: { line: FactLine; message: string }[] = [];
    for (const section of ['Decisions', 'Archived'] as const) {
      for (const line of this.b.facts[section]) {
        if (line.members) continue;
        const earlier = COMMIT_LINE.exec(gistsOf(line)[0]!.replace(SOURCES_SUFFIX, ''));
        if (earlier && earlier[2] === branch) ofBranch.push({ line, message: earlier[3]! });
      }
    }
    const latest = (c: { line: FactLine }): number => Math.max(-1, ...c.line.sources);
    const amended = flags?.includes('--amend') ? ofBranch.reduce<(typeof ofBranch)[number] | undefined>((a, c) => (!a || latest(c) > latest(a) ? c : a), undefined) : undefined;
    // The same message again replaces a commit only when the branch was rewritten since (a reset, a rebase):
    // two commits of one message with work between them are two commits.
    for (const c of ofBranch) if (c === amended || (c.message === message && this.rewrittenAt > latest(c))) gone.push(c.line);
    for (const line of gone) this.b.remove(line.key);
    return gone.flatMap((l) => l.sources);
  }

  /** An edit that puts back what an earlier edit of the span replaced: the earlier change was undone. */
  private readonly edits = new Map<string, { old: string; new: string; record: number }[]>();
  /**
   * The deliverable a written path belongs to: one file written by its absolute
   * path and by a relative one (`reproduce_bug.py`, then
   * `/repo/reproduce_bug.py`) is one deliverable, under the form it was first
   * written by — when exactly one earlier path of the other form matches.
   */
  private deliverableKey(path: string): string {
    return this.writes.has(path) ? path : knownPathOf(path, this.writes.keys());
  }

  /**
   * A file read for the first time: what it says it is for (its docstring,
   * leading comment or title) is a finding about the code, so an exploration
   * leaves a map of what each file does rather than nothing.
   */
  private read(path: string, output: string, sources: number[]): void {
    if (this.writes.has(path)) return;
    const purpose = purposeOf(path, readContent(output), this.purposeWords);
    if (purpose === undefined) return;
    const key = `file-${subjectKey(path, 10)}`;
    if (this.b.facts.Findings.some((l) => l.key === key) || this.b.facts.Archived.some((l) => l.key === key)) return;
    this.b.upsert('Findings', { key, text: `\`${path}\` (read): ${redact(purpose).text}`, sources, priority: 3, origin: 'exact' });
  }

  private checkUndo(tool: ToolInvocation, edit: { old: string; new: string }, sources: number[]): void {
    const path = fileTouches(tool)[0]?.path ?? '';
    const earlier = this.edits.get(path) ?? [];
    const undone = earlier.find((e) => e.new === edit.old && e.old === edit.new);
    if (undone) {
      addStatement(this.b, 'Ruled out', { text: `edit of ${path} undone: \`${firstLine(redact(undone.old).text, 60)}\` → \`${firstLine(redact(undone.new).text, 60)}\` was reverted`, sources: [undone.record, ...sources], priority: 2 }, 'exact');
    }
    earlier.push({ ...edit, record: tool.callRecord });
    this.edits.set(path, earlier.slice(-20));
  }

  finish(units: readonly Unit[]): void {
    for (const [path, entry] of this.writes) {
      const parts: string[] = [];
      if (entry.created) parts.push('created');
      if (entry.writes > 0) parts.push(`modified ×${entry.writes}`);
      const note = entry.note ? ` — ${entry.note}` : entry.purpose ? ` — ${entry.purpose}` : entry.edit ? ` — last edit ${entry.edit}` : entry.written ? ` — written: ${entry.written}` : '';
      this.b.upsert('Deliverables', { key: path, text: `${parts.join(', ')}${note}`, sources: mergeSources(entry.sources, []), priority: 1 });
    }
    const delivered = this.b.facts.Deliverables.map((d) => d.key);
    const last = units[units.length - 1];
    let status = this.status;
    if (this.interrupted !== undefined && last?.kind === 'user') status = `the user interrupted the agent (r${this.interrupted})`;
    else if (this.question && last?.kind === 'step') status = `awaiting the user's ${this.question}`;
    else if (this.lastAsk && !this.lastAsk.answered) status = `the user's request #${this.lastAsk.ordinal} is not answered yet`;
    // "answer request #9" from an earlier fold is done with once a later request was asked and answered.
    // "continue request #6" from an earlier fold is done with once the agent replied or the user asked again.
    let next = (this.lastAsk?.answered && /^answer request #/.test(this.next)) || ((this.replied || this.lastAsk) && /^continue request #/.test(this.next)) ? '' : this.next;
    if (this.plan?.active) next = `${this.plan.active} (in progress, todo)`;
    else if (this.plan?.open.length) next = `${this.plan.open[0]} (todo${this.plan.open.length > 1 ? `, ${this.plan.open.length - 1} more open` : ''})`;
    else if (this.lastAsk && !this.lastAsk.answered) next = `answer request #${this.lastAsk.ordinal}: ${statementOf(this.lastAsk.text, 24)}`;
    // Options put to the user are theirs to pick: the agent waits rather than acting on its own plan.
    else if (this.question?.startsWith('choice') && last?.kind === 'step') next = "wait for the user's choice";
    else if (this.lastPlanSentence) next = `${this.lastPlanSentence} (stated by the agent)`;
    else if (this.plan && this.plan.open.length === 0) next = 'every item of the plan (todo) is done';
    // The span ends while the agent is still calling tools for the last ask: that work goes on.
    if (next === '' && this.lastAsk?.answered && !this.lastAsk.closed && last?.kind === 'step') next = `continue request #${this.lastAsk.ordinal} (in progress): ${statementOf(this.lastAsk.text, 24)}`;
    this.b.current = {
      goal: plain(this.goal),
      deliverable: delivered.length
        ? `${delivered.length} file(s) written so far; latest: ${[...new Set(this.modified.length ? this.modified : delivered)].slice(-4).join(', ')}`
        : 'nothing written yet',
      status: plain(status),
      next: plain(next),
    };
  }
}

/** The goal: the whole ask (its opening words when long, with where the rest is), and what a short reply chose. */
function goalText(req: RequestLine): string {
  const ask = statementOf(req.text.replace(/\s+/g, ' '), CURRENT_MAX_WORDS);
  return req.resolved ? `"${ask}" → ${req.resolved.assent ? 'agreed to' : 'chose'} "${req.resolved.chose}"` : ask;
}

/** Current-state text without markdown. */
function plain(text: string): string {
  return text.replace(/\*\*|__/g, '').replace(/\s+/g, ' ').trim();
}

/** What a fact line states, without its group tag, the ellipses of a gist or its "(as of rN)". */
function statementText(text: string): string {
  return text.replace(/^\[[^\]]+\] /, '').replace(/^…|…$/g, '').replace(/ \(as of r\d+\)$/, '');
}

/**
 * One line per statement: a line that says what an earlier line (in any fact
 * section) already says is merged into it — sources and references add up —
 * whatever path wrote it (a tool result, a repeated observation, a gist). The
 * user's constraints are verbatim and never merged away; a grouped archived
 * line is left whole.
 */
function dedupe(b: SummaryBuilder): void {
  const kept: { section: FactSection; index: number; text: string }[] = [];
  for (const section of ['Constraints', 'Decisions', 'Ruled out', 'Findings', 'Archived'] as const) {
    const lines = b.facts[section];
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      const text = statementText(line.text);
      const same = section === 'Constraints' || line.members ? undefined : kept.find((k) => sameFact(k.text, text));
      if (!same) {
        kept.push({ section, index: i, text });
        continue;
      }
      const into = b.facts[same.section][same.index]!;
      b.facts[same.section][same.index] = { ...into, sources: mergeSources(into.sources, line.sources), refs: (into.refs ?? 0) + (line.refs ?? 0) + 1 };
      lines.splice(i--, 1);
    }
  }
}

/**
 * A statement of the agent's said again, with more, by another line is merged
 * into it (sources and references add up): the same finding in a step's
 * narration and in its closing summary, a decision and its restatement, a gist
 * that says less than a live line. Only the agent's prose is compared: the
 * user's constraints are verbatim, and exact lines (a command's outcome, an
 * edit, a commit, a failure with its error) are events that merely look alike.
 * A live line merges only into a line of its own section (a decision is not
 * a finding, and Ruled out is the anti-re-explore list); an archived gist into any.
 */
function mergeRestated(b: SummaryBuilder): void {
  const lines: { section: FactSection; line: FactLine; text: string }[] = [];
  for (const section of ['Decisions', 'Ruled out', 'Findings', 'Archived'] as const) {
    for (const line of b.facts[section]) {
      const text = statementText(line.text);
      if (line.members || eventOf(text) !== '' || FAILED_LINE.test(text) || text.includes(' → ')) continue;
      lines.push({ section, line, text });
    }
  }
  const into = restatedBy(lines.map((l) => l.text));
  const merged = new Map<FactLine, FactLine>();
  const gone = new Set<FactLine>();
  lines.forEach((l, i) => {
    const j = into[i];
    if (j === undefined) return;
    const target = lines[j]!;
    if (l.section !== 'Archived' && target.section !== l.section) return;
    const was = merged.get(target.line) ?? target.line;
    merged.set(target.line, { ...was, sources: mergeSources(was.sources, l.line.sources), refs: (was.refs ?? 0) + (l.line.refs ?? 0) + 1 });
    gone.add(l.line);
  });
  if (gone.size === 0) return;
  for (const section of ['Decisions', 'Ruled out', 'Findings', 'Archived'] as const) {
    b.facts[section] = b.facts[section].filter((line) => !gone.has(line)).map((line) => merged.get(line) ?? line);
  }
}

/**
 * The handles of a statement: what a later record would name to refer back to
 * it — inline-code spans, file paths and names, identifiers (snake_case,
 * camelCase, dotted or slashed names). Lower-cased.
 */
export function handlesOf(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/`([^`\n]{3,60})`/g)) out.add(m[1]!.trim().toLowerCase());
  for (const raw of text.split(/[\s`'"(),;:!?<>[\]{}*]+/)) {
    const t = raw.replace(/^[.\-/]+|[.\-/]+$/g, '');
    if (t.length < 4 || t.length > 80) continue;
    if (/[a-z]/i.test(t) && (/[/_]/.test(t) || /\.[a-z]/i.test(t) || /[a-z][A-Z]/.test(t)) && !PLACEHOLDER.test(t)) out.add(t.toLowerCase());
  }
  return [...out];
}

/** How much of a tool output is searched for handles. */
const REFERENCE_OUTPUT_CHARS = 2000;

/** What a unit says: its texts, tool inputs and the head of tool outputs, lower-cased. */
function unitText(unit: Unit): string {
  const pieces: string[] = [];
  for (const part of unit.parts) {
    if (part.kind === 'tool' && part.tool) {
      pieces.push(JSON.stringify(part.tool.input ?? ''));
      if (part.tool.output) pieces.push(part.tool.output.slice(0, REFERENCE_OUTPUT_CHARS));
    } else pieces.push(part.text);
  }
  return pieces.join('\n').toLowerCase();
}

/**
 * Adds to each fact line the number of newly folded units after its sources
 * that name one of its handles. A fact later steps keep coming back to is the
 * one the cap keeps live longest (and whose archived gist it keeps longest).
 */
function countReferences(b: SummaryBuilder, units: readonly Unit[]): void {
  const texts = units.map((u) => ({ first: u.firstRecord, text: unitText(u) }));
  for (const section of ['Decisions', 'Constraints', 'Ruled out', 'Findings', 'Archived'] as const) {
    const lines = b.facts[section];
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.key.startsWith('archived~') || line.sources.length === 0) continue;
      const named = handlesOf(line.text);
      if (named.length === 0) continue;
      const after = Math.max(...line.sources);
      let n = 0;
      for (const t of texts) if (t.first > after && named.some((h) => t.text.includes(h))) n++;
      if (n) lines[i] = { ...line, refs: (line.refs ?? 0) + n };
    }
  }
}

/**
 * The last guard before overflow: keeps the request log and safety constraints
 * already known, adds the new requests verbatim, and records an action count.
 * It cannot fail.
 */
export class StaticCheckpointSummarizer extends LocalSummarizer {
  readonly name = 'static-checkpoint';

  foldSync(input: FoldInput): SummaryState {
    const previous = input.previous ?? emptySummary();
    const b = new SummaryBuilder(previous);
    let actions = 0;
    let lastAsk = previous.current.goal;
    for (const unit of input.units) {
      if (unit.kind === 'step') b.offer = offerOf(unit) ?? b.offer;
      for (const part of unit.parts) {
        if (unit.kind === 'user' && isRequestText(part.text)) {
          const req = resolvedRequest(b.requests.length + 1, part, b.offer);
          b.requests.push(req);
          lastAsk = `#${req.ordinal} (r${part.record}): ${goalText(req)}`;
          for (const c of extractConstraints(part.text)) {
            if (c.safety) b.upsert('Constraints', { key: topicKey(c.sentence), text: c.sentence, sources: [part.record], priority: 0, origin: 'exact' });
          }
        }
        if (part.kind === 'tool') actions++;
      }
    }
    const first = input.units[0]?.firstRecord ?? previous.coverageEnd;
    b.current = {
      goal: lastAsk,
      deliverable: previous.current.deliverable,
      status: `checkpoint: ${actions} tool action(s) in records ${first}–${Math.max(first, input.coverageEnd - 1)} folded without a summary`,
      next: previous.current.next,
    };
    return enforceCap(b.build(input.coverageEnd, previous.folds + 1), this.counter, input.cap ?? this.cap).state;
  }
}
