/**
 * The hand-labelled sentence set (eval/labels/sentences.jsonl) and the
 * sentence classifier's precision and recall on it, per class.
 *
 * Each line is one sentence drawn from a corpus session (its session and
 * record say where), with the class a person gave it and, when they were
 * torn, a second class. A prediction counts as right when it is the label;
 * `alt` is reported separately (lenient accuracy), never folded into the
 * per-class figures.
 */
import * as z from '../core/schema';
import { classifySentence, sentencesOf, SENTENCE_CLASSES, type SentenceClass } from '../core/classify';
import { splitUserText } from '../core/harness';
import type { RawRecord } from '../core/types';

export const LabelledSentenceSchema = z
  .strictObject({
    id: z.string().check(z.minLength(1)),
    session: z.string().check(z.regex(/\.jsonl$/)),
    record: z.int().check(z.minimum(0)),
    role: z.enum(['user', 'assistant']),
    kind: z.enum(['text', 'reasoning']),
    /** How the sentence was drawn: at random, or from a pool enriched for rarer classes. */
    sample: z.string().check(z.minLength(1)),
    label: z.enum(SENTENCE_CLASSES),
    alt: z.optional(z.enum(SENTENCE_CLASSES)),
    text: z.string().check(z.minLength(1)),
  });
export type LabelledSentence = z.infer<typeof LabelledSentenceSchema>;

/** Parses a JSON-lines file of one schema; an invalid line is an error naming its line number. */
export function parseJsonLines<T>(text: string, name: string, schema: z.ZodMiniType<T>): T[] {
  const out: T[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      throw new Error(`${name}:${i + 1}: invalid JSON (${(error as Error).message})`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new Error(`${name}:${i + 1}: ${parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ')}`);
    out.push(parsed.data);
  });
  return out;
}

/** The labelled sentences (eval/labels/sentences.jsonl). */
export function parseLabels(text: string, name: string): LabelledSentence[] {
  return parseJsonLines(text, name, LabelledSentenceSchema);
}

export interface ClassScore {
  readonly cls: SentenceClass;
  /** Sentences labelled with the class. */
  readonly support: number;
  /** Sentences predicted as the class. */
  readonly predicted: number;
  readonly correct: number;
  readonly precision: number;
  readonly recall: number;
}

export interface ClassifierReport {
  /** Sentences scored (those in harness text are not). */
  readonly sentences: number;
  /** Labelled user sentences that lie in harness text: evidence, not classified. */
  readonly inHarness: number;
  readonly accuracy: number;
  /** Right when the prediction is the label or the labeller's second choice. */
  readonly lenientAccuracy: number;
  readonly classes: readonly ClassScore[];
  /**
   * Of the sentences predicted as a content class (finding, decision,
   * failure, plan, change, ask, rule), the share a person labelled process,
   * pleasantry or other: what would leak into a summary as noise.
   */
  readonly noiseInContent: number;
  /** Of the sentences labelled process or pleasantry, the share predicted as one of them. */
  readonly noiseCaught: number;
  readonly confusion: Readonly<Record<SentenceClass, Readonly<Record<SentenceClass, number>>>>;
}

const NOISE: ReadonlySet<SentenceClass> = new Set(['process', 'pleasantry', 'other']);

function round(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}

/**
 * Scores the classifier on the labelled set. `harness` tells whether a user
 * sentence lies in text an agent injected into the user's turn (it is then
 * evidence, never classified: the summary reads only the user's own words).
 */
export interface LabelContext {
  /** The sentence lies in text an agent injected into the user's turn. */
  readonly harness: boolean;
  /** The heading or lead-in it stands under in its message. */
  readonly lead?: string;
}

export function scoreClassifier(labels: readonly LabelledSentence[], context: (l: LabelledSentence) => LabelContext = () => ({ harness: false })): ClassifierReport {
  const confusion = Object.fromEntries(SENTENCE_CLASSES.map((c) => [c, Object.fromEntries(SENTENCE_CLASSES.map((d) => [d, 0]))])) as Record<SentenceClass, Record<SentenceClass, number>>;
  let right = 0;
  let lenient = 0;
  let content = 0;
  let contentNoise = 0;
  let noise = 0;
  let noiseCaught = 0;
  let inHarness = 0;
  for (const l of labels) {
    const where = context(l);
    // The classifier never sees what an agent injected: the summary reads the user's own words only.
    if (l.role === 'user' && where.harness) {
      inHarness++;
      continue;
    }
    const predicted = classifySentence(l.text, l.role, where.lead).cls;
    confusion[l.label][predicted]++;
    if (predicted === l.label) right++;
    if (predicted === l.label || predicted === l.alt) lenient++;
    if (!NOISE.has(predicted)) {
      content++;
      if (NOISE.has(l.label) && l.alt === undefined) contentNoise++;
    }
    if (l.label === 'process' || l.label === 'pleasantry') {
      noise++;
      if (predicted === 'process' || predicted === 'pleasantry' || predicted === 'other') noiseCaught++;
    }
  }
  const classes = SENTENCE_CLASSES.map((cls): ClassScore => {
    const support = SENTENCE_CLASSES.reduce((a, p) => a + confusion[cls][p], 0);
    const predicted = SENTENCE_CLASSES.reduce((a, t) => a + confusion[t][cls], 0);
    const correct = confusion[cls][cls];
    return { cls, support, predicted, correct, precision: round(predicted ? correct / predicted : 0), recall: round(support ? correct / support : 0) };
  });
  const n = labels.length - inHarness || 1;
  return {
    sentences: labels.length - inHarness,
    inHarness,
    accuracy: round(right / n),
    lenientAccuracy: round(lenient / n),
    classes,
    noiseInContent: round(content ? contentNoise / content : 0),
    noiseCaught: round(noise ? noiseCaught / noise : 0),
    confusion,
  };
}

function flat(text: string): string {
  return text.replace(/[*_`#>\s]+/g, ' ').trim().toLowerCase();
}

/**
 * Where each labelled sentence stands in its record, read from the corpus: in
 * the user's own words or in text an agent injected, and under which lead-in.
 */
export function classifierContext(recordsOf: (session: string) => readonly RawRecord[]): (l: LabelledSentence) => LabelContext {
  return (l) => {
    const record = recordsOf(l.session)[l.record];
    if (!record) return { harness: false };
    const key = flat(l.text).slice(0, 60);
    const harness = l.role === 'user' && !flat(splitUserText(record.content).words).includes(key);
    const sentence = sentencesOf(record.content).find((s) => flat(s.text).includes(key.slice(0, 40)));
    return { harness, ...(sentence?.lead ? { lead: sentence.lead } : {}) };
  };
}
