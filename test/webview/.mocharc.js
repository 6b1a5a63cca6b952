'use strict';
// The panel's tests in headless Chromium (playwright-core, /usr/bin/chromium or $CHROMIUM_PATH).
// They run compiled and need the webview bundle:
//   npx tsc -p tsconfig.json && node esbuild.mjs webview && npx mocha --config test/webview/.mocharc.js
const path = require('node:path');

const ci = process.env.CI !== undefined && !['', '0', 'false'].includes(process.env.CI.toLowerCase());

module.exports = {
  spec: ['out/test/webview/*.test.js'],
  timeout: 30000,
  reporter: path.join(__dirname, '..', 'reporter.js'),
  forbidOnly: ci,
};
