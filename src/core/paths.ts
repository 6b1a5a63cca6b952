/**
 * The workspace directory of a session's paths, and lines written relative to it.
 *
 * Agents that log absolute paths (Claude Code, Copilot, OpenHands) repeat the
 * same directory in every deliverable, command and finding of the Task Context:
 * `C:\Users\…\.claude-worktrees\M-Claude\unruffled-mcclintock\` costs about 20
 * tokens each time, several hundred in an 8k head. The head names the
 * directory once and writes the paths under it relative to it.
 */

/** A path with forward slashes only (`src\\a.ts` → `src/a.ts`): Windows and POSIX spellings of one file compare equal. */
export function forwardSlashes(path: string): string {
  return path.replace(/\\/g, '/');
}

/** Whether a path starts at a root (`/x`, `C:\\x`, `~/x`): no partial name of another. */
function rooted(path: string): boolean {
  return /^(?:[A-Za-z]:)?[\\/]|^~/.test(path);
}

/** Whether `path` ends in `tail` at a separator (`src/domain/tasks.ts` in `tasks.ts`), either separator. */
function endsWithPath(path: string, tail: string): boolean {
  return forwardSlashes(path).endsWith(`/${forwardSlashes(tail)}`);
}

/** A path's last segment, either separator (`~/bin/claude-tmux` and `C:\\Users\\me\\bin\\claude-tmux` end in one name). */
export function lastSegment(path: string): string {
  return forwardSlashes(path).split('/').filter(Boolean).pop() ?? path;
}

/** Whether two names of files name one file: the same, or one a relative name the other ends in (`.gitignore`, `/repo/.gitignore`). */
export function nameOneFile(a: string, b: string): boolean {
  const [x, y] = [forwardSlashes(a).replace(/^\.\//, ''), forwardSlashes(b).replace(/^\.\//, '')];
  return x === y || (!rooted(y) && endsWithPath(x, y)) || (!rooted(x) && endsWithPath(y, x));
}

/**
 * Of the `known` paths, the one that ends in `path` (a longer name of the file `path` names in part: `tasks.ts`,
 * `session/get.ts`), when exactly one does; never for a rooted `path`.
 */
export function onlyLongerPath(path: string, known: Iterable<string>): string | undefined {
  if (rooted(path)) return undefined;
  const fits = new Set([...known].filter((k) => endsWithPath(k, path)));
  return fits.size === 1 ? [...fits][0] : undefined;
}

/** Of the `known` names, the one unrooted partial name that `path` ends in, when exactly one does (the other way). */
export function onlyPartialName(path: string, known: Iterable<string>): string | undefined {
  const fits = [...known].filter((k) => !rooted(k) && endsWithPath(path, k));
  return fits.length === 1 ? fits[0] : undefined;
}

/** Absolute paths needed before a directory is taken for the workspace. */
const MIN_PATHS = 3;
/** Share of the absolute paths the directory must hold. */
const MIN_SHARE = 0.6;

/** The directories above `path`, outermost first, each with its separator (`/a/`, `/a/b/`; `C:\a\`). */
function ancestors(path: string): string[] {
  const sep = path.includes('\\') && !path.includes('/') ? '\\' : '/';
  const drive = /^[A-Za-z]:[\\/]/.exec(path);
  if (!drive && !path.startsWith('/')) return [];
  const parts = path.split(/[\\/]/);
  const out: string[] = [];
  // Parts[0] is '' (POSIX) or 'C:'; the last part is the file itself.
  for (let i = 1; i < parts.length - 1; i++) out.push(`${parts.slice(0, i + 1).join(sep)}${sep}`);
  return out;
}

/** System and home directories: never a workspace by themselves (`/`, `/tmp/`, `/Users/`, `/home/name/`, `C:\\Users\\name\\`). */
function tooGeneral(dir: string): boolean {
  const segments = dir.split(/[\\/]/).filter((s) => s !== '' && !/^[A-Za-z]:$/.test(s));
  if (segments.length === 0) return true;
  const top = segments[0]!.toLowerCase();
  if (segments.length === 1) return /^(?:users|home|root|tmp|temp|var|etc|usr|opt|mnt|media|private|volumes|windows|program files|documents and settings)$/.test(top);
  return segments.length === 2 && /^(?:users|home|documents and settings)$/.test(top);
}

/**
 * The workspace directory of `paths` (with its trailing separator), or
 * undefined: where the absolute paths branch — the outermost directory that
 * names two or more entries and holds at least 60% of them, when there are
 * at least three — unless that is a system or home directory. Outermost, so
 * that later paths (which can only widen the spread) rarely move it.
 */
export function workspaceRootOf(paths: readonly string[]): string | undefined {
  const absolute = paths.map((p) => ({ p, dirs: ancestors(p) })).filter(({ dirs }) => dirs.length > 0);
  if (absolute.length < MIN_PATHS) return undefined;
  const need = Math.max(MIN_PATHS, Math.ceil(absolute.length * MIN_SHARE));
  const under = new Map<string, { held: number; children: Set<string> }>();
  for (const { p, dirs } of absolute) {
    for (const dir of dirs) {
      const entry = under.get(dir) ?? { held: 0, children: new Set<string>() };
      entry.held++;
      entry.children.add(p.slice(dir.length).split(/[\\/]/)[0]!);
      under.set(dir, entry);
    }
  }
  let best: string | undefined;
  for (const [dir, { held, children }] of under) {
    if (held < need || children.size < 2 || tooGeneral(dir)) continue;
    if (best === undefined || dir.length < best.length) best = dir;
  }
  return best;
}

const ROOT_PATTERNS = new Map<string, { cd: RegExp; under: RegExp; bare: RegExp }>();

function patternsOf(root: string): { cd: RegExp; under: RegExp; bare: RegExp } {
  const known = ROOT_PATTERNS.get(root);
  if (known) return known;
  if (ROOT_PATTERNS.size > 64) ROOT_PATTERNS.clear();
  const dir = root.replace(/[\\/]$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // Not inside a longer path, a word or a URI: `/mnt/work/x` is not under `/work/`, `file:/work/x` stays whole.
  const before = '(?<![\\w.\\-/\\\\:])';
  const patterns = {
    // `cd "<root>" && …`: the command runs in the workspace, which is where it runs anyway.
    cd: new RegExp(`${before}cd\\s+(["']?)${dir}[\\\\/]?\\1\\s*&&\\s*`, 'g'),
    under: new RegExp(`${before}${dir}[\\\\/](?=[^\\s\\\\/])`, 'g'),
    // The directory itself, also at the end of a sentence (`in /w.`), but not `/w.js` or `/w-2`.
    bare: new RegExp(`${before}${dir}[\\\\/]?(?![\\w\\-\\\\/]|\\.\\w)`, 'g'),
  };
  ROOT_PATTERNS.set(root, patterns);
  return patterns;
}

/**
 * `text` with the paths under `root` written relative to it (`C:\w\src\a.ts`
 * → `src\a.ts`), the workspace itself as `.`, and a leading `cd <root> &&` of
 * a command dropped. Everything else is left as it is.
 */
export function relativeTo(text: string, root: string | undefined): string {
  if (!root || !text.includes(root.slice(0, -1))) return text;
  const { cd, under, bare } = patternsOf(root);
  return text.replace(cd, '').replace(under, '').replace(bare, '.');
}
