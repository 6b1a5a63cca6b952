/**
 * What git's output says, in the lines the summary writes: a commit's line
 * (its form, written by `commitOf` and read back by the command history) and
 * what a `git push` that went through updated on the remote — the ref lines
 * after "To <remote>" ("   7205d50..7a23400  main -> main", " + 56a43b7...4f43a16
 * main -> main (forced update)", " * [new branch] task#002 -> task#002"). Where
 * the work stands is a fact the next step builds on ("was it pushed?"); the
 * progress lines and the remote's hints are not.
 */

/** A commit line as `commitLine` writes it: hash, branch, message, flags. */
export const COMMIT_LINE = /^committed ([0-9a-f]{7,40}) on (\S+): "(.*)"(?: \(([^)]*)\))?$/;

/** A commit's line: its hash, branch and message, and its flags when it has any (`--no-verify`, `pushed`). */
export function commitLine(hash: string, branch: string, message: string, flags: readonly string[]): string {
  return `committed ${hash} on ${branch}: "${message}"${flags.length ? ` (${flags.join(' ')})` : ''}`;
}

/** A command that pushes (alone or after a commit: `git commit … && git push origin main`). */
const PUSH_COMMAND = /\bgit\s+(?:-C\s+\S+\s+)?push\b/;

/** One updated ref: its flag, the range (or `[new branch]`), source and destination, and git's note. */
const REF_LINE = /^\s*([+*=-]?)\s*(\[new (?:branch|tag)\]|[0-9a-f]{7,40}\.\.\.?[0-9a-f]{7,40})\s+(\S+)\s+->\s+(\S+)(?:\s+\(([^)]*)\))?\s*$/;
/** At most this many refs are said; a push of many tags is said by its count. */
const MAX_REFS = 3;

/** A ref a push updated: the range (or `[new branch]`, `[new tag]`), source, destination and git's note. */
export interface PushedRef {
  readonly range: string;
  readonly src: string;
  readonly dst: string;
  readonly note: string;
}

/** The refs `cmd` pushed, read from its output; none when it is no push or updated nothing. */
export function pushedRefs(cmd: string, output: string): PushedRef[] {
  if (!PUSH_COMMAND.test(cmd)) return [];
  const lines = output.split(/\r?\n/);
  const to = lines.findIndex((l) => /^To \S/.test(l.trim()));
  if (to < 0) return [];
  const refs: PushedRef[] = [];
  for (const line of lines.slice(to + 1)) {
    const m = REF_LINE.exec(line);
    if (m) refs.push({ range: m[2]!, src: m[3]!, dst: m[4]!, note: m[5] ?? (m[1] === '+' ? 'forced update' : '') });
  }
  return refs;
}

/** `pushed <range> <src> -> <dst>` for each ref (at most MAX_REFS, the rest counted). */
export function pushedText(refs: readonly PushedRef[]): string {
  const said = refs.slice(0, MAX_REFS).map((r) => `${r.range} ${r.src} -> ${r.dst}${r.note ? ` (${r.note})` : ''}`);
  const more = refs.length > MAX_REFS ? ` and ${refs.length - MAX_REFS} more refs` : '';
  return `pushed ${said.join('; ')}${more}`;
}

/** The commit a pushed range ends at (its short or full hash); undefined for a new branch or tag. */
export function tipOf(ref: PushedRef): string | undefined {
  return /\.\.\.?([0-9a-f]{7,40})$/.exec(ref.range)?.[1];
}
