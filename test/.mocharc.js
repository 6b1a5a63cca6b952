'use strict';
// Unit tests run compiled: `tsc -p tsconfig.json` writes them to out/ (see `npm test`).
// A JavaScript config rather than JSON because `forbidOnly` depends on CI:
// a stray `.only` must fail CI, but stays usable locally.
const path = require('node:path');

const ci = process.env.CI !== undefined && !['', '0', 'false'].includes(process.env.CI.toLowerCase());

module.exports = {
  spec: ['out/test/unit/**/*.test.js'],
  timeout: 20000,
  reporter: path.join(__dirname, 'reporter.js'),
  forbidOnly: ci,
};
