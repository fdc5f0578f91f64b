import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveWorkspaceLink } from '../src/chat/workspaceLink';

test('a relative link opens the file inside the workspace, with a line from #L12 or :7', () => {
  assert.deepEqual(resolveWorkspaceLink('src/calc.py', ['/ws']), { fsPath: '/ws/src/calc.py' });
  assert.deepEqual(resolveWorkspaceLink('./docs/a.md#L12', ['/ws']), { fsPath: '/ws/docs/a.md', line: 12 });
  assert.deepEqual(resolveWorkspaceLink('src/x.ts:7', ['/ws']), { fsPath: '/ws/src/x.ts', line: 7 });
  assert.deepEqual(resolveWorkspaceLink('my%20notes.md', ['/ws']), { fsPath: '/ws/my notes.md' });
});

test('links that leave the workspace open nothing', () => {
  assert.equal(resolveWorkspaceLink('../secret.txt', ['/ws']), undefined);
  assert.equal(resolveWorkspaceLink('src/../../etc/passwd', ['/ws']), undefined);
  assert.equal(resolveWorkspaceLink('/etc/passwd', ['/ws']), undefined);
  assert.equal(resolveWorkspaceLink('', ['/ws']), undefined);
  assert.equal(resolveWorkspaceLink('a.py', []), undefined);
});
