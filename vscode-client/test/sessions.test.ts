import { test } from 'node:test';
import assert from 'node:assert/strict';
import { distinguishingIds, formatAge, sessionPickItems } from '../src/sessions';
import type { SessionInfo } from '../src/protocol';

const now = new Date('2026-11-30T12:00:00Z');
const session = (id: string, title: string, updatedAt: string, messageCount: number): SessionInfo => ({
  id, title, cwd: '/ws', createdAt: updatedAt, updatedAt, messageCount, model: 'gpt-5', inputTokens: 0, outputTokens: 0, costUsd: null,
});

test('ages read like a person would say them', () => {
  assert.equal(formatAge('2026-11-30T11:59:30Z', now), 'just now');
  assert.equal(formatAge('2026-11-30T11:55:00Z', now), '5 min ago');
  assert.equal(formatAge('2026-11-30T09:00:00Z', now), '3 h ago');
  assert.equal(formatAge('2026-11-29T10:00:00Z', now), 'yesterday');
  assert.equal(formatAge('2026-11-25T12:00:00Z', now), '5 days ago');
  assert.equal(formatAge('2026-01-02T12:00:00Z', now), '2026-01-02');
  assert.equal(formatAge('garbage', now), 'unknown age');
});

test('resume QuickPick items: newest first, title, age and message count', () => {
  const items = sessionPickItems([
    session('0193aaaa-old', 'old work', '2026-11-28T12:00:00Z', 1),
    session('0193bbbb-new', 'fix pagination', '2026-11-30T11:50:00Z', 12),
    session('0193cccc-mid', 'untitled', '2026-11-30T02:00:00Z', 0),
  ], now);
  assert.deepEqual(items.map(i => i.sessionId), ['0193bbbb-new', '0193cccc-mid', '0193aaaa-old']);
  assert.equal(items[0].label, 'fix pagination');
  assert.equal(items[0].description, '10 min ago · 12 messages');
  assert.equal(items[1].label, '(untitled)');
  assert.equal(items[1].description, '10 h ago · 0 messages');
  assert.equal(items[2].description, '2 days ago · 1 message');
  assert.equal(items[0].detail, '0193bbbb · gpt-5');
});

test('sessions of the same minute get ids long enough to tell apart; the current one is marked', () => {
  const a = '019ad3f2-1a2b-7c3d-8e4f-000000000001';
  const b = '019ad3f2-1a2c-7000-8000-000000000002';
  const c = '019ad400-0000-7000-8000-000000000003';
  const ids = distinguishingIds([a, b, c]);
  assert.equal(ids.get(a), '019ad3f2-1a2b');
  assert.equal(ids.get(b), '019ad3f2-1a2c');
  assert.equal(ids.get(c), '019ad400');
  const items = sessionPickItems([session(a, 'one', '2026-11-30T11:50:00Z', 2), session(b, 'two', '2026-11-30T11:51:00Z', 3)], now, a);
  assert.deepEqual(items.map(i => [i.detail, i.current]), [['019ad3f2-1a2c · gpt-5', false], ['019ad3f2-1a2b · gpt-5', true]]);
  assert.match(items[1].description, /^current · /);
});

test('/sessions buttons: every session but the open one, labelled with title, id and age', async () => {
  const { sessionLinks } = await import('../src/sessions');
  const links = sessionLinks([session('0193aaaa-1', 'old work', '2026-11-28T12:00:00Z', 1), session('0193bbbb-2', 'now', '2026-11-30T11:50:00Z', 4)], '0193bbbb-2', now);
  assert.deepEqual(links, [{ id: '0193aaaa-1', label: 'old work · 0193aaaa · 2 days ago · 1 message' }]);
});
