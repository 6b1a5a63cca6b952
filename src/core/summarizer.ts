/**
 * Summarizers fold a span of units into the running Task Context.
 *
 * Σn = fold(Σn−1, span). The extractive summarizer needs no model: it keeps the
 * user's requests verbatim, detects constraints, decisions, findings and
 * ruled-out approaches from the text, files from tool calls, failed commands
 * with their exit codes, and the last state. The static checkpoint always
 * produces something; the engine falls back to it when a summarizer fails.
 */
import { enforceCap, SummaryBuilder, SummaryLineCounter, emptySummary, type FactLine, type RequestLine, type SummaryState } from './summary';
import { exitCode, fileTouches, shellCommand, classifyTool } from './tools';
import { redact } from './redact';
import type { TokenCounter } from './tokens';
import type { Part, ToolInvocation, Unit } from './types';

export interface FoldInput {
  /** The summary being extended (undefined for the first fold). */
  readonly previous: SummaryState | undefined;
  /** The units to fold, oldest first; they start where `previous` ends. */
  readonly units: readonly Unit[];
  /** Records [0, coverageEnd) are covered after this fold. */
  readonly coverageEnd: number;
}

export interface Summarizer {
  readonly name: string;
  fold(input: FoldInput): Promise<SummaryState>;
}

/** Requests longer than this keep their verbatim head; the record keeps the rest. */
export const REQUEST_MAX_CHARS = 1200;
const SENTENCE_MAX_CHARS = 600;
/** Decisions and findings longer than this are clipped (constraints never are). */
const NARRATIVE_MAX_CHARS = 320;
const MAX_CONSTRAINTS_PER_MESSAGE = 24;
const MAX_DECISIONS_PER_STEP = 2;
const MAX_FINDINGS_PER_STEP = 3;

const CONSTRAINT_PATTERN =
  /\b(must|mustn't|never|do not|don't|always|only|should ?n[o']t|avoid|make sure|ensure|required|requirement|not allowed|forbidden|prohibited|under no circumstances|at most|at least|no more than|keep (?:it|them|the)\b.*\b(?:unchanged|as is|intact)|without (?:changing|modifying|touching|breaking))\b/i;
const SAFETY_PATTERN =
  /\b(never|must not|mustn't|do not|don't|not allowed|forbidden|prohibited|under no circumstances)\b.*|\b(production|prod db|secret|password|credential|api key|private key|delete|drop table|force[- ]push|rm -rf|security|privacy|personal data|pii|destructive|backup)\b/i;
const PROHIBITIVE = /\b(never|must not|mustn't|do not|don't|not allowed|forbidden|prohibited|under no circumstances|no\s+\w+\s+(?:allowed|permitted)|without)\b/i;
const DECISION_PATTERN =
  /\b(I'll use|I will use|we'll use|we will use|let's use|let's go with|going with|decided to|decision:|switch(?:ing)? to|instead of|opt(?:ing)? for|I chose|we chose|the approach (?:is|will be)|the plan is to|I'm going to use)\b/i;
const FINDING_PATTERN =
  /\b(root cause|the (?:issue|problem|bug|cause|error|reason) (?:is|was)|turns out|I found|found that|confirmed that|this means|is caused by|fails because|failing because)\b/i;
/** A statement about a named thing: an inline-code identifier and a verb of state or effect. */
const IDENTIFIER_FACT =
  /`[^`\n]{2,80}`[^.]*\b(?:is|are|was|were|drops|uses|runs|causes|returns|means|requires|listens|points|fails|breaks|blocks|overrides|conflicts)\b|\b(?:is|are|was|were)\b[^.]*`[^`\n]{2,80}`/;
const RULED_OUT_PATTERN =
  /\b(didn't work|did not work|doesn't work|does not work|won't work|will not work|not possible|isn't possible|abandon(?:ed|ing)?|ruled out|give up on|reverted?|dead end|not the (?:issue|cause|problem))\b/i;
const STOP_WORDS = new Set(
  'a an the to of in on for and or but is are be it this that with as at by we i you please should must can will just so if then than from into also all any our your my me us them they there here do does did not no'.split(' '),
);

export function splitSentences(text: string): string[] {
  const pieces = text
    // A short code block (a chain, a value) reads as part of the sentence; longer ones are code.
    .replace(/```[^\n]*\n([\s\S]*?)```/g, (_, body: string) => (body.length <= 160 && body.split('\n').filter((l) => l.trim()).length <= 2 ? ` ${body.trim().replace(/\s+/g, ' ')} ` : ' '))
    .split(/(?<=[.!?])\s+(?=[A-Z0-9`"'(\[])|\n+/)
    .map((s) => s.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, '').trim())
    .filter((s) => s.length > 0);
  // A lead-in ending with a colon belongs with what follows it.
  const joined: string[] = [];
  for (let i = 0; i < pieces.length; i++) {
    let sentence = pieces[i]!;
    if (sentence.endsWith(':') && i + 1 < pieces.length) sentence = `${sentence} ${pieces[++i]!}`;
    joined.push(sentence);
  }
  return joined.filter((s) => s.length >= 12 && s.length <= SENTENCE_MAX_CHARS);
}

/** A stable kebab topic key from the first significant words of a statement. */
export function topicKey(text: string, words = 5): string {
  const tokens = text
    .toLowerCase()
    .replace(/[`'"]/g, '')
    .split(/[^a-z0-9_./-]+/)
    .map((t) => t.replace(/^[./-]+|[./-]+$/g, ''))
    .filter((t) => t.length > 0 && !STOP_WORDS.has(t));
  const key = tokens.slice(0, words).join('-').replace(/[./]/g, '-').replace(/-+/g, '-').slice(0, 60);
  return key || 'note';
}

/** Is a user message a request (as opposed to an empty line or a tool-result echo)? */
export function isRequestText(text: string): boolean {
  const t = text.trim();
  if (t.length === 0) return false;
  if (/^<(local-command-stdout|local-command-stderr|system-reminder)>/.test(t)) return false;
  if (/^\[Request interrupted by user/.test(t)) return false;
  return true;
}

export function requestLine(ordinal: number, record: number, text: string): RequestLine {
  const t = redact(text.trim()).text;
  if (t.length <= REQUEST_MAX_CHARS) return { ordinal, text: t, record, elided: 0 };
  return { ordinal, text: t.slice(0, REQUEST_MAX_CHARS), record, elided: t.length - REQUEST_MAX_CHARS };
}

function firstLine(text: string, max = 200): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The user-stated constraints of one message, verbatim, with their safety flag. */
/** Code, logs and numbered listings pasted into a message are not rules the user stated. */
export function looksLikeCode(sentence: string): boolean {
  if (/^\s*\d+\s*[:→|]/.test(sentence)) return true;
  if (/^\s*(def|class|import|from|return|const|let|var|function|if|for|while|self\.)\b/.test(sentence)) return true;
  const symbols = sentence.replace(/[^{}()[\];=<>$\\]/g, '').length;
  return symbols >= 4 && symbols / sentence.length > 0.06;
}

export function extractConstraints(text: string, limit = MAX_CONSTRAINTS_PER_MESSAGE): { sentence: string; safety: boolean }[] {
  const out: { sentence: string; safety: boolean }[] = [];
  for (const sentence of splitSentences(text)) {
    if (!CONSTRAINT_PATTERN.test(sentence) || looksLikeCode(sentence)) continue;
    const safety = PROHIBITIVE.test(sentence) && SAFETY_PATTERN.test(sentence);
    out.push({ sentence, safety });
    if (out.length >= limit) break;
  }
  return out;
}

/** The protected lines of a covered prefix, derived from the raw units alone. */
export interface ProtectedLines {
  readonly requests: RequestLine[];
  readonly safety: FactLine[];
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
  for (const unit of units) {
    if (unit.kind !== 'user') continue;
    for (const part of unit.parts) {
      if (!isRequestText(part.text)) continue;
      requests.push(requestLine(requests.length + 1, part.record, part.text));
      for (const c of extractConstraints(part.text)) {
        if (c.safety) safety.push({ key: topicKey(c.sentence), text: c.sentence, sources: [part.record], priority: 0 });
      }
    }
  }
  return { requests, safety };
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
      return s.ordinal === r.ordinal && s.record === r.record && r.text.startsWith(s.text);
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

function toolLabel(part: Part): string {
  const tool = part.tool!;
  const cmd = shellCommand(tool);
  if (cmd !== undefined) return `\`${clip(firstLine(cmd, 120), 120)}\``;
  const touches = fileTouches(tool);
  if (touches.length) return `${tool.name} ${touches[0]!.path}`;
  return tool.name;
}

function lastErrorLine(output: string): string {
  const lines = output.slice(-4000).split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
  const errorLine = [...lines].reverse().find((l) => /error|exception|fail|traceback|not found|denied|cannot|refused/i.test(l));
  return clip(errorLine ?? lines[lines.length - 1] ?? '', 160);
}

/** A summarizer that needs no model: synchronous folds, capped by demotion. */
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

/** Shell commands that change something (a file, a package set, a service, a repository). */
const MUTATING_COMMAND =
  /\b(uci (?:set|commit|delete|add)|sed -i|rm -|mv |cp |chmod |chown |git (?:commit|push|merge|rebase|reset|checkout -b|tag)|npm (?:install|i|uninstall|ci)\b|pnpm add|yarn add|pip install|apt(?:-get)? (?:install|remove)|brew install|systemctl (?:restart|enable|disable|stop|start)|service \S+ (?:restart|stop|start)|\/etc\/init\.d\/\S+ (?:restart|stop|start|enable|disable)|docker (?:run|rm|stop|compose up)|ln -s|crontab|tee )|(?:^|[^0-9&<>])>>?\s*[\w/.~]/;

function toolDescription(tool: ToolInvocation): string | undefined {
  const input = tool.input;
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const d = (input as Record<string, unknown>).description;
    if (typeof d === 'string' && d.trim().length >= 6) return clip(d.trim(), 120);
  }
  return undefined;
}

/** The opening of a turn's closing message, without code blocks or markdown noise. */
function outcomeGist(text: string): string {
  const flat = text
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/[*#`>|]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return clip(flat, 280);
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
    if (/[a-z]/i.test(t) && (/[/_]/.test(t) || /\.[a-z]/i.test(t) || /[a-z][A-Z]/.test(t))) out.add(t.toLowerCase());
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
      if (line.key.startsWith('archive-group') || line.sources.length === 0) continue;
      const handles = handlesOf(line.text);
      if (handles.length === 0) continue;
      const after = Math.max(...line.sources);
      let n = 0;
      for (const t of texts) if (t.first > after && handles.some((h) => t.text.includes(h))) n++;
      if (n) lines[i] = { ...line, refs: (line.refs ?? 0) + n };
    }
  }
}

export class ExtractiveSummarizer extends LocalSummarizer {
  readonly name = 'extractive';

  foldSync(input: FoldInput): SummaryState {
    const previous = input.previous ?? emptySummary();
    const b = new SummaryBuilder(previous);
    let goal = previous.current.goal;
    let status = previous.current.status;
    let next = previous.current.next;
    const modified: string[] = [];
    const writeCounts = new Map<string, { created: boolean; writes: number; sources: number[] }>();
    for (const line of b.facts.Deliverables) {
      const m = /^(created)?(?:, )?(?:modified ×(\d+))?/.exec(line.text);
      writeCounts.set(line.key, { created: m?.[1] === 'created', writes: Number(m?.[2] ?? 0), sources: [...line.sources] });
    }

    input.units.forEach((unit, index) => {
      // The last words of a turn (a step followed by the next user message) usually report its outcome.
      const nextUnit = input.units[index + 1];
      if (unit.kind === 'step' && nextUnit?.kind === 'user') {
        const text = [...unit.parts].reverse().find((p) => p.kind === 'text' && p.text.trim().length >= 40);
        if (text) {
          b.upsert('Findings', { key: `outcome-r${text.record}`, text: `turn outcome: ${outcomeGist(text.text)} (reported)`, sources: [text.record], priority: 3 });
        }
      }
    });
    for (const unit of input.units) {
      if (unit.kind === 'user' || unit.kind === 'system') {
        for (const part of unit.parts) {
          if (unit.kind === 'system') continue;
          if (!isRequestText(part.text)) continue;
          const req = requestLine(b.requests.length + 1, part.record, part.text);
          b.requests.push(req);
          goal = `#${req.ordinal}: ${firstLine(part.text)}`;
          for (const c of extractConstraints(part.text)) {
            b.upsert('Constraints', { key: topicKey(c.sentence), text: c.sentence, sources: [part.record], priority: c.safety ? 0 : 2 });
          }
          for (const sentence of splitSentences(part.text)) {
            if (DECISION_PATTERN.test(sentence) && !CONSTRAINT_PATTERN.test(sentence)) {
              b.upsert('Decisions', { key: topicKey(sentence), text: `${sentence} (user)`, sources: [part.record], priority: 2 });
            }
          }
        }
        continue;
      }
      let decisions = 0;
      let findings = 0;
      for (const part of unit.parts) {
        if (part.kind === 'text') {
          for (const sentence of splitSentences(part.text)) {
            if (RULED_OUT_PATTERN.test(sentence)) {
              b.upsert('Ruled out', { key: topicKey(sentence), text: clip(sentence, NARRATIVE_MAX_CHARS), sources: [part.record], priority: 2 });
            } else if (decisions < MAX_DECISIONS_PER_STEP && DECISION_PATTERN.test(sentence)) {
              decisions++;
              b.upsert('Decisions', { key: topicKey(sentence), text: clip(sentence, NARRATIVE_MAX_CHARS), sources: [part.record], priority: 2 });
            } else if (findings < MAX_FINDINGS_PER_STEP && (FINDING_PATTERN.test(sentence) || IDENTIFIER_FACT.test(sentence))) {
              findings++;
              b.upsert('Findings', { key: topicKey(sentence), text: `${clip(sentence, NARRATIVE_MAX_CHARS)} (reported)`, sources: [part.record], priority: 3 });
            }
          }
          const sentences = splitSentences(part.text);
          if (sentences.length) next = `${clip(sentences[sentences.length - 1]!, 200)} (reported)`;
          continue;
        }
        if (part.kind !== 'tool' || !part.tool) continue;
        const tool = part.tool;
        const sources = tool.resultRecord !== undefined ? [tool.callRecord, tool.resultRecord] : [tool.callRecord];
        for (const touch of fileTouches(tool)) {
          if (touch.access === 'read') continue;
          const entry = writeCounts.get(touch.path) ?? { created: false, writes: 0, sources: [] };
          if (touch.access === 'create') entry.created = true;
          else entry.writes++;
          entry.sources.push(tool.callRecord);
          writeCounts.set(touch.path, entry);
          modified.push(touch.path);
        }
        const code = exitCode(tool);
        const failed = tool.isError || (code !== undefined && code !== 0);
        const cmd = shellCommand(tool);
        const label = toolLabel(part);
        if (tool.output === undefined) continue;
        if (failed) {
          const key = cmd !== undefined ? `cmd-${topicKey(cmd, 3)}` : `${topicKey(tool.name, 2)}-${topicKey(label, 3)}`;
          const codeText = code !== undefined ? `exit ${code}` : 'error';
          b.upsert('Ruled out', {
            key,
            text: `${label} failed (${codeText}): ${lastErrorLine(tool.output)}`,
            sources,
            priority: 2,
          });
          status = `${label} failed (${codeText})`;
        } else if (cmd !== undefined) {
          const key = `cmd-${topicKey(cmd, 3)}`;
          if (b.has(key)) {
            b.upsert('Findings', { key, text: `${label} now succeeds${code !== undefined ? ` (exit ${code})` : ''}`, sources, priority: 3 });
          }
          status = `last command ${label}${code !== undefined ? ` exited ${code}` : ' finished'}`;
          if (MUTATING_COMMAND.test(cmd)) {
            // The command is quoted once: a description, when the call has one, goes before it.
            const description = toolDescription(tool);
            const what = description ?? firstLine(cmd, 120);
            b.upsert('Decisions', {
              key: `done-${topicKey(what, 4)}`,
              text: `done: ${description ? `${description} — ` : ''}\`${clip(firstLine(cmd, 160), 160)}\`${code !== undefined ? ` (exit ${code})` : ''}`,
              sources,
              priority: 2,
            });
          }
        } else if (['write', 'edit'].includes(classifyTool(tool.name, tool.input).family)) {
          status = `last change: ${label}`;
        }
      }
    }

    for (const [path, entry] of writeCounts) {
      const parts: string[] = [];
      if (entry.created) parts.push('created');
      if (entry.writes > 0) parts.push(`modified ×${entry.writes}`);
      b.upsert('Deliverables', { key: path, text: parts.join(', '), sources: entry.sources, priority: 1 });
    }
    countReferences(b, input.units);
    const delivered = b.facts.Deliverables.map((d) => d.key);
    b.current = {
      goal,
      deliverable: delivered.length
        ? `${delivered.length} file(s) written so far; latest: ${[...new Set(modified.length ? modified : delivered)].slice(-4).join(', ')}`
        : 'nothing written yet',
      status,
      next,
    };
    const state = b.build(input.coverageEnd, previous.folds + 1);
    return enforceCap(state, this.counter, this.cap).state;
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
      for (const part of unit.parts) {
        if (unit.kind === 'user' && isRequestText(part.text)) {
          const req = requestLine(b.requests.length + 1, part.record, part.text);
          b.requests.push(req);
          lastAsk = `#${req.ordinal}: ${firstLine(part.text)}`;
          for (const c of extractConstraints(part.text)) {
            if (c.safety) b.upsert('Constraints', { key: topicKey(c.sentence), text: c.sentence, sources: [part.record], priority: 0 });
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
    return enforceCap(b.build(input.coverageEnd, previous.folds + 1), this.counter, this.cap).state;
  }
}
