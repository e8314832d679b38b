/**
 * @module bench/lib/runpod-python
 * runpod-python (the platform's own Python worker SDK) for bench/runpod-python.bench.ts:
 * where its source is, the Python that runs it, and its processes started the way its
 * users start them.
 *
 * - The source: BENCH_RUNPOD_PYTHON names a folder holding the `runpod` package (a
 *   checkout of the public runpod/runpod-python repository), or a git directory of it,
 *   from which `git archive <BENCH_RUNPOD_PYTHON_REV, default HEAD> runpod` is
 *   extracted into bench/.runpod-python/ (gitignored; reused while the commit is the
 *   same). Unset: bench/.runpod-python/ as a previous run left it.
 * - The Python: BENCH_PYTHON, default /usr/bin/python3 (Debian's, where the python3-*
 *   packages install; a pyenv or venv `python3` earlier on PATH would not see them).
 *   Its dependencies are Debian's packages (bench/README names them); the two Debian
 *   lacks (aiohttp-retry, tqdm-loggable) are stand-ins in bench/runpod-python/stubs/.
 * - The worker: bench/runpod-python/handler.py (no-op, or an async generator of text).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT, track } from './child.js';

/** The Debian packages that runpod-python's import needs (its requirements.txt, as packaged by Debian 12). */
export const DEBIAN_PACKAGES = [
  'python3-fastapi',
  'python3-uvicorn',
  'python3-uvloop',
  'python3-httptools',
  'python3-aiohttp',
  'python3-backoff',
  'python3-requests',
  'python3-boto3',
  'python3-click',
  'python3-colorama',
  'python3-cryptography',
  'python3-tomli',
  'python3-tomlkit',
  'python3-prettytable',
  'python3-cpuinfo',
  'python3-paramiko',
  'python3-watchdog',
  'python3-psutil',
];

const EXTRACTED = join(REPO_ROOT, 'bench', '.runpod-python');
const STUBS = join(REPO_ROOT, 'bench', 'runpod-python', 'stubs');
export const RUNPOD_HANDLER = join(REPO_ROOT, 'bench', 'runpod-python', 'handler.py');

export interface RunpodPython {
  readonly python: string;
  /** PYTHONPATH: the source, then the stand-ins. */
  readonly pythonPath: string;
  /** What was found: `<folder>` or `<git dir>@<commit> (<describe>)`. */
  readonly source: string;
}

function git(gitDir: string, args: readonly string[]): string {
  return execFileSync('git', [`--git-dir=${gitDir}`, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The git directory of `path` (a bare repository or a work tree), or undefined. */
function gitDirOf(path: string): string | undefined {
  for (const candidate of [path, join(path, '.git')]) {
    try {
      git(candidate, ['rev-parse', '--git-dir']);
      return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/** Extract runpod/ at `rev` of `gitDir` into bench/.runpod-python/ (skipped when already there); a dist-info so that runpod reads its version. */
function extract(gitDir: string, rev: string): string {
  const commit = git(gitDir, ['rev-parse', `${rev}^{commit}`]);
  let described = commit.slice(0, 12);
  try {
    described = git(gitDir, ['describe', '--tags', commit]);
  } catch {
    // no tag: the commit names it
  }
  const stamp = join(EXTRACTED, 'SOURCE');
  const source = `${gitDir}@${commit} (${described})`;
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === source) return source;
  rmSync(EXTRACTED, { recursive: true, force: true });
  mkdirSync(EXTRACTED, { recursive: true });
  const archive = execFileSync('git', [`--git-dir=${gitDir}`, 'archive', '--format=tar', commit, 'runpod'], { maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', EXTRACTED], { input: archive });
  const version = described.replace(/^v/, '').split('-')[0] ?? '0';
  const distInfo = join(EXTRACTED, `runpod-${version}.dist-info`);
  mkdirSync(distInfo);
  writeFileSync(join(distInfo, 'METADATA'), `Metadata-Version: 2.1\nName: runpod\nVersion: ${version}\n`);
  writeFileSync(stamp, source);
  return source;
}

/** Find runpod-python and check that its Python imports it; throws, saying what to do, when it cannot run here. */
export function locateRunpodPython(): RunpodPython {
  const python = process.env.BENCH_PYTHON ?? '/usr/bin/python3';
  const given = process.env.BENCH_RUNPOD_PYTHON;
  let folder: string;
  let source: string;
  if (given !== undefined && given !== '') {
    if (existsSync(join(given, 'runpod', '__init__.py'))) {
      folder = given;
      source = given;
    } else {
      const gitDir = gitDirOf(given);
      if (gitDir === undefined) throw new Error(`BENCH_RUNPOD_PYTHON=${given} holds neither runpod/__init__.py nor a git repository of runpod-python`);
      source = extract(gitDir, process.env.BENCH_RUNPOD_PYTHON_REV ?? 'HEAD');
      folder = EXTRACTED;
    }
  } else if (existsSync(join(EXTRACTED, 'runpod', '__init__.py'))) {
    folder = EXTRACTED;
    source = existsSync(join(EXTRACTED, 'SOURCE')) ? readFileSync(join(EXTRACTED, 'SOURCE'), 'utf8') : EXTRACTED;
  } else {
    throw new Error(
      'runpod-python not found: set BENCH_RUNPOD_PYTHON to a checkout of the public runpod/runpod-python repository (its folder, or its git directory: ' +
        'runpod/ is extracted into bench/.runpod-python/)',
    );
  }
  const pythonPath = [folder, STUBS].join(':');
  try {
    execFileSync(python, ['-c', 'import runpod, runpod.serverless.modules.rp_fastapi, runpod.serverless.modules.rp_scale'], {
      env: { ...process.env, PYTHONPATH: pythonPath },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim().split('\n').pop() ?? String(error);
    throw new Error(
      `${python} cannot import runpod-python from ${folder}: ${stderr}; its dependencies are Debian's packages: apt-get install -y ${DEBIAN_PACKAGES.join(' ')} ` +
        '(BENCH_PYTHON names another Python)',
      { cause: error },
    );
  }
  return { python, pythonPath, source };
}

/** A TCP port free on 127.0.0.1 now (for a server that cannot listen on port 0 and say which it got). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Process groups of the runpod-python processes started, killed whole when the bench exits. */
const groups = new Set<number>();
process.once('exit', () => {
  for (const group of groups) killGroup(group, 'SIGKILL');
});

function killGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // gone already
  }
}

/**
 * Start handler.py under runpod-python: `args` its flags, `env` added (output discarded,
 * as a log collector would take it). In a process group of its own: runpod-python's
 * ping process (multiprocessing) outlives a killed parent, so it is stopped by group
 * (stopRunpod). RUNPOD_SKIP_AUTO_SYSTEM_CHECKS: its start-up checks would connect to a
 * public address (every bench stays on 127.0.0.1).
 */
export function spawnRunpod(rp: RunpodPython, args: readonly string[], env: Readonly<Record<string, string>>): ChildProcess {
  const child = spawn(rp.python, [RUNPOD_HANDLER, ...args], {
    cwd: REPO_ROOT,
    detached: true,
    env: { ...process.env, PYTHONPATH: rp.pythonPath, RUNPOD_SKIP_AUTO_SYSTEM_CHECKS: 'true', ...env },
    stdio: ['ignore', 'ignore', process.env.BENCH_VERBOSE ? 'inherit' : 'ignore'],
  });
  const group = child.pid;
  if (group !== undefined) {
    groups.add(group);
    child.once('exit', () => {
      // Whatever it left (the ping process) goes with it.
      killGroup(group, 'SIGKILL');
      groups.delete(group);
    });
  }
  return track(child);
}

/** SIGTERM to the whole group, SIGKILL after `timeoutMs`; resolves once the first process has exited. */
export function stopRunpod(child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  const group = child.pid;
  if (group === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => killGroup(group, 'SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    killGroup(group, 'SIGTERM');
  });
}

/** runpod-python's `--rp_serve_api` on `port` of 127.0.0.1 with the no-op handler. */
export function spawnRunpodServeApi(rp: RunpodPython, port: number): ChildProcess {
  return spawnRunpod(rp, ['--rp_serve_api', '--rp_api_host', '127.0.0.1', '--rp_api_port', String(port)], {});
}
