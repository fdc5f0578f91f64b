import type { ImageInput, InitializationOptions, ToolCallFormat } from '../shared/protocol';
import { trustedView } from './settingsTrust';
import type { SettingsSource } from './settingsTrust';

/** Every `shiro.*` setting in package.json (a test keeps the two equal). */
export const SETTING_KEYS = [
  'pythonPath',
  'model',
  'baseUrl',
  'api',
  'home',
  'compactThreshold',
  'memory',
  'approvalTimeoutMs',
  'bashSandbox',
  'bashSandboxNetwork',
  'contextWindow',
  'maxOutputTokens',
  'maxRetries',
  'localServerUrls',
  'toolCallFormat',
  'modelProfile',
  'checkCommand',
  'temperature',
  'autoCompact',
  'attachActiveFile',
  'webFetch.allowHosts',
  'imageInput',
] as const;

/**
 * Settings + the SecretStorage key → initializationOptions (empty values left out: the server's defaults apply).
 * The settings are read through settingsTrust's rules: the home is the user's, the endpoint is `endpoint` (the
 * user's own, or a trusted workspace's the user allowed; undefined: the user's), the sandbox at least the user's.
 */
export function initializationOptions(
  settings: SettingsSource,
  apiKey: string | undefined,
  trusted: boolean,
  endpoint?: string,
): InitializationOptions {
  const cfg = trustedView(settings, trusted, endpoint);
  const text = (key: string): string | undefined => {
    const v = cfg.get<string>(key);
    return typeof v === 'string' && v.trim() ? v.trim() : undefined;
  };
  const options: InitializationOptions = { trusted, api: (text('api') as InitializationOptions['api']) ?? 'auto' };
  const model = text('model');
  if (model) options.model = model;
  const baseUrl = text('baseUrl');
  if (baseUrl) options.baseUrl = baseUrl;
  const home = text('home');
  if (home) options.home = home;
  const threshold = cfg.get<number | null>('compactThreshold');
  if (typeof threshold === 'number' && threshold > 0) options.compactThreshold = threshold;
  const memory = cfg.get<boolean>('memory');
  if (typeof memory === 'boolean') options.memory = memory;
  const autoCompact = cfg.get<boolean>('autoCompact');
  if (typeof autoCompact === 'boolean') options.autoCompact = autoCompact;
  const timeout = cfg.get<number>('approvalTimeoutMs');
  if (typeof timeout === 'number' && timeout > 0) options.approvalTimeoutMs = timeout;
  const sandbox = text('bashSandbox');
  if (sandbox === 'off' || sandbox === 'auto' || sandbox === 'required') options.bashSandbox = sandbox;
  const network = cfg.get<boolean>('bashSandboxNetwork');
  if (typeof network === 'boolean') options.bashSandboxNetwork = network;
  for (const key of ['contextWindow', 'maxOutputTokens'] as const) {
    const value = cfg.get<number | null>(key);
    if (typeof value === 'number' && value > 0) options[key] = Math.floor(value);
  }
  const temperature = cfg.get<number | null>('temperature');
  if (typeof temperature === 'number' && temperature >= 0 && temperature <= 2) options.temperature = temperature;
  const retries = cfg.get<number | null>('maxRetries');
  if (typeof retries === 'number' && retries >= 0) options.maxRetries = Math.floor(retries);
  const hosts = cfg.get<unknown>('webFetch.allowHosts');
  // sent even when empty: taking a host out must reach a running server
  if (Array.isArray(hosts))
    options.webFetchAllowHosts = hosts
      .filter((h): h is string => typeof h === 'string' && h.trim() !== '')
      .map(h => h.trim());
  const profile = text('modelProfile');
  if (profile === 'auto' || profile === 'full' || profile === 'compact') options.modelProfile = profile;
  const check = text('checkCommand');
  if (check) options.checkCommand = check;
  const images = perModel(cfg.get<unknown>('imageInput'), IMAGE_INPUTS);
  if (images !== undefined) options.imageInput = images as ImageInput | Record<string, ImageInput>;
  const format = toolCallFormat(cfg.get<unknown>('toolCallFormat'));
  if (format !== undefined) options.toolCallFormat = format;
  if (apiKey) options.apiKey = apiKey;
  return options;
}

const FORMATS = new Set<string>(['auto', 'native', 'text']);
const IMAGE_INPUTS = new Set<string>(['auto', 'on', 'off']);

/** `shiro.toolCallFormat`: one format, or one per model glob; anything else is left to the server's default. */
export function toolCallFormat(value: unknown): ToolCallFormat | Record<string, ToolCallFormat> | undefined {
  return perModel(value, FORMATS) as ToolCallFormat | Record<string, ToolCallFormat> | undefined;
}

/** A per-model setting: one of `allowed`, or one per model glob; anything else is left to the server's default. */
function perModel(value: unknown, allowed: ReadonlySet<string>): string | Record<string, string> | undefined {
  if (typeof value === 'string') return allowed.has(value) ? value : undefined;
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const entries = Object.entries(value).filter(
    (e): e is [string, string] => typeof e[1] === 'string' && allowed.has(e[1]),
  );
  return entries.length ? Object.fromEntries(entries) : undefined;
}
