/**
 * @module local/serve-api
 * `--serve-api`: the local queue API over HTTP with this worker in process.
 * Placeholder until the HTTP harness lands: says so clearly.
 */
import type { Logger } from 'pino';
import { ServerlessWorkerError } from '../job/index.js';
import type { Handler, WorkerArgs, WorkerConfig } from '../worker/index.js';

export async function runServeApi(handler: Handler<unknown>, config: WorkerConfig, args: WorkerArgs, logger: Logger): Promise<void> {
  void handler;
  void config;
  void args;
  void logger;
  throw new ServerlessWorkerError('SW_INVALID_OPTIONS', '--serve-api is not available in this version yet; run without it for a dry run');
}
