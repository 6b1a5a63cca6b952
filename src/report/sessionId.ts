/** Session ids for imported transcripts, the same in the CLI's stores and the extension's. */
import { contentHash } from '../core/hash';
import type { ParsedTranscript } from '../core/transcript';

/** A stable session id for a transcript file: its name and the hash of its first record. */
export function sessionIdFor(file: string, transcript: ParsedTranscript): string {
  const base = (file.split(/[\\/]/).pop() ?? file).replace(/\.jsonl?$/i, '').replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 48);
  return `${base}-${contentHash(JSON.stringify(transcript.records[0] ?? {})).slice(0, 8)}`;
}

