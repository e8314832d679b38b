/**
 * @module platform-mode
 * The worker on the real platform (RUNPOD_WEBHOOK_GET_JOB set).
 * The platform transport is not built yet: this says so clearly instead of
 * pretending to run.
 */
import type { Logger } from 'pino';
import { ServerlessWorkerError } from './job/index.js';
import type { Handler, WorkerConfig } from './worker/index.js';

export async function runPlatformWorker(handler: Handler<unknown>, config: WorkerConfig, logger: Logger): Promise<number> {
  void handler;
  void config;
  void logger;
  throw new ServerlessWorkerError(
    'SW_INVALID_ENV',
    'RUNPOD_WEBHOOK_GET_JOB is set, but this version has no platform transport yet; unset it to dry-run locally',
  );
}
