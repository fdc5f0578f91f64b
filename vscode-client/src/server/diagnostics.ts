// "Shiro: Diagnose" as plain data → one Markdown document to paste into a bug report. Pure (no vscode).
// Never carries a secret: the API key is only said to be set or not, and key-like strings are masked.

export interface EndpointCheck {
  baseUrl: string;
  reachable: boolean;
  models: string[];
  error?: string;
  preset?: string | null;
  via: 'server' | 'extension';
}

export interface DiagnosticsInfo {
  generatedAt: string;
  extensionVersion: string;
  vscodeVersion: string;
  appName: string;
  remoteName: string | undefined;
  platform: string;
  arch: string;
  extensionKind: string;
  serverState: string;
  serverName?: string;
  serverVersion?: string;
  interpreter?: string;
  interpreterSource?: string;
  pythonVersion?: string;
  pythonError?: string;
  environment?: { dir: string; createdAt?: string; installer?: string; wheel?: string };
  stateRoot?: string;
  workspace?: string;
  model: string;
  api: string;
  apiKey: 'secret-storage' | 'environment' | 'none';
  endpoint?: EndpointCheck;
  errors: string[];
}

const SOURCE: Record<string, string> = {
  setting: 'the shiro.pythonPath setting',
  'python-extension': "the Python extension's interpreter",
  default: 'python3 on PATH',
  managed: "Shiro's own environment",
};

/** `?api_key=…`, `&token=…` and the like in a URL's query. */
const SECRET_PARAMS = [
  'api[_-]?key',
  'key',
  'access[_-]?token',
  'refresh[_-]?token',
  'token',
  'auth',
  'password',
  'passwd',
  'secret',
  'client[_-]?secret',
].join('|');
const SECRET_QUERY = new RegExp(`([?&](?:${SECRET_PARAMS})=)[^&#\\s"'<>]+`, 'gi');

/**
 * Mask anything that looks like a key, a bearer token or a credential in a URL (`user:PASSWORD@`,
 * `?key=`/`token=`): errors and endpoints can quote them. The server's answers already went through
 * its redactor (shiro_lsp/fs/secrets.py); this covers what the extension reads itself (the setting).
 */
export function redact(text: string): string {
  return text
    .replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:)[^/\s@]+@/gi, '$1…(redacted)@')
    .replace(SECRET_QUERY, '$1…(redacted)')
    .replace(/\b(sk|rk|pk)-[A-Za-z0-9_-]{6,}/g, '$1-…(redacted)')
    .replace(/(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, '$1…(redacted)')
    .replace(/((?:api[_-]?key|token|secret)["']?\s*[:=]\s*["']?)[^\s"',}]{6,}/gi, '$1…(redacted)');
}

export function diagnosticsReport(d: DiagnosticsInfo): string {
  const out: string[] = [];
  const line = (label: string, value: string | undefined): void => {
    out.push(`- ${label}: ${value ?? 'unknown'}`);
  };
  out.push(
    '# Shiro diagnostics',
    '',
    `Generated ${d.generatedAt}. Paste this into a bug report; it holds no API key.`,
    '',
  );
  out.push('## Extension');
  line('Shiro extension', d.extensionVersion);
  line('VS Code', `${d.vscodeVersion} (${d.appName})`);
  line('Remote', d.remoteName ?? 'none (local)');
  line('Platform', `${d.platform} ${d.arch}`);
  line('Runs on', d.extensionKind);
  out.push('', '## Server');
  line('State', d.serverState);
  line('Server', d.serverName ? `${d.serverName} ${d.serverVersion ?? ''}`.trim() : undefined);
  line(
    'Interpreter',
    d.interpreter
      ? `${d.interpreter} (from ${SOURCE[d.interpreterSource ?? ''] ?? d.interpreterSource ?? 'unknown'})`
      : undefined,
  );
  line('Python', d.pythonVersion ?? (d.pythonError ? `could not run it: ${d.pythonError}` : undefined));
  if (d.environment) {
    const e = d.environment;
    const setUp = `${e.createdAt ? `, set up ${e.createdAt}` : ''}${e.installer ? ` with ${e.installer}` : ''}`;
    line('Environment', `${e.dir}${setUp}${e.wheel ? ` from ${e.wheel}` : ''}`);
  }
  line('State root', d.stateRoot);
  line('Workspace', d.workspace ?? 'none');
  out.push('', '## Model endpoint');
  line('Model', d.model || "(the server's default)");
  line('API', d.api);
  line(
    'API key',
    d.apiKey === 'secret-storage'
      ? 'set (SecretStorage)'
      : d.apiKey === 'environment'
        ? 'set (OPENAI_API_KEY)'
        : 'none',
  );
  if (d.endpoint) {
    const e = d.endpoint;
    line('Base URL', `${e.baseUrl}${e.preset ? ` (${e.preset})` : ''}`);
    if (e.reachable) {
      const shown = e.models.slice(0, 30);
      const listed = shown.length ? `: ${shown.join(', ')}${e.models.length > shown.length ? ', …' : ''}` : '';
      line('Reachable', `yes, ${e.models.length} model${e.models.length === 1 ? '' : 's'}${listed}`);
      if (d.model && e.models.length && !e.models.includes(d.model))
        out.push(`- Note: the model "${d.model}" is not in that list.`);
    } else line('Reachable', `no: ${e.error ?? 'no answer'}`);
    out.push(`- (checked by the ${e.via})`);
  } else line('Reachable', 'not checked');
  out.push('', '## Last errors');
  if (d.errors.length) for (const e of d.errors.slice(-15)) out.push(`- ${e.replace(/\s+/g, ' ').slice(0, 500)}`);
  else out.push('- none since the window opened');
  out.push('');
  return redact(out.join('\n'));
}
