/**
 * `context-keeper`: the compaction engine on a transcript file, outside VS Code.
 * The commands and JSON fields follow the CLI contract; output is deterministic
 * except for the timings of `replay`.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DEFAULT_CONTEXT_WINDOW, OUTPUT_RESERVED_TOKENS } from '../core/budget';
import { SecretRedactor, type Redactor } from '../core/redact';
import { toolCallViewOf, type ToolCallView } from '../core/session';
import { parseTranscript, TranscriptError, type ParsedTranscript } from '../core/transcript';
import { SessionStore } from '../store/sessionStore';
import { loadSqlJs } from '../store/sqljs';
import { O200kTokenCounter } from '../adapters/o200kTokenCounter';
import { formatDrift, rebuildDrift, summaryDiff } from '../core/drift';
import { formatReport, projectJson, runProjection } from '../report/report';
import { sessionIdFor } from '../report/sessionId';
import { persistenceFor, restoreLost, StoreMismatchError } from './storeRun';

export { summaryDiff };

export class UsageError extends Error {}

/** The package's version, set by the build (esbuild `define`); `dev` when run from the sources. */
declare const __CONTEXT_KEEPER_VERSION__: string | undefined;
const VERSION = typeof __CONTEXT_KEEPER_VERSION__ === 'string' ? __CONTEXT_KEEPER_VERSION__ : 'dev';

interface Options {
  window: number;
  reserve: number;
  at: number | undefined;
  db: string | undefined;
  json: boolean;
  session: string | undefined;
  positionals: string[];
}

const USAGE = `usage: context-keeper <command> [options]   (context-keeper --version)
  project <transcript> [--window N] [--reserve N] [--at N] [--json]
      print the context the model would be sent next
  replay <transcript> [--window N] [--reserve N] [--at N]
      one JSON line per model call, then a summary line
  view-tool-call <transcript | --db FILE [--session ID]> <toolCallId>
      print the full raw input and output of a tool call
  rebuild <transcript> [--window N] [--reserve N] [--json]
      rebuild the summary from the raw record and print the drift against the current one
  sessions --db FILE [--json]          list the sessions of a store
  delete --db FILE --session ID        delete a session everywhere
options: --window N (default ${DEFAULT_CONTEXT_WINDOW}), --reserve N (default ${OUTPUT_RESERVED_TOKENS}),
  --at N (project just before 0-based record N), --json (machine output),
  --db FILE (keep the session in a persistent store, and resume from it)`;

function parseInteger(flag: string, value: string | undefined): number {
  if (value === undefined || !/^\d+$/.test(value)) throw new UsageError(`${flag} needs a non-negative whole number, got ${value === undefined ? 'nothing' : JSON.stringify(value)}`);
  return Number(value);
}

export function parseArgs(argv: readonly string[]): Options {
  const options: Options = { window: DEFAULT_CONTEXT_WINDOW, reserve: OUTPUT_RESERVED_TOKENS, at: undefined, db: undefined, json: false, session: undefined, positionals: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    switch (flag) {
      case '--window': options.window = parseInteger('--window', value()); break;
      case '--reserve': options.reserve = parseInteger('--reserve', value()); break;
      case '--at': options.at = parseInteger('--at', value()); break;
      case '--db': options.db = value(); break;
      case '--session': options.session = value(); break;
      case '--json': options.json = true; break;
      case '-h': case '--help': throw new UsageError(USAGE);
      default:
        if (flag.startsWith('-')) throw new UsageError(`unknown option ${flag}\n${USAGE}`);
        options.positionals.push(arg);
    }
  }
  return options;
}

/** Larger transcripts are refused: a JavaScript string holds at most about 512 MiB of text. */
const MAX_TRANSCRIPT_BYTES = 512 * 2 ** 20;

/** How much of a transcript is looked at to tell a binary file (JSONL text never holds a NUL byte). */
const BINARY_PROBE_BYTES = 64 * 1024;

function countNuls(bytes: Uint8Array): number {
  let n = 0;
  for (const b of bytes) if (b === 0) n++;
  return n;
}

/** The 1-based line of the first U+FFFD in `text`. */
function lineOfReplacement(text: string): number {
  const at = text.indexOf('\uFFFD');
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

function loadTranscript(file: string | undefined, redactor: Redactor, stderr: (line: string) => void): ParsedTranscript {
  if (!file) throw new UsageError(`missing <transcript>\n${USAGE}`);
  let text: string;
  let invalidUtf8: number | undefined;
  try {
    const stat = statSync(file);
    if (stat.isDirectory()) throw new UsageError(`${file} is a directory, not a transcript file`);
    // A device, a pipe or a socket (/dev/zero, /dev/stdin) never ends or is not a transcript.
    if (!stat.isFile()) throw new UsageError(`${file} is not a regular file (a transcript is a .jsonl file)`);
    if (stat.size > MAX_TRANSCRIPT_BYTES) throw new UsageError(`${file} is ${(stat.size / 2 ** 20).toFixed(0)} MiB, over the ${MAX_TRANSCRIPT_BYTES / 2 ** 20} MiB a transcript may have`);
    const bytes = readFileSync(file);
    const nuls = countNuls(bytes.subarray(0, BINARY_PROBE_BYTES));
    if (nuls > 0) throw new UsageError(`${file} is a binary file (${nuls} NUL byte${nuls === 1 ? '' : 's'} in its first ${BINARY_PROBE_BYTES / 1024} KB), not a JSONL transcript`);
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      text = new TextDecoder('utf-8').decode(bytes);
      invalidUtf8 = lineOfReplacement(text);
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(code === 'ENOENT' ? `no such file: ${file}` : `cannot read ${file}: ${(error as Error).message}`);
  }
  if (invalidUtf8 !== undefined) stderr(`context-keeper: warning: ${file}: line ${invalidUtf8}: invalid UTF-8 (the bytes that are not UTF-8 read as U+FFFD)`);
  const transcript = parseTranscript(text, redactor);
  for (const w of transcript.warnings) stderr(`context-keeper: warning: ${file}: ${w.message}${w.kept ? '' : ' (line skipped)'}`);
  return transcript;
}

/** The files a store keeps beside its database: their presence says the path is a store (even a damaged one). */
const STORE_COMPANIONS = ['.journal', '.journal.archive', '.prev', '.payloads', '.lock'];
const SQLITE_HEADER = 'SQLite format 3\u0000';

/**
 * Refuses a `--db` path that is not one of this tool's stores, before it is
 * opened (opening would move a file it cannot read aside as damaged): a
 * directory, a device, or a file that is neither empty, nor an SQLite
 * database of ours, nor beside a journal of ours. Nothing is touched.
 */
async function checkStorePath(file: string): Promise<void> {
  let stat;
  try {
    stat = statSync(file);
  } catch {
    return; // a new store
  }
  if (stat.isDirectory()) throw new UsageError(`--db ${file} is a directory, not a session store (give a file path, e.g. ${path.join(file, 'sessions.db')})`);
  if (!stat.isFile()) throw new UsageError(`--db ${file} is not a regular file`);
  if (stat.size === 0 || STORE_COMPANIONS.some((suffix) => existsSync(`${file}${suffix}`))) return;
  const head = Buffer.alloc(16);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, head, 0, 16, 0);
  } finally {
    closeSync(fd);
  }
  if (head.toString('latin1') !== SQLITE_HEADER) throw new UsageError(`--db ${file} is not a Context Keeper session store (it is not an SQLite database); it was left as it is`);
  const sql = await loadSqlJs();
  const db = new sql.Database(readFileSync(file));
  try {
    const tables = (db.exec("SELECT name FROM sqlite_master WHERE type = 'table'")[0]?.values ?? []).map((r) => String(r[0]));
    if (tables.length > 0 && !tables.includes('task_message')) throw new UsageError(`--db ${file} is an SQLite database of something else (tables ${tables.slice(0, 4).join(', ')}), not a Context Keeper session store; it was left as it is`);
  } finally {
    db.close();
  }
}

async function openStore(file: string, io: { err: (s: string) => void }, redactor: Redactor, readOnly = false): Promise<SessionStore> {
  if (readOnly && !existsSync(file) && !existsSync(`${file}.journal`)) throw new UsageError(`no session store at ${file}`);
  await checkStorePath(file);
  const store = await SessionStore.open(file, { checkpointDelayMs: 0, readOnly, redactor });
  for (const notice of store.notices) io.err(`context-keeper: ${notice}`);
  return store;
}

export async function main(argv: readonly string[], io: { out: (s: string) => void; err: (s: string) => void }): Promise<number> {
  const [command, ...rest] = argv;
  // The CLI's composition root: one token counter for the run (its tables load on the first count) and one redactor.
  const counter = new O200kTokenCounter();
  const redactor = new SecretRedactor();
  try {
    if (!command || command === '-h' || command === '--help' || command === 'help') {
      io.out(USAGE);
      return command ? 0 : 2;
    }
    if (command === '--version' || command === '-V' || command === 'version') {
      io.out(`context-keeper ${VERSION}`);
      return 0;
    }
    const options = parseArgs(rest);
    switch (command) {
      case 'project':
      case 'replay': {
        const file = options.positionals[0];
        const transcript = loadTranscript(file, redactor, io.err);
        if (options.at !== undefined && options.at > transcript.records.length) {
          throw new UsageError(`--at must be a record number from 0 to ${transcript.records.length}, got ${options.at}`);
        }
        const store = options.db ? await openStore(options.db, io, redactor) : undefined;
        try {
          const id = sessionIdFor(file!, transcript);
          if (store) {
            const restored = await restoreLost(store, id, transcript);
            if (restored.length) io.err(`context-keeper: put back ${restored.length} record(s) the store had lost (${restored.map((i) => `r${i}`).join(', ')}) from the transcript`);
          }
          let persistence = store ? persistenceFor(store, id, transcript) : undefined;
          if (persistence && options.at !== undefined && options.at < (persistence.resumeFrom ?? 0)) {
            // The store has moved past --at: its forms, floors and anchor belong to a later state.
            io.err(`context-keeper: the store already holds records past --at ${options.at}; projecting from the transcript alone, the store is left as it is`);
            persistence = undefined;
          }
          const replaying = command === 'replay';
          const resumed = persistence?.resumeFrom ?? 0;
          const { budget, result } = await runProjection(transcript, {
            window: options.window,
            reserve: options.reserve,
            counter,
            redactor,
            ...(options.at !== undefined ? { at: options.at } : {}),
            ...(persistence ? { persistence } : {}),
            ...(replaying ? { clock: { now: () => performance.now() }, onStep: (line) => io.out(JSON.stringify(line)) } : {}),
          });
          // A resumed run made the model calls of the records it added; its totals are the whole session's, as one
          // uninterrupted run makes them (everything else comes from the store: the projection, the compaction log).
          const whole = resumed > 0 ? (await runProjection(transcript, { window: options.window, reserve: options.reserve, counter, redactor, ...(options.at !== undefined ? { at: options.at } : {}) })).result : result;
          const reported = { ...result, totals: whole.totals };
          if (replaying) io.out(JSON.stringify({ summary: { ...whole.totals, ...(store ? { resumedFrom: resumed } : {}) } }));
          else io.out(options.json ? JSON.stringify(projectJson(budget, reported), null, 2) : formatReport(budget, reported, transcript.title));
          for (const notice of store?.notices.slice(0) ?? []) if (/continues in memory/.test(notice)) io.err(`context-keeper: ${notice}`);
        } finally {
          store?.close();
        }
        return 0;
      }
      case 'view-tool-call': {
        const [first, second] = options.positionals;
        const callId = options.db ? first : second;
        if (!callId) throw new UsageError(`missing <toolCallId>\n${USAGE}`);
        let view: ToolCallView | undefined;
        let where: string;
        if (options.db) {
          const store = await openStore(options.db, io, redactor, true);
          try {
            where = options.db;
            const ids = options.session ? [options.session] : store.sessions().map((s) => s.id);
            for (const id of ids) {
              view = toolCallViewOf(store.records(id, { loadPayloads: true }), callId);
              if (view) break;
            }
          } finally {
            store.close();
          }
        } else {
          const transcript = loadTranscript(first, redactor, io.err);
          where = first!;
          view = toolCallViewOf(transcript.records, callId);
        }
        if (!view) {
          io.err(`context-keeper: no tool call with id ${JSON.stringify(callId)} in ${where}`);
          return 2;
        }
        if (options.json) io.out(JSON.stringify(view, null, 2));
        else {
          io.out(`tool call ${view.toolCallId} (${view.name}), record r${view.callRecord}${view.isError ? ', failed' : ''}`);
          io.out('--- input ---');
          io.out(view.input);
          io.out(`--- output${view.resultRecord !== undefined ? ` (record r${view.resultRecord})` : ''} ---`);
          io.out(view.output ?? '(no result in the record)');
        }
        return 0;
      }
      case 'rebuild': {
        // Drift report: the summary the session built fold by fold against one rebuilt from the raw record.
        const file = options.positionals[0];
        const transcript = loadTranscript(file, redactor, io.err);
        const { result } = await runProjection(transcript, { window: options.window, reserve: options.reserve, counter, redactor });
        const rebuilt = rebuildDrift(result.session, counter);
        if (!rebuilt) {
          io.out(options.json ? JSON.stringify({ folded: 0, sections: {} }) : 'nothing was folded: the whole session fits, there is no summary to rebuild');
          return 0;
        }
        const { current, drift: report } = rebuilt;
        if (options.json) io.out(JSON.stringify({ folded: current.coverageEnd, folds: current.folds, ...report }, null, 2));
        else {
          for (const line of formatDrift(current, report)) io.out(line);
        }
        return 0;
      }
      case 'sessions': {
        if (!options.db) throw new UsageError('sessions needs --db FILE');
        const store = await openStore(options.db, io, redactor, true);
        try {
          const sessions = store.sessions();
          if (options.json) io.out(JSON.stringify(sessions, null, 2));
          else if (sessions.length === 0) io.out(`no sessions in ${options.db}`);
          else for (const s of sessions) io.out(`${s.id}  ${s.records} records  ${s.title}`);
        } finally {
          store.close();
        }
        return 0;
      }
      case 'delete': {
        if (!options.db || !options.session) throw new UsageError('delete needs --db FILE --session ID');
        const store = await openStore(options.db, io, redactor);
        try {
          if (store.mode !== 'writer') throw new UsageError(`cannot delete from ${options.db}: it is open ${store.mode === 'reader' ? 'read-only (another process holds the lock)' : 'in memory only'}`);
          const deleted = await store.deleteSession(options.session);
          if (!deleted) {
            io.err(`context-keeper: no session ${JSON.stringify(options.session)} in ${options.db}`);
            return 2;
          }
          io.out(`deleted session ${options.session} from ${options.db} (records, summaries, snapshots, tool compactions, artifacts, payloads, journal)`);
        } finally {
          store.close();
        }
        return 0;
      }
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
    }
  } catch (error) {
    if (error instanceof UsageError || error instanceof TranscriptError || error instanceof RangeError || error instanceof StoreMismatchError) {
      io.err(`context-keeper: ${error.message}`);
      return 2;
    }
    io.err(`context-keeper: internal error: ${(error as Error).stack ?? String(error)}`);
    return 1;
  }
}

if (require.main === module) {
  // Lines go out as they are produced (a replay streams one line per model call);
  // the exit waits for stdout to drain.
  void main(process.argv.slice(2), {
    out: (s) => process.stdout.write(s + '\n'),
    err: (s) => process.stderr.write(s + '\n'),
  }).then((code) => {
    process.stdout.write('', () => process.exit(code));
  });
}
