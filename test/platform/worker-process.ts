/**
 * @module test/platform/worker-process
 * Worker processes for the platform-mode and reliability tests: `node` on a fixture
 * worker's compiled bundle (test/compiled-fixtures.ts) with the RUNPOD_WEBHOOK_* variables of a test harness, their stdout
 * events collected, their stderr (the worker's JSON logs) kept, their exit awaited.
 * Every process a test starts is killed (SIGKILL, by its pid) when the test ends.
 * With SW_TEST_WORKER_BUNDLES set to a folder (test/bundle/bundled-suites.test.ts
 * does), each fixture runs instead as its esbuild bundle `<folder>/<name>.js` under a
 * plain `node`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeArgsFor, type FixtureOptions } from '../compiled-fixtures.js';
import { waitFor } from '../kit/index.js';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const FIXTURE = fileURLToPath(new URL('./fixtures/platform-worker.ts', import.meta.url));

export interface WorkerEvent {
  event: string;
  jobId?: string;
  workerId?: string;
  reason?: string;
  index?: number;
  at: number;
}

export interface WorkerProcess {
  readonly workerId: string;
  readonly child: ChildProcess;
  readonly events: WorkerEvent[];
  /** stderr so far (the worker's JSON logs), for failure messages. */
  stderr(): string;
  /**
   * Wait until stderr holds `text`. stderr comes through a pipe of its own, which can lag
   * behind what the worker said over HTTP, so a line logged before a request may arrive after it.
   */
  waitForStderr(text: string, timeoutMs?: number): Promise<void>;
  /** Resolves once the process has exited and its stdout and stderr are read to the end. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitForEvent(match: (event: WorkerEvent) => boolean, what: string, timeoutMs?: number): Promise<WorkerEvent>;
  /** Send `signal` to this process only (by pid), if it still runs. */
  signal(signal: NodeJS.Signals): void;
}

const started: WorkerProcess[] = [];

/** Start `fixture` (default the platform fixture worker) as `workerId` with `env` (the harness's worker variables and any extra). */
export function startWorkerProcess(workerId: string, env: Readonly<Record<string, string>>, fixture = FIXTURE, options: FixtureOptions = {}): WorkerProcess {
  const bundles = process.env.SW_TEST_WORKER_BUNDLES;
  const argv = bundles ? [join(bundles, `${basename(fixture, '.ts')}.js`)] : nodeArgsFor(fixture, options);
  const child = spawn(process.execPath, argv, {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', SW_NODE_VERSION_WARNING: 'off', RUNPOD_POD_ID: workerId, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events: WorkerEvent[] = [];
  let stderr = '';
  let pending = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.trim().startsWith('{')) events.push(JSON.parse(line) as WorkerEvent);
  });
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    // 'close', not 'exit': at 'exit' the pipes may still hold the last lines.
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  const worker: WorkerProcess = {
    workerId,
    child,
    events,
    stderr: () => stderr,
    waitForStderr: async (text, timeoutMs = 10_000) => {
      await waitFor(() => stderr.includes(text), `worker ${workerId} to log '${text}'`, timeoutMs, 20).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}; stderr so far: ${stderr.slice(-2_000)}`);
      });
    },
    exited,
    waitForEvent: (match, what, timeoutMs = 30_000) =>
      waitFor(() => events.find(match), `${what} (worker ${workerId}; stderr so far: ${stderr.slice(-2_000)})`, timeoutMs, 20),
    signal: (name) => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(child.pid, name);
      } catch (error) {
        // Gone before its exit was reported here (a CI run under load saw ESRCH at a test's end): nothing left to signal.
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    },
  };
  started.push(worker);
  return worker;
}

/** SIGKILL every worker process still running, and wait for each to exit. */
export async function killAllWorkers(): Promise<void> {
  for (const worker of started.splice(0)) {
    worker.signal('SIGKILL');
    await worker.exited;
  }
}
