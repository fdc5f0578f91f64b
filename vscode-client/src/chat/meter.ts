import type { ContextMeter, MeterLevel } from '../shared/protocol';

export const WARN_BACKGROUND = 'statusBarItem.warningBackground';
export const ERROR_BACKGROUND = 'statusBarItem.errorBackground';

const SEVERITY: Record<MeterLevel, number> = { ok: 0, warn: 1, critical: 2 };

/** Level from the numbers: warn from 2/3 of the threshold, critical from 90% (design.md). */
export function levelFor(tokens: number, threshold: number): MeterLevel {
  if (!(threshold > 0)) return 'ok';
  if (tokens >= 0.9 * threshold) return 'critical';
  if (3 * tokens >= 2 * threshold) return 'warn';
  return 'ok';
}

/** The more severe of the server's level and the one the numbers give: the meter never under-warns. */
export function effectiveLevel(meter: ContextMeter): MeterLevel {
  const computed = levelFor(meter.tokens, meter.threshold);
  const reported = meter.level in SEVERITY ? meter.level : 'ok';
  return SEVERITY[computed] >= SEVERITY[reported] ? computed : reported;
}

export function backgroundFor(level: MeterLevel): string | undefined {
  if (level === 'critical') return ERROR_BACKGROUND;
  if (level === 'warn') return WARN_BACKGROUND;
  return undefined;
}

/** Reference formatUsd: 0 → $0.00; < 0.01 → 4 decimals; else 2 decimals. */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0.00';
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

const grouped = (n: number): string => Math.round(n).toLocaleString('en-US');

/** "local model" for a model on this machine, "unpriced model" for one with no known price. */
export function costLabel(costUsd: number | null | undefined, local: boolean | undefined): string {
  if (costUsd !== null && costUsd !== undefined && !(local && costUsd === 0)) return formatUsd(costUsd);
  return local ? 'local model' : 'unpriced model';
}

export const WILL_COMPACT_TIP =
  'The conversation no longer fits: the next request will be compacted first ' +
  '(a summary in place of the earlier messages; Undo in the chat)';

export interface MeterView {
  text: string;
  tooltip: string;
  background: string | undefined;
  level: MeterLevel;
}

export function meterView(meter: ContextMeter, costUsd: number | null | undefined, messages?: number): MeterView {
  if (messages === 0) {
    // before the first message there is nothing to measure or compact (only the system prompt)
    return {
      text: '$(pulse) Shiro',
      tooltip: 'Shiro: ready. Click to open the chat. The context meter starts with the first message.',
      background: undefined,
      level: 'ok',
    };
  }
  const level = effectiveLevel(meter);
  const percent = Math.round(meter.percent);
  const icon = level === 'critical' ? '$(warning)' : '$(pulse)';
  const cost = costLabel(costUsd, meter.local);
  const tooltip = [
    `Shiro context: ${grouped(meter.tokens)} / ${grouped(meter.threshold)} tokens (${percent}%)`,
    meter.estimated ? 'Estimated (counted locally)' : 'Measured (reported by the provider)',
    `Session cost: ${cost}`,
    meter.willCompact ? WILL_COMPACT_TIP : level === 'ok' ? '' : 'Context is filling up: /compact summarises it now',
    'Click to open the chat',
  ]
    .filter(Boolean)
    .join('\n');
  const text = `${icon} Shiro ${percent}%${meter.willCompact ? ' \u00b7 will be compacted' : ''}`;
  return { text, tooltip, background: backgroundFor(level), level };
}
