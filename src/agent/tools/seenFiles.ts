import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import * as fs from 'node:fs/promises';
import type { ToolContext } from './contract';

/**
 * The version of each file the model last saw, by absolute path: taken when
 * it read the file or changed it itself. A file whose version differs when the
 * model edits it was changed meanwhile — by the user (an open buffer typed in,
 * a save), a formatter, a command — and the edit is refused with a request to
 * read it again: the model's picture of the rest of the file is stale.
 */
export class SeenFiles {
  private readonly versions = new Map<string, string>();

  get(file: string): string | undefined {
    return this.versions.get(file);
  }

  set(file: string, version: string): void {
    this.versions.set(file, version);
  }
}

/** Above this size a file's version is its size and time on disk (hashing it at every read would cost too much). */
const SEEN_HASH_MAX_BYTES = 4 * 1024 * 1024;

function textVersion(text: string): string {
  return `text:${createHash('sha256').update(text).digest('hex')}`;
}

/**
 * The version of a file's text: its hash, or for a file over
 * SEEN_HASH_MAX_BYTES on disk its size and time there (`stats`).
 */
export function versionOf(text: string, stats: Stats): string {
  return stats.size > SEEN_HASH_MAX_BYTES ? diskStamp(stats) : textVersion(text);
}

function diskStamp(stats: Stats): string {
  return `disk:${stats.size}:${stats.mtimeMs}`;
}

/** The version of a file's text on disk (what read_file reads when the editor has no buffer of it). */
async function diskVersion(file: string): Promise<string | undefined> {
  const stats = await fs.stat(file).catch(() => undefined);
  if (!stats) return undefined;
  if (stats.size > SEEN_HASH_MAX_BYTES) return diskStamp(stats);
  const text = await fs.readFile(file, 'utf8').catch(() => undefined);
  return text === undefined ? undefined : textVersion(text);
}

/** Notes the version of a file the model has just read or written: `text` (a buffer read, what was written), else its text on disk; no-op without `seen`. */
export async function noteSeen(ctx: ToolContext, file: string, text?: string): Promise<void> {
  if (!ctx.seen) return;
  const version = text !== undefined && Buffer.byteLength(text, 'utf8') <= SEEN_HASH_MAX_BYTES ? textVersion(text) : await diskVersion(file);
  if (version !== undefined) ctx.seen.set(file, version);
}
