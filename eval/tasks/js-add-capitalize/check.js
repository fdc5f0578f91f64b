const assert = require("assert");
const path = require("path");
const strings = require(path.join(process.cwd(), "strings.js"));

assert.strictEqual(typeof strings.capitalize, "function", "capitalize is not exported");
assert.strictEqual(strings.capitalize("hello"), "Hello");
assert.strictEqual(strings.capitalize("hello world"), "Hello world");
assert.strictEqual(strings.reverse("abc"), "cba");
