'use strict';
/**
 * Mocha's Spec reporter plus one closing line that CI reads, alone on its line:
 *
 *   N passed, N failed            (", N skipped" is added when tests are pending)
 *
 * "failed" is Mocha's failure count, so a failing hook counts too. The line is
 * printed without colours after the usual epilogue.
 */
const Mocha = require('mocha');

const { Spec, Base } = Mocha.reporters;
const { EVENT_RUN_END } = Mocha.Runner.constants;

class SpecWithTotals extends Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      Base.consoleLog(totalsLine(this.stats));
    });
  }
}

/** @param {{ passes?: number, failures?: number, pending?: number }} stats */
function totalsLine(stats) {
  const passed = stats.passes || 0;
  const failed = stats.failures || 0;
  const skipped = stats.pending || 0;
  return `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`;
}

module.exports = SpecWithTotals;
module.exports.totalsLine = totalsLine;
