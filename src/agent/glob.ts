/**
 * A small glob matcher for the agent's `glob` and `grep` tools (no dependency).
 *
 * Syntax, matched against forward-slash paths relative to a base folder:
 *   `**`      as a whole segment: any number of segments, zero included
 *   `*`       any run of characters within one segment (dot files included)
 *   `?`       one character within a segment
 *   `[abc]`, `[a-z]`, `[!abc]` / `[^abc]`   one character of (or not of) a class
 *   `{a,b}`   alternatives, nestable, may span segments (`{src,test}/**`)
 *   `\x`      the character x, literally
 *
 * With `matchBase`, a pattern without a `/` is matched against the last segment
 * only (`*.ts` finds `src/a/b.ts`), as ripgrep's and gitignore's globs do.
 */

/** A compiled pattern. Paths are forward-slash, relative to the base folder, without `./`. */
export interface GlobMatcher {
  readonly pattern: string;
  /** Whether the file at `relPath` matches. */
  matches(relPath: string): boolean;
  /** Whether some path below the folder `relDir` could match (false lets a walk skip the folder). */
  mayContain(relDir: string): boolean;
  /** Whether the pattern names `name` literally (e.g. `node_modules`), so a walk should not skip it. */
  names(name: string): boolean;
}

export interface GlobOptions {
  /** Match a pattern without `/` against the last path segment only. */
  readonly matchBase?: boolean;
}

/** Upper bound on the alternatives `{…}` may expand to. */
export const MAX_BRACE_EXPANSIONS = 1024;

const GLOBSTAR = Symbol('globstar');
type Segment = RegExp | typeof GLOBSTAR;

/** Compile `pattern`; throws a RangeError naming the problem for an empty pattern or too many alternatives. */
export function compileGlob(pattern: string, options: GlobOptions = {}): GlobMatcher {
  if (pattern.trim() === '') throw new RangeError('the glob pattern is empty');
  const alternatives = expandBraces(pattern);
  const programs: Segment[][] = alternatives.map((alternative) => {
    let source = alternative.replace(/^(?:\.\/)+/, '').replace(/\/+/g, '/').replace(/\/$/, '');
    if (options.matchBase === true && !source.includes('/')) source = `**/${source}`;
    return source.split('/').filter((s) => s !== '' && s !== '.').map(compileSegment);
  });
  const literal = alternatives.join('\n');
  return {
    pattern,
    matches: (relPath) => {
      const parts = splitPath(relPath);
      return programs.some((program) => accepts(program, run(program, parts)));
    },
    mayContain: (relDir) => {
      const parts = splitPath(relDir);
      return programs.some((program) => run(program, parts).some((state) => state < program.length));
    },
    names: (name) => literal.includes(name),
  };
}

function splitPath(relPath: string): string[] {
  return relPath.split('/').filter((s) => s !== '' && s !== '.');
}

/**
 * The pattern as a chain of segments read by a set of positions: a position is
 * the index of the next segment to match, a globstar both stays and steps over.
 */
function run(program: readonly Segment[], parts: readonly string[]): number[] {
  let states = closure(program, [0]);
  for (const part of parts) {
    const next: number[] = [];
    for (const state of states) {
      const segment = program[state];
      if (segment === undefined) continue;
      if (segment === GLOBSTAR) next.push(state);
      else if (segment.test(part)) next.push(state + 1);
    }
    if (next.length === 0) return [];
    states = closure(program, next);
  }
  return states;
}

/** Add the positions reachable by letting globstars match zero segments. */
function closure(program: readonly Segment[], states: readonly number[]): number[] {
  const seen = new Set<number>();
  const stack = [...states];
  while (stack.length > 0) {
    const state = stack.pop()!;
    if (seen.has(state)) continue;
    seen.add(state);
    if (program[state] === GLOBSTAR) stack.push(state + 1);
  }
  return [...seen];
}

function accepts(program: readonly Segment[], states: readonly number[]): boolean {
  return states.includes(program.length);
}

/** `{a,b}c` → `['ac', 'bc']`, nested and in order; a brace without a top-level comma stays literal. */
export function expandBraces(pattern: string): string[] {
  const open = findExpandableBrace(pattern);
  if (open === undefined) return [pattern];
  const { start, end, options } = open;
  const prefix = pattern.slice(0, start);
  const suffix = pattern.slice(end + 1);
  const out: string[] = [];
  for (const option of options) {
    for (const expanded of expandBraces(prefix + option + suffix)) {
      out.push(expanded);
      if (out.length > MAX_BRACE_EXPANSIONS) {
        throw new RangeError(`the glob pattern expands to more than ${MAX_BRACE_EXPANSIONS} alternatives`);
      }
    }
  }
  return out;
}

/** The first `{…}` holding a top-level comma, with its alternatives; escapes and classes are skipped. */
function findExpandableBrace(pattern: string): { start: number; end: number; options: string[] } | undefined {
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '[') {
      const close = classEnd(pattern, i);
      if (close !== undefined) i = close;
      continue;
    }
    if (c !== '{') continue;
    let depth = 0;
    let from = i + 1;
    const options: string[] = [];
    for (let j = i; j < pattern.length; j++) {
      const d = pattern[j];
      if (d === '\\') {
        j++;
      } else if (d === '[') {
        const close = classEnd(pattern, j);
        if (close !== undefined) j = close;
      } else if (d === '{') {
        depth++;
      } else if (d === '}') {
        depth--;
        if (depth === 0) {
          if (options.length === 0) break; // `{x}`: literal braces; look for a later group
          options.push(pattern.slice(from, j));
          return { start: i, end: j, options };
        }
      } else if (d === ',' && depth === 1) {
        options.push(pattern.slice(from, j));
        from = j + 1;
      }
    }
  }
  return undefined;
}

/** Index of the `]` closing the class opened at `open`, or undefined when it is not a class. */
function classEnd(pattern: string, open: number): number | undefined {
  let i = open + 1;
  if (pattern[i] === '!' || pattern[i] === '^') i++;
  if (pattern[i] === ']') i++; // a leading ']' is a member
  for (; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (c === '/') return undefined;
    else if (c === ']') return i;
  }
  return undefined;
}

function compileSegment(segment: string): Segment {
  if (segment === '**') return GLOBSTAR;
  let source = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === '\\') {
      const next = segment[i + 1];
      if (next !== undefined) {
        source += escapeRegExp(next);
        i++;
      } else {
        source += '\\\\';
      }
    } else if (c === '*') {
      while (segment[i + 1] === '*') i++;
      source += '[^/]*';
    } else if (c === '?') {
      source += '[^/]';
    } else if (c === '[') {
      const close = classEnd(segment, i);
      if (close === undefined) {
        source += '\\[';
        continue;
      }
      source += compileClass(segment.slice(i + 1, close));
      i = close;
    } else {
      source += escapeRegExp(c);
    }
  }
  return new RegExp(`^${source}$`);
}

/** The inside of `[…]` as a RegExp class; backslash escapes become literal members. */
function compileClass(body: string): string {
  let negate = false;
  let i = 0;
  if (body[0] === '!' || body[0] === '^') {
    negate = true;
    i = 1;
  }
  let members = '';
  for (; i < body.length; i++) {
    let c = body[i]!;
    if (c === '\\' && i + 1 < body.length) c = body[++i]!;
    else if (c === '-' && members !== '' && i + 1 < body.length) {
      members += '-';
      continue;
    }
    members += c === '\\' || c === ']' || c === '[' || c === '^' || c === '-' ? `\\${c}` : c;
  }
  return negate ? `[^${members}]` : `[${members}]`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
