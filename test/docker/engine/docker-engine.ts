/**
 * A private Docker engine for the test run: Debian's `dockerd` on a socket, data root,
 * exec root and pid file of its own under a fresh temp dir, so it never meets the
 * machine's engine or a second test run's. No bridge and no iptables (the CI machines
 * allow neither): builds and containers use `--network host`. overlay2 storage: a build
 * of Dockerfile.cpu takes about 30 s with it (vfs copies every layer).
 *
 * Started by test/docker/engine/global-setup.ts once per run, only when a test asks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';

/** How long dockerd may take to answer /_ping after its start. */
const START_LIMIT_MS = 60_000;
/** How long dockerd may take to stop after SIGTERM before it is killed. */
const STOP_LIMIT_MS = 30_000;

export interface DockerEngine {
  /** The engine's unix socket. */
  readonly socketPath: string;
  /** `unix://<socketPath>`, for DOCKER_HOST. */
  readonly host: string;
  /** Folder of the engine's state (data root, exec root, log); removed by stop(). */
  readonly dir: string;
  /** Environment for the docker CLI: DOCKER_HOST, and a config dir of its own. */
  readonly env: Readonly<Record<string, string>>;
  /** Remove every container, stop dockerd (and the containerd it started), remove its folder. */
  stop(): Promise<void>;
}

/** The commands the engine needs, with how to get them when one is missing. */
export function missingEngineTools(): string[] {
  const paths = (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/sbin', '/usr/bin']);
  const has = (command: string) => paths.some((dir) => existsSync(join(dir, command)));
  return ['dockerd', 'docker', 'containerd', 'runc', 'debootstrap'].filter((command) => !has(command));
}

/** The error a test shows when the engine's tools are missing: what, and how to install. */
export function missingToolsMessage(missing: readonly string[]): string {
  return (
    `the Docker tests need ${missing.join(', ')} on this machine; install them with ` +
    '`apt-get install -y docker.io debootstrap` (as root; npm test does this itself when it runs as root: test/setup/prerequisites.ts). ' +
    'They start a private dockerd of their own and need root for it.'
  );
}

/** GET /_ping on the socket: true when the engine answers OK. */
function ping(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}

function exited(child: ChildProcess, limitMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), limitMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Mount points at or below `dir` (from /proc/self/mountinfo), deepest first. */
async function mountsUnder(dir: string): Promise<string[]> {
  const info = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  // Field 5 is the mount point, with spaces and such written as octal escapes.
  const points = info
    .split('\n')
    .map((line) => line.split(' ')[4]?.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8))))
    .filter((point): point is string => point !== undefined && (point === dir || point.startsWith(`${dir}/`)));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

async function unmountUnder(dir: string): Promise<void> {
  for (const point of await mountsUnder(dir)) {
    const result = await execa('umount', [point], { reject: false });
    if (result.exitCode !== 0) await execa('umount', ['-l', point], { reject: false });
  }
}

/** Start a private dockerd; resolves once it answers /_ping. */
export async function startDockerEngine(): Promise<DockerEngine> {
  const missing = missingEngineTools();
  if (missing.length > 0) throw new Error(missingToolsMessage(missing));
  if (process.getuid?.() !== 0) {
    throw new Error('the Docker tests start a private dockerd, which needs root; run them as root (CI does)');
  }
  // A short path: a unix socket's path is limited to 107 bytes.
  const dir = await mkdtemp(join(tmpdir(), 'swd-'));
  const socketPath = join(dir, 'docker.sock');
  // An empty config file: /etc/docker/daemon.json of the machine must not apply.
  await writeFile(join(dir, 'daemon.json'), '{}\n');
  const args = [
    '--config-file',
    join(dir, 'daemon.json'),
    '--storage-driver',
    'overlay2',
    '--bridge=none',
    '--iptables=false',
    '--ip6tables=false',
    '--data-root',
    join(dir, 'data'),
    '--exec-root',
    join(dir, 'exec'),
    '--pidfile',
    join(dir, 'dockerd.pid'),
    '-H',
    `unix://${socketPath}`,
  ];
  const log = openSync(join(dir, 'dockerd.log'), 'a');
  const child = spawn('dockerd', args, {
    stdio: ['ignore', log, log],
    env: { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/sbin:/sbin:/usr/bin` },
  });
  closeSync(log);
  const readLog = () =>
    readFile(join(dir, 'dockerd.log'), 'utf8').then(
      (text) => text.split('\n').slice(-15).join('\n'),
      () => '',
    );
  const deadline = Date.now() + START_LIMIT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`dockerd exited (${child.exitCode ?? child.signalCode}) before it answered; its log ends:\n${await readLog()}`);
    }
    if (await ping(socketPath)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`dockerd did not answer on ${socketPath} within ${START_LIMIT_MS} ms; its log ends:\n${await readLog()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const host = `unix://${socketPath}`;
  const env = { DOCKER_HOST: host, DOCKER_CONFIG: join(dir, 'cli-config') };
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      // Containers first, at once: dockerd would otherwise give each its stop timeout.
      const listed = await execa('docker', ['ps', '-aq'], { env, reject: false });
      const ids = listed.stdout.split('\n').filter(Boolean);
      if (ids.length > 0) await execa('docker', ['rm', '-f', ...ids], { env, reject: false });
      // dockerd started containerd itself; its pid file says which process that is.
      const containerdPid = Number.parseInt(await readFile(join(dir, 'exec', 'containerd', 'containerd.pid'), 'utf8').catch(() => ''), 10);
      child.kill('SIGTERM');
      if (!(await exited(child, STOP_LIMIT_MS))) {
        child.kill('SIGKILL');
        await exited(child, 5_000);
      }
      if (Number.isInteger(containerdPid) && containerdPid > 0) {
        for (let waited = 0; alive(containerdPid) && waited < 10_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
        if (alive(containerdPid)) process.kill(containerdPid, 'SIGKILL');
      }
      // dockerd unmounts its layers when it stops but leaves the host network's namespace
      // bound at <exec-root>/netns/default (and, killed, anything): unmount what is left
      // under the folder, deepest first, so that it can be removed.
      await unmountUnder(dir);
      await rm(dir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
    })();
    return stopping;
  };
  return { socketPath, host, dir, env, stop };
}
