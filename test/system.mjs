#!/usr/bin/env node
// The system packages the tests need on Debian, checked before any test runs
// (`npm test` runs this first; `.ci/run` too). The webview tests and the VS Code
// tests drive headless Chromium; installing code-server builds native modules
// (kerberos, node-pty, spdlog, sqlite3) with node-gyp: a compiler, make,
// python3, pkg-config and the Kerberos headers.
//
//   node test/system.mjs     installs the missing packages as root (apt-get);
//                            otherwise prints the one command to run and exits 1
//
// On a machine without dpkg (not Debian) it says what is needed and goes on:
// the tests name what they miss. CONTEXT_KEEPER_CHROMIUM points the tests at
// another Chromium; then the chromium package is not required.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const APT_PACKAGES = ['chromium', 'fonts-liberation', 'fonts-dejavu-core', 'libkrb5-dev', 'pkg-config', 'build-essential', 'python3'];

function installed(name) {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.includes('install ok installed');
}

function main() {
  const wanted = APT_PACKAGES.filter((p) => !(p === 'chromium' && process.env.CONTEXT_KEEPER_CHROMIUM && existsSync(process.env.CONTEXT_KEEPER_CHROMIUM)));
  if (spawnSync('dpkg-query', ['--version']).status !== 0) {
    console.log(`system packages: no dpkg on this machine; the tests need ${wanted.join(', ')} (or their equivalents) and Chromium at /usr/bin/chromium or $CONTEXT_KEEPER_CHROMIUM.`);
    return 0;
  }
  const missing = wanted.filter((p) => !installed(p));
  if (missing.length === 0) return 0;
  const command = `apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}`;
  if (process.getuid?.() !== 0) {
    console.error(`The tests need these Debian packages, which are missing: ${missing.join(', ')}.\nInstall them first (as root), then run the tests again:\n\n  sudo sh -c '${command}'\n`);
    return 1;
  }
  console.log(`system packages: installing ${missing.join(' ')} (apt-get, as root)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update', '-q'], ['install', '-y', '-q', '--no-install-recommends', ...missing]]) {
    const r = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (r.status !== 0) {
      console.error(`apt-get ${args[0]} failed (exit ${r.status}); install ${missing.join(' ')} by hand, then run the tests again.`);
      return 1;
    }
  }
  return 0;
}

process.exitCode = main();
