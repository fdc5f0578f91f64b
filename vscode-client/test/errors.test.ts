import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reportServerFailure, serverFailureMessage } from '../src/server/errors';
import { initializationOptions, toolCallFormat } from '../src/server/options';
import { choosePython, expandPath } from '../src/server/pythonPath';
import { stub } from './vscode-stub';

/** Settings that are all the user's own (what `inspect()` calls globalValue). */
function userSettings(values: Record<string, unknown>): {
  get<T>(k: string): T | undefined;
  inspect<T>(k: string): { globalValue?: T };
} {
  return {
    get: <T>(k: string) => values[k] as T | undefined,
    inspect: <T>(k: string) => ({ globalValue: values[k] as T | undefined }),
  };
}

test('the start-failure message names the interpreter, the reason and what to do', () => {
  const msg = serverFailureMessage('/opt/py/bin/python', 'No module named shiro_lsp\n');
  assert.match(msg, /\/opt\/py\/bin\/python -m shiro_lsp/);
  assert.match(msg, /No module named shiro_lsp/);
  assert.match(msg, /shiro\.pythonPath/);
  assert.match(msg, /Restart server/);
});

test('"Show log" opens the output channel', async () => {
  stub.reset();
  stub.errorChoice = 'Show log';
  let shown = 0;
  await reportServerFailure('python3', new Error('spawn python3 ENOENT'), {
    show: () => {
      shown++;
    },
  });
  assert.equal(shown, 1);
  assert.deepEqual(stub.shown[0].items, ['Show log', 'Set Python path']);
  assert.match(stub.shown[0].message, /spawn python3 ENOENT/);
});

test('"Set Python path" opens the setting; dismissing does nothing', async () => {
  stub.reset();
  stub.errorChoice = 'Set Python path';
  let shown = 0;
  await reportServerFailure('python3', 'x', {
    show: () => {
      shown++;
    },
  });
  assert.deepEqual(stub.executed, [{ command: 'workbench.action.openSettings', args: ['shiro.pythonPath'] }]);
  stub.reset();
  await reportServerFailure('python3', 'x', {
    show: () => {
      shown++;
    },
  });
  assert.equal(shown, 0);
});

test('interpreter: the setting, else the Python extension, else python3', () => {
  assert.deepEqual(choosePython(' /venv/bin/python ', '/ext/python'), {
    command: '/venv/bin/python',
    source: 'setting',
  });
  assert.deepEqual(choosePython('', '/ext/python'), { command: '/ext/python', source: 'python-extension' });
  assert.deepEqual(choosePython(undefined, undefined), { command: 'python3', source: 'default' });
});

test('initializationOptions carry settings and the secret key, leaving out empty values', () => {
  const cfg = userSettings({
    model: 'gpt-5-mini',
    baseUrl: ' ',
    api: 'chat',
    compactThreshold: null,
    memory: true,
    approvalTimeoutMs: 300000,
  });
  assert.deepEqual(initializationOptions(cfg, 'sk-test', false), {
    trusted: false,
    api: 'chat',
    model: 'gpt-5-mini',
    memory: true,
    approvalTimeoutMs: 300000,
    apiKey: 'sk-test',
  });
  assert.equal('apiKey' in initializationOptions(cfg, undefined, true), false);
});

test('the interpreter setting expands ${workspaceFolder} and ~', () => {
  assert.equal(expandPath('${workspaceFolder}/.venv/bin/python', '/repo', '/home/u'), '/repo/.venv/bin/python');
  assert.equal(expandPath('~/venvs/shiro/bin/python', '/repo', '/home/u'), '/home/u/venvs/shiro/bin/python');
  assert.equal(expandPath(' python3.11 ', undefined, '/home/u'), 'python3.11');
});

test('local-model settings reach the server: window, output cap, retries and the tool-call format', () => {
  const values: Record<string, unknown> = {
    contextWindow: 8192.7,
    maxOutputTokens: 0,
    maxRetries: 0,
    toolCallFormat: { 'qwen2.5*': 'text', 'gpt-*': 'native', bad: 'xml' },
  };
  const cfg = userSettings(values);
  const options = initializationOptions(cfg, undefined, true);
  assert.equal(options.contextWindow, 8192);
  assert.equal('maxOutputTokens' in options, false); // 0 is not a cap: the server's default applies
  assert.equal(options.maxRetries, 0); // 0 retries is a real choice
  assert.deepEqual(options.toolCallFormat, { 'qwen2.5*': 'text', 'gpt-*': 'native' });
  assert.equal(toolCallFormat('text'), 'text');
  assert.equal(toolCallFormat('xml'), undefined);
  assert.equal(toolCallFormat(['text']), undefined);
});

test('the temperature reaches the server when it is one, and 0 is a real choice', () => {
  assert.equal(initializationOptions(userSettings({ temperature: 0 }), undefined, true).temperature, 0);
  assert.equal(initializationOptions(userSettings({ temperature: 0.7 }), undefined, true).temperature, 0.7);
  assert.equal('temperature' in initializationOptions(userSettings({ temperature: 5 }), undefined, true), false);
  assert.equal('temperature' in initializationOptions(userSettings({}), undefined, true), false);
});
