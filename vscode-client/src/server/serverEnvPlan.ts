// The private Python environment a packaged Shiro sets up for its server, as plain decisions (no vscode, no
// processes): where it lives, whether the one on disk can be reused, the commands that build it, and the
// exact command a person runs when it cannot be built here.
import * as path from 'node:path';

/** Written into the environment once it works; a different extension version or wheel means rebuild. */
export interface EnvMarker {
  extensionVersion: string;
  wheel: string;
  wheelSha256: string;
  python: string;
  installer: 'uv' | 'venv';
  createdAt: string;
}

export const MIN_PYTHON: [number, number] = [3, 11];

export function envPython(envDir: string, platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32' ? path.join(envDir, 'Scripts', 'python.exe') : path.join(envDir, 'bin', 'python');
}

/** The env folder for one extension version (a new version gets a new folder; the old one is removed after). */
export function envDirFor(storageDir: string, extensionVersion: string): string {
  return path.join(storageDir, `server-env-${extensionVersion.replace(/[^0-9A-Za-z._-]/g, '_')}`);
}

export function markerReusable(marker: unknown, extensionVersion: string, wheelSha256: string): marker is EnvMarker {
  if (!marker || typeof marker !== 'object') return false;
  const m = marker as Partial<EnvMarker>;
  return m.extensionVersion === extensionVersion && m.wheelSha256 === wheelSha256;
}

/** `Python 3.11.7` / `3.12.1` → [3, 11]; anything else undefined. */
export function parsePythonVersion(text: string): [number, number] | undefined {
  const m = /(\d+)\.(\d+)/.exec(text);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

export function versionOk(v: [number, number] | undefined): boolean {
  return Boolean(v && (v[0] > MIN_PYTHON[0] || (v[0] === MIN_PYTHON[0] && v[1] >= MIN_PYTHON[1])));
}

export interface Step {
  command: string;
  args: string[];
  what: string;
}

/** How to build the environment in `dir` with `python` (or `uv` when there is one), then install the wheel. */
export function installSteps(
  python: string,
  uv: string | undefined,
  dir: string,
  wheel: string,
  platform: NodeJS.Platform = process.platform,
): Step[] {
  const py = envPython(dir, platform);
  if (uv) {
    return [
      { command: uv, args: ['venv', '--quiet', '--python', python, dir], what: 'Creating the environment (uv)' },
      {
        command: uv,
        args: ['pip', 'install', '--python', py, wheel],
        what: 'Installing the Shiro server and its dependencies (uv)',
      },
    ];
  }
  return [
    { command: python, args: ['-m', 'venv', dir], what: 'Creating the environment' },
    {
      command: py,
      args: ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', wheel],
      what: 'Installing the Shiro server and its dependencies',
    },
  ];
}

function quote(arg: string, platform: NodeJS.Platform): string {
  if (/^[\w@%+=:,./-]+$/.test(arg)) return arg;
  return platform === 'win32' ? `"${arg.replace(/"/g, '""')}"` : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The same steps as one line a person can paste into a terminal. */
export function commandLine(steps: readonly Step[], platform: NodeJS.Platform = process.platform): string {
  return steps.map(s => [s.command, ...s.args].map(a => quote(a, platform)).join(' ')).join(' && ');
}

/** The last meaningful line of an installer's output (what went wrong, in its own words). */
export function lastLine(output: string): string {
  const lines = output
    .split('\n')
    .map(l => l.trim())
    .filter(l => l && !/^\s*(notice|hint):/i.test(l));
  const error = [...lines].reverse().find(l => /error|failed|could not|no matching|not found/i.test(l));
  return (error ?? lines.at(-1) ?? '').slice(0, 300);
}
