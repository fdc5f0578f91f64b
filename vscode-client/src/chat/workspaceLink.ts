// Where a relative link in an answer points: a file inside one of the workspace folders. Pure (node:path only).
import * as path from 'node:path';

export interface LinkTarget {
  fsPath: string;
  line?: number;
}

/** `src/calc.py`, `./a.md#L12`, `src/x.ts:7`, `docs/my%20notes.md` → a path inside a root, or undefined outside. */
export function resolveWorkspaceLink(href: string, roots: readonly string[]): LinkTarget | undefined {
  let target = href.trim();
  let line: number | undefined;
  const hash = /#L(\d+)(?:-L?\d+)?$/i.exec(target);
  if (hash) {
    line = Number(hash[1]);
    target = target.slice(0, hash.index);
  }
  target = target.replace(/#.*$/, '');
  const colon = /:(\d+)(?::\d+)?$/.exec(target);
  if (colon) {
    line ??= Number(colon[1]);
    target = target.slice(0, colon.index);
  }
  try {
    target = decodeURIComponent(target);
  } catch {
    /* keep it as written */
  }
  if (!target || path.isAbsolute(target)) return undefined;
  for (const root of roots) {
    const full = path.resolve(root, target);
    const rel = path.relative(root, full);
    if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) return { fsPath: full, ...(line ? { line } : {}) };
  }
  return undefined;
}
