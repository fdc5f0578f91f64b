import type { ApproveParams, Decision } from '../shared/protocol';
import { approvalPreview } from '../review/changesModel';
import type { ApprovalCard } from '../shared/webviewProtocol';

/** Said on the card of a call Shiro makes itself (a command the user's message names), not the model. */
export const SHIRO_ORIGIN_NOTE =
  'Shiro runs this command itself, not the model: your message names it, and its output tells the model what ' +
  'happens. Deny it if you do not want it run.';

/** Said on the card of a call Shiro read from the model's reply rather than a native tool call. */
export const TEXT_ORIGIN_NOTE =
  "Read from the model's text: the model wrote this call in its reply, it did not make a native tool call. " +
  'Deny it if you did not ask for it.';

export function describeInput(input: unknown): string {
  if (typeof input === 'string') return input;
  try {
    return JSON.stringify(input, null, 2) ?? String(input);
  } catch {
    return String(input);
  }
}

/** What a grant covers, in words: "multi_edit", or "bash commands that start with "rm"". */
export function grantScope(toolName: string, pattern: string): string {
  if (!pattern || pattern === '*' || pattern === toolName) return toolName;
  if (toolName === 'web_fetch') return `web pages from ${pattern}`;
  const calls = toolName === 'bash' ? 'bash commands' : `${toolName} calls`;
  const prefix = /^([^*?[\]]+) \*$/.exec(pattern);
  return prefix ? `${calls} that start with "${prefix[1]}"` : `${calls} matching "${pattern}"`;
}

/** A session grant as a sentence: what it allows, that it lasts for this session, and which calls it covers. */
export function grantLabel(g: { toolName: string; pattern: string; origin?: 'native' | 'text' | 'shiro' }): string {
  const textOnly =
    g.origin === 'text'
      ? ' (calls written as text only)'
      : g.origin === 'shiro'
        ? " (Shiro's own commands and calls written as text only)"
        : '';
  return `Allow ${grantScope(g.toolName, g.pattern)} for this session${textOnly}`;
}

/** The card's question: whose call it is, when it is not the model's own native call. */
function cardTitle(p: ApproveParams): string {
  if (p.origin === 'shiro') return `Allow ${p.toolName} (Shiro runs it for your request)?`;
  if (p.origin === 'text') return `Allow ${p.toolName} (read from the model's text)?`;
  return `Allow ${p.toolName}?`;
}

export function approvalCard(p: ApproveParams): ApprovalCard {
  return {
    title: cardTitle(p),
    input: describeInput(p.input),
    matched: p.matchedPattern ? `matched ${p.toolName}: "${p.matchedPattern}"` : undefined,
    warning: cardWarning(p),
    preview: approvalPreview(p),
    buttons: [
      { label: 'Allow once', decision: 'once' },
      {
        label: grantLabel({ toolName: p.toolName, pattern: p.suggestedPattern, origin: p.origin }),
        decision: 'always',
      },
      { label: 'Deny', decision: 'deny' },
    ],
  };
}

/**
 * Where a text call came from, the server's warning (bash: sandboxed or not, secrets files) and the repeat
 * note, as one line each.
 */
export function cardWarning(p: ApproveParams): string | undefined {
  const lines = [
    p.origin === 'shiro' ? SHIRO_ORIGIN_NOTE : p.origin === 'text' ? TEXT_ORIGIN_NOTE : undefined,
    p.warning,
    p.repeated ? 'This is a repeated identical call in this turn.' : undefined,
  ];
  const text = lines.filter((l): l is string => typeof l === 'string' && l.length > 0).join('\n');
  return text || undefined;
}

/** Whatever the webview sends, only an exact known decision allows anything: approvals fail closed. */
export function toDecision(value: unknown): Decision {
  return value === 'once' || value === 'always' ? value : 'deny';
}

/** A deny reason from the webview: trimmed text, capped; anything else is none. */
export function toReason(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim().slice(0, 2000);
  return text || undefined;
}
