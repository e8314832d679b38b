/**
 * @module test/load-balancing/lb-process
 * Load-balancing worker processes for the tests: the examples as real child processes
 * (through the platform tests' worker-process helper) and small HTTP helpers.
 */
import { fileURLToPath } from 'node:url';
import { startWorkerProcess, type WorkerProcess } from '../platform/worker-process.js';

export const NODE_HTTP_WORKER = fileURLToPath(new URL('../../examples/load-balancing/worker-node-http.ts', import.meta.url));
export const FASTIFY_WORKER = fileURLToPath(new URL('../../examples/load-balancing/worker.ts', import.meta.url));

/** Start a load-balancing worker process (`fixture`, default the node:http example) with `env`. */
export function startLbWorker(workerId: string, env: Record<string, string>, fixture = NODE_HTTP_WORKER): WorkerProcess {
  return startWorkerProcess(workerId, { SERVERLESS_WORKER_HOST: '127.0.0.1', SERVERLESS_WORKER_EXPECT_GPU: 'none', ...env }, fixture);
}

/** Status (or 0 when the connection failed) of GET `url`. */
export async function statusOf(url: string, init: RequestInit = {}): Promise<number> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(5_000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}
