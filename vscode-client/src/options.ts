import type { InitializationOptions } from './protocol';

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
  if (apiKey) options.apiKey = apiKey;
  return options;
}
