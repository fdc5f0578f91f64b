import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hookPickItems, hookTrustQuestion } from '../src/setup/hooks';
import type { HookInfo } from '../src/shared/protocol.gen';

const hook = (over: Partial<HookInfo>): HookInfo => ({
  id: 'a1',
  event: 'PreToolUse',
  matcher: 'Bash',
  command: './scripts/policy.sh',
  timeoutSeconds: 60,
  source: '.shiro/settings.json',
  scope: 'project',
  trusted: false,
  runs: false,
  ...over,
});

test('Show hooks says where each hook comes from, whether it runs, and its exact command', () => {
  const listing = {
    hooks: [
      hook({}),
      hook({
        id: 'b2',
        event: 'Stop',
        matcher: '',
        command: 'notify-send done',
        scope: 'user',
        trusted: true,
        runs: true,
        source: '~/.shiro-neko/settings.json',
      }),
      hook({ id: 'c3', event: 'PostToolUse', matcher: 'Edit|Write', command: 'npx prettier --write .' }),
    ],
    problems: [],
    restricted: false,
  };
  const [policy, mine, format, all] = hookPickItems(listing);
  assert.equal(policy.label, '$(shield) PreToolUse [Bash]');
  assert.match(policy.description, /NOT trusted: does not run .* · \.shiro\/settings\.json/);
  assert.equal(policy.detail, './scripts/policy.sh');
  assert.equal(mine.description, 'runs (your settings) · ~/.shiro-neko/settings.json');
  assert.equal(format.id, 'c3');
  assert.equal(all.id, 'all');
  assert.match(all.label, /Trust all 2 hooks/);
  const restricted = hookPickItems({ ...listing, restricted: true });
  assert.ok(restricted.slice(0, 3).every(i => i.description.startsWith('does not run (restricted mode)')));
});

test('the trust question quotes every command that will run', () => {
  const q = hookTrustQuestion([hook({}), hook({ event: 'PostToolUse', matcher: '', command: 'make fmt' })]);
  assert.match(q, /^Trust these 2 hooks from \.shiro\/settings\.json\?/);
  assert.ok(q.includes('PreToolUse [Bash]: ./scripts/policy.sh\n\nPostToolUse: make fmt'));
  assert.match(q, /If an entry changes, Shiro asks again/);
});
