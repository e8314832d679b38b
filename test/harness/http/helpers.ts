/**
 * @module test/harness/http/helpers
 * For the harness HTTP tests: an in-process worker for a harness and a job submitter.
 * Everything talks to loopback only. The harness server, the HTTP client, the webhook
 * receiver and bounded waits: test/kit.
 */
import pino from 'pino';
import type { Harness } from '../../../src/harness/index.js';
import { startLocalWorker, type LocalWorker } from '../../../src/local/local-worker.js';
import { resolveOptions, type Handler, type ServeOptions } from '../../../src/worker/index.js';
import { call } from '../../kit/index.js';

export const silent = pino({ level: 'silent' });

/** An in-process worker on `endpointId` of `harness`. */
export function startTestWorker(harness: Harness, handler: Handler<never>, options: ServeOptions = {}): LocalWorker & { stop(): Promise<void> } {
  const config = resolveOptions({ endpointId: 'ep', shutdownTimeoutMs: 1_000, timeoutGraceMs: 500, ...options, logger: silent });
  const local = startLocalWorker(handler as Handler<unknown>, config, silent, harness);
  return Object.assign(local, { stop: async () => void (await local.runtime.stop()) });
}

/** POST /run to an endpoint URL and answer the new job's id. */
export async function submit(url: string, body: unknown = { input: {} }): Promise<string> {
  return ((await call('POST', `${url}/run`, { body })).json as { id: string }).id;
}
