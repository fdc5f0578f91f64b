// "Shiro: Diagnose": collects what a bug report needs (interpreter, server version, state root, endpoint
// reachability, models, the last errors) and opens it as one Markdown document. Never shows a secret.
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { diagnosticsReport } from './diagnostics';
import type { DiagnosticsInfo, EndpointCheck } from './diagnostics';
import { errorReason } from './errors';
import { resolvePython } from './pythonPath';
import { API_KEY_SECRET, SAFE_PATH_FLAG } from './server';
import type { ShiroServer } from './server';

/** Runs in the server's interpreter, so the state root comes from the server's own rule (shiro_lsp.state.paths). */
const PROBE = [
  'import json, sys',
  'out = {"python": sys.version.split()[0]}',
  'try:',
  '    from shiro_lsp.state.paths import state_root',
  '    out["stateRoot"] = str(state_root(sys.argv[1] or None))',
  'except Exception as e:',
  '    out["stateRootError"] = f"{type(e).__name__}: {e}"',
  'print(json.dumps(out))',
].join('\n');

function probe(
  python: string,
  home: string,
  cwd: string | undefined,
): Promise<{ python?: string; stateRoot?: string; error?: string }> {
  return new Promise(resolve => {
    execFile(python, [SAFE_PATH_FLAG, '-c', PROBE, home], { cwd, timeout: 20_000 }, (error, stdout, stderr) => {
      if (error) {
        resolve({ error: String(stderr).trim().split('\n').at(-1) || error.message });
        return;
      }
      try {
        const r = JSON.parse(String(stdout)) as { python?: string; stateRoot?: string; stateRootError?: string };
        resolve({
          python: r.python,
          stateRoot: r.stateRoot ?? (r.stateRootError ? `unknown (${r.stateRootError})` : undefined),
        });
      } catch {
        resolve({ error: String(stdout).slice(0, 200) });
      }
    });
  });
}

/** Ask the server (shiro/models, its own client and settings); a server without that method: ask from here. */
async function checkEndpoint(srv: ShiroServer, baseUrl: string, apiKey: string | undefined): Promise<EndpointCheck> {
  if (srv.isRunning) {
    try {
      const r = await srv.sendRequest('shiro/models', {});
      return {
        baseUrl: r.baseUrl,
        preset: r.preset,
        reachable: !r.error,
        models: r.models.map(m => m.id),
        error: r.error ?? undefined,
        via: 'server',
      };
    } catch {
      /* an older server: check from the extension */
    }
  }
  const url = `${baseUrl.replace(/\/+$/, '')}/models`;
  try {
    const r = await fetch(url, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(8000),
    });
    if (!r.ok)
      return { baseUrl, reachable: false, models: [], error: `GET ${url}: HTTP ${r.status}`, via: 'extension' };
    const body = (await r.json()) as { data?: { id?: string }[] };
    return { baseUrl, reachable: true, models: (body.data ?? []).map(m => String(m.id)), via: 'extension' };
  } catch (error) {
    return { baseUrl, reachable: false, models: [], error: `GET ${url}: ${errorReason(error)}`, via: 'extension' };
  }
}

export async function collectDiagnostics(
  srv: ShiroServer,
  context: vscode.ExtensionContext,
  chatErrors: () => string[],
): Promise<DiagnosticsInfo> {
  const cfg = vscode.workspace.getConfiguration('shiro');
  const workspace = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const secret = await context.secrets.get(API_KEY_SECRET);
  const envKey = process.env.OPENAI_API_KEY;
  const choice = srv.interpreter ?? (await resolvePython(vscode.workspace.isTrusted));
  const facts = await probe(choice.command, srv.settings().get<string>('home') ?? '', workspace);
  let environment: DiagnosticsInfo['environment'];
  if (choice.source === 'managed') {
    const dir = path.dirname(path.dirname(choice.command));
    const marker = await fs.readFile(path.join(dir, 'shiro-env.json'), 'utf8').then(
      t => JSON.parse(t) as Record<string, string>,
      () => ({}) as Record<string, string>,
    );
    environment = { dir, createdAt: marker.createdAt, installer: marker.installer, wheel: marker.wheel };
  }
  const baseUrl = srv.baseUrl() || process.env.OPENAI_BASE_URL || 'https://api.openai.com/v1';
  const info = srv.serverInfo;
  const kind =
    context.extension.extensionKind === vscode.ExtensionKind.Workspace
      ? 'the workspace side (next to the code)'
      : 'the UI side';
  return {
    generatedAt: new Date().toISOString(),
    extensionVersion: String((context.extension.packageJSON as { version?: string }).version ?? 'unknown'),
    vscodeVersion: vscode.version,
    appName: vscode.env.appName,
    remoteName: vscode.env.remoteName,
    platform: process.platform,
    arch: process.arch,
    extensionKind: kind,
    serverState: srv.isRunning ? 'running' : 'not running',
    serverName: info?.name,
    serverVersion: info?.version,
    interpreter: choice.command,
    interpreterSource: choice.source,
    pythonVersion: facts.python,
    pythonError: facts.error,
    environment,
    stateRoot: facts.stateRoot,
    workspace,
    model: cfg.get<string>('model') ?? '',
    api: cfg.get<string>('api') ?? 'auto',
    apiKey: secret ? 'secret-storage' : envKey ? 'environment' : 'none',
    endpoint: await checkEndpoint(srv, baseUrl, secret || envKey),
    errors: [...srv.recentErrors, ...chatErrors()],
  };
}

export async function showDiagnostics(
  srv: ShiroServer,
  context: vscode.ExtensionContext,
  chatErrors: () => string[],
): Promise<void> {
  const info = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Shiro: collecting diagnostics…' },
    () => collectDiagnostics(srv, context, chatErrors),
  );
  const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: diagnosticsReport(info) });
  await vscode.window.showTextDocument(doc, { preview: false });
}
