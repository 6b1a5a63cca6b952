/**
 * What a `git push` that went through updated on the remote, from its output:
 * the ref lines after "To <remote>" ("   7205d50..7a23400  main -> main",
 * " + 56a43b7...4f43a16 main -> main (forced update)", " * [new branch]
 * task#002 -> task#002"). Where the work stands is a fact the next step builds
 * on ("was it pushed?"); the progress lines and the remote's hints are not.
 */

/** A command that pushes (alone or after a commit: `git commit … && git push origin main`). */
export const PUSH_COMMAND = /\bgit\s+(?:-C\s+\S+\s+)?push\b/;

/** One updated ref: its flag, the range (or `[new branch]`), source and destination, and git's note. */
const REF_LINE = /^\s*([+*=-]?)\s*(\[new (?:branch|tag)\]|[0-9a-f]{7,40}\.\.\.?[0-9a-f]{7,40})\s+(\S+)\s+->\s+(\S+)(?:\s+\(([^)]*)\))?\s*$/;
/** At most this many refs are said; a push of many tags is said by its count. */
const MAX_REFS = 3;

/** `pushed <range> <src> -> <dst>` for each ref the push updated, or undefined when it updated none. */
export function pushedRefs(output: string): string | undefined {
  const lines = output.split(/\r?\n/);
  const to = lines.findIndex((l) => /^To \S/.test(l.trim()));
  if (to < 0) return undefined;
  const refs: string[] = [];
  for (const line of lines.slice(to + 1)) {
    const m = REF_LINE.exec(line);
    if (!m) continue;
    const note = m[5] ?? (m[1] === '+' ? 'forced update' : '');
    refs.push(`${m[2]} ${m[3]} -> ${m[4]}${note ? ` (${note})` : ''}`);
  }
  if (refs.length === 0) return undefined;
  const more = refs.length > MAX_REFS ? ` and ${refs.length - MAX_REFS} more refs` : '';
  return `pushed ${refs.slice(0, MAX_REFS).join('; ')}${more}`;
}
