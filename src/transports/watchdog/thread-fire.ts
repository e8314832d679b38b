/**
 * @module transports/watchdog/thread-fire
 * What the watchdog thread does once a job has passed its execution deadline plus
 * `timeoutGraceMs` while the main thread is blocked: report every running job (the
 * blocked one TIMED_OUT `SW_EXECUTION_TIMEOUT`, the others FAILED `SW_WORKER_SHUTDOWN`)
 * the way the mode reports results, then end the process so that it is replaced:
 * `process.exit(1)` run inside the main thread through the inspector (V8 services that
 * request between two JavaScript steps, even in a busy loop), and SIGKILL of the
 * process when that has not ended it within `exitWaitMs` (a main thread stuck in a
 * native call never runs JavaScript again; its direct children are killed first, see
 * endProcess).
 */
import { isatty } from 'node:tty';
import { appendParams } from '../platform/urls.js';
import type { WatchedJob } from './job-board.js';
import { jobName, type Verdict } from './thread-decisions.js';
import type { ThreadHttp } from './thread-http.js';
import { JOB_ID_PLACEHOLDER, type WatchdogThreadData } from './thread-protocol.js';
const { readFileSync, readdirSync, writeSync } = process.getBuiltinModule('node:fs');

export type { Verdict } from './thread-decisions.js';

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

/**
 * The job-done URL of `job`: the job id in place of JOB_ID_PLACEHOLDER, and
 * `attempt=N` when the job carried an attempt, as the platform transport's own result
 * posts carry it (a verdict for a stale attempt is then refused, never applied to the
 * job's current attempt).
 */
export function verdictUrl(doneUrl: string, job: WatchedJob): string {
  return appendParams(doneUrl.replace(encodeURIComponent(JOB_ID_PLACEHOLDER), encodeURIComponent(job.id)), { attempt: job.attempt });
}

/** Post each verdict to the job-done URL (stopPod), in parallel; answers when all landed or gave up. */
export async function postVerdicts(verdictList: readonly Verdict[], data: WatchdogThreadData, http: ThreadHttp): Promise<void> {
  const fire = data.fire;
  if (fire?.kind !== 'platform') return;
  await Promise.all(
    verdictList.map(async ({ job, error }) => {
      const url = verdictUrl(fire.doneUrl, job);
      const outcome = await http.postUntilLanded(url, JSON.stringify({ error: JSON.stringify(error), stopPod: true }), fire.retry);
      if (!outcome.delivered) {
        logLine(
          data,
          'error',
          `the ${error.error_code} result of job ${jobName(job)} could not be posted after ${outcome.attempts} attempt(s) (last: ${outcome.last})`,
          {
            requestId: job.id,
            ...(job.attempt !== undefined ? { attempt: job.attempt } : {}),
            code: 'SW_RESULT_UNDELIVERED',
          },
        );
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

/** After the direct children were killed, how long `process.exit(1)` may still take before SIGKILL, ms. */
export const AFTER_CHILDREN_KILLED_MS = 1_000;

/**
 * The pids of this process's direct children (Linux: /proc/self/task/<tid>/children,
 * every thread's); [] where /proc does not say (then they are not killed).
 */
export function childPids(): number[] {
  const pids = new Set<number>();
  let tasks: string[] = [];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return [];
  }
  for (const task of tasks) {
    try {
      for (const word of readFileSync(`/proc/self/task/${task}/children`, 'utf8').split(/\s+/)) {
        const pid = Number(word);
        if (word !== '' && Number.isInteger(pid) && pid > 0) pids.add(pid);
      }
    } catch {
      // The thread ended meanwhile, or the kernel has no children file.
    }
  }
  return [...pids];
}

/**
 * End the whole process with exit code 1 (see the module doc). When it has not ended
 * after `exitWaitMs`, the main thread is stuck outside JavaScript (a native call, or a
 * synchronous child process such as execFileSync's): its direct children are SIGKILLed
 * first (a synchronous child then returns, the main thread runs again and exits 1;
 * none is left orphaned), and the process SIGKILLs itself AFTER_CHILDREN_KILLED_MS
 * later, or at once when it has no child.
 */
export async function endProcess(exitWaitMs: number): Promise<void> {
  // Keeps this thread alive until the process ends, one way or the other.
  setTimeout(() => {
    const children = childPids();
    for (const pid of children) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    if (children.length === 0) process.kill(process.pid, 'SIGKILL');
    else setTimeout(() => process.kill(process.pid, 'SIGKILL'), AFTER_CHILDREN_KILLED_MS);
  }, exitWaitMs);
  try {
    const inspector = await import('node:inspector');
    const session = new inspector.Session();
    session.connectToMainThread();
    session.post('Runtime.evaluate', { expression: 'process.exit(1)' }, () => {});
  } catch {
    // No inspector in this build of Node: the SIGKILL does it.
  }
}
