import type { ApproveParams, Decision } from './protocol';
import { approvalPreview } from './changesModel';
import type { ApprovalPreviewView } from './changesModel';

/** Said on the card of a call Shiro read from the model's reply rather than a native tool call. */
export const TEXT_ORIGIN_NOTE =
  "Read from the model's text: the model wrote this call in its reply, it did not make a native tool call. Deny it if you did not ask for it.";

export interface ApprovalButton { label: string; decision: Decision }
export interface ApprovalCard {
  title: string; input: string; matched?: string; warning?: string; buttons: ApprovalButton[];
  /** File tools: the files and their `+N −M`; the host opens the diff editor. */
  preview?: ApprovalPreviewView;
}

export function describeInput(input: unknown): string {
  if (typeof input === 'string') return input;
  try { return JSON.stringify(input, null, 2) ?? String(input); } catch { return String(input); }
}

export function approvalCard(p: ApproveParams): ApprovalCard {
  const grant = p.suggestedPattern && p.suggestedPattern !== p.toolName ? `${p.toolName} ${p.suggestedPattern}` : p.toolName;
  const fromText = p.origin === 'text';
  return {
    title: fromText ? `Allow ${p.toolName} (read from the model's text)?` : `Allow ${p.toolName}?`,
    input: describeInput(p.input),
    matched: p.matchedPattern ? `matched ${p.toolName}: "${p.matchedPattern}"` : undefined,
    warning: cardWarning(p),
    preview: approvalPreview(p),
    buttons: [
      { label: 'Allow once', decision: 'once' },
      { label: `Always allow ${grant}${fromText ? ' when written as text' : ''}`, decision: 'always' },
      { label: 'Deny', decision: 'deny' },
    ],
  };
}

/** Where a text call came from, the server's warning (bash: sandboxed or not, secrets files) and the repeat note, as one line each. */
export function cardWarning(p: ApproveParams): string | undefined {
  const lines = [
    p.origin === 'text' ? TEXT_ORIGIN_NOTE : undefined,
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
