/**
 * @module transports/watchdog/thread-fire
 * What the watchdog thread does once a job has passed its execution deadline plus
 * `timeoutGraceMs` while the main thread is blocked: report every running job (the
 * blocked one TIMED_OUT `SW_EXECUTION_TIMEOUT`, the others FAILED `SW_WORKER_SHUTDOWN`)
 * the way the mode reports results, then end the process so that it is replaced:
 * `process.exit(1)` run inside the main thread through the inspector (V8 services that
 * request between two JavaScript steps, even in a busy loop), and SIGKILL of the
 * process when that has not ended it within `exitWaitMs` (a main thread stuck in a
 * native call never runs JavaScript again).
 */
import { writeSync } from 'node:fs';
import { isatty } from 'node:tty';
import type { JobErrorPayload } from '../../job/index.js';
import type { WatchedJob } from './job-board.js';
import type { ThreadHttp } from './thread-http.js';
import { JOB_ID_PLACEHOLDER, type WatchdogThreadData } from './thread-protocol.js';

/** A job the watchdog reports, with its error payload. */
export interface Verdict {
  readonly job: WatchedJob;
  readonly timedOut: boolean;
  readonly error: JobErrorPayload;
}

/** The error payloads: the expired jobs TIMED_OUT, the others FAILED SW_WORKER_SHUTDOWN. */
export function verdicts(jobs: readonly WatchedJob[], expired: ReadonlySet<string>, blockedMs: number, data: WatchdogThreadData): Verdict[] {
  const { workerId, hostname, version } = data.origin;
  const base = { hostname, worker_id: workerId, runtime_version: version, error_type: 'ServerlessWorkerError' };
  return jobs.map((job) => {
    if (expired.has(job.id)) {
      const timeoutMs = Math.round(job.deadlineAt - job.startedAt);
      return {
        job,
        timedOut: true,
        error: {
          ...base,
          error_code: 'SW_EXECUTION_TIMEOUT',
          error_message:
            `Job ${job.id} ran past its execution timeout of ${timeoutMs} ms plus the ${data.timeoutGraceMs} ms grace while its handler ` +
            `blocked the event loop (blocked for ${Math.round(blockedMs)} ms); the watchdog thread timed it out and this worker exits`,
        },
      };
    }
    return {
      job,
      timedOut: false,
      error: {
        ...base,
        error_code: 'SW_WORKER_SHUTDOWN',
        error_message: `Worker shut down before job ${job.id} finished: another job blocked the event loop past its execution timeout, so this worker exits`,
      },
    };
  });
}

/** One log line on stderr: a JSON object (pino's shape) on the platform, else plain text. */
export function logLine(data: WatchdogThreadData, level: 'error' | 'fatal' | 'warn', message: string, fields: Record<string, unknown> = {}): void {
  const text = data.jsonLogs
    ? `${JSON.stringify({ level: level === 'fatal' ? 60 : level === 'error' ? 50 : 40, time: Date.now(), pid: process.pid, component: 'watchdog', ...fields, msg: message })}\n`
    : `serverless-worker: ${message}\n`;
  try {
    writeSync(2, text);
  } catch {
    // stderr closed: nothing else to tell.
  }
}

/** Post each verdict to the job-done URL (stopPod), in parallel; answers when all landed or gave up. */
export async function postVerdicts(verdictList: readonly Verdict[], data: WatchdogThreadData, http: ThreadHttp): Promise<void> {
  const fire = data.fire;
  if (fire?.kind !== 'platform') return;
  const placeholder = encodeURIComponent(JOB_ID_PLACEHOLDER);
  await Promise.all(
    verdictList.map(async ({ job, error }) => {
      const url = fire.doneUrl.replace(placeholder, encodeURIComponent(job.id));
      const outcome = await http.postUntilLanded(url, JSON.stringify({ error: JSON.stringify(error), stopPod: true }), fire.retry);
      if (!outcome.delivered) {
        logLine(data, 'error', `the ${error.error_code} result of job ${job.id} could not be posted after ${outcome.attempts} attempt(s) (last: ${outcome.last})`, {
          requestId: job.id,
          code: 'SW_RESULT_UNDELIVERED',
        });
      }
    }),
  );
}

/** The dry run's final record of the blocked job, printed as the dry run prints it. */
export function printDryRunRecord(verdict: Verdict): void {
  const record = {
    id: verdict.job.id,
    status: verdict.timedOut ? 'TIMED_OUT' : 'FAILED',
    executionTime: Math.round(Date.now() - verdict.job.startedAt),
    error: verdict.error,
  };
  const text = isatty(1) ? JSON.stringify(record, null, 2) : JSON.stringify(record);
  try {
    writeSync(1, `${text}\n`);
  } catch {
    // stdout closed.
  }
}

/** End the whole process with exit code 1 (see the module doc); SIGKILL after `exitWaitMs`. */
export async function endProcess(exitWaitMs: number): Promise<void> {
  // Keeps this thread alive until the process ends, one way or the other.
  setTimeout(() => process.kill(process.pid, 'SIGKILL'), exitWaitMs);
  try {
    const inspector = await import('node:inspector');
    const session = new inspector.Session();
    session.connectToMainThread();
    session.post('Runtime.evaluate', { expression: 'process.exit(1)' }, () => {});
  } catch {
    // No inspector in this build of Node: the SIGKILL does it.
  }
}
