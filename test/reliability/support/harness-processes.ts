/**
 * Helpers for tests with several `serverless-worker harness` processes on one
 * PostgreSQL database: start a harness (real child process, `--store`), start a worker
 * process (test/reliability/fixtures/reliability-worker.ts) joined to one of them, and
 * read what the worker says it did (JSON lines on stdout).
 */
import { join } from 'node:path';
import { REPO_ROOT, jsonLines, runTs, type ChildList, type TsChild } from '../../child-process.js';
import { startHarnessProcess } from '../../kit/index.js';

const WORKER = join(REPO_ROOT, 'test/reliability/fixtures/reliability-worker.ts');

export interface HarnessProcess {
  readonly child: TsChild;
  readonly url: string;
  /** The RUNPOD_* variables it printed for workers. */
  readonly workerEnv: Record<string, string>;
  /** Its stderr (its log) so far. */
  stderr(): string;
}

/** `serverless-worker harness --store <url> --port <port>` (0: any), until it prints its banner. */
export async function startHarness(
  children: ChildList,
  store: string,
  port = 0,
  args: readonly string[] = [],
  options: { SW_HARNESS_STORE?: string; noStoreFlag?: boolean } = {},
): Promise<HarnessProcess> {
  const storeArgs = options.noStoreFlag === true ? [] : ['--store', store];
  const env: Record<string, string> = options.SW_HARNESS_STORE !== undefined ? { SW_HARNESS_STORE: options.SW_HARNESS_STORE } : {};
  const { child, url, workerEnv, stderr } = await startHarnessProcess(children, [...storeArgs, '--no-rate-limit', ...args], { port, env, timeoutMs: 120_000 });
  return { child, url, workerEnv, stderr };
}

/** A worker process joined to `harness` on `endpoint`. */
export function startWorker(children: ChildList, harness: HarnessProcess, endpoint: string, workerId: string, concurrency = 1): TsChild {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(harness.workerEnv)) env[name] = value.replaceAll('/v2/local/', `/v2/${endpoint}/`);
  const worker = runTs(WORKER, [], { env: { ...env, RUNPOD_POD_ID: workerId, TEST_CONCURRENCY: String(concurrency), LOG_LEVEL: 'warn' }, timeout: 120_000 });
  children.push(worker);
  return worker;
}

/** One line the reliability worker printed: what happened, to which job, when (its Date.now()). */
export interface WorkerEvent {
  event: string;
  jobId?: string;
  reason?: unknown;
  at?: number;
}

/** Collect a worker's stdout lines as they come. */
export function recordEvents(worker: TsChild): WorkerEvent[] {
  const events: WorkerEvent[] = [];
  let buffered = '';
  worker.stdout?.on('data', (data: Buffer) => {
    buffered += data.toString('utf8');
    const end = buffered.lastIndexOf('\n');
    if (end < 0) return;
    for (const line of jsonLines(buffered.slice(0, end))) events.push(line as WorkerEvent);
    buffered = buffered.slice(end + 1);
  });
  return events;
}
