/**
 * @keeper's slash commands (`/compact`, `/context`, `/facts`, `/rebuild`):
 * what each is, and the markdown each writes into the chat. Plain functions
 * over plain data, so the words are tested without VS Code; the participant
 * gathers the data and streams the text.
 */
import type { Fact } from '../core/state';
import { fenced } from '../core/fenced';
import { formatCount } from '../core/formatCount';

/** The slash commands @keeper contributes (package.json `chatParticipants[0].commands` lists the same). */
export const CHAT_COMMANDS = [
  { name: 'compact', description: 'Fold the older steps into the Task Context now and show what it saved' },
  { name: 'context', description: 'Show what the model is sent next: the budget, the Task Context, what is left out' },
  { name: 'facts', description: 'List the protected facts (your rules, decisions, open issues) with their sources' },
  { name: 'rebuild', description: 'Rebuild the Task Context from the raw record and say whether it drifted' },
] as const;

export type ChatCommandName = (typeof CHAT_COMMANDS)[number]['name'];

export function isChatCommand(name: string | undefined): name is ChatCommandName {
  return CHAT_COMMANDS.some((c) => c.name === name);
}

/**
 * What the chat offers after a turn (`ChatFollowup`s): to go on when the step
 * limit or a model error stopped it — the record holds everything done so far.
 */
export function followupsFor(metadata: { readonly stopped?: unknown } | undefined): { prompt: string; label: string }[] {
  if (metadata?.stopped === 'max-steps') return [{ prompt: 'Continue where you stopped.', label: 'Continue: the step limit stopped this turn' }];
  if (metadata?.stopped === 'error') return [{ prompt: 'Continue where you stopped.', label: 'Continue after the error' }];
  return [];
}

/** What a chat with no task yet is told by a command that needs one. */
export const NO_TASK_YET = 'There is no @keeper task in this chat yet: ask @keeper to do something first, then use this command.';

const tokens = formatCount;
const records = (end: number): string => (end <= 1 ? 'record 0' : `records 0–${end - 1}`);

/**
 * A `/compact` that folded nothing, and why: every step is one of the last
 * `protectedSteps` (kept word for word), or folding what lies before them
 * would not have made the context smaller.
 */
export function nothingToFold(protectedSteps: number, coverageEnd: number, outsideNearWindow: boolean): string {
  const folded = coverageEnd > 0 ? `the Task Context already stands for ${records(coverageEnd)}; ` : '';
  if (outsideNearWindow) return `Nothing folded: ${folded}summarizing the older steps would not have made the context smaller.`;
  return `Nothing ${coverageEnd > 0 ? 'more ' : ''}to fold: ${folded}no step is older than the last ${protectedSteps}, which stay word for word.`;
}

export interface ContextFacts {
  /** Tokens the next call is predicted to send. */
  readonly predicted: number;
  readonly window: number;
  readonly reserve: number;
  /** Records the Task Context stands for (0: nothing folded). */
  readonly coverageEnd: number;
  readonly records: number;
  /** The head message (Task Context, protected state, retrieved evidence), '' when there is none. */
  readonly head: string;
  readonly headTokens: number;
  /** What is not loaded (`notLoadedTotals`): its tokens (the folded records counted once), parts in view shortened, parts dropped. */
  readonly notLoaded: { readonly tokens: number; readonly shrunk: number; readonly dropped: number };
}

/** `/context`: what the model is sent next, verdict first, then the head itself. */
export function contextMarkdown(c: ContextFacts): string {
  const share = c.window > 0 ? Math.round((100 * c.predicted) / c.window) : 0;
  const out = [
    `**The next call sends about ${tokens(c.predicted)} tokens** of the ${tokens(c.window)}-token window (${share}%; ${tokens(c.reserve)} kept free for the answer).`,
    '',
  ];
  const reduced = [c.notLoaded.shrunk ? `${c.notLoaded.shrunk} older ${c.notLoaded.shrunk === 1 ? 'part' : 'parts'} shortened` : '', c.notLoaded.dropped ? `${c.notLoaded.dropped} dropped` : ''].filter(Boolean).join(', ');
  if (c.coverageEnd > 0) {
    const raw = c.records - c.coverageEnd;
    out.push(`- The Task Context (${tokens(c.headTokens)} tokens) stands for ${records(c.coverageEnd)}; the last ${raw} ${raw === 1 ? 'record follows' : 'records follow'} word for word${reduced ? `, ${reduced}` : ''}.`);
  } else {
    out.push(`- Nothing is folded yet: all ${c.records} records are sent${reduced ? ` (${reduced})` : ' word for word'}${c.head ? `, after the protected facts below (${tokens(c.headTokens)} tokens)` : ''}.`);
  }
  if (c.notLoaded.tokens > 0) {
    out.push(`- Not loaded: ${tokens(c.notLoaded.tokens)} tokens of the record, each part still there: the model can read a tool call back with \`view_tool_call\`, and the panel lists them.`);
  }
  if (c.head) out.push('', 'What the model reads first (the exact text: **Show What the Model Saw Last**):', '', quoted(c.head));
  return out.join('\n');
}

/**
 * Text shown as a quote that wraps at the chat's width (a code block would
 * scroll sideways at sidebar width): each line kept as a line, headings as
 * bold lines rather than the chat's large headings.
 */
export function quoted(text: string): string {
  let fence = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) fence = !fence;
      const heading = fence ? null : /^#{1,6}\s+(.*)$/.exec(line);
      const shown = heading ? `**${heading[1]}**` : line;
      return shown.trim() === '' ? '>' : `> ${shown}  `;
    })
    .join('\n');
}


const FACT_HEADINGS: readonly [Fact['type'], string][] = [
  ['constraint', 'Rules'],
  ['permission', 'Permissions'],
  ['preference', 'Preferences'],
  ['decision', 'Decisions'],
  ['open_issue', 'Open issues'],
];

/** `/facts`: the protected facts in force, by kind, each with its sources; then the ones awaiting the user. */
export function factsMarkdown(active: readonly Fact[], pending: readonly Fact[]): string {
  const line = (f: Fact): string => {
    const sources = f.sources.slice(0, 4).map((s) => `r${s}`).join(', ') + (f.sources.length > 4 ? ` and ${f.sources.length - 4} more` : '');
    const notes = [sources, f.pinned ? 'pinned' : '', f.writer === 'user' && f.version > 1 ? f.reason : ''].filter(Boolean).join('; ');
    return `- ${oneLine(f.value)} _(${notes})_`;
  };
  const out: string[] = [];
  for (const [type, heading] of FACT_HEADINGS) {
    const facts = active.filter((f) => f.type === type);
    if (facts.length === 0) continue;
    out.push(`**${heading}** (${facts.length})`, ...facts.map(line), '');
  }
  if (pending.length) out.push(`**Awaiting your confirmation** (${pending.length}; not in force: they came from tool output or the model)`, ...pending.map(line), '');
  if (out.length === 0) return 'No protected facts yet: a rule you state ("always…", "never…", "from now on…"), a decision or an open issue becomes one, with the record it came from.';
  out.unshift('Protected facts are sent with every call, word for word, and win over anything a summary says.', '');
  out.push('Correct, pin or delete a fact in the Task Context panel: your change wins over any later summary.');
  return out.join('\n');
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= 400 ? flat : `${flat.slice(0, 399)}…`;
}

/** `/rebuild`: the drift report's verdict as the lead, its details in a block. */
export function rebuildMarkdown(records: number, lines: readonly string[]): string {
  const [verdict = '', ...details] = lines;
  const out = [`Rebuilt the task from its raw record (${records} records). ${verdict}`];
  // A diff block colours a line by its first character: the report's indented "-" and "+" lines lead with it here.
  if (details.length) out.push('', fenced(details.map((l) => l.replace(/^ {2}([-+]) /, '$1 ')).join('\n'), 'diff'));
  return out.join('\n');
}
