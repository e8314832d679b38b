/**
 * @module test/reliability/support/worker-process
 * The reliability fixture worker as a real child process: the platform tests' worker
 * process helper, started on `fixtures/reliability-worker.ts`.
 */
import { fileURLToPath } from 'node:url';
import { killAllWorkers, startWorkerProcess as startFixture, type WorkerProcess } from '../../platform/worker-process.js';

export { REPO_ROOT, type WorkerEvent, type WorkerProcess } from '../../platform/worker-process.js';

export const RELIABILITY_WORKER = fileURLToPath(new URL('../fixtures/reliability-worker.ts', import.meta.url));

/** Start the reliability fixture worker as `workerId` with `env` (the harness's worker variables and any extra). */
export function startWorkerProcess(workerId: string, env: Readonly<Record<string, string>>): WorkerProcess {
  return startFixture(workerId, env, RELIABILITY_WORKER);
}

/** SIGKILL every worker process still running (by pid), and wait for each to exit. */
export const killWorkers = killAllWorkers;
