/**
 * The .vsix is lean (issue 16): the extension minified, no source map and no
 * CLI inside, at most 2 MB. Packs the built extension with the pinned vsce
 * into a temporary folder (run after `npm run build`, as `npm test` does). The
 * extension is its main (dist/extension.js, src/loader.ts) and the modules it
 * loads one at a time (dist/extension/, issue 14): each small, each listed
 * after the modules it imports.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const root = path.resolve(__dirname, '../../..');
const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');

describe('the .vsix', function () {
  this.timeout(120_000);

  it('holds what runs, minified, without the CLI or source maps, in at most 2 MB', function () {
    if (!existsSync(path.join(root, 'dist', 'extension.js'))) this.skip();
    const listed = execFileSync(process.execPath, [vsce, 'ls', '--no-dependencies'], { cwd: root, encoding: 'utf8' }).trim().split('\n');
    assert.ok(listed.includes('dist/extension.js'), listed.join(', '));
    for (const file of loadOrder()) assert.ok(listed.includes(`dist/extension/${file}`), `dist/extension/${file} is not in the .vsix`);
    assert.ok(!listed.some((f) => f.endsWith('.map') || f === 'dist/cli.js' || f.startsWith('src/') || f.startsWith('test/')), listed.join(', '));
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'ck-vsix-')), 'context-keeper.vsix');
    execFileSync(process.execPath, [vsce, 'package', '--no-dependencies', '--no-rewrite-relative-links', '--out', out], { cwd: root, encoding: 'utf8', stdio: 'pipe' });
    const bytes = statSync(out).size;
    assert.ok(bytes <= 2 * 1024 * 1024, `the .vsix is ${(bytes / 1048576).toFixed(2)} MB`);
    // Minified: the modules together are far smaller than their source.
    const bundle = loadOrder().reduce((sum, file) => sum + statSync(path.join(modules, file)).size, 0);
    assert.ok(bundle < 1024 * 1024, `dist/extension/ holds ${(bundle / 1048576).toFixed(2)} MB of modules`);
  });

  it('loads the extension a small module at a time, every module after the modules it imports, the composition root last', function () {
    if (!existsSync(path.join(root, 'dist', 'extension.js'))) this.skip();
    const order = loadOrder();
    assert.equal(order.at(-1), 'extension.mjs');
    assert.deepEqual([...order].sort(), readdirSync(modules).filter((f) => f.endsWith('.mjs')).sort(), 'dist/extension/ holds exactly the modules loaded');
    for (const [i, file] of order.entries()) {
      const text = readFileSync(path.join(modules, file), 'utf8');
      assert.ok(text.length <= MODULE_MAX_BYTES, `dist/extension/${file} is ${text.length} bytes (at most ${MODULE_MAX_BYTES}: it is compiled in one block)`);
      for (const [, imported] of text.matchAll(/(?:from|import)\s*"\.\/([^"]+)"/g)) {
        assert.ok(order.indexOf(imported!) >= 0 && order.indexOf(imported!) < i, `dist/extension/${file} imports ${imported} before it is loaded`);
      }
    }
  });
});

const modules = path.join(root, 'dist', 'extension');
/** A module compiles and runs in one block of the extension host (about 6 ms for 85 KB on the 2-core machine). */
const MODULE_MAX_BYTES = 120 * 1024;

/** The modules dist/extension.js loads, in its order (written into it by esbuild.mjs). */
function loadOrder(): string[] {
  const main = readFileSync(path.join(root, 'dist', 'extension.js'), 'utf8');
  const list = /(\["[^\]]*\.mjs"\])/.exec(main);
  assert.ok(list, 'dist/extension.js names the modules it loads');
  return JSON.parse(list[1]!) as string[];
}
