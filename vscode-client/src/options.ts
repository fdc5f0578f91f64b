import type { InitializationOptions, ToolCallFormat } from './protocol';

/** Settings + the SecretStorage key → initializationOptions (empty values left out: the server's defaults apply). */
export function initializationOptions(
  cfg: { get<T>(key: string): T | undefined }, apiKey: string | undefined, trusted: boolean,
): InitializationOptions {
  const text = (key: string): string | undefined => {
    const v = cfg.get<string>(key);
    return typeof v === 'string' && v.trim() ? v.trim() : undefined;
  };
  const options: InitializationOptions = { trusted, api: (text('api') as InitializationOptions['api']) ?? 'auto' };
  const model = text('model'); if (model) options.model = model;
  const baseUrl = text('baseUrl'); if (baseUrl) options.baseUrl = baseUrl;
  const home = text('home'); if (home) options.home = home;
  const threshold = cfg.get<number | null>('compactThreshold');
  if (typeof threshold === 'number' && threshold > 0) options.compactThreshold = threshold;
  const memory = cfg.get<boolean>('memory'); if (typeof memory === 'boolean') options.memory = memory;
  const timeout = cfg.get<number>('approvalTimeoutMs'); if (typeof timeout === 'number' && timeout > 0) options.approvalTimeoutMs = timeout;
  const sandbox = text('bashSandbox');
  if (sandbox === 'off' || sandbox === 'auto' || sandbox === 'required') options.bashSandbox = sandbox;
  const network = cfg.get<boolean>('bashSandboxNetwork'); if (typeof network === 'boolean') options.bashSandboxNetwork = network;
  for (const key of ['contextWindow', 'maxOutputTokens'] as const) {
    const value = cfg.get<number | null>(key);
    if (typeof value === 'number' && value > 0) options[key] = Math.floor(value);
  }
  const retries = cfg.get<number | null>('maxRetries');
  if (typeof retries === 'number' && retries >= 0) options.maxRetries = Math.floor(retries);
  const format = toolCallFormat(cfg.get<unknown>('toolCallFormat'));
  if (format !== undefined) options.toolCallFormat = format;
  if (apiKey) options.apiKey = apiKey;
  return options;
}

const FORMATS = new Set<string>(['auto', 'native', 'text']);

/** `shiro.toolCallFormat`: one format, or one per model glob; anything else is left to the server's default. */
export function toolCallFormat(value: unknown): ToolCallFormat | Record<string, ToolCallFormat> | undefined {
  if (typeof value === 'string') return FORMATS.has(value) ? value as ToolCallFormat : undefined;
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const entries = Object.entries(value).filter((e): e is [string, ToolCallFormat] => typeof e[1] === 'string' && FORMATS.has(e[1]));
  return entries.length ? Object.fromEntries(entries) : undefined;
}
