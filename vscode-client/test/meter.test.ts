import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ERROR_BACKGROUND, WARN_BACKGROUND, formatUsd, levelFor, meterView } from '../src/chat/meter';
import type { ContextMeter } from '../src/shared/protocol';

const meter = (tokens: number, threshold = 90_000, extra: Partial<ContextMeter> = {}): ContextMeter => ({
  tokens,
  threshold,
  percent: (100 * tokens) / threshold,
  level: 'ok',
  estimated: true,
  ...extra,
});

test('no colour below 2/3 of the threshold, amber from 2/3, red from 90%', () => {
  assert.equal(meterView(meter(59_999), 0).background, undefined);
  assert.equal(meterView(meter(60_000), 0).background, WARN_BACKGROUND); // exactly 2/3
  assert.equal(meterView(meter(80_999), 0).background, WARN_BACKGROUND);
  assert.equal(meterView(meter(81_000), 0).background, ERROR_BACKGROUND); // exactly 90%
  assert.equal(meterView(meter(120_000), 0).background, ERROR_BACKGROUND);
});

test('levelFor with a zero threshold never warns', () => {
  assert.equal(levelFor(100, 0), 'ok');
});

test("the server's level wins when it is more severe (the meter never under-warns)", () => {
  assert.equal(meterView(meter(10, 90_000, { level: 'critical' }), 0).background, ERROR_BACKGROUND);
  assert.equal(meterView(meter(10, 90_000, { level: 'warn' }), 0).background, WARN_BACKGROUND);
});

test('text shows the rounded percent', () => {
  assert.equal(meterView(meter(30_000, 90_000), null).text, '$(pulse) Shiro 33%');
  assert.match(meterView(meter(85_000, 90_000), null).text, /\$\(warning\) Shiro 94%/);
});

test('tooltip has tokens, threshold, estimate or measured, and session cost', () => {
  const est = meterView(meter(12_345, 100_000), 0.005).tooltip;
  assert.match(est, /12,345 \/ 100,000 tokens \(12%\)/);
  assert.match(est, /Estimated/);
  assert.match(est, /Session cost: \$0\.0050/);
  const measured = meterView(meter(50_000, 100_000, { estimated: false }), 1.239).tooltip;
  assert.match(measured, /Measured/);
  assert.match(measured, /Session cost: \$1\.24/);
  assert.match(meterView(meter(1, 100), null).tooltip, /Session cost: unpriced model/);
});

test('a model on a local endpoint is a local model, not an unpriced one', () => {
  assert.match(meterView(meter(1, 100, { local: true }), null).tooltip, /Session cost: local model/);
  assert.match(meterView(meter(1, 100, { local: true }), 0).tooltip, /Session cost: local model/);
  assert.match(meterView(meter(1, 100, { local: false }), null).tooltip, /Session cost: unpriced model/);
});

test('formatUsd follows the reference', () => {
  assert.equal(formatUsd(0), '$0.00');
  assert.equal(formatUsd(0.005), '$0.0050');
  assert.equal(formatUsd(1.2449), '$1.24');
});

test('before the first message the meter shows no percentage and offers no compaction', () => {
  const v = meterView({ tokens: 2_000, threshold: 100_000, percent: 2, level: 'ok', estimated: true }, 0, 0);
  assert.equal(v.text, '$(pulse) Shiro');
  assert.doesNotMatch(v.tooltip, /compact/i);
  assert.match(
    meterView({ tokens: 2_000, threshold: 100_000, percent: 2, level: 'ok', estimated: true }, 0, 3).text,
    /2%/,
  );
});

test('the meter says when the next request will be compacted, before it happens', () => {
  const full = meterView(meter(89_000, 90_000, { willCompact: true }), 0, 12);
  assert.match(full.text, /will be compacted/);
  assert.match(full.tooltip, /next request will be compacted/);
  const roomy = meterView(meter(10_000, 90_000), 0, 12);
  assert.doesNotMatch(roomy.text, /compacted/);
  assert.match(roomy.tooltip, /open the chat/);
});
