/**
 * The test entry point the extension host calls (`extensionTestsPath`, see
 * test/integration/runVsCode.mjs): runs every `out/test/integration/**\/*.test.js`
 * under mocha inside the real VS Code.
 *
 * Output goes through `console`, which the workbench forwards to the page's
 * `codeAutomationLog`; the runner counts the lines this reporter prints:
 *
 *   PASS <full title> (<ms> ms)
 *   FAIL <full title>           followed by the error, indented
 *   SKIP <full title>
 *   MEASURE <text>              a number a test measured, printed by the runner as it is
 *   host tests: N passed, N failed, N skipped
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';

/** Prefix of the totals line; runVsCode.mjs reads it. */
export const TOTALS_PREFIX = 'host tests:';

const { EVENT_RUN_END, EVENT_TEST_FAIL, EVENT_TEST_PASS, EVENT_TEST_PENDING } = Mocha.Runner.constants;

/** Same rule as test/.mocharc.js: a stray `.only` fails CI but stays usable locally. */
function isCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && !['', '0', 'false'].includes(ci.toLowerCase());
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}

class LineReporter extends Mocha.reporters.Base {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    runner.on(EVENT_TEST_PASS, (test) => console.log(`PASS ${test.fullTitle()} (${test.duration ?? 0} ms)`));
    runner.on(EVENT_TEST_PENDING, (test) => console.log(`SKIP ${test.fullTitle()}`));
    runner.on(EVENT_TEST_FAIL, (test, error: Error) => {
      console.log(`FAIL ${test.fullTitle()}\n${indent(error.stack ?? String(error))}`);
    });
    runner.once(EVENT_RUN_END, () => {
      const { passes, failures, pending } = this.stats;
      console.log(`${TOTALS_PREFIX} ${passes} passed, ${failures} failed, ${pending} skipped`);
    });
  }
}

function findTestFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) return findTestFiles(file);
      return entry.isFile() && entry.name.endsWith('.test.js') ? [file] : [];
    })
    .sort();
}

export async function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 60_000, forbidOnly: isCi(), color: false, reporter: LineReporter });
  // `runVsCode.mjs --grep PATTERN` reaches the extension host through the environment.
  const grep = process.env.CONTEXT_KEEPER_TEST_GREP;
  if (grep) mocha.grep(grep);
  const files = findTestFiles(__dirname);
  if (files.length === 0) throw new Error(`no *.test.js files under ${__dirname}`);
  for (const file of files) mocha.addFile(file);
  await mocha.loadFilesAsync();
  const failures = await new Promise<number>((resolve) => mocha.run(resolve));
  if (failures > 0) throw new Error(`${failures} integration test${failures === 1 ? '' : 's'} failed`);
}
