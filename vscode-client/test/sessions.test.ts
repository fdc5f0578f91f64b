import { test } from 'node:test';
import assert from 'node:assert/strict';
import { distinguishingIds, formatAge, sessionPickItems } from '../src/sessions/sessions';
import type { SessionInfo } from '../src/shared/protocol';

const now = new Date('2026-11-30T12:00:00Z');
const session = (id: string, title: string, updatedAt: string, messageCount: number): SessionInfo => ({
  id,
  title,
  cwd: '/ws',
  createdAt: updatedAt,
  updatedAt,
  messageCount,
  model: 'gpt-5',
  inputTokens: 0,
  outputTokens: 0,
  costUsd: null,
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
  const items = sessionPickItems(
    [
      session('0193aaaa-old', 'old work', '2026-11-28T12:00:00Z', 1),
      session('0193bbbb-new', 'fix pagination', '2026-11-30T11:50:00Z', 12),
      session('0193cccc-mid', 'untitled', '2026-11-30T02:00:00Z', 0),
    ],
    now,
  );
  assert.deepEqual(
    items.map(i => i.sessionId),
    ['0193bbbb-new', '0193cccc-mid', '0193aaaa-old'],
  );
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
  const items = sessionPickItems(
    [session(a, 'one', '2026-11-30T11:50:00Z', 2), session(b, 'two', '2026-11-30T11:51:00Z', 3)],
    now,
    a,
  );
  assert.deepEqual(
    items.map(i => [i.detail, i.current]),
    [
      ['019ad3f2-1a2c · gpt-5', false],
      ['019ad3f2-1a2b · gpt-5', true],
    ],
  );
  assert.match(items[1].description, /^current · /);
});

test('/sessions buttons: every session but the open one, labelled with title, id and age', async () => {
  const { sessionLinks } = await import('../src/sessions/sessions');
  const links = sessionLinks(
    [
      session('0193aaaa-1', 'old work', '2026-11-28T12:00:00Z', 1),
      session('0193bbbb-2', 'now', '2026-11-30T11:50:00Z', 4),
    ],
    '0193bbbb-2',
    now,
  );
  assert.deepEqual(links, [{ id: '0193aaaa-1', label: 'old work · 0193aaaa · 2 days ago · 1 message' }]);
});

test('search results keep the server order and show the matching text as the detail', async () => {
  const { sessionPickItems: items } = await import('../src/sessions/sessions');
  const hit = (id: string, title: string, updatedAt: string, snippet: string): SessionInfo => ({
    ...session(id, title, updatedAt, 2),
    snippet,
  });
  const found = items(
    [
      hit('0193aaaa-best', 'why does the build fail?', '2026-11-28T12:00:00Z', 'the flamingo package is missing…'),
      hit('0193bbbb-next', 'tidy the readme', '2026-11-30T11:50:00Z', '…a stray flamingo emoji was removed.'),
    ],
    now,
    '0193bbbb-next',
    true,
  );
  assert.deepEqual(
    found.map(i => i.sessionId),
    ['0193aaaa-best', '0193bbbb-next'],
  ); // not re-sorted by age
  assert.equal(found[0].detail, 'the flamingo package is missing…');
  assert.equal(found[0].description, '2 days ago · 2 messages · 0193aaaa · gpt-5');
  assert.equal(found[1].description, 'current · 10 min ago · 2 messages · 0193bbbb · gpt-5');
  assert.equal(found[1].current, true);
});

test('the picker sends a trimmed query, and none for blank text', async () => {
  const { listParams } = await import('../src/sessions/sessions');
  assert.deepEqual(listParams(''), { limit: 50 });
  assert.deepEqual(listParams('   '), { limit: 50 });
  assert.deepEqual(listParams('  flamingo linker '), { limit: 50, query: 'flamingo linker' });
  assert.equal(listParams('x'.repeat(900)).query?.length, 500);
});

test('a new title is checked before it is sent', async () => {
  const { titleProblem } = await import('../src/sessions/sessions');
  assert.equal(titleProblem('  Linker work '), undefined);
  assert.equal(titleProblem('   '), 'Type a title.');
  assert.equal(titleProblem('x'.repeat(201)), 'At most 200 characters (this is 201).');
});

/** Timers the test advances by hand. */
function manualTimers() {
  let pending: { fn: () => void; at: number } | undefined;
  let clock = 0;
  return {
    set: (fn: () => void, ms: number) => {
      pending = { fn, at: clock + ms };
      return pending;
    },
    clear: (handle: unknown) => {
      if (handle === pending) pending = undefined;
    },
    advance(ms: number) {
      clock += ms;
      if (pending && pending.at <= clock) {
        const { fn } = pending;
        pending = undefined;
        fn();
      }
    },
    get waiting() {
      return pending !== undefined;
    },
  };
}

const tick = () => new Promise(r => setImmediate(r));

test('typing is debounced: one request for a burst of keys, for the text typed last', async () => {
  const { SessionSearch } = await import('../src/sessions/sessions');
  const timers = manualTimers();
  const asked: string[] = [];
  const shown: string[] = [];
  const search = new SessionSearch(
    async q => {
      asked.push(q);
      return [session(`id-${q}`, q, '2026-11-30T11:00:00Z', 1)];
    },
    q => {
      shown.push(q);
    },
    () => assert.fail('no error'),
    () => {},
    250,
    timers,
  );
  for (const prefix of ['f', 'fl', 'fla', 'flam']) {
    search.type(prefix);
    timers.advance(100);
  }
  assert.deepEqual(asked, []);
  timers.advance(250);
  await tick();
  assert.deepEqual(asked, ['flam']);
  assert.deepEqual(shown, ['flam']);
});

test('an answer that comes back after a newer query is dropped; busy follows the latest request', async () => {
  const { SessionSearch } = await import('../src/sessions/sessions');
  const timers = manualTimers();
  const answers = new Map<string, (s: SessionInfo[]) => void>();
  const shown: string[] = [];
  const busy: boolean[] = [];
  const search = new SessionSearch(
    q => new Promise(resolve => answers.set(q, resolve)),
    q => {
      shown.push(q);
    },
    () => {},
    b => {
      busy.push(b);
    },
    250,
    timers,
  );
  search.type('old');
  timers.advance(250);
  search.type('new');
  timers.advance(250);
  answers.get('new')!([]);
  await tick();
  answers.get('old')!([session('x', 'old', '2026-11-30T11:00:00Z', 1)]);
  await tick();
  assert.deepEqual(shown, ['new']);
  assert.deepEqual(busy, [true, true, false]);
  search.type('later');
  search.dispose();
  assert.equal(timers.waiting, false);
});

test('a failed search is reported, not shown as "no sessions"', async () => {
  const { SessionSearch } = await import('../src/sessions/sessions');
  const errors: unknown[] = [];
  const shown: string[] = [];
  const search = new SessionSearch(
    async () => {
      throw new Error('server gone');
    },
    q => {
      shown.push(q);
    },
    e => {
      errors.push(e);
    },
  );
  await search.run();
  assert.equal(shown.length, 0);
  assert.match(String(errors[0]), /server gone/);
});

test(
  'Resume-picker labels read as the title but never match what is ' + "typed, so VS Code keeps the server's ranking",
  async () => {
    const { unmatchableLabel, shownLabel, WORD_JOINER } = await import('../src/sessions/sessions');
    // VS Code's QuickPick label match (quickInputList filter): a case-insensitive prefix or contiguous substring
    const vscodeLabelMatch = (typed: string, label: string): boolean =>
      label.toLowerCase().includes(typed.trim().toLowerCase());
    const titles = ['Quokka facts', 'Tell me about a cheerful animal', 'café crème', 'नमस्ते दुनिया', 'x'];
    for (const title of titles) {
      const label = unmatchableLabel(title);
      assert.equal(shownLabel(label), title, 'the label shows the title unchanged');
      const typed = ['quokka', 'Quokka facts', 'q', 'cheerful', 'café', 'crème', 'नमस्ते', title];
      for (const query of typed.filter(q => title.toLowerCase().includes(q.toLowerCase()) && q.length > 1)) {
        assert.ok(vscodeLabelMatch(query, title), `sanity: "${query}" matches the plain title "${title}"`);
        assert.ok(!vscodeLabelMatch(query, label), `"${query}" does not match the picker label of "${title}"`);
      }
    }
    // accents written as a letter plus a combining mark stay one character on screen
    assert.ok(!unmatchableLabel('cafe\u0301').includes(`e${WORD_JOINER}\u0301`));
    // the order of the items is the order given (search results: the server's ranking)
    const items = sessionPickItems(
      [
        {
          ...session('0193cccc-best', 'Which animal smiles?', '2026-11-28T12:00:00Z', 2),
          snippet: 'quokka quokka quokka',
        },
        {
          ...session('0193dddd-next', 'Quokka facts', '2026-11-30T11:50:00Z', 4),
          snippet: 'The quokka is a cheerful marsupial',
        },
      ],
      now,
      undefined,
      true,
    ).map(i => ({ ...i, label: unmatchableLabel(i.label) }));
    assert.deepEqual(
      items.map(i => shownLabel(i.label)),
      ['Which animal smiles?', 'Quokka facts'],
    );
    assert.ok(
      items.every(i => !vscodeLabelMatch('quokka', i.label)),
      'no row is lifted above the best match by its title',
    );
  },
);
