/**
 * @module bench/lib/child
 * Child processes for benchmarks: a worker, a server or a load generator gets its own
 * process, so that its CPU and RSS are its own and, on a 2-core machine, the two sides
 * of a loopback benchmark do not share one event loop. TypeScript children run through
 * tsx (`node --import tsx`). Every child started here is killed when the bench exits,
 * however it exits, so that no benchmark leaves a process behind.
 *
 * Set BENCH_CPU_PROF=<dir> to start every child with `--cpu-prof` into that folder.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root (bench/lib/ is two levels down). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

const alive = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of alive) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const child of alive) child.kill('SIGKILL');
    process.exit(130);
  });
}

/** Kill `child` when the bench exits (every helper here does it for the children it starts). */
export function track(child: ChildProcess): ChildProcess {
  alive.add(child);
  child.once('exit', () => alive.delete(child));
  return child;
}

/** Node flags for a child: tsx for .ts files, --cpu-prof when BENCH_CPU_PROF is set. */
export function childExecArgv(script: string, extra: readonly string[] = []): string[] {
  const flags = [...extra];
  if (script.endsWith('.ts')) flags.push('--import', 'tsx');
  const profDir = process.env.BENCH_CPU_PROF;
  if (profDir) flags.push('--cpu-prof', `--cpu-prof-dir=${profDir}`);
  return flags;
}

/** A path under the repository root. */
export function repoPath(relative: string): string {
  return fileURLToPath(new URL(relative, new URL('../../', import.meta.url)));
}

export interface SpawnOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly nodeArgs?: readonly string[];
  readonly args?: readonly string[];
  /** Show the child's stderr (default: discarded, as a platform's log collector would take it). */
  readonly showStderr?: boolean;
}

/** A plain child process (no IPC channel), e.g. a worker that talks only HTTP. */
export function spawnNode(script: string, options: SpawnOptions = {}): ChildProcess {
  const child = spawn(process.execPath, [...childExecArgv(script, options.nodeArgs), script, ...(options.args ?? [])], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'ignore', options.showStderr || process.env.BENCH_VERBOSE ? 'inherit' : 'ignore'],
  });
  return track(child);
}

/** A message a forked child sends: `{ type, ...fields }`. */
export interface ChildMessage {
  readonly type: string;
  readonly [key: string]: unknown;
}

/** A child with an IPC channel: request/answer by message type. */
export class ForkedChild {
  readonly process: ChildProcess;
  readonly #inbox: ChildMessage[] = [];
  #waiter: (() => void) | undefined;
  #exited = false;

  constructor(script: string, options: SpawnOptions = {}) {
    this.process = track(
      fork(script, [...(options.args ?? [])], {
        cwd: REPO_ROOT,
        env: { ...process.env, ...options.env },
        execArgv: childExecArgv(script, options.nodeArgs),
        stdio: ['ignore', 'ignore', options.showStderr || process.env.BENCH_VERBOSE ? 'inherit' : 'ignore', 'ipc'],
      }),
    );
    this.process.on('message', (message: unknown) => {
      this.#inbox.push(message as ChildMessage);
      this.#waiter?.();
    });
    this.process.once('exit', () => {
      this.#exited = true;
      this.#waiter?.();
    });
  }

  send(message: ChildMessage): void {
    this.process.send(message);
  }

  /** The next message of `type` (earlier ones of other types are dropped). */
  async next<T extends { readonly type: string } = ChildMessage>(type: string, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.#inbox.findIndex((m) => m.type === type || m.type === 'error');
      if (index >= 0) {
        const [message] = this.#inbox.splice(0, index + 1).slice(-1) as [ChildMessage];
        if (message.type === 'error') throw new Error(`child failed: ${String(message.message)}`);
        return message as unknown as T;
      }
      if (this.#exited) throw new Error(`child exited before sending "${type}"`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no "${type}" from the child within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiter = () => {
          clearTimeout(timer);
          this.#waiter = undefined;
          resolve();
        };
      });
    }
  }

  /** Send `message` and wait for the answer of type `answerType`. */
  async ask<T extends { readonly type: string } = ChildMessage>(message: ChildMessage, answerType: string, timeoutMs: number): Promise<T> {
    this.send(message);
    return this.next<T>(answerType, timeoutMs);
  }

  stop(timeoutMs = 10_000): Promise<void> {
    return stopChild(this.process, timeoutMs);
  }
}

/** SIGTERM, then SIGKILL after `timeoutMs`; resolves once the child has exited. */
export function stopChild(child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
