/**
 * The noise audit of a Task Context: of its lines, how many a reader gains
 * nothing from — process narration, pleasantries, harness text, duplicates,
 * empty lines (a key or a tag with no statement). Measured by the sentence
 * classifier on the summary after the last fold; a hand-labelled sample of the
 * same lines (eval/labels/summary-lines.jsonl) checks the classifier's count.
 *
 * An archived line that groups several gists counts each gist as a line.
 */
import { z } from 'zod';
import { classifySentence } from '../core/classify';
import { sameFact } from '../core/summarizer';
import { parseJsonLines } from './labels';
import { splitUserText } from '../core/harness';
import { formatRequest, gistsOf, SOURCES_SUFFIX, type SummaryState } from '../core/summary';

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


/** The lines of a summary a reader weighs (requests are checked for harness text only). */
export function auditedLines(state: SummaryState | undefined): AuditedLine[] {
  if (!state) return [];
  const out: AuditedLine[] = state.requests.map((r) => ({ section: 'Requests', text: formatRequest(r).replace(/^#\d+ \(r\d+\): /, '') }));
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

export const SummaryLineLabelSchema = z
  .object({
    id: z.string().min(1),
    session: z.string().regex(/\.jsonl$/),
    window: z.number().int().positive(),
    section: z.string().min(1),
    text: z.string().min(1),
    label: z.enum(HAND_LABELS),
    note: z.string().optional(),
  })
  .strict();
export type SummaryLineLabel = z.infer<typeof SummaryLineLabelSchema>;

export function parseSummaryLineLabels(text: string, name: string): SummaryLineLabel[] {
  return parseJsonLines(text, name, SummaryLineLabelSchema);
}
