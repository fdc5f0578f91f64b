import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseRoot } from '../src/sessions/workspaceRoot';

const api = { name: 'api', fsPath: '/work/api' };
const web = { name: 'web', fsPath: '/work/web' };

test('one folder (or none) sends no root: a single-folder window behaves as before', () => {
  assert.deepEqual(chooseRoot([api], '/work/api', false), { kind: 'none' });
  assert.deepEqual(chooseRoot([api], undefined, false), { kind: 'none' });
  assert.deepEqual(chooseRoot([], undefined, false), { kind: 'none' });
});

test("several folders: the active editor's folder is the session's root", () => {
  assert.deepEqual(chooseRoot([api, web], '/work/web', false), { kind: 'folder', root: '/work/web' });
  assert.deepEqual(chooseRoot([api, web], '/work/api', false), { kind: 'folder', root: '/work/api' });
});

test('several folders and no editor in one of them: the user picks, every folder offered in order', () => {
  for (const active of [undefined, '/elsewhere']) {
    const choice = chooseRoot([api, web], active, false);
    assert.equal(choice.kind, 'pick');
    assert.deepEqual(choice.kind === 'pick' && choice.items, [
      { label: 'api', description: '/work/api', root: '/work/api' },
      { label: 'web', description: '/work/web', root: '/work/web' },
    ]);
  }
});

test('a session that already has messages keeps its root: no picker, no root sent', () => {
  assert.deepEqual(chooseRoot([api, web], undefined, true), { kind: 'none' });
  assert.deepEqual(chooseRoot([api, web], '/work/web', true), { kind: 'none' });
});
