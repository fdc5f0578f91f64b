// The chat box's `/` commands and what each does: the panel completes them, the host runs them (chat/slash.ts).

export const SLASH_COMMANDS: Record<string, string> = {
  compact: 'summarise the conversation so far to free context',
  notes: 'show project memory, project notes and the current task notes',
  memory: 'compact project memory; `/memory <note>` appends a project note; `/memory --task <id> <note>` a task note',
  todos: 'show the task list',
  sessions: "list this workspace's saved sessions",
  resume: 'resume a session: `/resume <id-prefix>`, or pick one',
  new: 'save this session and start a new one',
  save: 'save this session now',
  clear: 'start over (the old session stays on disk)',
  cost: 'tokens and spend of this session',
  init: 'learn this repository and write an AGENTS.md for agents (asks before writing)',
  help: 'this list',
};
