/**
 * Pasted code in a user's ask, said by a placeholder: the block's size, the
 * name it declares, the other names it uses and the values it sets (the
 * record keeps the block itself).
 */
import { clipChars } from './digest';

/** The line of pasted code that names what it defines ("export const FooSchema = z.object({"), clipped. */
const DECLARATION = /^\s*(?:export\s+)?(?:default\s+)?(?:pub(?:\([a-z]+\))?\s+)?(?:async\s+)?(?:const|let|var|function|class|interface|type|enum|def|struct|fn|func|module|trait|impl|CREATE\s+TABLE)\b/i;

/** Else its first assignment ("td_field = TimeDelta(precision=…)"): what a script builds names it too. */
const ASSIGNMENT = /^\s*[A-Za-z_$][\w$.]*(?:\[[^\]]*\])?\s*(?::\s*[\w.[\]]+\s*)?=(?!=)\s*\S/;

function declarationOf(lines: readonly string[]): string {
  const line = (lines.find((l) => DECLARATION.test(l)) ?? lines.find((l) => ASSIGNMENT.test(l)))?.trim();
  return line === undefined ? '' : clipChars(line, 80);
}

/** How many of a code block's other names its placeholder lists. */
const BLOCK_NAMES = 8;

/**
 * What a block of code names besides its declaration, as a later record would
 * name it: identifiers in camelCase, PascalCase with two humps or more, or
 * snake_case (`FloatPixelData`, `pixel_array`), in order of first use, the
 * last segment of a dotted name (`ds.FloatPixelData`). Plain words and
 * keywords say nothing of what the code touches.
 */
function namesOf(lines: readonly string[], declared: string): string[] {
  const out: string[] = [];
  const code = lines.filter((l) => !IMPORT_LINE.test(l)).join('\n');
  for (const m of code.matchAll(/[A-Za-z_][\w]*/g)) {
    const name = m[0];
    if (name.length < 4 || out.includes(name) || declared.includes(name)) continue;
    if (!/[a-z][A-Z]|[A-Z][a-z]+[A-Z]|[a-z0-9]_[a-z0-9]/.test(name)) continue;
    out.push(name);
    if (out.length === BLOCK_NAMES) break;
  }
  return out;
}

/** How many of a code block's literal values its placeholder lists. */
const BLOCK_VALUES = 4;

/**
 * The values a block of code sets that a reader could not guess, in order of first use: quoted strings of 3 to
 * 60 characters that are not prose (a UID, a mode, a path) and numbers of two digits or more (`BitsAllocated = 32`),
 * none already said by the declaration, none on an import line (a module's name). What a reproduction builds depends
 * on them as much as on its names.
 */
const IMPORT_LINE = /^\s*(?:import\b|\}\s*from\s|from\s+\S+\s+import\b|(?:const|let|var)\s+[^=]+=\s*require\(|#include\b|use\s+[\w:]+;)/;

function valuesOf(lines: readonly string[], declared: string): string[] {
  const out: string[] = [];
  const code = lines.filter((l) => !IMPORT_LINE.test(l)).join('\n');
  for (const m of code.matchAll(/(["'])([^"'\n]{3,60})\1|(?<![\w.])(\d{2,}(?:\.\d+)*|\d+\.\d+)(?![\w.])/g)) {
    const inner = m[2] ?? m[3]!;
    if (m[2] !== undefined && /\s\S+\s/.test(m[2])) continue;
    if (out.some((v) => v.replace(/^["']|["']$/g, '') === inner) || declared.includes(inner)) continue;
    const value = m[2] !== undefined ? `${m[1]}${m[2]}${m[1]}` : inner;
    out.push(value);
    if (out.length === BLOCK_VALUES) break;
  }
  return out;
}

/** A code block in an ask as its placeholder says it: its size, the name it declares, the other names it uses and the values it sets. */
export function codePlaceholder(kind: string, lines: readonly string[]): string {
  const name = declarationOf(lines);
  const names = namesOf(lines, name);
  const values = valuesOf(lines, name);
  const said = [name, names.length ? `names ${names.join(', ')}` : '', values.length ? `values ${values.join(', ')}` : ''].filter((x) => x !== '').join('; ');
  return ` [${kind}${said ? `: ${said}` : ''}] `;
}
