'use strict';
const assert = require('node:assert');
const { add, multiply } = require('./src/math');

assert.strictEqual(add(2, 3), 5);
assert.strictEqual(multiply(4, 5), 20);
console.log('2 passed, 0 failed');
