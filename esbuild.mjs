// Builds the bundles in dist/.
//   node esbuild.mjs                   every config
//   node esbuild.mjs extension cli     only the named ones
// Types are checked separately (`tsc --noEmit`, see `npm run build`).
import { build } from 'esbuild';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
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
 * entry file does not exist yet; once it exists it must build.
 */
const configs = {
  extension: {
    // Minified: it is what the .vsix ships (its source map stays in dist/ for debugging, outside the package).
    // The tokenizer's rank table is a data file of its own (dist/o200k.ranks), built in slices after activation.
    // `navigator` is undefined in it: the extension host is Node, where reading the global logs a deprecation
    // warning at activation (zod probes it for Cloudflare Workers, sql.js for the user's language). zod is its
    // functional build (src/core/schema.ts): the bundle keeps only the parts used.
    options: { ...node, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'], minify: true, define: { navigator: 'undefined' }, plugins: [tokenizerTableOnly(), vscodeApiOnce()] },
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
 * `import * as vscode from 'vscode'` (an external CommonJS module) becomes, in
 * each of the 20 modules that write it, a copy of the whole API object made
 * with a getter per property while the bundle loads (10-20 ms of the
 * activation's block in the extension host, measured with a CPU profile).
 * Here every one of them imports one module instead, which reads the API's
 * properties the sources use (every `vscode.<name>` in src/) once.
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
    const { options, optional, after } = configs[name];
    const entry = options.entryPoints[0];
    if (optional && !existsSync(join(root, entry))) {
      log(`skipped ${name}: ${entry} does not exist yet`);
      return;
    }
    const started = performance.now();
    try {
      await build(options);
      after?.();
      log(`built ${name}: ${entry} -> ${options.outfile} (${Math.round(performance.now() - started)} ms)`);
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
