import type { Attachment } from '../shared/webviewProtocol';
// Labelled context attached to a prompt (a selection, a file, Problems…). Pure: no vscode import.
//
// The model gets the prompt followed by one `<context label="…">` block per attachment; the session
// saves that text, so a resumed session shows the same chips (parsed back by splitAttachments).
// Text taken from a document carries its `source` (the document's URI): the server's secrets gate
// (shiro_lsp/agent/attachments.py) refuses a secrets file or a file outside the workspace folders,
// and drops the attribute before anything reaches the model or the session.

const BLOCK = /\n*<context label="([^"\n]*)"(?: source="[^"\n]*")?>\n([\s\S]*?)\n<\/context>/g;

function block(a: Attachment): string {
  const source = a.source ? ` source="${a.source.replace(/"/g, '%22').replace(/\n/g, '%0A')}"` : '';
  // the block ends only at its own end: a line "</context>" in the text is escaped
  const body = `\n${a.text.replace(/\n*$/, '')}`.replace(/\n<\/context>/g, '\n<\\/context>').slice(1);
  return `<context label="${a.label.replace(/["\n]/g, "'")}"${source}>\n${body}\n</context>`;
}

export function withAttachments(prompt: string, attachments: readonly Attachment[]): string {
  if (!attachments.length) return prompt;
  return `${prompt}\n\n${attachments.map(block).join('\n\n')}`;
}

/** The prompt as the user typed it, and the labels of the context blocks after it. */
export function splitAttachments(text: string): { text: string; labels: string[] } {
  const labels: string[] = [];
  let end = text.length;
  // only blocks that trail the prompt count (a user may paste the tag into the middle of a question)
  const matches = [...text.matchAll(BLOCK)];
  for (let i = matches.length - 1; i >= 0; i--) {
    const m = matches[i];
    if (m.index + m[0].length !== end) break;
    labels.unshift(m[1]);
    end = m.index;
  }
  return { text: text.slice(0, end), labels };
}

/** `src/calc.py:3-7` (1-based lines; one line: `src/calc.py:3`). */
export function selectionLabel(path: string, startLine: number, endLine: number): string {
  return startLine === endLine ? `${path}:${startLine}` : `${path}:${startLine}-${endLine}`;
}

/** The chips as sent, with the current file's (taken at send time) unless a chip of that file is there. */
export function withCurrentFile(chips: readonly Attachment[], current: Attachment | undefined): Attachment[] {
  if (!current) return [...chips];
  const file = current.label.replace(/:\d+(-\d+)?$/, '');
  const same = chips.some(
    c => c.label === current.label || c.label === file || (current.source && c.source === current.source),
  );
  return same ? [...chips] : [current, ...chips];
}
