/**
 * @module test/reliability/support/worker-process
 * The reliability fixture worker as a real child process (`node --import tsx`), with
 * the worker variables of a test harness: its stdout events collected, its stderr (the
 * worker's JSON logs) kept, its exit awaited. Every process started here is SIGKILLed
 * by its pid at the end of the test (`killWorkers`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../../transports/wait-for.js';

export const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const RELIABILITY_WORKER = fileURLToPath(new URL('../fixtures/reliability-worker.ts', import.meta.url));

export interface WorkerEvent {
  event: string;
  jobId?: string;
  workerId?: string;
  index?: number;
  at: number;
}

export interface WorkerProcess {
  readonly workerId: string;
  readonly child: ChildProcess;
  readonly events: WorkerEvent[];
  /** stderr so far: the worker's JSON log lines. */
  stderr(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitForEvent(match: (event: WorkerEvent) => boolean, what: string, timeoutMs?: number): Promise<WorkerEvent>;
  signal(signal: NodeJS.Signals): void;
}

const started: WorkerProcess[] = [];

/** Start the fixture worker as `workerId` with `env` (the harness's worker variables and any extra). */
export function startWorkerProcess(workerId: string, env: Readonly<Record<string, string>>): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', RELIABILITY_WORKER], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', RUNPOD_POD_ID: workerId, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events: WorkerEvent[] = [];
  const stderr: string[] = [];
  let pending = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.trim().startsWith('{')) events.push(JSON.parse(line) as WorkerEvent);
  });
  child.stderr?.setEncoding('utf8').on('data', (text: string) => void stderr.push(text));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const worker: WorkerProcess = {
    workerId,
    child,
    events,
    stderr: () => stderr.join(''),
    exited,
    waitForEvent: (match, what, timeoutMs = 30_000) =>
      waitFor(() => events.find(match), `${what} (worker ${workerId}; stderr: ${stderr.join('').slice(-1_500)})`, timeoutMs, 20),
    signal: (name) => {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(child.pid, name);
    },
  };
  started.push(worker);
  return worker;
}

/** SIGKILL every worker process still running (by pid), and wait for each to exit. */
export async function killWorkers(): Promise<void> {
  for (const worker of started.splice(0)) {
    worker.signal('SIGKILL');
    await worker.exited;
  }
}
