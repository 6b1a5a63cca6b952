/**
 * The core is a pure engine: it runs under plain mocha and in any host. Every
 * .ts file under src/core may import other files of src/core and `zod`, nothing
 * else: not 'vscode', not Node (`node:*` or a bare builtin such as 'fs'), not
 * sql.js, not gpt-tokenizer (the o200k counter is an adapter behind the
 * TokenCounter port), not any other package.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import * as ts from 'typescript';

/** Packages the core may import, with their subpaths (`zod/v4`). */
const ALLOWED_PACKAGES = ['zod'];

const NODE_BUILTINS = new Set(builtinModules.filter((name) => !name.startsWith('_')));

const repoRoot = findRepoRoot(__dirname);
const coreDir = path.join(repoRoot, 'src', 'core');

describe('layering: src/core', () => {
  it('imports nothing but src/core and zod', () => {
    const files = listTypeScriptFiles(coreDir);
    assert.ok(files.length > 0, `no .ts files found under ${coreDir}`);
    const violations = files.flatMap((file) => findViolations(file, fs.readFileSync(file, 'utf8')));
    assert.deepEqual(violations, [], `src/core must stay free of host dependencies:\n${violations.join('\n')}`);
  });

  it('detects every kind of forbidden import (self-check of the scanner)', () => {
    const file = path.join(coreDir, 'example.ts');
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
    const specifiers = findViolations(file, source).map((v) => /imports '([^']+)'/.exec(v)?.[1]);
    assert.deepEqual(specifiers, [
      'node', 'vscode', 'node:fs', 'path', 'sql.js', 'gpt-tokenizer/encoding/o200k_base', '../store/helper', 'child_process', 'lodash', 'crypto',
    ]);
    assert.match(findViolations(file, "import * as os from 'os';")[0] ?? '', /^src\/core\/example\.ts imports 'os' \(a Node builtin\)/);
  });
});

/** One message per forbidden import in `source`, naming the file and the import. */
function findViolations(file: string, source: string): string[] {
  const info = ts.preProcessFile(source, true, true);
  const relativeFile = path.relative(repoRoot, file).split(path.sep).join('/');
  const violations: string[] = [];
  for (const reference of info.typeReferenceDirectives) {
    violations.push(`${relativeFile} imports '${reference.fileName}' (a /// <reference types> directive): the core may not depend on host typings`);
  }
  for (const imported of [...info.referencedFiles, ...info.importedFiles]) {
    const reason = forbiddenBecause(file, imported.fileName);
    if (reason) violations.push(`${relativeFile} imports '${imported.fileName}' (${reason})`);
  }
  return violations;
}

/** Why `specifier`, imported from `file`, is not allowed in the core; undefined if it is. */
function forbiddenBecause(file: string, specifier: string): string | undefined {
  if (specifier.startsWith('.') || path.isAbsolute(specifier)) {
    const target = path.resolve(path.dirname(file), specifier);
    return target === coreDir || target.startsWith(coreDir + path.sep) ? undefined : 'a file outside src/core';
  }
  const packageName = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
  if (ALLOWED_PACKAGES.includes(packageName)) return undefined;
  if (specifier === 'vscode') return "the VS Code API: only src/extension.ts and the adapters around the core may use it";
  if (specifier.startsWith('node:') || NODE_BUILTINS.has(packageName)) return 'a Node builtin';
  if (packageName === 'sql.js') return 'persistence belongs in src/store, behind an interface the core defines';
  if (packageName === 'gpt-tokenizer') return 'token counting is an adapter (src/adapters) behind the TokenCounter port';
  return `a package other than ${ALLOWED_PACKAGES.join(', ')}`;
}

function listTypeScriptFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return listTypeScriptFiles(full);
    return /\.(c|m)?ts$/.test(entry.name) ? [full] : [];
  }).sort();
}

/** The directory holding package.json, from wherever this file was compiled to. */
function findRepoRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'src'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json with a src folder above ${start}`);
  }
}
