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
  commands.started('t1');
  commands.data('t1', 'collected 3 items\r\n');
  commands.data('t1', '\x1b[32m3 passed\x1b[0m\r\n');
  commands.started('t2');
  commands.data('t2', 'ls output');
  assert.equal(commands.lastOf('t1'), undefined);   // still running: nothing finished yet
  commands.ended('t1', 'bash', ' pytest -q ', 0);
  commands.ended('t2', 'zsh', 'ls', 2);
  assert.deepEqual(commands.lastOf('t1'), { terminal: 'bash', commandLine: 'pytest -q', exitCode: 0, output: 'collected 3 items\n3 passed', clipped: false });
  assert.equal(terminalLabel(commands.lastOf('t1')!), '$ pytest -q');
  assert.equal(terminalLabel(commands.lastOf('t2')!), '$ ls (exit 2)');
  commands.closed('t2');
  assert.equal(commands.lastOf('t2'), undefined);
  assert.equal(commands.lastOf(undefined), undefined);
});

test('the attached text says which command, how it ended, then the output', () => {
  const commands = new TerminalCommands<number>();
  commands.started(1);
  commands.ended(1, 'bash', 'make build', undefined);
  assert.equal(terminalContext(commands.lastOf(1)!),
    'The last command in the terminal "bash" was `make build`; its exit code is unknown. Its output:\n(no output)');
});

test('a chatty command is buffered only to about twice what is kept', () => {
  const commands = new TerminalCommands<number>();
  commands.started(1);
  for (let i = 0; i < 200; i++) commands.data(1, `${String(i).padStart(4, '0')} ${'y'.repeat(995)}\n`);
  commands.ended(1, 'bash', 'yes', 0);
  const last = commands.lastOf(1)!;
  assert.equal(last.clipped, true);
  assert.ok(last.output.endsWith('y'.repeat(995)));
  assert.ok(last.output.includes('0199 '));
  assert.ok(!last.output.includes('0100 '));
});
