/**
 * @module harness/launcher/launcher-lines
 * What the launched workers print: each line kept in its endpoint's ring (worker-logs.ts),
 * under its job when it names one (job-lines.ts), and written to the harness log with
 * the worker id.
 */
import type { Logger } from 'pino';
import type { Clock } from 'serverless-worker/internal';
import { JobLines, jobIdOfLine, type JobLinesLimits, type JobLinesRead } from './job-lines.js';
import { WorkerLogs, type WorkerLogLine } from './worker-logs.js';

export class LauncherLines {
  /** The endpoints' rings (the workers' lifecycle adds the launcher's own lines there too). */
  readonly workerLogs: WorkerLogs;
  /** Each job's own lines, kept longer than the endpoint's ring (job-lines.ts). */
  readonly #jobLines: JobLines;
  readonly #clock: Clock;
  readonly #log: Logger;

  constructor(logLines: number, jobLines: Partial<JobLinesLimits>, clock: Clock, log: Logger) {
    this.workerLogs = new WorkerLogs(logLines);
    this.#jobLines = new JobLines(jobLines);
    this.#clock = clock;
    this.#log = log;
  }

  /** A line a worker printed. */
  add(endpointId: string, workerId: string, stream: 'stdout' | 'stderr', line: string): void {
    // Numbered as it is kept (log-order.ts); the job's copy is the same entry, so both read in one order.
    const entry = this.workerLogs.add(endpointId, { at: this.#clock.now(), workerId, stream, line });
    const jobId = jobIdOfLine(line);
    if (jobId !== undefined) this.#jobLines.add(endpointId, jobId, entry);
    this.#log.info({ endpointId, workerId, stream }, line);
  }

  /** The endpoint's last `max` lines, optionally of one worker. */
  logs(endpointId: string, max?: number, workerId?: string): WorkerLogLine[] {
    return this.workerLogs.read(endpointId, max, workerId);
  }

  /** One job's own lines and why some are missing; undefined when none was seen. */
  jobLogs(endpointId: string, jobId: string): JobLinesRead | undefined {
    return this.#jobLines.read(endpointId, jobId, this.#clock.now());
  }
}
