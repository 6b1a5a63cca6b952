/**
 * The journal's line format: encoding an entry as one checksummed line, and
 * parsing a journal file back into its entries, its damaged lines and its torn tail.
 *
 * Line format, one JSON object per line:
 *   {"s":seq,"t":task,"o":op,"d":data,"c":"<crc32 hex of JSON.stringify([s,t,o,d])>"}\n
 * plus one internal line shape, written only by `purgeTask()` at the top of the archive:
 *   {"h":seq,"c":"<crc32 hex of JSON.stringify(["h",seq])>"}\n
 * a high-water mark, so that purging the entries with the highest seq never lets seq go
 * backwards (a database checkpoint that recorded "applied through seq N" stays meaningful).
 * It is never returned as an entry.
 */
import { crc32 } from './checksum';
import type { JournalEntry } from './journal';

function crcHex(text: string): string {
  return crc32(text).toString(16).padStart(8, '0');
}

/** The exact line `append` writes (with its trailing newline). `data === undefined` is stored as null. */
export function encodeJournalLine(seq: number, task: string, op: string, data: unknown): string {
  const s = String(seq);
  const t = JSON.stringify(task);
  const o = JSON.stringify(op);
  const d = JSON.stringify(data) ?? 'null';
  // Same text as JSON.stringify([seq, task, op, data]), without stringifying data twice.
  const c = crcHex(`[${s},${t},${o},${d}]`);
  return `{"s":${s},"t":${t},"o":${o},"d":${d},"c":"${c}"}\n`;
}

/** The high-water line that heads a rewritten archive (see the line format above). */
export function encodeHighWater(seq: number): string {
  return `{"h":${seq},"c":"${crcHex(JSON.stringify(['h', seq]))}"}\n`;
}

type Decoded =
  | { readonly kind: 'entry'; readonly entry: JournalEntry }
  | { readonly kind: 'high'; readonly seq: number }
  | { readonly kind: 'bad'; readonly reason: string };

function decodeLine(text: string): Decoded {
  if (text.length === 0) return { kind: 'bad', reason: 'empty line' };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { kind: 'bad', reason: 'invalid JSON' };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { kind: 'bad', reason: 'not a JSON object' };
  const o = v as Record<string, unknown>;
  if (typeof o.c !== 'string') return { kind: 'bad', reason: 'missing checksum' };
  if ('h' in o) {
    if (!Number.isSafeInteger(o.h) || (o.h as number) < 0) return { kind: 'bad', reason: 'invalid high-water mark' };
    if (crcHex(JSON.stringify(['h', o.h])) !== o.c) return { kind: 'bad', reason: 'CRC mismatch' };
    return { kind: 'high', seq: o.h as number };
  }
  if (!Number.isSafeInteger(o.s) || (o.s as number) < 1) return { kind: 'bad', reason: 'invalid seq' };
  if (typeof o.t !== 'string' || typeof o.o !== 'string' || !('d' in o)) {
    return { kind: 'bad', reason: 'missing task, op or data' };
  }
  if (crcHex(JSON.stringify([o.s, o.t, o.o, o.d])) !== o.c) return { kind: 'bad', reason: 'CRC mismatch' };
  return { kind: 'entry', entry: { seq: o.s as number, task: o.t, op: o.o, data: o.d } };
}

export interface ParsedLine {
  readonly entry: JournalEntry;
  readonly start: number;
  /** Offset just past the newline. */
  readonly end: number;
}

export interface ParsedFile {
  readonly lines: ParsedLine[];
  readonly highWater: number;
  /** Offset just past the last complete line (0 if none): what follows it is a torn write. */
  readonly validEnd: number;
  readonly size: number;
  /** Complete lines whose checksum or shape fails (damaged on disk). */
  readonly damaged: { line: number; reason: string }[];
  /** Bytes after the last newline (a torn write), 0 if the file ends with a newline. */
  readonly tornBytes: number;
}

/** A journal file's entries (with their byte ranges), high-water mark, damaged lines and torn tail. */
export function parseJournal(buf: Buffer): ParsedFile {
  const lines: ParsedLine[] = [];
  const invalid: { line: number; reason: string }[] = [];
  let highWater = 0;
  let validEnd = 0;
  let pos = 0;
  let lineNo = 0;
  let tornBytes = 0;
  while (pos < buf.length) {
    lineNo++;
    const nl = buf.indexOf(0x0a, pos);
    if (nl === -1) {
      tornBytes = buf.length - pos;
      break;
    }
    const d = decodeLine(buf.toString('utf8', pos, nl));
    if (d.kind === 'bad') invalid.push({ line: lineNo, reason: d.reason });
    else if (d.kind === 'entry') lines.push({ entry: d.entry, start: pos, end: nl + 1 });
    else highWater = Math.max(highWater, d.seq);
    validEnd = nl + 1;
    pos = nl + 1;
  }
  return { lines, highWater, validEnd, size: buf.length, damaged: invalid, tornBytes };
}

/** The highest seq a file holds, its high-water mark included. */
export function maxSeq(p: ParsedFile): number {
  let m = p.highWater;
  for (const l of p.lines) if (l.entry.seq > m) m = l.entry.seq;
  return m;
}

/** The entries once each (the first line of a seq wins), in seq order. */
export function dedupe(lines: readonly ParsedLine[]): JournalEntry[] {
  const bySeq = new Map<number, JournalEntry>();
  for (const l of lines) if (!bySeq.has(l.entry.seq)) bySeq.set(l.entry.seq, l.entry);
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}
