// Builds the bundles in dist/.
//   node esbuild.mjs                   every config
//   node esbuild.mjs extension cli     only the named ones
// Types are checked separately (`tsc --noEmit`, see `npm run build`).
import { build } from 'esbuild';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const dist = join(root, 'dist');

/** Options every bundle shares. */
const common = {
  bundle: true,
  sourcemap: true,
  minify: false,
  logLevel: 'warning',
  absWorkingDir: root,
};

/** Options for the bundles that run in Node (the extension host is Node too). */
const node = { ...common, platform: 'node', format: 'cjs', target: 'node20' };

/**
 * The named configs. `optional` entries are skipped with a notice while their
 * entry file does not exist yet; once it exists it must build. `before` builds
 * what the entry needs first and returns the options to build it with.
 */
const configs = {
  extension: {
    // The extension's modules (dist/extension/, see extensionModules), then its main, src/loader.ts, which loads them
    // one at a time; the list it loads them from is written into it. Minified: it is what the .vsix ships (source maps
    // stay in dist/ for debugging, outside the package). The tokenizer's rank table is a data file of its own
    // (dist/o200k.ranks), built in slices after activation. `navigator` is undefined in the modules: the extension host
    // is Node, where reading the global logs a deprecation warning at activation (zod probes it for Cloudflare Workers,
    // sql.js for the user's language). zod is its functional build (src/core/schema.ts): the modules keep only the
    // parts used.
    options: { ...node, entryPoints: ['src/loader.ts'], outfile: 'dist/extension.js', external: ['vscode'], minify: true },
    before: async (options) => ({ ...options, define: { __EXTENSION_MODULES__: JSON.stringify(await extensionModules()) } }),
  },
  cli: {
    options: { ...node, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' }, define: { __CONTEXT_KEEPER_VERSION__: JSON.stringify(version) } },
    after: () => chmodSync(join(dist, 'cli.js'), 0o755),
  },
  bench: {
    options: { ...node, entryPoints: ['bench/main.ts'], outfile: 'dist/bench.js' },
  },
  eval: {
    options: { ...node, entryPoints: ['src/eval/main.ts'], outfile: 'dist/eval.js' },
  },
  webview: {
    // The Task Context panel's browser code and its stylesheet; the codicon font ships beside them.
    options: { ...common, platform: 'browser', format: 'iife', target: 'es2022', entryPoints: ['webview/main.ts'], outfile: 'dist/webview.js' },
    optional: true,
    after: () => copyWebviewAssets(),
  },
};

/** Source files of at least this many bytes start a module of the extension's own (see extensionModules). */
const MODULE_SOURCE_BYTES = 15_000;

/**
 * dist/extension/: the extension (src/extension.ts and all it imports) as ES
 * modules, split at every source file of MODULE_SOURCE_BYTES or more (each an
 * entry point, so that esbuild's code splitting gives it and what only it
 * reaches a module of its own): about 40 modules of at most 85 KB. Returns their
 * file names in load order, dependencies first, the composition root last
 * (src/loader.ts imports them one at a time). Only the modules the root
 * reaches are written, over what an earlier build left.
 *
 * Each module's `require` is Node's, made for that file (sql.js requires its
 * builtins, and 'vscode' is required: the host gives an extension its API
 * object by the file asking for it), and its `__dirname` is dist/, where the
 * data files the sources look for beside the bundle are.
 */
async function extensionModules() {
  const out = join(dist, 'extension');
  // esbuild's metafile names files from the root with forward slashes, on Windows too.
  const fromRoot = (file) => relative(root, file).split(sep).join('/');
  const entries = sourceFiles(join(root, 'src'))
    .map(fromRoot)
    .filter((file) => !file.startsWith('src/cli/') && file !== 'src/loader.ts' && file !== 'src/extension.ts')
    // An entry point keeps every export: a file that re-exports a package (schema.ts, zod) would keep all of it.
    .filter((file) => statSync(join(root, file)).size >= MODULE_SOURCE_BYTES && !/^export \* from '[^.]/m.test(readFileSync(join(root, file), 'utf8')));
  const result = await build({
    ...common,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    splitting: true,
    minify: true,
    write: false,
    metafile: true,
    entryPoints: ['src/extension.ts', ...entries.sort()],
    outbase: 'src',
    outdir: out,
    outExtension: { '.js': '.mjs' },
    chunkNames: '[name]-[hash]',
    external: ['vscode'],
    define: { navigator: 'undefined' },
    banner: {
      js: "import{createRequire as __ckRequire}from'node:module';import{dirname as __ckDirname}from'node:path';import{fileURLToPath as __ckPath}from'node:url';const require=__ckRequire(import.meta.url);const __dirname=__ckDirname(__ckDirname(__ckPath(import.meta.url)));",
    },
    plugins: [tokenizerTableOnly(), vscodeApiOnce()],
  });
  const outputs = result.metafile.outputs;
  const order = [];
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const imported of outputs[file].imports) if (imported.kind === 'import-statement' && imported.path in outputs) visit(imported.path);
    order.push(file);
  };
  visit(fromRoot(join(out, 'extension.mjs')));
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const keep = new Set(order.flatMap((file) => [join(root, file), join(root, `${file}.map`)]));
  for (const file of result.outputFiles) if (keep.has(file.path)) writeFileSync(file.path, file.contents);
  return order.map((file) => relative(out, join(root, file)));
}

/**
 * The extension counts with the rank table (dist/o200k.ranks, see
 * writeRankTable), never with gpt-tokenizer's 2.8 MB module of tables: the
 * module's import (the counter's fallback for a build without the table, as in
 * the unit tests) becomes a module that says what is missing.
 */
function tokenizerTableOnly() {
  return {
    name: 'tokenizer-table-only',
    setup(b) {
      b.onResolve({ filter: /^gpt-tokenizer\/cjs\/encoding\/o200k_base$/ }, (args) => ({ path: args.path, namespace: 'no-tokenizer-module' }));
      b.onLoad({ filter: /.*/, namespace: 'no-tokenizer-module' }, () => ({
        contents: "throw new Error(\"Context Keeper's tokenizer table dist/o200k.ranks is missing from this build: run npm run build\");",
        loader: 'js',
      }));
    },
  };
}

/**
 * `import * as vscode from 'vscode'`, written by 20 source modules, becomes
 * one module that requires the API (an external CommonJS module, given to the
 * file that asks for it) once and reads the properties the sources use (every
 * `vscode.<name>` in src/). Bundled as CommonJS, each importing module made a
 * copy of the whole API object with a getter per property while the bundle
 * loaded (10-20 ms of activation's block in the extension host, measured with
 * a CPU profile); as ES modules, an import of 'vscode' would need the host's
 * ES module hooks, which VS Code has had since 1.100 only.
 */
function vscodeApiOnce() {
  return {
    name: 'vscode-api-once',
    setup(b) {
      b.onResolve({ filter: /^vscode$/ }, (args) => (args.kind === 'import-statement' ? { path: 'vscode', namespace: 'vscode-api-once' } : undefined));
      b.onLoad({ filter: /.*/, namespace: 'vscode-api-once' }, () => {
        const names = new Set();
        for (const file of sourceFiles(join(root, 'src'))) {
          for (const match of readFileSync(file, 'utf8').matchAll(/\bvscode\.([A-Za-z_$][\w$]*)/g)) names.add(match[1]);
        }
        const list = [...names].sort();
        return { contents: `const api = require('vscode');\nexport const { ${list.join(', ')} } = api;\n`, loader: 'js', resolveDir: root };
      });
    },
  };
}

/** Every .ts file under `dir`. */
function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    return entry.name.endsWith('.ts') ? [file] : [];
  });
}

/**
 * dist/o200k.ranks: the tokenizer's rank table as data (JSON arrays of 2,000
 * ranks a line), which the extension and the CLI read off the event loop and
 * build in slices (src/adapters/o200kTokenCounter.ts) instead of parsing
 * gpt-tokenizer's module of tables in one block.
 */
function writeRankTable() {
  const ranks = createRequire(import.meta.url)('gpt-tokenizer/cjs/bpeRanks/o200k_base').default;
  const lines = [];
  for (let i = 0; i < ranks.length; i += 2000) lines.push(JSON.stringify(ranks.slice(i, i + 2000)));
  writeFileSync(join(dist, 'o200k.ranks'), lines.join('\n'));
  log(`wrote dist/o200k.ranks (${ranks.length} ranks)`);
}

/** The panel's stylesheet and the codicon font (no remote resources in a webview). */
function copyWebviewAssets() {
  for (const [from, to] of [
    ['webview/styles.css', 'webview.css'],
    ['node_modules/@vscode/codicons/dist/codicon.css', 'codicon.css'],
    ['node_modules/@vscode/codicons/dist/codicon.ttf', 'codicon.ttf'],
  ]) {
    if (!existsSync(join(root, from))) continue;
    copyFileSync(join(root, from), join(dist, to));
  }
}

/** sql.js loads its WebAssembly from beside the bundle (`locateFile`). */
function copySqlWasm() {
  const source = join(root, 'node_modules', 'sql.js', 'dist', 'sql-wasm.wasm');
  copyFileSync(source, join(dist, 'sql-wasm.wasm'));
  chmodSync(join(dist, 'sql-wasm.wasm'), 0o644);
  log(`copied ${relative(root, source)} -> dist/sql-wasm.wasm`);
}

/** `--quiet`: nothing is printed but errors (npm start builds before it shows its result). */
let quiet = false;
const log = (line) => {
  if (!quiet) console.log(line);
};

async function main(argv) {
  quiet = argv.includes('--quiet');
  const args = argv.filter((a) => a !== '--quiet');
  const unknown = args.filter((name) => !(name in configs));
  if (unknown.length > 0) {
    console.error(`esbuild.mjs: unknown config ${unknown.join(', ')} (known: ${Object.keys(configs).join(', ')})`);
    return 2;
  }
  const names = args.length > 0 ? [...new Set(args)] : Object.keys(configs);
  mkdirSync(dist, { recursive: true });

  let failed = false;
  await Promise.all(names.map(async (name) => {
    const { options: declared, optional, before, after } = configs[name];
    const entry = declared.entryPoints[0];
    if (optional && !existsSync(join(root, entry))) {
      log(`skipped ${name}: ${entry} does not exist yet`);
      return;
    }
    const started = performance.now();
    try {
      const options = before ? await before(declared) : declared;
      await build(options);
      after?.();
      log(`built ${name}: ${entry} -> ${declared.outfile} (${Math.round(performance.now() - started)} ms)`);
    } catch {
      // esbuild has already printed the errors.
      console.error(`failed ${name}: ${entry}`);
      failed = true;
    }
  }));
  copySqlWasm();
  writeRankTable();
  return failed ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
