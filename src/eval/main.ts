/**
 * `npm run eval`: the evaluation harness from the command line.
 *
 *   npm run eval                                    all probed sessions, all windows → eval/report.*
 *   npm run eval -- --session FILE --window N       one session, one window, printed
 *   npm run eval -- --draw-lines FILE               the noise audit's sample of this engine's Task Context lines
 *                                                   (8k, 16k, 32k; see eval/labels/README.md), to label
 *   options: --corpus DIR (default ../shared/corpus or $CONTEXT_KEEPER_CORPUS),
 *            --probes DIR (default eval/probes), --out DIR (default eval)
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { O200kTokenCounter } from '../adapters/o200kTokenCounter';
import { SecretRedactor, type Redactor } from '../core/redact';
import { parseTranscript } from '../core/transcript';
import { ABLATION_WINDOWS, ABLATIONS } from './ablations';
import { classifierContext } from './labels';
import { EVAL_WINDOWS, evaluateDrift, evaluateSession, evaluateVariant, type DriftResult, type SessionResult, type VariantResult } from './harness';
import { parseLabels } from './labels';
import { drawSample, parseSummaryLineLabels, type SampledLine } from './noise';
import type { RawRecord } from '../core/types';
import { parseProbeFile, type ProbeFile } from './probes';
import { buildReport, verdicts } from './report';
import { STRATEGY_LABELS } from './strategies';

interface Args {
  corpus: string;
  probes: string;
  out: string;
  session: string | undefined;
  window: number | undefined;
  drawLines: string | undefined;
}

class UsageError extends Error {}

/** The windows the noise audit's sample is drawn from. */
const SAMPLED_WINDOWS = [8000, 16000, 32000] as const;

function parseArgs(argv: readonly string[]): Args {
  const args: Args = {
    corpus: process.env.CONTEXT_KEEPER_CORPUS ?? path.resolve('..', 'shared', 'corpus'),
    probes: path.resolve('eval', 'probes'),
    out: path.resolve('eval'),
    session: undefined,
    window: undefined,
    drawLines: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = argv[++i];
    if (value === undefined) throw new UsageError(`${flag} needs a value`);
    switch (flag) {
      case '--corpus': args.corpus = path.resolve(value); break;
      case '--probes': args.probes = path.resolve(value); break;
      case '--out': args.out = path.resolve(value); break;
      case '--session': args.session = value; break;
      case '--draw-lines': args.drawLines = path.resolve(value); break;
      case '--window':
        if (!/^\d+$/.test(value) || Number(value) < 1000) throw new UsageError(`--window needs a number of tokens ≥ 1000, got ${value}`);
        args.window = Number(value);
        break;
      default: throw new UsageError(`unknown option ${flag}`);
    }
  }
  return args;
}

function loadProbeFiles(dir: string): ProbeFile[] {
  if (!existsSync(dir)) throw new UsageError(`no probe folder at ${dir}`);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.probes.json'))
    .sort()
    .map((f) => parseProbeFile(readFileSync(path.join(dir, f), 'utf8'), f));
}

/** The records of a corpus session a labelled sentence comes from (sessions without a probe file are read here). */
function readTranscript(dir: string, session: string, redactor: Redactor): readonly RawRecord[] {
  const file = path.join(dir, session);
  return existsSync(file) ? parseTranscript(readFileSync(file, 'utf8'), redactor).records : [];
}

function sessionsDir(corpus: string): string {
  const dir = path.join(corpus, 'sessions');
  if (!existsSync(dir)) {
    throw new UsageError(`the corpus sessions are absent: no folder ${dir} (pass --corpus DIR or set CONTEXT_KEEPER_CORPUS)`);
  }
  return dir;
}

async function main(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv);
  // The evaluation's composition root: one token counter and one redactor for the run.
  const counter = new O200kTokenCounter();
  const redactor = new SecretRedactor();
  const dir = sessionsDir(args.corpus);
  const files = loadProbeFiles(args.probes);

  if (args.session !== undefined) {
    const name = path.basename(args.session);
    const probeFile = files.find((f) => f.session === name);
    if (!probeFile) throw new UsageError(`no probe file for ${name} in ${args.probes}`);
    const transcriptPath = existsSync(args.session) ? args.session : path.join(dir, name);
    const transcript = parseTranscript(readFileSync(transcriptPath, 'utf8'), redactor);
    const windows = args.window !== undefined ? [args.window] : [...EVAL_WINDOWS];
    const result = await evaluateSession(probeFile, transcript.records, counter, redactor, windows);
    for (const w of result.windows) {
      console.log(`${name} at ${w.window} (reserve ${w.reserve}): ${result.probes} probes`);
      for (const m of w.strategies) {
        console.log(
          `  ${STRATEGY_LABELS[m.strategy].padEnd(22)} recall ${(100 * m.probes.recall).toFixed(1).padStart(5)}%  tokens ${String(m.tokensEnd).padStart(7)}  cost $${m.cost.dollars.toFixed(4)}  stale ${m.staleAsCurrent}  lost ${m.probes.missing.join(',') || '-'}`,
        );
      }
    }
    return 0;
  }

  if (args.drawLines !== undefined) {
    const lines: Omit<SampledLine, 'id'>[] = [];
    for (const file of files) {
      const transcript = parseTranscript(readFileSync(path.join(dir, file.session), 'utf8'), redactor);
      const result = await evaluateSession(file, transcript.records, counter, redactor, SAMPLED_WINDOWS, ['ours']);
      for (const window of SAMPLED_WINDOWS) for (const l of result.finalLines[window] ?? []) lines.push({ session: file.session, window, section: l.section, text: l.text });
    }
    const sample = drawSample(lines, (text) => createHash('sha256').update(text).digest('hex'));
    mkdirSync(path.dirname(args.drawLines), { recursive: true });
    writeFileSync(args.drawLines, sample.map((l) => JSON.stringify(l)).join('\n') + '\n');
    console.log(`wrote ${sample.length} of ${lines.length} lines to ${path.relative(process.cwd(), args.drawLines)}`);
    return 0;
  }

  const results: SessionResult[] = [];
  const drift: DriftResult[] = [];
  const ablations: Record<string, Record<number, VariantResult[]>> = {};
  const transcripts = new Map<string, readonly RawRecord[]>();
  for (const file of files) {
    const transcriptPath = path.join(dir, file.session);
    if (!existsSync(transcriptPath)) throw new UsageError(`${file.session} is not in ${dir}`);
    const transcript = parseTranscript(readFileSync(transcriptPath, 'utf8'), redactor);
    transcripts.set(file.session, transcript.records);
    process.stderr.write(`evaluating ${file.session} (${transcript.records.length} records, ${file.probes.length} probes)\n`);
    results.push(await evaluateSession(file, transcript.records, counter, redactor));
    if (transcript.records.length >= 200) drift.push(evaluateDrift(file.session, transcript.records, counter, redactor));
    for (const ablation of ABLATIONS) {
      for (const window of ABLATION_WINDOWS) {
        ((ablations[ablation.name] ??= {})[window] ??= []).push(await evaluateVariant(file, transcript.records, counter, redactor, window, ablation.variant));
      }
    }
  }
  const labelsDir = path.resolve(args.probes, '..', 'labels');
  const sentences = parseLabels(readFileSync(path.join(labelsDir, 'sentences.jsonl'), 'utf8'), 'eval/labels/sentences.jsonl');
  const summaryLinesFile = path.join(labelsDir, 'summary-lines.jsonl');
  const summaryLines = existsSync(summaryLinesFile) ? parseSummaryLineLabels(readFileSync(summaryLinesFile, 'utf8'), 'eval/labels/summary-lines.jsonl') : [];
  const beforeFile = path.resolve(args.probes, '..', 'before.json');
  const before = existsSync(beforeFile) ? (JSON.parse(readFileSync(beforeFile, 'utf8')) as unknown) : undefined;
  const report = buildReport(results, drift, [...EVAL_WINDOWS], {
    ablations,
    classifier: { labels: sentences, context: classifierContext((session) => transcripts.get(session) ?? readTranscript(dir, session, redactor)) },
    summaryLines,
    before,
  });
  mkdirSync(args.out, { recursive: true });
  for (const [name, text] of Object.entries(report)) writeFileSync(path.join(args.out, name), text);
  console.log(`wrote ${Object.keys(report).map((n) => path.join(path.relative(process.cwd(), args.out), n)).join(', ')}`);
  for (const line of verdicts(results, [...EVAL_WINDOWS])) console.log(line);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`context-keeper eval: ${error instanceof UsageError ? error.message : (error as Error).stack ?? String(error)}`);
    process.exit(2);
  },
);
