/**
 * The noise audit of a Task Context: of its lines, how many a reader gains
 * nothing from — process narration, pleasantries, harness text, duplicates,
 * empty lines (a key or a tag with no statement). Measured by the sentence
 * classifier on the summary after the last fold; a hand-labelled sample of the
 * same lines (eval/labels/summary-lines.jsonl) checks the classifier's count.
 *
 * An archived line that groups several gists counts each gist as a line.
 */
import * as z from '../core/schema';
import { classifySentence } from '../core/classify';
import { sameFact } from '../core/summarizer';
import { parseJsonLines } from './labels';
import { splitUserText } from '../core/harness';
import { gistsOf, shownRequestTexts, SOURCES_SUFFIX, type SummaryState } from '../core/summary';

export const NOISE_KINDS = ['process', 'pleasantry', 'harness', 'duplicate', 'empty'] as const;
export type NoiseKind = (typeof NOISE_KINDS)[number];

export interface NoiseCounts {
  readonly lines: number;
  readonly noise: Readonly<Record<NoiseKind, number>>;
}

/** One audited line: where it stands and what it says, as a reader of the head sees it. */
export interface AuditedLine {
  readonly section: string;
  readonly text: string;
}


/** The lines of a summary a reader weighs, requests as the head shows them (checked for harness text only). */
export function auditedLines(state: SummaryState | undefined): AuditedLine[] {
  if (!state) return [];
  const out: AuditedLine[] = shownRequestTexts(state.requests).map((text) => ({ section: 'Requests', text }));
  for (const section of ['Decisions', 'Constraints', 'Ruled out', 'Findings', 'Archived'] as const) {
    for (const line of state.facts[section]) {
      for (const piece of gistsOf(line)) out.push({ section, text: piece.replace(SOURCES_SUFFIX, '').trim() });
    }
  }
  return out;
}

/** What kind of noise a line is, if any; `earlier` are the lines before it in the same summary. */
export function noiseOf(line: AuditedLine, earlier: readonly AuditedLine[]): NoiseKind | undefined {
  const text = line.text.replace(/^…|…$/g, '').replace(/ \((?:assumed|reported|user)\)$/, '');
  if (splitUserText(text).harness.length > 0 || /<task-notification>|<system-reminder>|<command-name>|<local-command-stdout>|<environment_details>|Caveat: The messages below/.test(text)) return 'harness';
  if (line.section === 'Requests') return undefined;
  // A line with no statement: a tag, a key, a bare value ("60 (as of r311)", "[REDACTED_IP]").
  const words = text.replace(/\s*\(as of r\d+\)$/, '').split(/\s+/).filter((w) => w !== '');
  if (words.length < 2 || !words.some((w) => /[a-z]{3,}/i.test(w))) return 'empty';
  const cls = classifySentence(text, 'assistant').cls;
  if (cls === 'process' || cls === 'pleasantry') return cls;
  if (earlier.some((e) => e.section !== 'Requests' && sameFact(e.text, text))) return 'duplicate';
  return undefined;
}

export function auditSummary(state: SummaryState | undefined): NoiseCounts {
  const lines = auditedLines(state);
  const noise: Record<NoiseKind, number> = { process: 0, pleasantry: 0, harness: 0, duplicate: 0, empty: 0 };
  let counted = 0;
  lines.forEach((line, i) => {
    if (line.section !== 'Requests') counted++;
    const kind = noiseOf(line, lines.slice(0, i));
    if (kind) noise[kind]++;
  });
  return { lines: counted, noise };
}

// ------------------------------------------------------------ the hand labels

export const HAND_LABELS = ['content', ...NOISE_KINDS] as const;

export const SummaryLineLabelSchema = z.strictObject({
    id: z.string().check(z.minLength(1)),
    session: z.string().check(z.regex(/\.jsonl$/)),
    window: z.int().check(z.positive()),
    section: z.string().check(z.minLength(1)),
    text: z.string().check(z.minLength(1)),
    label: z.enum(HAND_LABELS),
    note: z.optional(z.string()),
  });
export type SummaryLineLabel = z.infer<typeof SummaryLineLabelSchema>;

export function parseSummaryLineLabels(text: string, name: string): SummaryLineLabel[] {
  return parseJsonLines(text, name, SummaryLineLabelSchema);
}

/** A Task Context line of one session's summary at one window, as the hand-labelled sample holds it. */
export interface SampledLine {
  readonly id: string;
  readonly session: string;
  readonly window: number;
  readonly section: string;
  readonly text: string;
}

/** A line's identity across runs: its session, window, section and text (what a label is matched by). */
export function lineKey(l: { readonly session: string; readonly window: number | string; readonly section: string; readonly text: string }): string {
  return `${l.session}\n${l.window}\n${l.section}\n${l.text}`;
}

/** Fact lines and request lines a drawn sample holds (see eval/labels/README.md). */
export const SAMPLE_FACT_LINES = 180;
export const SAMPLE_REQUEST_LINES = 20;

/**
 * The noise audit's sample of the lines the engine wrote: the fact lines and
 * the request lines with the lowest hash of session, window, section and text
 * (so a new commit's draw is reproducible and does not favour any session),
 * ordered by session and window, numbered `m001`…. `hash` is SHA-256 in hex.
 */
export function drawSample(lines: readonly Omit<SampledLine, 'id'>[], hash: (text: string) => string): SampledLine[] {
  const keyed = lines.map((l) => ({ line: l, key: hash(lineKey(l)) }));
  const lowest = (pick: (l: Omit<SampledLine, 'id'>) => boolean, n: number) =>
    keyed
      .filter((k) => pick(k.line))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, n);
  const drawn = [...lowest((l) => l.section !== 'Requests', SAMPLE_FACT_LINES), ...lowest((l) => l.section === 'Requests', SAMPLE_REQUEST_LINES)];
  drawn.sort((a, b) => (a.line.session < b.line.session ? -1 : a.line.session > b.line.session ? 1 : a.line.window - b.line.window || (a.key < b.key ? -1 : 1)));
  return drawn.map((d, i) => ({ id: `m${String(i + 1).padStart(3, '0')}`, ...d.line }));
}
