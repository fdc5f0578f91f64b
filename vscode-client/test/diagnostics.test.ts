import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnosticsReport, redact } from '../src/server/diagnostics';
import type { DiagnosticsInfo } from '../src/server/diagnostics';

const base: DiagnosticsInfo = {
  generatedAt: '2026-12-01T12:00:00Z',
  extensionVersion: '0.1.0',
  vscodeVersion: '1.100.3',
  appName: 'code-server',
  remoteName: 'ssh-remote',
  platform: 'linux',
  arch: 'x64',
  extensionKind: 'the workspace side (next to the code)',
  serverState: 'running',
  serverName: 'shiro-lsp',
  serverVersion: '0.1.0',
  interpreter: '/g/server-env-0.1.0/bin/python',
  interpreterSource: 'managed',
  pythonVersion: '3.11.7',
  environment: {
    dir: '/g/server-env-0.1.0',
    createdAt: '2026-12-01T11:00:00Z',
    installer: 'venv',
    wheel: 'shiro_lsp-0.1.0-py3-none-any.whl',
  },
  stateRoot: '/home/u/.shiro-neko',
  workspace: '/w',
  model: 'qwen',
  api: 'auto',
  apiKey: 'secret-storage',
  endpoint: {
    baseUrl: 'http://127.0.0.1:8080/v1',
    preset: 'llamacpp',
    reachable: true,
    models: ['gpt-5', 'gpt-4o'],
    via: 'server',
  },
  errors: ['2026-12-01T11:59:00Z Start failed: Authorization: Bearer sk-live-abcdef123456 rejected'],
};

test('the report names interpreter, server version, state root, endpoint, models and the last errors', () => {
  const r = diagnosticsReport(base);
  for (const want of [
    '- Server: shiro-lsp 0.1.0',
    "- Interpreter: /g/server-env-0.1.0/bin/python (from Shiro's own environment)",
    '- Python: 3.11.7',
    '- State root: /home/u/.shiro-neko',
    '- Base URL: http://127.0.0.1:8080/v1 (llamacpp)',
    '- Reachable: yes, 2 models: gpt-5, gpt-4o',
    '- Note: the model "qwen" is not in that list.',
    '- Remote: ssh-remote',
    '- API key: set (SecretStorage)',
    '## Last errors',
  ])
    assert.ok(r.includes(want), `missing ${want}\n${r}`);
});

test('no secret reaches the report: keys and bearer tokens in errors are masked', () => {
  const r = diagnosticsReport(base);
  assert.doesNotMatch(r, /abcdef123456/);
  assert.equal(redact('api_key="hunter2hunter2"'), 'api_key="…(redacted)"');
  assert.equal(redact('OPENAI_API_KEY=sk-proj-12345678'), 'OPENAI_API_KEY=…(redacted)');
  assert.equal(redact('plain words stay'), 'plain words stay');
});

test('a URL never shows its password or a token in its query', () => {
  const r = diagnosticsReport({
    ...base,
    endpoint: {
      baseUrl: 'http://user:PASSWORD@10.0.0.5:8000/v1?api-version=1&key=QUERYSECRET',
      reachable: false,
      models: [],
      via: 'extension',
      error: 'GET http://user:PASSWORD@10.0.0.5:8000/v1/models: fetch failed',
    },
  });
  assert.doesNotMatch(r, /PASSWORD|QUERYSECRET/);
  assert.match(r, /- Base URL: http:\/\/user:…\(redacted\)@10\.0\.0\.5:8000\/v1\?api-version=1&key=…\(redacted\)/);
  assert.equal(redact('ssh://git@github.com/x'), 'ssh://git@github.com/x');
});

test('an unreachable endpoint and a server that cannot start are said in words', () => {
  const r = diagnosticsReport({
    ...base,
    serverState: 'not running',
    serverName: undefined,
    pythonVersion: undefined,
    pythonError: 'there is no interpreter',
    endpoint: {
      baseUrl: 'http://127.0.0.1:11434/v1',
      reachable: false,
      models: [],
      error: 'GET …/models: connect ECONNREFUSED',
      via: 'extension',
    },
    errors: [],
    apiKey: 'none',
  });
  assert.match(r, /- State: not running/);
  assert.match(r, /- Server: unknown/);
  assert.match(r, /- Python: could not run it: there is no interpreter/);
  assert.match(r, /- Reachable: no: GET …\/models: connect ECONNREFUSED/);
  assert.match(r, /- API key: none/);
  assert.match(r, /- none since the window opened/);
});
