import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_OUTPUT_CHARS, TerminalCommands, plainOutput, terminalContext, terminalLabel } from '../src/terminalOutput';

test('terminal output loses colours, shell-integration marks and carriage-return overwrites', () => {
  const raw = '\x1b]633;C\x07\x1b[31mFAILED\x1b[0m test_x.py::test_a\r\n'
    + 'progress 10%\rprogress 100%\r\n\x1b]0;title\x1b\\done\r\n\r\n';
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
  assert.equal(commands.lastOf('t1'), undefined);   // still running: nothing finished yet
  commands.ended('t1', 'e1', 'bash', ' pytest -q ', 0);
  commands.ended('t2', 'e2', 'zsh', 'ls', 2);
  assert.deepEqual(commands.lastOf('t1'), { terminal: 'bash', commandLine: 'pytest -q', exitCode: 0, output: 'collected 3 items\n3 passed', clipped: false });
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
  commands.data('e1', 'not this');   // a stream that is over adds nothing
  assert.equal(commands.lastOf('t1')!.output, 'first half second half');
  commands.started('e2');   // and a stream that is over before the end event keeps its output
  commands.data('e2', 'all of it');
  commands.drained('e2');
  commands.ended('t1', 'e2', 'bash', 'ls', 0);
  assert.equal(commands.lastOf('t1')!.output, 'all of it');
});

test('the attached text says which command, how it ended, then the output', () => {
  const commands = new TerminalCommands<number>();
  commands.started(10);
  commands.ended(1, 10, 'bash', 'make build', undefined);
  assert.equal(terminalContext(commands.lastOf(1)!),
    'The last command in the terminal "bash" was `make build`; its exit code is unknown. Its output:\n(no output)');
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
