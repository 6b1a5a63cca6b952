/**
 * Probe files: the facts a faithful compaction of one session must keep, each
 * with a deterministic check. The same probe serves two scorers:
 * - against a projected context (does the context still carry the fact?), and
 * - against a model's answer to the probe's question (Δtask: the answer from the
 *   full context vs from the compacted one), which the extension will run later.
 *
 * Checks are phrase matches, case-insensitive, on whitespace-normalised text.
 */
import * as z from '../core/schema';

export const PROBE_KINDS = ['request', 'constraint', 'artifact', 'decision', 'ruled_out', 'finding', 'open_item', 'current_state'] as const;
export type ProbeKind = (typeof PROBE_KINDS)[number];

const Phrases = z.array(z.string().check(z.minLength(2))).check(z.minLength(1));

export const ProbeSchema = z
  .strictObject({
    id: z.string().check(z.minLength(1)),
    kind: z.enum(PROBE_KINDS),
    /** 0-based record that establishes the fact. */
    record: z.int().check(z.minimum(0)),
    /** The question a model is asked about the fact (for answer scoring). */
    question: z.string().check(z.minLength(5)),
    /** Every phrase must appear (a verbatim wording, an identifier, a number). */
    all: z.optional(Phrases),
    /** At least one phrase must appear (alternative wordings of one fact). */
    any: z.optional(Phrases),
    /** For artifacts: the file path, found in the artifact index or the context. */
    path: z.optional(z.string().check(z.minLength(1))),
    /**
     * A "must not appear as current" fact: a superseded decision, finished work
     * still listed as pending, or an instruction that came only from tool output.
     * Fails when any phrase is presented as current.
     */
    notCurrent: z.optional(Phrases),
    note: z.optional(z.string()),
  })
  .check(
    z.refine((p) => p.all !== undefined || p.any !== undefined || p.path !== undefined || p.notCurrent !== undefined, {
      message: 'a probe needs at least one of all, any, path or notCurrent',
    }),
    z.refine((p) => p.kind !== 'artifact' || p.path !== undefined, { message: 'an artifact probe needs a path' }),
  );

export type Probe = z.infer<typeof ProbeSchema>;

export const ProbeFileSchema = z
  .strictObject({
    /** File name of the session in the corpus's sessions/ folder. */
    session: z.string().check(z.regex(/\.jsonl$/)),
    /** Records in the session (a guard against probing another version of it). */
    records: z.int().check(z.positive()),
    /** Ground truth for the artifact trail, read from the session by hand. */
    artifacts: z.strictObject({ modified: z.array(z.string()), read: z.array(z.string()) }),
    probes: z.array(ProbeSchema).check(z.minLength(1)),
  })
  .check(
    z.superRefine((file, ctx) => {
      const ids = new Set<string>();
      file.probes.forEach((p, i) => {
        if (ids.has(p.id)) ctx.addIssue({ code: 'custom', message: `duplicate probe id ${p.id}`, path: ['probes', i, 'id'] });
        ids.add(p.id);
        if (p.record >= file.records) ctx.addIssue({ code: 'custom', message: `record ${p.record} is past the end (${file.records} records)`, path: ['probes', i, 'record'] });
      });
    }),
  );

export type ProbeFile = z.infer<typeof ProbeFileSchema>;

export class ProbeFileError extends Error {}

/** Parses and validates a probe file's JSON text; the error names the file and the field. */
export function parseProbeFile(text: string, name: string): ProbeFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ProbeFileError(`${name}: invalid JSON (${(error as Error).message})`);
  }
  const parsed = ProbeFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ProbeFileError(`${name}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

export function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim().toLowerCase();
}

/** What a scorer sees: the text to search, and where "current" claims live. */
export interface ProbeTarget {
  /** Everything the model would read (the context), or the model's answer. */
  readonly text: string;
  /** The parts that present facts as current (summary sections other than Ruled out / Archived). */
  readonly currentText: string;
  /** Paths in the artifact index (empty when the strategy has none). */
  readonly artifactPaths: readonly string[];
}

export interface ProbeResult {
  readonly probe: Probe;
  /** The fact is present (for notCurrent-only probes: not presented as current). */
  readonly kept: boolean;
  /** A notCurrent phrase is presented as current. */
  readonly staleAsCurrent: boolean;
  readonly missing: readonly string[];
}

function pathMatches(path: string, candidates: readonly string[], haystack: string): boolean {
  const p = normalise(path);
  if (haystack.includes(p)) return true;
  return candidates.some((c) => {
    const n = normalise(c);
    return n === p || n.endsWith(`/${p}`) || p.endsWith(`/${n}`);
  });
}

/** Scores one probe against a target (a projected context or a model's answer). */
export function scoreProbe(probe: Probe, target: ProbeTarget): ProbeResult {
  const haystack = normalise(target.text);
  const missing: string[] = [];
  for (const phrase of probe.all ?? []) if (!haystack.includes(normalise(phrase))) missing.push(phrase);
  if (probe.any && !probe.any.some((phrase) => haystack.includes(normalise(phrase)))) missing.push(probe.any.join(' | '));
  if (probe.path !== undefined && !pathMatches(probe.path, target.artifactPaths, haystack)) missing.push(probe.path);
  const current = normalise(target.currentText);
  const staleAsCurrent = (probe.notCurrent ?? []).some((phrase) => current.includes(normalise(phrase)));
  const positive = probe.all !== undefined || probe.any !== undefined || probe.path !== undefined;
  return { probe, kept: positive ? missing.length === 0 : !staleAsCurrent, staleAsCurrent, missing };
}
