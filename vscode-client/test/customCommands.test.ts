import { test } from 'node:test';
import assert from 'node:assert/strict';
import { customInvocation, missingInputs } from '../src/chat/customCommands';
import type { CommandInfo } from '../src/chat/customCommands';
import { activeToken } from '../src/shared/mentions';

const command = (over: Partial<CommandInfo>): CommandInfo => ({
  name: 'fix-issue',
  description: 'Fix an issue',
  argumentHint: '<number>',
  source: '.claude/commands/fix-issue.md',
  scope: 'project',
  inputs: [],
  notes: [],
  ...over,
});

test('a typed custom command is found by its name, never one a built-in owns', () => {
  const list = [command({}), command({ name: 'new', shadowedBy: 'the built-in /new' })];
  assert.deepEqual(customInvocation('/fix-issue 42 urgently', list)?.args, '42 urgently');
  assert.equal(customInvocation('/new', list), undefined);
  assert.equal(customInvocation('/other', list), undefined);
  assert.equal(customInvocation('fix-issue 42', list), undefined);
});

test('inputs given as name=value are not asked for again', () => {
  const c = command({
    inputs: [
      { name: 'table', placeholder: '' },
      { name: 'kind', placeholder: 'what kind' },
    ],
  });
  assert.deepEqual(
    missingInputs(c, 'table=users').map(i => i.name),
    ['kind'],
  );
  assert.deepEqual(missingInputs(c, 'kind=x table=y'), []);
  assert.deepEqual(
    missingInputs(c, 'mytable=users').map(i => i.name),
    ['table', 'kind'],
  );
});

test('the / completion follows names with dots, dashes and colons', () => {
  assert.equal(activeToken('/fix-iss', 8)?.query, 'fix-iss');
  assert.equal(activeToken('/frontend:widget', 16)?.query, 'frontend:widget');
});
