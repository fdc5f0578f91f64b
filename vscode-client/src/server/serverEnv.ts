// A packaged Shiro carries its server as a wheel (server/*.whl, put there by scripts/package.sh). On first start
// it builds a private environment in the extension's global storage with the chosen interpreter (or `uv`),
// installs the wheel and its dependencies under a progress notification, and reuses it until the extension
// version or the wheel changes. A failure says why and gives the exact command to run by hand.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  commandLine,
  envDirFor,
  envPython,
  installSteps,
  lastLine,
  markerReusable,
  MIN_PYTHON,
  parsePythonVersion,
  versionOk,
} from './serverEnvPlan';
import type { EnvMarker, Step } from './serverEnvPlan';

const MARKER = 'shiro-env.json';
const LOCK_STALE_MS = 15 * 60_000;

export class EnvSetupError extends Error {
  constructor(
    message: string,
    readonly command: string,
  ) {
    super(message);
  }
}

export interface Logger {
  info(m: string): void;
  warn(m: string): void;
  error(m: string): void;
}

export async function bundledWheel(extensionPath: string): Promise<string | undefined> {
  const dir = path.join(extensionPath, 'server');
  try {
    const wheels = (await fs.readdir(dir)).filter(f => /^shiro_lsp-.*\.whl$/.test(f)).sort();
    return wheels.length ? path.join(dir, wheels[wheels.length - 1]) : undefined;
  } catch {
    return undefined;
  }
}

async function sha256(file: string): Promise<string> {
  return createHash('sha256')
    .update(await fs.readFile(file))
    .digest('hex');
}

async function readMarker(dir: string): Promise<unknown> {
  try {
    return JSON.parse(await fs.readFile(path.join(dir, MARKER), 'utf8'));
  } catch {
    return undefined;
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch {
    return false;
  }
}

/** `uv` on PATH, if any. */
async function findOnPath(name: string): Promise<string | undefined> {
  const exts = process.platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      try {
        await fs.access(candidate, fs.constants.X_OK);
        return candidate;
      } catch {
        /* next */
      }
    }
  }
  return undefined;
}

function pythonVersion(python: string): Promise<{ version?: [number, number]; error?: string }> {
  return new Promise(resolve => {
    execFile(
      python,
      ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'],
      { timeout: 20_000 },
      (error, stdout, stderr) => {
        if (error) {
          const code = (error as NodeJS.ErrnoException).code;
          resolve({
            error:
              code === 'ENOENT'
                ? `there is no interpreter called ${python}`
                : lastLine(String(stderr)) || error.message,
          });
        } else resolve({ version: parsePythonVersion(String(stdout)) });
      },
    );
  });
}

function run(step: Step, log: Logger): Promise<{ ok: boolean; output: string }> {
  return new Promise(resolve => {
    log.info(`${step.what}: ${commandLine([step])}`);
    const child = spawn(step.command, step.args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PIP_NO_INPUT: '1' },
    });
    let output = '';
    const take = (chunk: Buffer): void => {
      const text = chunk.toString();
      output = (output + text).slice(-20_000);
      for (const line of text.split('\n')) if (line.trim()) log.info(`  ${line.trimEnd()}`);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', e => resolve({ ok: false, output: `${output}\n${e.message}` }));
    child.on('close', code => resolve({ ok: code === 0, output }));
  });
}

/** One builder at a time (two windows may start together): a lock folder, taken over when stale. */
async function withLock<T>(storage: string, fn: () => Promise<T>, waitFor: () => Promise<T | undefined>): Promise<T> {
  const lock = path.join(storage, 'server-env.lock');
  for (let i = 0; ; i++) {
    try {
      await fs.mkdir(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const done = await waitFor();
      if (done !== undefined) return done;
      const age =
        Date.now() -
        (await fs.stat(lock).then(
          s => s.mtimeMs,
          () => Date.now(),
        ));
      if (age > LOCK_STALE_MS || i > 900) await fs.rm(lock, { recursive: true, force: true });
      else await new Promise(r => setTimeout(r, 1000));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lock, { recursive: true, force: true });
  }
}

export interface EnvRequest {
  storageDir: string;
  extensionVersion: string;
  wheel: string;
  basePython: string;
  log: Logger;
}

/** The interpreter of the private environment, built first if it is missing or stale. */
export async function ensureServerEnv(req: EnvRequest): Promise<string> {
  const { storageDir, extensionVersion, wheel, log } = req;
  await fs.mkdir(storageDir, { recursive: true });
  const digest = await sha256(wheel);
  const dir = envDirFor(storageDir, extensionVersion);
  const python = envPython(dir);
  const ready = async (): Promise<string | undefined> =>
    markerReusable(await readMarker(dir), extensionVersion, digest) && (await exists(python)) ? python : undefined;
  const reused = await ready();
  if (reused) {
    log.info(`Using Shiro's environment in ${dir} (set up before; reused)`);
    return reused;
  }
  return withLock(storageDir, () => build(req, dir, digest), ready);
}

async function build(req: EnvRequest, dir: string, digest: string): Promise<string> {
  const { storageDir, extensionVersion, wheel, basePython, log } = req;
  const uv = await findOnPath('uv');
  const steps = installSteps(basePython, uv, dir, wheel);
  const manual = commandLine(steps);
  if (!uv) {
    const v = await pythonVersion(basePython);
    if (v.error)
      throw new EnvSetupError(
        `Shiro needs Python ${MIN_PYTHON.join('.')} or newer to set itself up: ${v.error}`,
        manual,
      );
    if (!versionOk(v.version)) {
      throw new EnvSetupError(
        `Shiro needs Python ${MIN_PYTHON.join('.')} or newer; ${basePython} is ${v.version?.join('.') ?? 'unknown'}`,
        manual,
      );
    }
  }
  log.info(`Setting up Shiro's environment in ${dir} from ${path.basename(wheel)} (${uv ? 'uv' : basePython})`);
  // built in place; the marker, written last, is what makes it count (a half-built one is rebuilt)
  await fs.rm(dir, { recursive: true, force: true });
  const buildSteps = steps;
  const failure = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: 'Shiro: setting up its Python environment (first start only)',
    },
    async progress => {
      for (const [i, step] of buildSteps.entries()) {
        progress.report({ message: `${step.what}… (${i + 1}/${buildSteps.length})` });
        const r = await run(step, log);
        if (!r.ok) return `${step.what} failed: ${lastLine(r.output) || 'no output'}`;
      }
      return undefined;
    },
  );
  if (failure) {
    await fs.rm(dir, { recursive: true, force: true });
    throw new EnvSetupError(failure, manual);
  }
  const marker: EnvMarker = {
    extensionVersion,
    wheel: path.basename(wheel),
    wheelSha256: digest,
    python: basePython,
    installer: uv ? 'uv' : 'venv',
    createdAt: new Date().toISOString(),
  };
  const tmp = path.join(dir, `${MARKER}.tmp`);
  await fs.writeFile(tmp, JSON.stringify(marker, null, 2));
  await fs.rename(tmp, path.join(dir, MARKER));
  for (const old of await fs.readdir(storageDir)) {
    const full = path.join(storageDir, old);
    if (old.startsWith('server-env-') && full !== dir && !old.endsWith('.lock'))
      await fs.rm(full, { recursive: true, force: true });
  }
  log.info(`Shiro's environment is ready: ${envPython(dir)}`);
  return envPython(dir);
}
