/**
 * The original-text retrieval channel: raw passages of the folded record that
 * are most relevant to the current request (not the most recent ones), quoted
 * word for word with their record numbers.
 *
 * An inverted index grows as units are folded (each unit is indexed once), so
 * a query costs the postings of its terms, not a scan of the history. Scoring
 * is a plain idf sum over the distinct query terms a passage contains; ties go
 * to the newer passage. Deterministic.
 */
import { classifySentence, sentencesOf } from './classify';
import { fenced } from './fenced';
import { handles } from './digest';
import { userWords, withoutInjectedBlocks } from './harness';
import type { Redactor } from './redact';
import { readContent } from './toolResults';
import type { Part, Unit } from './types';

/** Longest passage quoted; longer texts are split at line boundaries. */
const PASSAGE_CHARS = 480;
/** How much of a tool output is indexed (its head and tail). */
const TOOL_HEAD_CHARS = 2000;
const TOOL_TAIL_CHARS = 600;
const STOP = new Set(
  'the and for that this with from have will would should could into your you are was were been being what when where which while there their them then than also just like make made only some such more most other about after before over under very can not but all any our out use using used let lets please need want get got one two new now see http https www'.split(' '),
);

interface Passage {
  readonly record: number;
  readonly text: string;
  /** How many distinct terms it holds: a block quotes only passages with BLOCK_MIN_TERMS or more. */
  readonly size: number;
  /** Its quoted text (fenced) in the retrieval block, made the first time it is quoted (a passage is quoted again at every fold it stays relevant). */
  quoted?: string;
}

export function terms(text: string): Set<string> {
  const out = new Set<string>();
  for (const raw of text.toLowerCase().split(/[^a-z0-9_./-]+/)) {
    if (raw.length < 3) continue;
    const t = EDGE_PUNCTUATION.test(raw) ? raw.replace(/^[./-]+|[./-]+$/g, '') : raw;
    if (t.length >= 3 && t.length <= 40 && !STOP.has(t) && !/^\d+$/.test(t)) out.add(t);
  }
  return out;
}

/** A word that starts or ends with the punctuation a term loses. */
const EDGE_PUNCTUATION = /^[./-]|[./-]$/;

/**
 * A line that is only images or badges (`[![build](https://…/badge.svg)](https://…)`): a README's decoration,
 * no text a task needs, and its URLs' words would match any query about GitHub or a commit.
 */
const BADGE_LINE = /^\s*(?:\[?!\[[^\]\n]*\]\([^)\s]*\)(?:\]\([^)\s]*\))?\s*)+$/;

function split(raw: string): string[] {
  const text = raw.includes('![') ? raw.split('\n').filter((line) => !BADGE_LINE.test(line)).join('\n') : raw;
  // Most texts are one short passage.
  if (text.length <= PASSAGE_CHARS && !text.includes('\n')) return text.trim() ? [text] : [];
  const out: string[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    if (current && current.length + line.length + 1 > PASSAGE_CHARS) {
      out.push(current);
      current = '';
    }
    current = current ? `${current}\n${line}` : line.slice(0, PASSAGE_CHARS);
  }
  if (current.trim()) out.push(current);
  return out;
}

/** A coding tool's notice that a command went on in the background: where its output will be, not what it said. */
const BACKGROUND_NOTICE = /^\s*(?:Command running in background with ID:|Background (?:task|command) started|Running in the background)/i;
/** A terminal's colour codes, with their escape character or, as some exports keep them, without (`[90m`). */
const COLOUR_CODE = /\u001b\[[0-9;?]*[A-Za-z]|\[(?:\d{1,3}(?:;\d{1,3})*)m/g;

/**
 * What of a part the channel may quote: the user's own words (not what an
 * agent injected into their turn: a task notification, a reminder), the
 * agent's text without an export's injected blocks, a tool's output as a
 * reader sees it — its head and tail, colour codes, the harness's reminders
 * and a read's line numbers gone — and nothing of a background task's notice.
 */
function passageText(part: Part): string | undefined {
  if (part.kind === 'text') return part.role === 'user' ? userWords(part.text) : withoutInjectedBlocks(part.text);
  const o = part.kind === 'tool' ? part.tool?.output : undefined;
  if (o === undefined || BACKGROUND_NOTICE.test(o)) return undefined;
  const shown = (text: string): string => readContent(text.replace(COLOUR_CODE, ''));
  return o.length > TOOL_HEAD_CHARS + TOOL_TAIL_CHARS ? `${shown(o.slice(0, TOOL_HEAD_CHARS))}\n${shown(o.slice(-TOOL_TAIL_CHARS))}` : shown(o);
}

/**
 * A search looks at most this many passages of one term, the newest: a term
 * that common has an idf near its floor and its oldest passages are the least
 * likely to be what the current request is about.
 */
const MAX_POSTINGS_PER_TERM = 2000;

/**
 * A passage the block quotes holds at least this many distinct terms: a header line ("=== Blocky Logs ===") or a
 * two-word fragment matches a query as well as a paragraph does and says nothing. A search asked for by name still
 * finds them.
 */
const BLOCK_MIN_TERMS = 3;

/**
 * Whether an agent's passage only narrates what it is about to do ("I'll help you find those shortcuts. Let me first
 * locate…"): every sentence process or pleasantry, and no file, command or identifier named ("Let me write
 * `printenv.pl` to print the environment" says what was tried). Nothing in it to quote; what it found is in the
 * passages after it.
 */
function onlyNarration(text: string): boolean {
  if (handles(text).length > 0) return false;
  const sentences = sentencesOf(text);
  return sentences.length > 0 && sentences.every((s) => ['process', 'pleasantry'].includes(classifySentence(s.text, 'assistant').cls));
}

/** A passage the head already holds this share of the terms of says nothing the head does not. */
const SAID_SHARE = 0.8;

export class RetrievalIndex {
  private readonly passages: Passage[] = [];
  private readonly postings = new Map<string, number[]>();
  private indexedUnits = 0;

  /** `redactor` hides secrets in the passages a block quotes. */
  constructor(private readonly redactor: Redactor) {}

  /** Units indexed so far (a prefix of the record). */
  get indexed(): number {
    return this.indexedUnits;
  }

  /** Indexes units [indexed, upTo) of the record; each unit once. */
  extend(units: readonly Unit[], upTo: number): void {
    for (let i = this.indexedUnits; i < upTo; i++) {
      for (const part of units[i]!.parts) {
        const text = passageText(part);
        // A tool's output is quoted with the record that holds it (its result), not its call's.
        const record = part.tool?.resultRecord ?? part.record;
        if (text !== undefined) {
          for (const chunk of split(text)) {
            const t = terms(chunk);
            if (t.size === 0 || (part.kind === 'text' && part.role === 'assistant' && onlyNarration(chunk))) continue;
            const id = this.passages.length;
            this.passages.push({ record, text: chunk, size: t.size });
            for (const term of t) {
              const list = this.postings.get(term);
              // Most terms stand in one passage: a list made with its element holds just that.
              if (list) list.push(id);
              else this.postings.set(term, [id]);
            }
          }
        }
      }
    }
    this.indexedUnits = Math.max(this.indexedUnits, upTo);
  }

  /**
   * The passages most relevant to `query`, within `budgetChars`, best first;
   * none from `excludeRecord`. A term in more than half the passages tells them
   * apart too little and is left out, unless `keepCommon` (a search the user or
   * a model asked for: every word they gave counts, the rarer ones more).
   */
  search(query: string, budgetChars: number, excludeRecord?: number, keepCommon = false): { record: number; text: string; score: number }[] {
    return this.rank(query, budgetChars, excludeRecord, keepCommon).map(({ id, score }) => ({ record: this.passages[id]!.record, text: this.passages[id]!.text, score }));
  }

  private rank(query: string, budgetChars: number, excludeRecord: number | undefined, keepCommon: boolean, minTerms = 1, once = false, inHead: (text: string) => boolean = () => false): { id: number; score: number }[] {
    const n = this.passages.length;
    if (n === 0 || budgetChars <= 0) return [];
    const scores = new Map<number, number>();
    for (const term of terms(query)) {
      const list = this.postings.get(term);
      if (!list || (!keepCommon && list.length > n / 2)) continue; // too common to tell passages apart
      const idf = Math.log(1 + n / list.length);
      // A term's newest passages only, so a search costs the same however long the task grows.
      for (let k = list.length - 1, stop = Math.max(0, list.length - MAX_POSTINGS_PER_TERM); k >= stop; k--) {
        const id = list[k]!;
        scores.set(id, (scores.get(id) ?? 0) + idf);
      }
    }
    const ranked = [...scores.entries()]
      .filter(([id, score]) => score > 0 && this.passages[id]!.record !== excludeRecord && this.passages[id]!.size >= minTerms)
      .sort((a, b) => b[1] - a[1] || b[0] - a[0]);
    const out: { id: number; score: number }[] = [];
    // `once`: a passage said again word for word (the same error printed at every retry) is quoted once, its newest sending.
    const said = new Set<string>();
    let used = 0;
    for (const [id, score] of ranked) {
      const p = this.passages[id]!;
      if (once) {
        const words = p.text.replace(/\s+/g, ' ').trim();
        if (said.has(words)) continue;
        said.add(words);
      }
      if (used + p.text.length > budgetChars) continue;
      used += p.text.length;
      // What the head already says was found as relevant as the rest, and is not quoted: its room is not given to
      // a passage less relevant than it.
      if (!inHead(p.text)) out.push({ id, score });
      if (used >= budgetChars * 0.9) break;
    }
    return out;
  }

  /**
   * The retrieval block for `query`: the passages `search` finds, quoted verbatim (secrets redacted), oldest first;
   * none the head (`shown`) already says: word for word (a request the Task Context lists), or with nearly every term
   * of it (SAID_SHARE; a finding it states). Those still take their room in the budget.
   */
  block(query: string, budgetChars: number, excludeRecord?: number, shown = ''): string {
    const head = shown.replace(/\s+/g, ' ');
    const headTerms = terms(shown);
    // Said already: word for word, or nearly every term of it is in the head (a finding the summary states, a request it lists).
    const said = (text: string): boolean => {
      if (head.includes(text.replace(/\s+/g, ' ').trim())) return true;
      const t = [...terms(text)];
      return t.filter((w) => headTerms.has(w)).length >= SAID_SHARE * t.length;
    };
    const found = this.rank(query, budgetChars, excludeRecord, false, BLOCK_MIN_TERMS, true, said);
    if (found.length === 0) return '';
    const ordered = found.map((f) => this.passages[f.id]!).sort((a, b) => a.record - b.record);
    return [
      '## Retrieved from the record',
      'Original text of folded records most relevant to the current request, word for word:',
      // Quoted evidence, never structure: fenced, a heading inside a passage ("### Constraints") stays text, and the
      // passage stays word for word (a shell script's `# comment` lines too).
      // Two passages of one record go under one label.
      ...ordered.map((p, i) => `${ordered[i - 1]?.record === p.record ? '' : `[r${p.record}]\n`}${(p.quoted ??= fenced(this.redactor.redact(p.text).text))}`),
    ].join('\n');
  }
}
