/**
 * The house: the parts of Context Keeper and the arrows allowed between them,
 * declared once. test/unit/house.test.ts fails on any import outside it (file
 * and line), and the README's architecture table is rendered from it
 * (`renderHouse`). This file is data: it imports nothing.
 */

export interface Part {
  readonly name: string;
  /** Files of the part: a folder (with a trailing '/') or one file, from the repository root. */
  readonly path: string;
  readonly does: string;
  /** Parts whose files it may import. */
  readonly imports: readonly string[];
  /** npm packages it may import (subpaths included). */
  readonly packages?: readonly string[];
  /** It may import 'vscode'. */
  readonly vscode?: boolean;
  /** It may import Node's builtins. */
  readonly node?: boolean;
  /** Other parts import only this file of it. */
  readonly entry?: string;
}

export const HOUSE: readonly Part[] = [
  { name: 'core', path: 'src/core/', does: 'the compaction engine: record, budget, ladder, Task Context, protected state, redaction, replay; the one schema builder (zod, src/core/schema.ts)', imports: [], packages: ['zod'] },
  { name: 'adapters', path: 'src/adapters/', does: 'what the core and the host need from outside, behind their ports: the o200k token counter (its rank table read from disk), a disposable store', imports: ['core'], packages: ['gpt-tokenizer'], vscode: true, node: true },
  { name: 'store', path: 'src/store/', does: 'the durable session store: sql.js database, journal, payloads, lock', imports: ['core'], packages: ['sql.js'], node: true },
  { name: 'report', path: 'src/report/', does: 'the report of a transcript and the session ids, shared by the CLI and the commands', imports: ['core'] },
  { name: 'agent', path: 'src/agent/', does: '@keeper: the agent loop, its tools, the model port and its VS Code adapter, settings, evidence documents', imports: ['core', 'adapters'], vscode: true, node: true },
  { name: 'protocol', path: 'src/protocol/', does: 'every panel <-> host message, declared once (zod schema and type)', imports: ['core'] },
  { name: 'panel', path: 'src/panel/', does: "the Task Context panel's host side and the status-bar gauge; it reads the agent through its ports", imports: ['core', 'adapters', 'protocol'], vscode: true, node: true },
  { name: 'webview', path: 'webview/', does: "the panel's browser code (bundled by esbuild)", imports: ['protocol'] },
  { name: 'eval', path: 'src/eval/', does: 'the evaluation: probes, baselines, metrics, report; probes asked of a model', imports: ['core', 'adapters', 'report'], node: true, entry: 'src/eval/index.ts' },
  { name: 'commands', path: 'src/commands/', does: 'one file per command (or a small group), registered from one table', imports: ['core', 'adapters', 'store', 'report', 'agent', 'panel', 'eval'], vscode: true },
  { name: 'root', path: 'src/extension.ts', does: 'activate(): the composition root; builds each service once and wires the parts', imports: ['core', 'adapters', 'store', 'agent', 'panel', 'commands'], vscode: true },
  { name: 'loader', path: 'src/loader.ts', does: "the extension's main: loads the root's modules one turn of the event loop at a time, then activates it", imports: ['root', 'core'], vscode: true, node: true },
  { name: 'cli', path: 'src/cli/', does: 'the command-line interface over the core (project, replay, rebuild, sessions)', imports: ['core', 'adapters', 'store', 'report'], node: true },
  { name: 'bench', path: 'bench/', does: 'benchmarks that print ratios', imports: ['core', 'adapters', 'store', 'report', 'agent', 'panel'], node: true },
];

/** The part a repository-relative file belongs to (undefined: outside the house, e.g. tests or this file). */
export function partOf(file: string): Part | undefined {
  return HOUSE.find((p) => (p.path.endsWith('/') ? file.startsWith(p.path) : file === p.path));
}

/** Why `from` may not import `to` (repository-relative files), or undefined when the arrow is on plan. */
export function forbiddenArrow(from: string, to: string): string | undefined {
  const a = partOf(from);
  const b = partOf(to);
  if (!a || !b || a === b) return undefined;
  if (!a.imports.includes(b.name)) return `${a.name} may not import ${b.name} (${a.name} imports ${a.imports.join(', ') || 'no other part'})`;
  if (b.entry !== undefined && to !== b.entry) return `${b.name} is imported through ${b.entry} only`;
  return undefined;
}

/** The README's table of parts and arrows. */
export function renderHouse(): string {
  const rows = HOUSE.map((p) => {
    const outside = [...(p.packages ?? []), ...(p.vscode ? ['vscode'] : []), ...(p.node ? ['Node'] : [])];
    return `| ${p.name} | \`${p.path}\` | ${p.does} | ${p.imports.join(', ') || '–'} | ${outside.join(', ') || '–'} |`;
  });
  return ['| part | where | what it does | may import | and from outside |', '|---|---|---|---|---|', ...rows].join('\n');
}
