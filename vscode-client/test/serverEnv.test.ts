import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureServerEnv, EnvSetupError } from '../src/server/serverEnv';
import {
  commandLine,
  envDirFor,
  envPython,
  installSteps,
  lastLine,
  markerReusable,
  parsePythonVersion,
  versionOk,
} from '../src/server/serverEnvPlan';
import { envFailureMessage } from '../src/server/errors';
import { stub } from './vscode-stub';

const quiet = { info() {}, warn() {}, error() {} };

test('the environment is rebuilt when the extension version or the wheel changes, reused otherwise', () => {
  const marker = {
    extensionVersion: '0.2.0',
    wheel: 'w.whl',
    wheelSha256: 'abc',
    python: 'python3',
    installer: 'venv',
    createdAt: '',
  };
  assert.ok(markerReusable(marker, '0.2.0', 'abc'));
  assert.ok(!markerReusable(marker, '0.3.0', 'abc'));
  assert.ok(!markerReusable(marker, '0.2.0', 'def'));
  assert.ok(!markerReusable(undefined, '0.2.0', 'abc'));
  assert.ok(!markerReusable('junk', '0.2.0', 'abc'));
  assert.equal(envDirFor('/s', '0.2.0'), path.join('/s', 'server-env-0.2.0'));
  assert.equal(envDirFor('/s', '1.0.0+local/x'), path.join('/s', 'server-env-1.0.0_local_x'));
});

test('Python 3.11 or newer is required', () => {
  assert.deepEqual(parsePythonVersion('Python 3.11.7'), [3, 11]);
  assert.ok(versionOk([3, 11]) && versionOk([3, 13]) && versionOk([4, 0]));
  assert.ok(!versionOk([3, 10]) && !versionOk([2, 7]) && !versionOk(undefined));
});

test('venv + pip, or uv when present; the same steps as one pasteable line', () => {
  const venv = installSteps(
    '/usr/bin/python3',
    undefined,
    '/st/env',
    '/ext/server/shiro_lsp-0.1.0-py3-none-any.whl',
    'linux',
  );
  assert.deepEqual(
    venv.map(s => [s.command, s.args[0]]),
    [
      ['/usr/bin/python3', '-m'],
      ['/st/env/bin/python', '-m'],
    ],
  );
  assert.equal(
    commandLine(venv, 'linux'),
    '/usr/bin/python3 -m venv /st/env && /st/env/bin/python -m pip install --disable-pip-version-check --no-input ' +
      '/ext/server/shiro_lsp-0.1.0-py3-none-any.whl',
  );
  const uv = installSteps('python3', '/usr/local/bin/uv', '/st/env', '/w.whl', 'linux');
  assert.deepEqual(
    uv.map(s => s.args.slice(0, 2)),
    [
      ['venv', '--quiet'],
      ['pip', 'install'],
    ],
  );
  assert.equal(envPython('C:\\st\\env', 'win32').endsWith(path.join('Scripts', 'python.exe')), true);
  assert.equal(
    commandLine([{ command: '/My Python/python3', args: ["it's"], what: '' }], 'linux'),
    `'/My Python/python3' 'it'\\''s'`,
  );
});

test("an installer's failure is told in its own words", () => {
  const pip =
    'Collecting pygls\n  WARNING: Retrying after connection broken\n' +
    'ERROR: Could not find a version that satisfies the requirement pygls>=2.1\nnotice: A new release of pip';
  assert.equal(lastLine(pip), 'ERROR: Could not find a version that satisfies the requirement pygls>=2.1');
  assert.match(
    envFailureMessage('Installing failed: no network', 'python3 -m venv /e && /e/bin/python -m pip install /w.whl'),
    new RegExp(
      'Run this in a terminal, then "Shiro: Restart server": ' +
        'python3 -m venv /e && /e/bin/python -m pip install /w\\.whl',
    ),
  );
});

function tempStorage(): { storage: string; wheel: string; digest: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shiro-env-test-'));
  const wheel = path.join(root, 'shiro_lsp-0.1.0-py3-none-any.whl');
  fs.writeFileSync(wheel, 'not really a wheel');
  return {
    storage: path.join(root, 'storage'),
    wheel,
    digest: createHash('sha256').update('not really a wheel').digest('hex'),
  };
}

test('an environment set up before for this version and wheel is reused without running anything', async () => {
  const { storage, wheel, digest } = tempStorage();
  const dir = envDirFor(storage, '0.1.0');
  fs.mkdirSync(path.dirname(envPython(dir)), { recursive: true });
  fs.writeFileSync(envPython(dir), '');
  fs.writeFileSync(
    path.join(dir, 'shiro-env.json'),
    JSON.stringify({ extensionVersion: '0.1.0', wheelSha256: digest }),
  );
  const python = await ensureServerEnv({
    storageDir: storage,
    extensionVersion: '0.1.0',
    wheel,
    basePython: '/nonexistent/python3',
    log: quiet,
  });
  assert.equal(python, envPython(dir));
});

test('no usable interpreter: a clear error with the exact command, and nothing half-built left behind', async () => {
  const { storage, wheel } = tempStorage();
  const savedPath = process.env.PATH;
  process.env.PATH = ''; // no uv
  try {
    await assert.rejects(
      ensureServerEnv({
        storageDir: storage,
        extensionVersion: '0.1.0',
        wheel,
        basePython: '/nonexistent/python3',
        log: quiet,
      }),
      (e: unknown) =>
        e instanceof EnvSetupError &&
        /Python 3\.11 or newer/.test(e.message) &&
        /no interpreter called \/nonexistent\/python3/.test(e.message) &&
        e.command.includes('/nonexistent/python3 -m venv'),
    );
  } finally {
    process.env.PATH = savedPath;
  }
  assert.deepEqual(fs.readdirSync(storage), []);
});

test(
  'a failing install (here: a broken wheel) says what pip said, ' + 'gives the command, and leaves no environment',
  async () => {
    const { storage, wheel } = tempStorage();
    const savedPath = process.env.PATH;
    const python = process.env.SHIRO_TEST_PYTHON || 'python3';
    process.env.PATH = (savedPath ?? '')
      .split(path.delimiter)
      .filter(d => !fs.existsSync(path.join(d, 'uv')))
      .join(path.delimiter);
    stub.reset();
    try {
      await assert.rejects(
        ensureServerEnv({ storageDir: storage, extensionVersion: '0.1.0', wheel, basePython: python, log: quiet }),
        (e: unknown) =>
          e instanceof EnvSetupError &&
          /^Installing the Shiro server and its dependencies failed: .*(wheel|zip)/i.test(e.message) &&
          e.command.includes(`-m pip install --disable-pip-version-check --no-input ${wheel}`),
      );
    } finally {
      process.env.PATH = savedPath;
    }
    assert.match(stub.progress[0], /setting up its Python environment/);
    assert.deepEqual(fs.readdirSync(storage), []);
  },
);
