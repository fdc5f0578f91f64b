// Chat-box commands: parsed here, sent as contract requests by the controller, never to the model.
import { Method } from '../shared/protocol';
import type {
  ClientRequest,
  ContextMeter,
  MemoryCompactResult,
  MemoryListResult,
  NewSessionResult,
  NotesResult,
  ParamsOf,
  ResumeResult,
  SaveResult,
  SessionInfo,
} from '../shared/protocol';
import { SLASH_COMMANDS } from '../shared/slashCommands';
import { customHelp } from './customCommands';
import type { CommandInfo } from './customCommands';
import { costLabel } from './meter';
import { distinguishingIds, plural, savedPreviousMessage, sessionLine } from '../sessions/sessions';

/** One request a command sends: a method of the contract with its own params (tsc checks the pair). */
export type RequestStep = { [M in ClientRequest]: { method: M; params: ParamsOf<M> } }[ClientRequest];
export type SlashAction =
  | { kind: 'requests'; command: string; steps: RequestStep[] }
  | { kind: 'pickSession'; command: 'resume' }
  | { kind: 'help'; command: 'help' }
  | { kind: 'error'; command: string; message: string };

const NO_ARGS: Record<string, RequestStep[]> = {
  compact: [{ method: Method.sessionCompact, params: {} }],
  notes: [
    { method: Method.memoryList, params: {} },
    { method: Method.notesRead, params: { scope: 'project' } },
  ],
  todos: [{ method: Method.todos, params: {} }],
  sessions: [{ method: Method.sessionList, params: { limit: 15 } }],
  new: [{ method: Method.sessionNew, params: {} }],
  save: [{ method: Method.sessionSave, params: {} }],
  clear: [{ method: Method.sessionClear, params: {} }],
  cost: [
    { method: Method.sessionCurrent, params: {} },
    { method: Method.context, params: {} },
  ],
};

function cachedShare(cached: number, input: number): string {
  return `${cached} of ${input} prompt tokens this session (${Math.round((cached / Math.max(input, 1)) * 100)}%)`;
}

/** `undefined` when the text is a prompt for the model (not `/word ...`). */
export function parseSlash(text: string): SlashAction | undefined {
  const match = /^\/([A-Za-z?]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  const command = match[1].toLowerCase() === '?' ? 'help' : match[1].toLowerCase();
  const args = (match[2] ?? '').trim();
  if (command === 'help') return { kind: 'help', command };
  if (command === 'init') return undefined; // a normal turn: the server expands /init into its prompt
  if (command === 'resume') {
    return args
      ? { kind: 'requests', command, steps: [{ method: Method.sessionResume, params: { id: args } }] }
      : { kind: 'pickSession', command };
  }
  if (command === 'memory') return parseMemory(args);
  const steps = NO_ARGS[command];
  if (!steps) return { kind: 'error', command, message: `unknown command /${command} - try /help` };
  if (args) return { kind: 'error', command, message: `usage: /${command} (it takes no arguments)` };
  return { kind: 'requests', command, steps: steps.map(s => ({ ...s, params: { ...s.params } }) as RequestStep) };
}

function parseMemory(args: string): SlashAction {
  const command = 'memory';
  if (!args) return { kind: 'requests', command, steps: [{ method: Method.memoryCompact, params: {} }] };
  if (args.startsWith('--task')) {
    const m = /^--task\s+(\S+)\s+([\s\S]+)$/.exec(args);
    if (!m) return { kind: 'error', command, message: 'usage: /memory --task <task-id> <note>' };
    return {
      kind: 'requests',
      command,
      steps: [{ method: Method.notesAppend, params: { scope: 'task', taskId: m[1], note: m[2].trim() } }],
    };
  }
  return {
    kind: 'requests',
    command,
    steps: [{ method: Method.notesAppend, params: { scope: 'project', note: args } }],
  };
}

export function helpText(custom: readonly CommandInfo[] = []): string {
  return [
    '**Commands** (handled by Shiro, never sent to the model)',
    '',
    ...Object.entries(SLASH_COMMANDS).map(([name, what]) => `- \`/${name}\` — ${what}`),
    ...customHelp(custom),
  ].join('\n');
}

const fenced = (text: string): string => '```text\n' + text.replace(/```/g, '`\u200b``') + '\n```';

/** Markdown shown in the chat for a command's results (one result per step, in order). */
export function formatSlashResult(command: string, results: unknown[]): string {
  switch (command) {
    case 'compact': {
      const r = results[0] as { before: number; after: number };
      return `Compacted the conversation: ${plural(r.before, 'message')} → ${plural(r.after, 'message')}.`;
    }
    case 'notes': {
      const mem = results[0] as MemoryListResult;
      const notes = results[1] as NotesResult;
      const parts = [
        '**Project memory**',
        '',
        mem.text ? fenced(mem.text) : 'nothing remembered about this project yet',
        '',
        '**Project notes**',
        '',
        notes.project ? notes.project : '_none_',
      ];
      if (notes.task) parts.push('', `**Task notes${notes.taskId ? ` (${notes.taskId})` : ''}**`, '', notes.task);
      return parts.join('\n');
    }
    case 'memory': {
      const r = results[0] as Partial<MemoryCompactResult & NotesResult>;
      if (typeof r.text === 'string') return fenced(r.text);
      return 'Note added.';
    }
    case 'sessions': {
      const sessions = (results[0] as { sessions: SessionInfo[] }).sessions;
      const ids = distinguishingIds(sessions.map(s => s.id));
      return sessions.length
        ? fenced(sessions.map(s => sessionLine(s, ids.get(s.id))).join('\n'))
        : 'no saved sessions';
    }
    case 'resume': {
      const r = results[0] as ResumeResult;
      return `Resumed ${r.session.id.slice(0, 8)} (${plural(r.session.messageCount, 'message')}): ${r.session.title}`;
    }
    case 'new':
    case 'clear':
      return savedPreviousMessage((results[0] as NewSessionResult).previous);
    case 'save': {
      const r = results[0] as SaveResult;
      return r.saved ? `Saved session ${r.id.slice(0, 8)}.` : `Not saved: ${r.reason ?? 'nothing to save'}`;
    }
    case 'cost': {
      const s = results[0] as SessionInfo;
      const c = results[1] as ContextMeter;
      return [
        '**Cost**',
        '',
        `- model: \`${s.model || 'default'}\``,
        `- billed: ${s.inputTokens} in / ${s.outputTokens} out`,
        `- spend: ${costLabel(s.costUsd, c.local)}`,
        `- context: ${c.estimated ? '~' : ''}${c.tokens} tokens (${Math.round(c.percent)}% of ${c.threshold})`,
        ...(s.cachedTokens ? [`- cached: ${cachedShare(s.cachedTokens, s.inputTokens)}`] : []),
        ...(typeof c.cachedTokens === 'number'
          ? [`- cached: ${c.cachedTokens} prompt tokens of the last request`]
          : []),
        `- session: ${s.id.slice(0, 8)}`,
      ].join('\n');
    }
    default:
      return fenced(JSON.stringify(results, null, 2));
  }
}
