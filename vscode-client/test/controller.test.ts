import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChatController } from '../src/chat/controller';
import { SETUP_NEEDED } from '../src/chat/chatModel';
import type { ShiroServer } from '../src/server/server';
import { stub } from './vscode-stub';
import type { HostMessage } from '../src/shared/webviewProtocol';

interface Call {
  method: string;
  params: unknown;
  token?: { isCancellationRequested: boolean; onCancellationRequested(l: () => void): unknown };
}

function fakeServer(answer: (c: Call) => Promise<unknown> | unknown): { server: ShiroServer; calls: Call[] } {
  const calls: Call[] = [];
  const server = {
    isRunning: true,
    async sendRequest(method: string, params: unknown, token?: Call['token']) {
      const call = { method, params, token };
      calls.push(call);
      return answer(call);
    },
  } as unknown as ShiroServer;
  return { server, calls };
}

const usage = { inputTokens: 1, outputTokens: 1, costUsd: null };

test('a prompt is sent as shiro/chat and the streamed events build the answer', async () => {
  let finish!: (v: unknown) => void;
  const { server, calls } = fakeServer(c =>
    c.method === 'shiro/chat'
      ? new Promise(r => {
          finish = r;
        })
      : {},
  );
  const ctl = new ChatController(server);
  const posted: HostMessage[] = [];
  ctl.attach(m => posted.push(m));
  const done = ctl.submit('  explain main.py ');
  assert.deepEqual(calls[0].params, { text: 'explain main.py' });
  ctl.onEvent({ sessionId: 's', taskId: 't1', seq: 0, event: { type: 'text', text: 'It ' } });
  ctl.onEvent({ sessionId: 's', taskId: 't1', seq: 1, event: { type: 'text', text: 'prints.' } });
  finish({ sessionId: 's', taskId: 't1', stopReason: 'done', usage });
  await done;
  const kinds = ctl.model.state.entries.map(e => e.kind);
  assert.deepEqual(kinds, ['user', 'assistant']);
  const answer = ctl.model.state.entries[1];
  assert.ok(answer.kind === 'assistant' && answer.text === 'It prints.' && !answer.streaming);
  assert.ok(posted.some(m => m.type === 'busy' && m.busy));
  assert.ok(posted.some(m => m.type === 'busy' && !m.busy));
});

test('Stop cancels the running shiro/chat through its token; the "cancelled" result is shown', async () => {
  const { server } = fakeServer(c =>
    c.method !== 'shiro/chat'
      ? {}
      : new Promise(resolve => {
          c.token!.onCancellationRequested(() =>
            resolve({ sessionId: 's', taskId: 't1', stopReason: 'cancelled', usage }),
          );
        }),
  );
  const ctl = new ChatController(server);
  const done = ctl.submit('long task');
  ctl.onEvent({ sessionId: 's', taskId: 't1', seq: 0, event: { type: 'text', text: 'partial' } });
  await ctl.handleMessage({ type: 'cancel' });
  await done;
  const last = ctl.model.state.entries.at(-1)!;
  assert.ok(last.kind === 'notice' && last.text === 'Stopped.');
  assert.equal(ctl.model.state.busy, false);
});

test(
  'typing during a turn queues: the queue comes from ' + 'shiro/queue and the prompt shows when its turn starts',
  async () => {
    const pending: ((v: unknown) => void)[] = [];
    const { server, calls } = fakeServer(c => {
      if (c.method === 'shiro/chat') return new Promise(r => pending.push(r));
      if (c.method === 'shiro/queue') return { queued: [{ taskId: 't2', text: 'second' }] };
      return {};
    });
    const ctl = new ChatController(server);
    const first = ctl.submit('first');
    const second = ctl.submit('second');
    assert.deepEqual(
      ctl.model.state.entries.map(e => e.kind === 'user' && e.text),
      ['first'],
      'queued prompt not shown yet',
    );
    await ctl.refreshQueue();
    assert.deepEqual(ctl.model.state.queue, [{ taskId: 't2', text: 'second' }]);
    pending[0]({ sessionId: 's', taskId: 't1', stopReason: 'done', usage });
    await first;
    ctl.onEvent({ sessionId: 's', taskId: 't2', seq: 0, event: { type: 'text', text: 'ok' } });
    assert.deepEqual(
      ctl.model.state.entries.filter(e => e.kind === 'user').map(e => e.kind === 'user' && e.text),
      ['first', 'second'],
    );
    pending[1]({ sessionId: 's', taskId: 't2', stopReason: 'done', usage });
    await second;
    assert.ok(calls.some(c => c.method === 'shiro/queue'));
  },
);

test('a queued prompt whose queue was cleared never shows as sent', async () => {
  const pending: ((v: unknown) => void)[] = [];
  const { server } = fakeServer(c => {
    if (c.method === 'shiro/chat') return new Promise(r => pending.push(r));
    if (c.method === 'shiro/queue/clear') return { cleared: 1 };
    if (c.method === 'shiro/queue') return { queued: [] };
    return {};
  });
  const ctl = new ChatController(server);
  const first = ctl.submit('first');
  const second = ctl.submit('second');
  await ctl.handleMessage({ type: 'clearQueue' });
  pending[1]({ sessionId: 's', taskId: 't2', stopReason: 'queue-cleared', usage });
  await second;
  pending[0]({ sessionId: 's', taskId: 't1', stopReason: 'done', usage });
  await first;
  const texts = ctl.model.state.entries.map(e => (e.kind === 'user' || e.kind === 'notice' ? e.text : e.kind));
  assert.deepEqual(texts, ['first', 'Cleared 1 queued message.']);
});

test('slash commands become requests and never reach shiro/chat', async () => {
  const { server, calls } = fakeServer(c => (c.method === 'shiro/session/compact' ? { before: 10, after: 2 } : {}));
  const ctl = new ChatController(server);
  await ctl.submit('/compact');
  await ctl.submit('/nope');
  assert.deepEqual(
    calls.map(c => c.method),
    ['shiro/session/compact', 'shiro/commands/list'], // /nope may be a command file added since: the list is read again
  );
  const notices = ctl.model.state.entries.filter(e => e.kind === 'notice').map(e => e.kind === 'notice' && e.text);
  assert.deepEqual(notices, [
    'Compacted the conversation: 10 messages → 2 messages.',
    'unknown command /nope - try /help',
  ]);
});

test('/todos shows the task list as the task panel draws it, not as raw [>] and [!] marks', async () => {
  const todos = {
    todos: [
      { content: 'plan', status: 'in_progress' },
      { content: 'ship', status: 'blocked', note: 'needs key' },
    ],
    progress: { done: 0, total: 2, blocked: 1 },
    rendered: 'x',
  };
  const empty = { todos: [], progress: { done: 0, total: 0, blocked: 0 }, rendered: '' };
  let answer: unknown = todos;
  const { server } = fakeServer(c => (c.method === 'shiro/todos' ? answer : {}));
  const ctl = new ChatController(server);
  await ctl.submit('/todos');
  answer = empty;
  await ctl.submit('/todos');
  const notices = ctl.model.state.entries.filter(e => e.kind === 'notice');
  assert.deepEqual(
    notices.map(n => n.kind === 'notice' && [n.text, n.todos]),
    [
      ['**Task list**', todos],
      ['No task list yet.', undefined],
    ],
  );
  assert.ok(notices.every(n => n.kind === 'notice' && !/\[[>!x ]\]/.test(n.text)));
});

test('/resume <id> loads the transcript and the task list', async () => {
  const todos = {
    todos: [{ content: 'write tests', status: 'in_progress' }],
    progress: { done: 0, total: 1, blocked: 0 },
    rendered: 'x',
  };
  const { server } = fakeServer(c =>
    c.method !== 'shiro/session/resume'
      ? {}
      : {
          session: { id: '0193abcd-1', title: 'fix it', messageCount: 3 },
          transcript: [
            { role: 'user', content: 'fix it' },
            {
              role: 'assistant',
              content: [
                { type: 'reasoning', text: 'hmm' },
                { type: 'text', text: 'Looking.' },
                { type: 'tool-call', toolCallId: 'c1', toolName: 'read_file', input: { path: 'a.py' } },
              ],
            },
            {
              role: 'tool',
              content: [
                {
                  type: 'tool-result',
                  toolCallId: 'c1',
                  toolName: 'read_file',
                  output: { type: 'text', value: 'print(1)' },
                },
              ],
            },
          ],
          todos,
        },
  );
  const ctl = new ChatController(server);
  await ctl.submit('/resume 0193');
  const e = ctl.model.state.entries;
  assert.deepEqual(
    e.map(x => x.kind),
    ['user', 'reasoning', 'assistant', 'tool', 'notice'],
  );
  const tool = e[3];
  assert.ok(
    tool.kind === 'tool' && tool.status === 'done' && tool.output === 'print(1)' && tool.input.includes('a.py'),
  );
  assert.deepEqual(ctl.model.state.todos, todos);
  assert.match(e[4].kind === 'notice' ? e[4].text : '', /Resumed 0193abcd \(3 messages\): fix it/);
});

test('a failing request is shown as an error in the chat, not thrown', async () => {
  const { server } = fakeServer(() => {
    throw new Error('no session matching "zz"');
  });
  const ctl = new ChatController(server);
  await ctl.submit('/resume zz');
  const last = ctl.model.state.entries.at(-1)!;
  assert.ok(last.kind === 'notice' && last.level === 'error' && /no session matching/.test(last.text));
});

test('copy from a code block goes to the clipboard', async () => {
  stub.reset();
  const ctl = new ChatController(fakeServer(() => ({})).server);
  await ctl.handleMessage({ type: 'copy', text: 'npm test' });
  assert.equal(stub.clipboard, 'npm test');
});

test(
  'prompt history: the server list once, then what was typed here ' + '(slash commands too) survives a webview reload',
  async () => {
    const { server } = fakeServer(c => (c.method === 'shiro/history' ? { prompts: ['old prompt'] } : {}));
    const ctl = new ChatController(server);
    const posted: HostMessage[] = [];
    ctl.attach(m => posted.push(m));
    await ctl.handleMessage({ type: 'ready' });
    await new Promise(r => setTimeout(r, 0));
    await ctl.submit('/help');
    posted.length = 0;
    await ctl.handleMessage({ type: 'ready' });
    await new Promise(r => setTimeout(r, 0));
    const state = posted.find(m => m.type === 'state');
    assert.ok(state && state.type === 'state');
    assert.deepEqual(state.history, ['old prompt', '/help']);
    assert.equal(
      posted.some(m => m.type === 'history'),
      false,
    );
  },
);

test('resuming a long session sends the transcript once, as one state (not one message per entry)', () => {
  const { server } = fakeServer(() => ({}));
  const ctl = new ChatController(server);
  const posted: HostMessage[] = [];
  ctl.attach(m => posted.push(m));
  const transcript = Array.from({ length: 2400 }, (_, i) => ({
    role: i % 2 ? ('assistant' as const) : ('user' as const),
    content: `m${i}`,
  }));
  const session = {
    id: 's',
    title: 't',
    cwd: '/',
    createdAt: '',
    updatedAt: '',
    messageCount: 2400,
    model: 'm',
    inputTokens: 0,
    outputTokens: 0,
    costUsd: null,
  };
  ctl.loadResumed({
    session,
    transcript,
    todos: { todos: [], progress: { done: 0, total: 0, blocked: 0 }, rendered: '' },
  });
  const states = posted.filter(m => m.type === 'state');
  assert.equal(states.length, 1);
  assert.equal(posted.filter(m => m.type === 'entry').length, 0);
  assert.equal(states[0].type === 'state' && states[0].state.entries.length, 2400);
});

test(
  'an error is shown once (event + result), the cut answer is ' + 'marked incomplete, and Retry sends the prompt again',
  async () => {
    let turns = 0;
    const { server, calls } = fakeServer(c => {
      if (c.method !== 'shiro/chat') return {};
      turns++;
      return {
        sessionId: 's',
        taskId: `t${turns}`,
        stopReason: turns === 1 ? 'error' : 'done',
        usage,
        ...(turns === 1 ? { error: 'HTTP 500: boom' } : {}),
      };
    });
    const ctl = new ChatController(server);
    const first = ctl.submit('fix it');
    ctl.onEvent({ sessionId: 's', taskId: 't1', seq: 0, event: { type: 'text', text: 'Half an ans' } });
    ctl.onEvent({ sessionId: 's', taskId: 't1', seq: 1, event: { type: 'error', error: 'HTTP 500: boom' } });
    await first;
    const errors = ctl.model.state.entries.filter(e => e.kind === 'notice' && e.level === 'error');
    assert.equal(errors.length, 1, 'the error appears once');
    const answer = ctl.model.state.entries.find(e => e.kind === 'assistant');
    assert.ok(answer?.kind === 'assistant' && answer.incomplete);
    const notice = errors[0];
    assert.ok(notice.kind === 'notice' && notice.retry === 'fix it');
    await ctl.handleMessage({ type: 'retry', id: notice.id });
    assert.deepEqual(
      calls.filter(c => c.method === 'shiro/chat').map(c => c.params),
      [{ text: 'fix it' }, { text: 'fix it' }],
    );
    assert.ok(notice.kind === 'notice' && notice.retry === undefined, 'the Retry button goes away');
  },
);

test('a request that fails outright shows its reason once, with Retry', async () => {
  const { server } = fakeServer(c => {
    if (c.method === 'shiro/chat') throw new Error('No API key is set');
    return {};
  });
  const ctl = new ChatController(server);
  await ctl.submit('hello');
  const errors = ctl.model.state.entries.filter(e => e.kind === 'notice' && e.level === 'error');
  assert.equal(errors.length, 1);
  assert.ok(errors[0].kind === 'notice' && /No API key/.test(errors[0].text) && errors[0].retry === 'hello');
});

test('a turn that fails for want of a model points at the setup card and shows it', async () => {
  const { server } = fakeServer(c => {
    if (c.method === 'shiro/history') return { prompts: [] };
    if (c.method !== 'shiro/chat') return {};
    ctl.onEvent({
      sessionId: 's',
      taskId: 't1',
      seq: 0,
      event: { type: 'error', error: 'No API key. Set shiro.baseUrl…', needsSetup: true },
    });
    return { sessionId: 's', taskId: 't1', stopReason: 'error', usage: {}, error: 'No API key.' };
  });
  const ctl = new ChatController(server);
  const posted: HostMessage[] = [];
  ctl.attach(m => posted.push(m));
  await ctl.handleMessage({ type: 'ready' });
  await ctl.submit('hello');
  const errors = ctl.model.state.entries.filter(e => e.kind === 'notice' && e.level === 'error');
  assert.equal(errors.length, 1);
  assert.ok(errors[0].kind === 'notice' && errors[0].text === SETUP_NEEDED && errors[0].retry === 'hello');
  assert.ok(posted.some(m => m.type === 'showSetup'));
});

test(
  'multi-root: /new and /clear typed in the chat send the chosen ' + 'folder as root, like the New session command',
  async () => {
    const fresh = {
      session: {
        id: 'n',
        title: '',
        cwd: '/work/web',
        createdAt: '',
        updatedAt: '',
        messageCount: 0,
        model: 'm',
        inputTokens: 0,
        outputTokens: 0,
        costUsd: null,
      },
      previous: null,
    };
    const { server, calls } = fakeServer(c =>
      c.method === 'shiro/session/new' || c.method === 'shiro/session/clear' ? fresh : {},
    );
    const ctl = new ChatController(server);
    const asked: boolean[] = [];
    const picks: (string | undefined)[] = ['/work/web', '/work/api', undefined];
    ctl.rootSource = bound => {
      asked.push(bound);
      return Promise.resolve(picks.shift());
    };
    // a session with messages: a new one may go anywhere
    ctl.setSession({ ...fresh.session, id: 'old', messageCount: 4 });
    await ctl.submit('/new');
    await ctl.submit('/clear');
    await ctl.submit('/new'); // the picker dismissed: no root, the live session's folder
    assert.deepEqual(
      calls.filter(c => c.method.startsWith('shiro/session/')).map(c => [c.method, c.params]),
      [
        ['shiro/session/new', { root: '/work/web' }],
        ['shiro/session/clear', { root: '/work/api' }],
        ['shiro/session/new', {}],
      ],
    );
    assert.deepEqual(asked, [false, false, false]);
    await ctl.submit('/save');
    assert.equal(asked.length, 3, 'other commands do not ask for a folder');
  },
);

test('"Set up the model endpoint" with the panel still opening shows the card once its script is up', async () => {
  const ctl = new ChatController(fakeServer(c => (c.method === 'shiro/history' ? { prompts: [] } : {})).server);
  const posted: HostMessage[] = [];
  ctl.attach(m => posted.push(m));
  ctl.showSetup(); // the command revealed the view; its script has not said ready yet
  assert.equal(
    posted.some(m => m.type === 'showSetup'),
    false,
  );
  await ctl.handleMessage({ type: 'ready' });
  assert.equal(posted.filter(m => m.type === 'showSetup').length, 1);
  ctl.showSetup(); // and at once while the view is up
  assert.equal(posted.filter(m => m.type === 'showSetup').length, 2);
  await new Promise(r => setTimeout(r, 0));
});

test(
  'multi-root: a fresh session sends the chosen folder as root; a ' + 'session with messages is bound and sends none',
  async () => {
    const { server, calls } = fakeServer(c =>
      c.method === 'shiro/chat' ? { sessionId: 's', taskId: 't', stopReason: 'done', usage } : {},
    );
    const ctl = new ChatController(server);
    const asked: boolean[] = [];
    ctl.rootSource = bound => {
      asked.push(bound);
      return bound ? undefined : Promise.resolve('/work/web');
    };
    await ctl.submit('first');
    assert.deepEqual(calls.find(c => c.method === 'shiro/chat')?.params, { text: 'first', root: '/work/web' });
    ctl.setSession({
      id: 's',
      title: 'first',
      cwd: '/work/web',
      createdAt: '',
      updatedAt: '',
      messageCount: 2,
      model: 'm',
      inputTokens: 0,
      outputTokens: 0,
      costUsd: null,
    });
    await ctl.submit('second');
    assert.deepEqual(
      calls.filter(c => c.method === 'shiro/chat').map(c => c.params),
      [{ text: 'first', root: '/work/web' }, { text: 'second' }],
    );
    assert.deepEqual(asked, [false, true]);
  },
);

test(
  '/compact draws a divider while the summary runs, then its ' +
    "summary and what left the model's view; undo marks it",
  async () => {
    const phases: string[] = [];
    const { server, calls } = fakeServer(c => {
      if (c.method === 'shiro/session/compact') {
        ctl.compactionProgress({ phase: 'summarizing', messages: 2 });
        const divider = ctl.model.state.entries.at(-1);
        phases.push(divider?.kind === 'compaction' ? divider.state : 'none');
        return { before: 2, after: 1, compaction: { at: 2, summary: 'we said hello', createdAt: '' } };
      }
      if (c.method === 'shiro/session/uncompact') return { before: 1, after: 2, compactions: [] };
      return {};
    });
    const ctl = new ChatController(server);
    ctl.model.loadTranscript([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: [{ type: 'text', text: 'hi there' }] },
    ]);
    await ctl.submit('/compact');
    assert.deepEqual(phases, ['summarizing']);
    const divider = ctl.model.state.entries.find(e => e.kind === 'compaction');
    assert.ok(divider?.kind === 'compaction');
    assert.equal(divider.state, 'active');
    assert.equal(divider.summary, 'we said hello');
    assert.deepEqual(divider.dropped, ['You: hello', 'Shiro: hi there']);
    assert.equal(
      ctl.model.state.entries.some(e => e.kind === 'notice'),
      false,
    ); // the divider says it

    await ctl.handleMessage({ type: 'undoCompaction' });
    assert.deepEqual(
      calls.map(c => c.method),
      ['shiro/session/compact', 'shiro/session/uncompact'],
    );
    assert.equal(divider.state, 'undone');
    assert.match(
      ctl.model.state.entries.at(-1)?.kind === 'notice'
        ? (ctl.model.state.entries.at(-1) as { text: string }).text
        : '',
      /sees the 2 messages again/,
    );
  },
);

test('an undo that no longer fits says why and leaves the divider as it was', async () => {
  const { server } = fakeServer(c => {
    if (c.method === 'shiro/session/uncompact')
      throw new Error('The earlier conversation no longer fits: it would carry about 9,000 tokens');
    return {};
  });
  const ctl = new ChatController(server);
  ctl.model.loadTranscript([{ role: 'user', content: 'hello' }], [{ at: 1, summary: 'S', createdAt: '' }]);
  await ctl.handleMessage({ type: 'undoCompaction' });
  const [, , divider, notice] = ctl.model.state.entries; // hello, the /compact that made it, its divider
  assert.ok(divider.kind === 'compaction' && divider.state === 'active');
  assert.ok(notice.kind === 'notice' && notice.level === 'warn' && /no longer fits/.test(notice.text));
});

test(
  'a resumed transcript has a divider at each compaction point, ' + 'and one for a file compacted by an older version',
  () => {
    const ctl = new ChatController(fakeServer(() => ({})).server);
    const transcript = [
      { role: 'user' as const, content: 'one' },
      { role: 'user' as const, content: 'two' },
      { role: 'user' as const, content: 'three' },
    ];
    ctl.model.loadTranscript(transcript, [
      { at: 0, summary: 'old', createdAt: '' },
      { at: 2, summary: 'new', createdAt: '' },
    ]);
    const kinds = ctl.model.state.entries.map(e =>
      e.kind === 'compaction' ? `|${e.summary}:${e.messages}:${e.dropped.length}` : e.kind,
    );
    // each manual compaction shows the /compact that made it, as the live panel did
    assert.deepEqual(kinds, ['user', '|old:0:0', 'user', 'user', 'user', '|new:2:2', 'user']);
  },
);

const COMMANDS = {
  commands: [
    {
      name: 'triage',
      description: 'Sort the open bugs',
      argumentHint: '[area]',
      source: '.claude/commands/triage.md',
      scope: 'project',
      inputs: [],
      notes: [],
    },
    {
      name: 'scaffold',
      description: 'Scaffold a module',
      argumentHint: '',
      source: '.github/prompts/scaffold.prompt.md',
      scope: 'project',
      inputs: [{ name: 'module', placeholder: 'its name' }],
      notes: [],
    },
    {
      name: 'compact',
      description: 'not the built-in',
      argumentHint: '',
      source: '.claude/commands/compact.md',
      scope: 'project',
      inputs: [],
      notes: [],
      shadowedBy: 'the built-in /compact',
    },
  ],
};

test('a custom command goes to shiro/chat as typed; its missing inputs are asked for in the panel first', async () => {
  const chats: unknown[] = [];
  const { server } = fakeServer(c => {
    if (c.method === 'shiro/commands/list') return COMMANDS;
    if (c.method === 'shiro/chat') chats.push(c.params);
    return c.method === 'shiro/chat' ? { sessionId: 's', taskId: 't', stopReason: 'done', usage } : {};
  });
  const ctl = new ChatController(server);
  const posted: HostMessage[] = [];
  ctl.attach(m => posted.push(m));
  await ctl.submit('/triage billing');
  assert.deepEqual(chats, [{ text: '/triage billing' }]);
  const offered = posted.find(m => m.type === 'commands');
  assert.ok(offered && offered.type === 'commands');
  assert.deepEqual(
    offered.items.map(i => [i.label, i.detail]),
    [
      ['/triage [area]', 'Sort the open bugs · .claude/commands/triage.md'],
      ['/scaffold', 'Scaffold a module · .github/prompts/scaffold.prompt.md'],
    ],
  );
  await ctl.submit('/scaffold');
  assert.equal(chats.length, 1); // not sent: the form asks first
  const ask = posted.find(m => m.type === 'askInputs');
  assert.ok(ask && ask.type === 'askInputs');
  assert.deepEqual(ask.ask.inputs, [{ name: 'module', placeholder: 'its name' }]);
  await ctl.handleMessage({ type: 'inputs', id: ask.ask.id, values: { module: 'ledger' } });
  assert.deepEqual(chats[1], { text: '/scaffold', inputs: { module: 'ledger' } });
  await ctl.submit('/scaffold module=ledger');
  assert.deepEqual(chats[2], { text: '/scaffold module=ledger' });
  await ctl.handleMessage({ type: 'inputs', id: ask.ask.id, values: { module: 'again' } });
  assert.equal(chats.length, 3); // an answered form is not sent twice
});

test('/help lists the custom commands with their source, and those a built-in hides', async () => {
  const { server } = fakeServer(c => (c.method === 'shiro/commands/list' ? COMMANDS : {}));
  const ctl = new ChatController(server);
  await ctl.submit('/help');
  const help = ctl.model.state.entries.find(e => e.kind === 'notice');
  assert.ok(help && help.kind === 'notice');
  assert.match(help.text, /- `\/triage \[area\]` — Sort the open bugs \(\.claude\/commands\/triage\.md\)/);
  assert.match(help.text, /`\/compact` — not used: the built-in \/compact has this name/);
  assert.match(help.text, /- `\/compact` — summarise the conversation/); // the built-in is still there
});

test('a pasted image is kept by the server, shown as a chip, and sent with the next prompt', async () => {
  const thumbnail = 'data:image/png;base64,AAAA';
  const { server, calls } = fakeServer(c => {
    if (c.method === 'shiro/images/add')
      return { id: 'f00d', name: 'shot.png', mediaType: 'image/png', width: 4, height: 2, thumbnail };
    if (c.method === 'shiro/chat') return { sessionId: 's', taskId: 't1', stopReason: 'done', usage };
    return {};
  });
  const ctl = new ChatController(server);
  const posted: HostMessage[] = [];
  ctl.attach(m => posted.push(m));
  await ctl.handleMessage({ type: 'addImage', name: 'shot.png', dataUrl: 'data:image/png;base64,iVBORw0K' });
  assert.deepEqual(calls[0], {
    method: 'shiro/images/add',
    params: { name: 'shot.png', data: 'iVBORw0K' },
    token: undefined,
  });
  assert.ok(posted.some(m => m.type === 'image' && m.image.id === 'f00d' && m.image.thumbnail === thumbnail));
  await ctl.handleMessage({
    type: 'send',
    text: 'what is this?',
    images: [{ id: 'f00d', name: 'shot.png', thumbnail }],
  });
  const chat = calls.find(c => c.method === 'shiro/chat');
  assert.deepEqual(chat?.params, { text: 'what is this?', images: [{ id: 'f00d', name: 'shot.png' }] });
  const user = ctl.model.state.entries[0];
  assert.ok(user.kind === 'user' && user.images?.[0]?.thumbnail === thumbnail);
});

test('an image the server cannot keep is said in the chat, and no chip appears', async () => {
  const { server } = fakeServer(c => {
    if (c.method === 'shiro/images/add') throw new Error('notes.png is not an image Shiro can read');
    return {};
  });
  const ctl = new ChatController(server);
  const posted: HostMessage[] = [];
  ctl.attach(m => posted.push(m));
  await ctl.handleMessage({ type: 'addImage', name: 'notes.png', dataUrl: 'data:image/png;base64,AAAA' });
  assert.ok(!posted.some(m => m.type === 'image'));
  const notice = ctl.model.state.entries.at(-1);
  assert.ok(notice?.kind === 'notice' && /Not attached: .*not an image/.test(notice.text));
});
