/**
 * @module worker/job-log
 * The job-finished log line: how the job ended, its duration and chunk count.
 */
import type { Logger } from 'pino';
import type { Job } from '../job/index.js';
import type { RunOutcome } from './job-run.js';

export function logJobEnd(logger: Logger, job: Job, outcome: RunOutcome, extra: Record<string, unknown> = {}): void {
  const fields = {
    requestId: job.id,
    end: outcome.end,
    durationMs: Math.round(outcome.durationMs * 1000) / 1000,
    ...(outcome.chunks > 0 ? { chunks: outcome.chunks } : {}),
    ...extra,
  };
  if (outcome.end === 'completed') logger.info(fields, 'job finished');
  else if (outcome.end === 'cancelled' || outcome.end === 'expired') logger.info(fields, 'job stopped');
  else if (outcome.end === 'stale_attempt') logger.info(fields, 'job attempt superseded: the platform runs a newer attempt and refused this one\'s result');
  else if (outcome.end === 'refused' || outcome.end === 'undelivered') logger.error(fields, 'job result not accepted by the platform');
  else logger.warn({ ...fields, error: outcome.result?.kind === 'error' ? outcome.result.error.error_message : undefined }, 'job failed');
}
