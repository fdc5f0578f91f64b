import { beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { knownFolders } from '../src/server/workspaceFolders';
import { stub, workspace } from './vscode-stub';

const folder = (name: string) => ({ name, uri: { fsPath: `/ws/${name}`, toString: () => `file:///ws/${name}` } });

beforeEach(() => stub.reset());

test('a single-folder window has its folder at once', async () => {
  workspace.workspaceFolders = [folder('app')];
  assert.deepEqual(
    (await knownFolders(60_000)).map(f => f.name),
    ['app'],
  );
});

test('a workspace file not read yet: the folders are those VS Code reports once it has read it', async () => {
  workspace.workspaceFile = { toString: () => 'vscode-remote://host/ws/two.code-workspace' };
  workspace.workspaceFolders = [];
  let settled = false;
  const known = knownFolders(60_000).then(f => {
    settled = true;
    return f;
  });
  await new Promise(resolve => setImmediate(resolve));
  assert.ok(!settled, 'no decision on a window that lists no folder yet');
  workspace.workspaceFolders = [folder('alpha'), folder('beta')];
  workspace.foldersChanged.fire();
  assert.deepEqual(
    (await known).map(f => f.name),
    ['alpha', 'beta'],
  );
});

test('a workspace file that lists no folder is waited for a bounded time', async () => {
  workspace.workspaceFile = { toString: () => 'file:///ws/empty.code-workspace' };
  assert.deepEqual(await knownFolders(5), []);
});
