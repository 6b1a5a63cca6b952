/**
 * aider's watch mode: the user writes an instruction as a comment in a file
 * ("// AI! Add missing TSDoc") and aider acts on it with no chat message —
 * its console says "Processing your request..." and the model's reply follows.
 * Such an ask is the user's as much as a typed one: each becomes a user turn
 * for the fold, in the comment's own words when the reply quotes them (its
 * SEARCH block holds the comment, or it names it in backticks), otherwise as
 * the reply's first sentence says what it will do.
 */
import type { Part, Unit } from './types';
import { forwardSlashes } from './paths';

/** aider's console when a comment in a watched file asks for something. */
const WATCH_TRIGGER = /^Processing your request\.\.\.$/m;
/** The file aider added to the chat just before (the file the comment is in, most often). */
const ADDED_FILE = /^Added (\S.*?) to the chat$/gm;
/** The comment itself: `// AI! …`, `# AI! …`, `-- AI! …` (aider also accepts `AI?` and a trailing `AI!`). */
const COMMENT = /(?:^|\n|`)[ \t]*(?:\/\/|#|--|\/\*|<!--)[ \t]*(AI[!?][ \t]*[^\n`]*?|[^\n`]*?[ \t]AI[!?])[ \t]*(?:\*\/|-->)?[ \t]*(?:`|\n|$)/;
/** A file the reply names in backticks ("…the functions in `packages/module/es/src/iterable.filter.ts`"). */
const NAMED = /`([^`\s]+\.[A-Za-z]\w{0,7})`/;
/** The reply's opening that says what it will do ("Okay, I will add the missing TSDoc…"). */
const WILL = /^(?:ok(?:ay)?|sure|alright|got it)?[,.!]?\s*(?:i will|i'll)\s+([^\n]{8,240}?)(?:\.\s|\.?$|\n)/i;

const READ_BY_AGENT = ', as the agent read it';
/** The note an ask taken from a comment carries: where the comment is, and whether the words are the agent's reading. */
const COMMENT_NOTE = new RegExp(` \\(a comment(?: in [^()]*)?(?:${READ_BY_AGENT})?\\)$`);

/** An ask written as a comment in a file, for the fold: the user turn it stands for. */
export interface InFileAsk {
  /** The step whose reply answers it (the user turn is folded just before it). */
  readonly unitIndex: number;
  readonly unit: Unit;
}

/** The asks aider's watch mode took from comments, among `units` (a fold's span, `before` the units just before it). */
export function inFileAsks(units: readonly Unit[], before: readonly Unit[] = []): InFileAsk[] {
  return asksIn([...before, ...units])
    .filter((a) => a.unitIndex >= before.length)
    .map((a) => ({ ...a, unitIndex: a.unitIndex - before.length }));
}

/** `units` with each ask taken from a comment put in as a user turn before the step that answers it. */
export function withInFileAsks(units: readonly Unit[], before: readonly Unit[] = []): readonly Unit[] {
  const asks = inFileAsks(units, before);
  if (asks.length === 0) return units;
  const at = new Map(asks.map((a) => [a.unitIndex, a.unit]));
  return units.flatMap((unit, i) => {
    const ask = at.get(i);
    return ask ? [ask, unit] : [unit];
  });
}

function asksIn(units: readonly Unit[]): InFileAsk[] {
  const out: InFileAsk[] = [];
  let pending: { file: string | undefined } | undefined;
  units.forEach((unit, unitIndex) => {
    if (unit.kind === 'user') pending = undefined;
    if (unit.kind !== 'step') return;
    for (const part of unit.parts) {
      const reply = part.kind === 'text' ? part.text.trim() : '';
      if (pending && reply !== '') {
        const text = askOf(reply, pending.file);
        // Cited at the reply, which quotes the comment (or says what it asks): the console that announced it does not.
        if (text !== undefined) out.push({ unitIndex, unit: userTurn(unit, text, part.record) });
        pending = undefined;
      }
      const said = part.tool?.name === 'aider' ? (part.tool.output ?? '') : '';
      if (WATCH_TRIGGER.test(said)) {
        const added = [...said.matchAll(ADDED_FILE)].pop()?.[1];
        pending = { file: added === undefined ? undefined : forwardSlashes(added) };
      }
    }
  });
  return out;
}

/** The ask as the user wrote it in the file, or as the reply read it; undefined when the reply quotes no comment and says no task. */
function askOf(reply: string, added: string | undefined): string | undefined {
  const file = added ?? NAMED.exec(reply.split('\n', 1)[0]!)?.[1];
  const comment = COMMENT.exec(reply)?.[1]?.trim();
  // A bare "// AI!" says what to do only through the code around it: the reply's reading says more.
  if (comment && !/^AI[!?]$/.test(comment)) return `${comment}${commentNote(file)}`;
  const will = WILL.exec(reply)?.[1]?.trim();
  return will ? `${will}${commentNote(file, true)}` : undefined;
}

/** The note an ask taken from a comment carries (see COMMENT_NOTE): " (a comment in src/a.ts[, as the agent read it])". */
export function commentNote(file: string | undefined, readByAgent = false): string {
  return ` (a comment${file ? ` in ${file}` : ''}${readByAgent ? READ_BY_AGENT : ''})`;
}

/** The words of an ask as its record has them: an ask taken from a comment without the note of where it is. */
export function quotedAskWords(text: string): string {
  return text.replace(COMMENT_NOTE, '');
}

/** A user unit holding `text` at `record`, in the turn of the step that answers it. */
function userTurn(step: Unit, text: string, record: number): Unit {
  const part: Part = { address: `text:in-file-${record}`, kind: 'text', role: 'user', record, text };
  return { kind: 'user', step: undefined, turn: step.turn, firstRecord: record, lastRecord: record, parts: [part] };
}
