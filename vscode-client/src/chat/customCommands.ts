// Custom commands (the user's and the repository's command and prompt files, `shiro/commands/list`): what the
// `/` completion offers, which typed text runs one, which `${input:…}` values are still to ask for, and how
// /help lists them. Pure: no vscode import. The server expands a command into its prompt (shiro/chat).
import type { Candidate } from '../shared/mentions';
import type { CommandInfo, CommandInput } from '../shared/protocol.gen';
import { SLASH_COMMANDS } from '../shared/slashCommands';

export type { CommandInfo, CommandInput };

const INVOCATION = /^\/([A-Za-z0-9][A-Za-z0-9_.:-]*)(?:\s+([\s\S]*))?$/;

/** What the `/` completion offers: each command that can run, and each broken one (with its error). */
export function commandCandidates(commands: readonly CommandInfo[]): Candidate[] {
  return commands
    .filter(c => !c.shadowedBy)
    .map(c => ({
      kind: 'command' as const,
      value: c.name,
      label: `/${c.name}${c.argumentHint ? ` ${c.argumentHint}` : ''}`,
      detail: c.error ? `cannot run: ${c.error} · ${c.source}` : `${c.description} · ${c.source}`,
    }));
}

/** The custom command the text starts with (`/name args`), unless the name is a built-in's. */
export function customInvocation(
  text: string,
  commands: readonly CommandInfo[],
): { command: CommandInfo; args: string } | undefined {
  const match = INVOCATION.exec(text.trim());
  if (!match || match[1].toLowerCase() in SLASH_COMMANDS) return undefined;
  const named = commands.filter(c => c.name === match[1] && !c.shadowedBy);
  const command = named.find(c => !c.error) ?? named[0];
  return command ? { command, args: (match[2] ?? '').trim() } : undefined;
}

/** The inputs the typed arguments do not give as `name=value`. */
export function missingInputs(command: CommandInfo, args: string): CommandInput[] {
  return command.inputs.filter(
    i => !new RegExp(`(^|\\s)${i.name.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')}=`).test(args),
  );
}

/** /help's section on the custom commands: what each does and where it comes from, broken and unused ones too. */
export function customHelp(commands: readonly CommandInfo[]): string[] {
  if (!commands.length) return [];
  const lines = [
    '',
    '**Custom commands** (prompts from command files, sent to the model; Shiro runs nothing in them)',
    '',
  ];
  for (const c of commands) {
    const hint = c.argumentHint ? ` ${c.argumentHint}` : '';
    const state = c.error
      ? ` — **cannot run:** ${c.error}`
      : c.shadowedBy
        ? ` — not used: ${c.shadowedBy} has this name`
        : ` — ${c.description}`;
    lines.push(`- \`/${c.name}${hint}\`${state} (${c.source})`);
    for (const note of c.notes) lines.push(`  - ${note}`);
  }
  return lines;
}
