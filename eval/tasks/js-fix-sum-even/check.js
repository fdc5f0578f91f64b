const assert = require("assert");
const path = require("path");
const { sumEven } = require(path.join(process.cwd(), "sum.js"));

assert.strictEqual(sumEven([2, 4, 10]), 16);
assert.strictEqual(sumEven([1, 3]), 0);
assert.strictEqual(sumEven([]), 0);
