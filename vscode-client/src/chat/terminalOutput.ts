// The `@terminal` mention: the active terminal's last command and its output, as read through VS Code's
// shell integration (window.onDidStartTerminalShellExecution + TerminalShellExecution.read()), and
// `@terminal selection`. Pure: no vscode.
//
// VS Code 1.100's stable API has no `Terminal.selection` and no way to read a terminal's buffer, so both the
// selection and (when the stream came back empty) the last command's output are read the way peers do it:
// run VS Code's own copy command (`workbench.action.terminal.copySelection` / `copyLastCommandOutput`,
// which act on the active terminal), read the clipboard, then put the user's clipboard text back.
//
// Why the stream can come back empty: the workbench forwards a command's output to extensions only from
// the moment it has parsed the command's start mark (OSC 633;C). A command that prints and ends at once
// can deliver its output in the same chunk as that mark, before the forwarding starts, so `read()` gets
// nothing however early it is called. The terminal buffer still holds the output (VS Code's own
// "Copy Last Command Output" reads it from there), so that is the fallback.

export const MAX_OUTPUT_CHARS = 20_000;

// CSI (colours, cursor moves), OSC (titles, shell-integration marks such as 633;…) and other ESC sequences.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

/**
 * Terminal output as plain text: escape sequences gone, `\r` overwrites resolved, at most `max` chars
 * (the end kept).
 */
export function plainOutput(raw: string, max = MAX_OUTPUT_CHARS): { text: string; clipped: boolean } {
  const lines = raw
    .replace(ANSI, '')
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map(line => {
      const parts = line.split('\r');
      return parts.reduce((shown, part) => part + shown.slice(part.length), '');
    });
  const text = lines
    .join('\n')
    // eslint-disable-next-line no-control-regex -- the control characters a terminal leaves behind
    .replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '')
    .replace(/\n+$/, '');
  if (text.length <= max) return { text, clipped: false };
  return { text: text.slice(text.length - max), clipped: true };
}

export interface FinishedCommand {
  terminal: string;
  commandLine: string;
  exitCode: number | undefined;
  output: string;
  clipped: boolean;
}

/** The chip's label and the picker row's detail. */
export function terminalLabel(c: FinishedCommand): string {
  const exit = c.exitCode === undefined ? '' : c.exitCode === 0 ? '' : ` (exit ${c.exitCode})`;
  const line = c.commandLine.length > 50 ? `${c.commandLine.slice(0, 49)}…` : c.commandLine;
  return `$ ${line}${exit}`;
}

/** The attached text: which terminal, the command, how it ended, then its output. */
export function terminalContext(c: FinishedCommand): string {
  const ended = c.exitCode === undefined ? 'its exit code is unknown' : `it exited with code ${c.exitCode}`;
  const clipped = c.clipped ? ` (only the last ${MAX_OUTPUT_CHARS} characters of its output are shown)` : '';
  return (
    `The last command in the terminal "${c.terminal}" was \`${c.commandLine}\`; ${ended}${clipped}. Its output:\n` +
    (c.output ? c.output : '(no output)')
  );
}

/** The clipboard, as `vscode.env.clipboard` offers it. */
export interface Clipboard {
  readText(): Thenable<string>;
  writeText(value: string): Thenable<void>;
}

/** Written before each copy command, so a command that copied nothing is told apart from one that copied. */
export const CLIPBOARD_PROBE = '\u2063shiro: nothing was copied\u2063';

/**
 * Run each copy command and read what it put on the clipboard (undefined: it copied nothing), then restore
 * the clipboard text the user had, also when a command fails. Only text is restored: the stable API cannot
 * read an image or other formats from the clipboard.
 */
export async function copiedBy(
  clipboard: Clipboard,
  commands: readonly (() => Thenable<unknown>)[],
): Promise<(string | undefined)[]> {
  const saved = await clipboard.readText();
  const copied: (string | undefined)[] = [];
  try {
    for (const run of commands) {
      await clipboard.writeText(CLIPBOARD_PROBE);
      try {
        await run();
      } catch {
        /* the command is unavailable (no terminal, no shell integration) */
      }
      const text = await clipboard.readText();
      copied.push(text === CLIPBOARD_PROBE || text === '' ? undefined : text);
    }
  } finally {
    await clipboard.writeText(saved);
  }
  return copied;
}

/**
 * The last command's output from the terminal buffer, when the stream gave none and the buffer's last
 * command is this one.
 */
export function withBufferOutput(
  c: FinishedCommand,
  bufferCommand: string | undefined,
  bufferOutput: string | undefined,
): FinishedCommand {
  if (c.output || bufferOutput === undefined || bufferCommand?.trim() !== c.commandLine) return c;
  const { text, clipped } = plainOutput(bufferOutput);
  return { ...c, output: text, clipped };
}

export interface TerminalSelection {
  terminal: string;
  text: string;
  clipped: boolean;
}

/** The text selected in a terminal, as attached (escape sequences gone, the end kept), or undefined when blank. */
export function terminalSelection(terminal: string, copied: string | undefined): TerminalSelection | undefined {
  if (copied === undefined) return undefined;
  const { text, clipped } = plainOutput(copied);
  return text.trim() ? { terminal, text, clipped } : undefined;
}

export function selectionChipLabel(s: TerminalSelection): string {
  const lines = s.text.split('\n').length;
  return `Terminal selection (${s.terminal}, ${lines} line${lines === 1 ? '' : 's'})`;
}

export function selectionContext(s: TerminalSelection): string {
  const clipped = s.clipped ? ` (only its last ${MAX_OUTPUT_CHARS} characters are shown)` : '';
  return `Text the user selected in the terminal "${s.terminal}"${clipped}:\n${s.text}`;
}

/** What the picker and the notice say when the active terminal has nothing selected. */
export function noSelectionNotice(terminal: string | undefined): string {
  return terminal === undefined
    ? 'There is no active terminal, so there is no terminal selection to attach.'
    : `Nothing is selected in the terminal "${terminal}". ` +
        'Select some text in it, then pick "Terminal: selection" again.';
}

/**
 * Collects the output of each command (`E`, the execution) and keeps the last finished one per terminal
 * (`T`). Output that streams in after the end event still counts: the text is built when it is asked for.
 */
export class TerminalCommands<T, E = T> {
  private readonly runs = new Map<E, { chunks: string[]; size: number; done?: boolean }>();
  private readonly last = new Map<
    T,
    {
      name: string;
      commandLine: string;
      exitCode: number | undefined;
      run: { chunks: string[]; size: number; done?: boolean };
    }
  >();

  started(execution: E): void {
    this.runs.set(execution, { chunks: [], size: 0 });
  }

  /** Output as it streams; only about twice the kept size is buffered. */
  data(execution: E, chunk: string): void {
    const run = this.runs.get(execution);
    if (!run || run.done) return;
    run.chunks.push(chunk);
    run.size += chunk.length;
    while (run.size > 2 * MAX_OUTPUT_CHARS && run.chunks.length > 1) run.size -= run.chunks.shift()!.length;
  }

  /** The stream is over: stop buffering for this execution. */
  drained(execution: E): void {
    const run = this.runs.get(execution);
    if (run) run.done = true;
    if (run && [...this.last.values()].some(l => l.run === run)) this.runs.delete(execution);
  }

  ended(terminal: T, execution: E, name: string, commandLine: string, exitCode: number | undefined): void {
    const run = this.runs.get(execution) ?? { chunks: [], size: 0 };
    if (run.done) this.runs.delete(execution); // the stream finished first: nothing more will come
    this.last.set(terminal, { name, commandLine: commandLine.trim(), exitCode, run });
  }

  closed(terminal: T): void {
    this.last.delete(terminal);
  }

  lastOf(terminal: T | undefined): FinishedCommand | undefined {
    const found = terminal === undefined ? undefined : this.last.get(terminal);
    if (!found) return undefined;
    const { text, clipped } = plainOutput(found.run.chunks.join(''));
    return { terminal: found.name, commandLine: found.commandLine, exitCode: found.exitCode, output: text, clipped };
  }
}
