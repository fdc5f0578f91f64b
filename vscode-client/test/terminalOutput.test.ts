import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_OUTPUT_CHARS,
  TerminalCommands,
  copiedBy,
  noSelectionNotice,
  plainOutput,
  selectionChipLabel,
  selectionContext,
  terminalContext,
  terminalLabel,
  terminalSelection,
  withBufferOutput,
} from '../src/chat/terminalOutput';

/** A clipboard holding text, as vscode.env.clipboard does. */
class FakeClipboard {
  constructor(public text: string) {}
  async readText(): Promise<string> {
    return this.text;
  }
  async writeText(value: string): Promise<void> {
    this.text = value;
  }
}

test('terminal output loses colours, shell-integration marks and carriage-return overwrites', () => {
  const raw =
    '\x1b]633;C\x07\x1b[31mFAILED\x1b[0m test_x.py::test_a\r\n' +
    'progress 10%\rprogress 100%\r\n\x1b]0;title\x1b\\done\r\n\r\n';
  assert.deepEqual(plainOutput(raw), { text: 'FAILED test_x.py::test_a\nprogress 100%\ndone', clipped: false });
});

test('a long output keeps its end, where the error usually is', () => {
  const { text, clipped } = plainOutput(`${'x'.repeat(MAX_OUTPUT_CHARS)}\nTraceback: boom`);
  assert.equal(clipped, true);
  assert.equal(text.length, MAX_OUTPUT_CHARS);
  assert.ok(text.endsWith('Traceback: boom'));
});

test('each terminal keeps its last finished command; a closed terminal is forgotten', () => {
  const commands = new TerminalCommands<string>();
  commands.started('e1');
  commands.data('e1', 'collected 3 items\r\n');
  commands.data('e1', '\x1b[32m3 passed\x1b[0m\r\n');
  commands.started('e2');
  commands.data('e2', 'ls output');
  assert.equal(commands.lastOf('t1'), undefined); // still running: nothing finished yet
  commands.ended('t1', 'e1', 'bash', ' pytest -q ', 0);
  commands.ended('t2', 'e2', 'zsh', 'ls', 2);
  assert.deepEqual(commands.lastOf('t1'), {
    terminal: 'bash',
    commandLine: 'pytest -q',
    exitCode: 0,
    output: 'collected 3 items\n3 passed',
    clipped: false,
  });
  assert.equal(terminalLabel(commands.lastOf('t1')!), '$ pytest -q');
  assert.equal(terminalLabel(commands.lastOf('t2')!), '$ ls (exit 2)');
  commands.closed('t2');
  assert.equal(commands.lastOf('t2'), undefined);
  assert.equal(commands.lastOf(undefined), undefined);
});

test('output that streams in after the end event still belongs to the command', () => {
  const commands = new TerminalCommands<string>();
  commands.started('e1');
  commands.data('e1', 'first half ');
  commands.ended('t1', 'e1', 'bash', 'make', 1);
  commands.data('e1', 'second half');
  commands.drained('e1');
  commands.data('e1', 'not this'); // a stream that is over adds nothing
  assert.equal(commands.lastOf('t1')!.output, 'first half second half');
  commands.started('e2'); // and a stream that is over before the end event keeps its output
  commands.data('e2', 'all of it');
  commands.drained('e2');
  commands.ended('t1', 'e2', 'bash', 'ls', 0);
  assert.equal(commands.lastOf('t1')!.output, 'all of it');
});

test('the attached text says which command, how it ended, then the output', () => {
  const commands = new TerminalCommands<number>();
  commands.started(10);
  commands.ended(1, 10, 'bash', 'make build', undefined);
  assert.equal(
    terminalContext(commands.lastOf(1)!),
    'The last command in the terminal "bash" was `make build`; its exit code is unknown. Its output:\n(no output)',
  );
});

test('a chatty command is buffered only to about twice what is kept', () => {
  const commands = new TerminalCommands<number>();
  commands.started(10);
  for (let i = 0; i < 200; i++) commands.data(10, `${String(i).padStart(4, '0')} ${'y'.repeat(995)}\n`);
  commands.ended(1, 10, 'bash', 'yes', 0);
  const last = commands.lastOf(1)!;
  assert.equal(last.clipped, true);
  assert.ok(last.output.endsWith('y'.repeat(995)));
  assert.ok(last.output.includes('0199 '));
  assert.ok(!last.output.includes('0100 '));
});

test("a copy command is read through the clipboard and the user's clipboard text is put back", async () => {
  const clipboard = new FakeClipboard('what the user copied');
  const copied = await copiedBy(clipboard, [
    async () => {
      await clipboard.writeText('selected in the terminal');
    },
  ]);
  assert.deepEqual(copied, ['selected in the terminal']);
  assert.equal(clipboard.text, 'what the user copied');
});

test("a command that copies nothing reads as undefined, not as the user's clipboard or the previous copy", async () => {
  const clipboard = new FakeClipboard('selected in the terminal'); // the user's clipboard may equal a selection
  const copied = await copiedBy(clipboard, [
    async () => {
      await clipboard.writeText('pytest -q');
    },
    async () => {
      /* no selection: VS Code copies nothing */
    },
  ]);
  assert.deepEqual(copied, ['pytest -q', undefined]);
  assert.equal(clipboard.text, 'selected in the terminal');
});

test('the clipboard is restored when a copy command fails', async () => {
  const clipboard = new FakeClipboard('keep me');
  const copied = await copiedBy(clipboard, [
    async () => {
      throw new Error('command not found');
    },
  ]);
  assert.deepEqual(copied, [undefined]);
  assert.equal(clipboard.text, 'keep me');
});

test("an empty stream is filled from the buffer only when the buffer's last command is the same one", () => {
  const streamed = { terminal: 'bash', commandLine: 'echo hi', exitCode: 0, output: '', clipped: false };
  assert.equal(withBufferOutput(streamed, 'echo hi', 'hi\r\n').output, 'hi');
  assert.equal(withBufferOutput(streamed, 'ls', 'a b c').output, '', "another command's output is not taken");
  assert.equal(withBufferOutput(streamed, 'echo hi', undefined).output, '');
  const full = { ...streamed, output: 'from the stream' };
  assert.equal(withBufferOutput(full, 'echo hi', 'from the buffer').output, 'from the stream');
});

test('a terminal selection becomes a labelled chip and context; a blank one is no selection', () => {
  const s = terminalSelection('bash', 'Traceback (most recent call last):\r\n  File "x.py"\r\n')!;
  assert.deepEqual(s, { terminal: 'bash', text: 'Traceback (most recent call last):\n  File "x.py"', clipped: false });
  assert.equal(selectionChipLabel(s), 'Terminal selection (bash, 2 lines)');
  assert.equal(
    selectionContext(s),
    'Text the user selected in the terminal "bash":\nTraceback (most recent call last):\n  File "x.py"',
  );
  assert.equal(terminalSelection('bash', '  \n '), undefined);
  assert.equal(terminalSelection('bash', undefined), undefined);
  assert.match(noSelectionNotice('bash'), /Nothing is selected in the terminal "bash"/);
  assert.match(noSelectionNotice(undefined), /no active terminal/);
});
