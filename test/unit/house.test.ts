/**
 * The house holds: every import of every part is an arrow src/house.ts
 * declares (parts, packages, 'vscode', Node; `/// <reference types>`, `require`
 * and `import()` included), so the core stays a pure engine that runs under
 * plain mocha and in any host; and the README's architecture
 * table is the one rendered from the declaration.
 * HOUSE_WRITE=1 rewrites the README's table instead of failing on it.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import * as ts from 'typescript';
import { forbiddenArrow, HOUSE, partOf, renderHouse } from '../../src/house';

const NODE_BUILTINS = new Set(builtinModules.filter((name) => !name.startsWith('_')));
const root = findRepoRoot(__dirname);

/** One message per import of `source` (the file `file`, repository-relative) that the house does not allow. */
function violations(file: string, source: string): string[] {
  const part = partOf(file);
  if (!part) return [];
  const info = ts.preProcessFile(source, true, true);
  const out: string[] = [];
  const lineOf = (pos: number): number => source.slice(0, pos).split('\n').length;
  // `/// <reference types="node" />` depends on the host's typings as an import would.
  for (const imported of [...info.typeReferenceDirectives, ...info.importedFiles]) {
    const spec = imported.fileName;
    const at = `${file}:${lineOf(imported.pos)} imports '${spec}'`;
    if (spec.startsWith('.')) {
      const target = resolveTs(path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)));
      const why = forbiddenArrow(file, target);
      if (why) out.push(`${at}: ${why}`);
      continue;
    }
    const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
    if (spec === 'vscode') {
      if (!part.vscode) out.push(`${at}: ${part.name} may not use the VS Code API`);
    } else if (spec.startsWith('node:') || NODE_BUILTINS.has(pkg)) {
      if (!part.node) out.push(`${at}: ${part.name} may not use Node's builtins`);
    } else if (!(part.packages ?? []).includes(pkg)) {
      out.push(`${at}: ${part.name} may not import the package ${pkg} (it may import ${(part.packages ?? []).join(', ') || 'none'})`);
    }
  }
  return out;
}

/** `a/b` → `a/b.ts` or `a/b/index.ts`, as the compiler resolves it. */
function resolveTs(target: string): string {
  for (const candidate of [target, `${target}.ts`, `${target}/index.ts`]) {
    if (fs.existsSync(path.join(root, candidate)) && fs.statSync(path.join(root, candidate)).isFile()) return candidate;
  }
  return target;
}

function filesOf(dir: string): string[] {
  const full = path.join(root, dir);
  if (!fs.existsSync(full)) return [];
  return fs.readdirSync(full, { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) return filesOf(rel);
    return /\.ts$/.test(e.name) && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}


/** A source file's length may pass this only when it is data (a table of rules, a list). */
const MAX_SOURCE_LINES = 600;
/** Data files, which may be longer: tables, not logic. */
const DATA_FILES: ReadonlySet<string> = new Set(['src/core/secretRules.ts']);
/** A class keeps at most this many private fields (parameter properties included). */
const MAX_PRIVATE_FIELDS = 12;

/** Where a unit is too large to hold in a head: files over MAX_SOURCE_LINES, classes over MAX_PRIVATE_FIELDS private fields. */
function oversized(file: string, source: string): string[] {
  const out: string[] = [];
  const lines = source.split('\n').length - (source.endsWith('\n') ? 1 : 0);
  if (lines > MAX_SOURCE_LINES && !DATA_FILES.has(file)) out.push(`${file}: ${lines} lines (at most ${MAX_SOURCE_LINES} unless it is data)`);
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const isPrivate = (node: ts.Node): boolean => (ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.PrivateKeyword));
  const visit = (node: ts.Node): void => {
    if (ts.isClassLike(node)) {
      let fields = 0;
      for (const member of node.members) {
        if (ts.isPropertyDeclaration(member) && !ts.isFunctionLike(member.initializer ?? member) && (isPrivate(member) || ts.isPrivateIdentifier(member.name))) fields++;
        if (ts.isConstructorDeclaration(member)) fields += member.parameters.filter((p) => isPrivate(p)).length;
      }
      if (fields > MAX_PRIVATE_FIELDS) {
        const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
        out.push(`${file}:${line}: class ${node.name?.text ?? '(anonymous)'} has ${fields} private fields (at most ${MAX_PRIVATE_FIELDS})`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** The composition roots: each builds one redactor and passes it to everything that hides secrets. */
const COMPOSITION_ROOTS: readonly string[] = ['src/extension.ts', 'src/cli/main.ts', 'src/eval/main.ts', 'bench/main.ts'];
/** Where the redactor of the rule tables is declared; every other file sees it as the `Redactor` port. */
const REDACTOR_FILE = 'src/core/redact.ts';
const REDACTOR_CLASS = 'SecretRedactor';

/**
 * Where `source` (the file `file`, repository-relative) imports or constructs
 * the redactor though it is no composition root, or, in a root, how many it
 * builds when that is not one. Tests are outside the house: they build their own.
 */
function redactorsBuilt(file: string, source: string): string[] {
  if (!partOf(file) || file === REDACTOR_FILE) return [];
  const isRoot = COMPOSITION_ROOTS.includes(file);
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const at = (node: ts.Node): string => `${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;
  const out: string[] = [];
  let built = 0;
  const visit = (node: ts.Node): void => {
    if ((ts.isImportSpecifier(node) || ts.isExportSpecifier(node)) && (node.propertyName ?? node.name).text === REDACTOR_CLASS && !isRoot) {
      out.push(`${at(node)} imports ${REDACTOR_CLASS}: only a composition root builds the redactor, the others are given a Redactor`);
    }
    if (ts.isNewExpression(node) && (ts.isIdentifier(node.expression) ? node.expression : ts.isPropertyAccessExpression(node.expression) ? node.expression.name : undefined)?.text === REDACTOR_CLASS) {
      built++;
      if (!isRoot) out.push(`${at(node)} constructs ${REDACTOR_CLASS}: only a composition root builds the redactor (${COMPOSITION_ROOTS.join(', ')})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  if (isRoot && built !== 1) out.push(`${file}: a composition root builds one redactor, this one builds ${built}`);
  return out;
}

describe('the house', () => {
  it('every import is an arrow the house declares', () => {
    const files = ['src', 'webview', 'bench'].flatMap(filesOf);
    assert.ok(files.length > 50, `found only ${files.length} files`);
    const unplaced = files.filter((f) => !partOf(f) && f !== 'src/house.ts');
    assert.deepEqual(unplaced, [], 'every source file belongs to a part');
    const found = files.flatMap((f) => violations(f, fs.readFileSync(path.join(root, f), 'utf8')));
    assert.deepEqual(found, [], `imports outside the house:\n${found.join('\n')}`);
  });

  it('a wrong import fails with its file and line (self-check)', () => {
    const source = ["import * as vscode from 'vscode';", "import { KeeperAgent } from '../agent/participant';", "import { redact } from '../core/redact';", "import initSqlJs from 'sql.js';", "import { readFileSync } from 'node:fs';"].join('\n');
    assert.deepEqual(violations('src/panel/example.ts', source), [
      "src/panel/example.ts:2 imports '../agent/participant': panel may not import agent (panel imports core, adapters, protocol)",
      "src/panel/example.ts:4 imports 'sql.js': panel may not import the package sql.js (it may import none)",
    ]);
    assert.deepEqual(violations('src/core/example.ts', "import * as vscode from 'vscode';\nimport { x } from '../store/sqljs';"), [
      "src/core/example.ts:1 imports 'vscode': core may not use the VS Code API",
      "src/core/example.ts:2 imports '../store/sqljs': core may not import store (core imports no other part)",
    ]);
    assert.deepEqual(violations('src/commands/example.ts', "import { runAnswerProbes } from '../eval/answers';\nimport { parseProbeFile } from '../eval';"), [
      "src/commands/example.ts:1 imports '../eval/answers': eval is imported through src/eval/index.ts only",
    ]);
    assert.deepEqual(violations('test/unit/example.test.ts', "import { x } from '../../src/agent/participant';"), [], 'tests are outside the house');
  });

  it('the core imports nothing but the core and zod, in every form an import takes (self-check)', () => {
    const source = [
      '/// <reference types="node" />',
      "import type { Uri } from 'vscode';",
      "import { readFileSync } from 'node:fs';",
      "import * as path from 'path';",
      "import initSqlJs from 'sql.js';",
      "import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';",
      "export { helper } from '../store/helper';",
      "const cp = require('child_process');",
      "const lazy = import('lodash');",
      "type Lazy = import('crypto').Hash;",
      "import { z } from 'zod';",
      "import { y } from 'zod/v4';",
      "import { sha256Hex } from './hash';",
      "import { other } from './sub/../types';",
      "// import { commented } from 'fs';",
      "const text = \"import { inString } from 'os'\";",
    ].join('\n');
    const specifiers = violations('src/core/example.ts', source).map((v) => /imports '([^']+)'/.exec(v)?.[1]);
    assert.deepEqual(specifiers, ['node', 'vscode', 'node:fs', 'path', 'sql.js', 'gpt-tokenizer/encoding/o200k_base', '../store/helper', 'child_process', 'lodash', 'crypto']);
    assert.match(violations('src/core/example.ts', "import * as os from 'os';")[0] ?? '', /^src\/core\/example\.ts:1 imports 'os': core may not use Node's builtins$/);
  });

  it('every part imports only parts that exist, and nothing imports upward in a cycle of parts', () => {
    const names = new Set(HOUSE.map((p) => p.name));
    for (const p of HOUSE) for (const i of p.imports) assert.ok(names.has(i), `${p.name} imports unknown part ${i}`);
    const visiting = new Set<string>();
    const done = new Set<string>();
    const visit = (name: string, trail: string[]): void => {
      assert.ok(!visiting.has(name), `the arrows make a cycle: ${[...trail, name].join(' -> ')}`);
      if (done.has(name)) return;
      visiting.add(name);
      for (const next of HOUSE.find((p) => p.name === name)!.imports) visit(next, [...trail, name]);
      visiting.delete(name);
      done.add(name);
    };
    for (const p of HOUSE) visit(p.name, []);
  });

  it('every unit fits in a head: no source file over 600 lines unless it is data, no class with more than 12 private fields', () => {
    const files = ['src', 'webview', 'bench'].flatMap(filesOf);
    const found = files.flatMap((f) => oversized(f, fs.readFileSync(path.join(root, f), 'utf8')));
    assert.deepEqual(found, [], `units too large:\n${found.join('\n')}`);
  });

  it('a long file and a class with too many private fields are each named (self-check)', () => {
    const fields = Array.from({ length: 13 }, (_, i) => `  private f${i} = ${i};`).join('\n');
    const source = `export class Crowded {\n${fields}\n  private method(): void {}\n}\n${'// filler\n'.repeat(600)}`;
    assert.deepEqual(oversized('src/core/crowded.ts', source), [
      `src/core/crowded.ts: ${source.split('\n').length - 1} lines (at most 600 unless it is data)`,
      'src/core/crowded.ts:1: class Crowded has 13 private fields (at most 12)',
    ]);
    const twelve = `export class Fits {\n  constructor(private readonly a: number, public b: number) {}\n${Array.from({ length: 11 }, (_, i) => `  #g${i} = ${i};`).join('\n')}\n  private helper(): void {}\n}\n`;
    assert.deepEqual(oversized('src/core/fits.ts', twelve), []);
  });

  it('one redactor per composition root: no other source file constructs or imports SecretRedactor', () => {
    const files = ['src', 'webview', 'bench'].flatMap(filesOf);
    for (const entry of COMPOSITION_ROOTS) assert.ok(files.includes(entry), `the composition root ${entry} is missing`);
    const found = files.flatMap((f) => redactorsBuilt(f, fs.readFileSync(path.join(root, f), 'utf8')));
    assert.deepEqual(found, [], `redactors built outside the composition roots:\n${found.join('\n')}`);
  });

  it('a redactor built or imported outside a root is named with its file and line, and a root builds exactly one (self-check)', () => {
    assert.deepEqual(redactorsBuilt('src/core/fold.ts', "import { SecretRedactor } from './redact';\n// new SecretRedactor() in a comment\nconst text = 'new SecretRedactor()';\nconst r = new SecretRedactor();"), [
      'src/core/fold.ts:1 imports SecretRedactor: only a composition root builds the redactor, the others are given a Redactor',
      'src/core/fold.ts:4 constructs SecretRedactor: only a composition root builds the redactor (src/extension.ts, src/cli/main.ts, src/eval/main.ts, bench/main.ts)',
    ]);
    assert.deepEqual(redactorsBuilt('src/agent/example.ts', "import * as redaction from '../core/redact';\nconst r = new redaction.SecretRedactor();"), [
      'src/agent/example.ts:2 constructs SecretRedactor: only a composition root builds the redactor (src/extension.ts, src/cli/main.ts, src/eval/main.ts, bench/main.ts)',
    ]);
    assert.deepEqual(redactorsBuilt('src/panel/example.ts', "export { SecretRedactor as Hider } from '../core/redact';\nimport type { Redactor } from '../core/redact';"), [
      'src/panel/example.ts:1 imports SecretRedactor: only a composition root builds the redactor, the others are given a Redactor',
    ]);
    const built = "import { SecretRedactor } from '../core/redact';\nconst redactor = new SecretRedactor();";
    assert.deepEqual(redactorsBuilt('src/cli/main.ts', built), []);
    assert.deepEqual(redactorsBuilt('src/cli/main.ts', `${built}\nconst another = new SecretRedactor();`), ['src/cli/main.ts: a composition root builds one redactor, this one builds 2']);
    assert.deepEqual(redactorsBuilt('bench/main.ts', "import type { Redactor } from '../src/core/redact';"), ['bench/main.ts: a composition root builds one redactor, this one builds 0']);
    assert.deepEqual(redactorsBuilt('src/core/redact.ts', 'export class SecretRedactor {}\nconst r = new SecretRedactor();'), [], 'its own file declares it');
    assert.deepEqual(redactorsBuilt('test/unit/example.test.ts', built), [], 'tests are outside the house');
  });

  it("the README's architecture table is rendered from the declaration", () => {
    const readme = path.join(root, 'README.md');
    const text = fs.readFileSync(readme, 'utf8');
    const begin = '<!-- house:begin (rendered from src/house.ts; HOUSE_WRITE=1 npm run test:unit rewrites it) -->';
    const end = '<!-- house:end -->';
    const a = text.indexOf(begin);
    const b = text.indexOf(end);
    assert.ok(a >= 0 && b > a, 'README.md has the house markers');
    const rendered = `${begin}\n${renderHouse()}\n${end}`;
    if (process.env.HOUSE_WRITE === '1') fs.writeFileSync(readme, text.slice(0, a) + rendered + text.slice(b + end.length));
    else assert.equal(text.slice(a, b + end.length), rendered, 'README.md: the architecture table differs from src/house.ts');
  });
});

function findRepoRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'src'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json with a src folder above ${start}`);
  }
}
