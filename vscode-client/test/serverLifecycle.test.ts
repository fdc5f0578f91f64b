// ShiroServer's starts and stops against a language client that behaves like vscode-languageclient's where it
// matters (test/languageclient-stub.ts): the server's `shiro.remember` command is registered at initialize and a
// client that is still starting cannot be stopped.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type * as vscode from 'vscode';
import { ShiroServer } from '../src/server/server';
import { clients } from './languageclient-stub';
import { stub, workspace } from './vscode-stub';

let extensionDir: string;

function context(): vscode.ExtensionContext {
  const state = new Map<string, unknown>();
  return {
    extensionPath: extensionDir, // no bundled wheel: the interpreter comes from shiro.pythonPath
    globalStorageUri: { fsPath: extensionDir },
    extension: { packageJSON: { version: '0.0.0-test' } },
    secrets: { get: async () => undefined },
    globalState: {
      get: (k: string) => state.get(k),
      update: async (k: string, v: unknown) => {
        state.set(k, v);
      },
      keys: () => [...state.keys()],
    },
  } as unknown as vscode.ExtensionContext;
}

const tick = (): Promise<void> => new Promise(resolve => setImmediate(resolve));

/** Answer each server's initialize as it is sent, until `done` settles. */
async function serve(done: Promise<unknown>): Promise<void> {
  let settled = false;
  void done.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  while (!settled) {
    await tick();
    clients.answerAll();
  }
}

beforeEach(() => {
  stub.reset();
  clients.reset();
  stub.config = { pythonPath: '/nonexistent/python3' }; // never run: the language client is the stub
  extensionDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shiro-lifecycle-'));
});
afterEach(() => fs.rmSync(extensionDir, { recursive: true, force: true }));

function startFailures(): string[] {
  return [
    ...stub.logged.filter(l => l.startsWith('error')),
    ...stub.shown.filter(s => s.level === 'error').map(s => s.message),
  ];
}

test('two starts at once (trust granted and a setting changed) leave one server and no duplicate command', async () => {
  const server = new ShiroServer(context(), () => []);
  await serve(Promise.all([server.start(), server.start()]));
  assert.deepEqual(startFailures(), []);
  assert.equal(clients.processes, 1, 'one server process, none orphaned');
  assert.ok(server.isRunning);
  assert.ok(stub.commands.has('shiro.remember'));
});

test('"Restart server" while the server is still starting stops that one before starting the next', async () => {
  const server = new ShiroServer(context(), () => []);
  const first = server.start();
  while (!clients.waiting.length) await tick(); // the first server has been launched and has not answered yet
  const second = server.start();
  await serve(Promise.all([first, second]));
  assert.deepEqual(startFailures(), []);
  assert.equal(clients.made.length, 2);
  assert.equal(clients.processes, 1, 'the first server was stopped, not orphaned');
  assert.ok(server.isRunning);
});

test('dispose during a start stops the server that start brings up', async () => {
  const server = new ShiroServer(context(), () => []);
  const started = server.start();
  while (!clients.waiting.length) await tick();
  server.dispose();
  await serve(started);
  for (let i = 0; i < 50 && clients.processes; i++) await tick();
  assert.equal(clients.processes, 0, 'no server process is left behind');
});

test(
  'a window whose workspace file VS Code has not read yet ' + 'starts its server in the first folder, once known',
  async () => {
    workspace.workspaceFile = { toString: () => 'vscode-remote://host/ws/two.code-workspace' };
    workspace.workspaceFolders = [];
    const server = new ShiroServer(context(), () => []);
    const started = server.start();
    for (let i = 0; i < 20; i++) await tick();
    assert.equal(clients.made.length, 0, 'no server for a window with no folders yet');
    workspace.workspaceFolders = [{ name: 'alpha', uri: { fsPath: '/ws/alpha', toString: () => 'file:///ws/alpha' } }];
    workspace.foldersChanged.fire();
    await serve(started);
    const options = clients.made[0]?.serverOptions as { options?: { cwd?: string } } | undefined;
    assert.equal(options?.options?.cwd, '/ws/alpha');
  },
);

test('granting trust restarts once: the settings change it unlocks finds that restart already has them', async () => {
  stub.config = {};
  stub.layers = { pythonPath: { globalValue: '/usr/bin/python3', workspaceValue: '/ws/tools/python' } };
  workspace.isTrusted = false;
  const server = new ShiroServer(context(), () => []);
  await serve(server.start());
  assert.equal((clients.made[0]?.serverOptions as { command: string }).command, '/usr/bin/python3');
  workspace.isTrusted = true;
  const grant = server.restartIfStale();
  while (clients.made.length < 2 || !clients.waiting.length) await tick(); // the restart is under way
  const settingsChange = server.restartIfStale();
  const [granted, changed] = await Promise.all([grant, settingsChange, serve(Promise.all([grant, settingsChange]))]);
  assert.deepEqual([granted, changed], [true, false]);
  assert.equal(clients.made.length, 2, 'one restart');
  assert.equal((clients.made[1]?.serverOptions as { command: string }).command, '/ws/tools/python');
  assert.equal(clients.processes, 1);
  assert.equal(await server.restartIfStale(), false, 'nothing changed since');
  stub.layers.home = { globalValue: '/elsewhere' };
  await serve(server.restartIfStale());
  assert.equal(clients.made.length, 3, 'a new state root needs a restart');
});
