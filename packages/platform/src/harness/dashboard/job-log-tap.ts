/**
 * @module harness/dashboard/job-log-tap
 * The log lines of jobs run by an in-process worker (`--serve-api`), for the job page.
 * A worker's job logger is `logger.child({ requestId })` (worker/job-run.ts: what
 * `ctx.log` is, and what the runtime's job lines go through); `tapJobLogs` wraps the
 * worker's logger so that each line logged through such a child is also kept in a
 * JobLogBuffer under its job id, while the line goes where it always went. Bounded: the
 * last JOB_LOG_LIMITS.linesPerJob lines of the last JOB_LOG_LIMITS.jobs jobs, each line
 * cut at JOB_LOG_LIMITS.lineChars. A remote worker's lines are its own (the launcher's
 * capture covers the workers it runs). Also at most JOB_LOG_LIMITS.totalChars characters in
 * all: a worker logging megabytes costs the harness a bounded amount. What was dropped of a
 * job is counted (droppedFor), so its page says how many lines went and why, not nothing.
 */
import type { Logger } from 'pino';
import { systemClock } from 'serverless-worker/internal';
import { nextLogSeq } from '../launcher/log-order.js';

/** What the buffer keeps at most: jobs, lines a job, characters a line, characters in all (the oldest jobs go first). */
export const JOB_LOG_LIMITS = { jobs: 2_000, linesPerJob: 200, lineChars: 4_000, totalChars: 8 * 1024 * 1024 } as const;

export interface JobLogLine {
  /** Epoch ms it was logged. */
  readonly at: number;
  readonly level: string;
  /** The message, then the fields logged with it as JSON. */
  readonly line: string;
  /** Capture sequence number (launcher/log-order.ts), given by add(): lines of one millisecond keep the order they were logged in. */
  readonly seq: number;
}

/** Lines of a job no longer kept, and why, in words. */
export interface DroppedJobLines {
  readonly lines: number;
  readonly why: string;
}

/** Jobs dropped whole whose count is remembered (the oldest forgotten first). */
const REMEMBERED_DROPS = 10_000;

export class JobLogBuffer {
  readonly #byJob = new Map<string, JobLogLine[]>();
  /** Of the jobs kept: their oldest lines dropped past linesPerJob. */
  readonly #droppedOldest = new Map<string, number>();
  /** Jobs dropped whole: how many lines they had (the oldest job first, at most REMEMBERED_DROPS). */
  readonly #droppedWhole = new Map<string, number>();
  readonly #limits: typeof JOB_LOG_LIMITS;
  /** Characters of the lines kept, in all. */
  #chars = 0;

  /** `limits`: smaller ones for tests; default JOB_LOG_LIMITS. */
  constructor(limits: Partial<typeof JOB_LOG_LIMITS> = {}) {
    this.#limits = { ...JOB_LOG_LIMITS, ...limits };
  }

  /** Characters kept now (at most limits.totalChars). */
  get chars(): number {
    return this.#chars;
  }

  /** Keep `captured` under its job, numbered (launcher/log-order.ts). */
  add(jobId: string, captured: Omit<JobLogLine, 'seq'>): void {
    const line: JobLogLine = { at: captured.at, level: captured.level, line: captured.line, seq: nextLogSeq() };
    let lines = this.#byJob.get(jobId);
    if (!lines) {
      lines = [];
      this.#byJob.set(jobId, lines);
      if (this.#byJob.size > this.#limits.jobs) this.#dropOldestJob();
    }
    const kept = line.line.length > this.#limits.lineChars ? { ...line, line: `${line.line.slice(0, this.#limits.lineChars)}…` } : line;
    lines.push(kept);
    this.#chars += kept.line.length;
    if (lines.length > this.#limits.linesPerJob) {
      const gone = lines.splice(0, lines.length - this.#limits.linesPerJob);
      for (const line of gone) this.#chars -= line.line.length;
      this.#droppedOldest.set(jobId, (this.#droppedOldest.get(jobId) ?? 0) + gone.length);
    }
    // Over the budget: the oldest jobs' lines go (never the job being logged).
    while (this.#chars > this.#limits.totalChars && this.#byJob.size > 1 && this.#byJob.keys().next().value !== jobId) this.#dropOldestJob();
  }

  /** The oldest job's lines go (a Map keeps insertion order). */
  #dropOldestJob(): void {
    const oldest = this.#byJob.keys().next().value as string;
    const lines = this.#byJob.get(oldest) ?? [];
    for (const gone of lines) this.#chars -= gone.line.length;
    this.#byJob.delete(oldest);
    this.#droppedWhole.set(oldest, lines.length + (this.#droppedOldest.get(oldest) ?? 0));
    this.#droppedOldest.delete(oldest);
    if (this.#droppedWhole.size > REMEMBERED_DROPS) this.#droppedWhole.delete(this.#droppedWhole.keys().next().value as string);
  }

  /** How many of the job's lines are no longer kept, and why; undefined when none went. */
  droppedFor(jobId: string): DroppedJobLines | undefined {
    const oldest = this.#droppedOldest.get(jobId);
    if (oldest !== undefined)
      return { lines: oldest, why: `${oldest} older lines of this job were dropped: a job keeps its last ${this.#limits.linesPerJob} lines` };
    const whole = this.#droppedWhole.get(jobId);
    if (whole === undefined) return undefined;
    return {
      lines: whole,
      why: `${whole} lines: this job's lines were dropped to keep those of later jobs (the last ${this.#limits.jobs} jobs' lines, ${Math.round(this.#limits.totalChars / 1024 / 1024)} MiB in all, are kept)`,
    };
  }

  /** The job's lines kept, oldest first. */
  forJob(jobId: string): readonly JobLogLine[] {
    return this.#byJob.get(jobId) ?? [];
  }
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

/** One pino call's arguments as a line: the message, then the object's fields (an Error as its message). */
function lineOf(args: readonly unknown[]): string {
  const [first, ...rest] = args;
  if (typeof first === 'string') return [first, ...rest.map(String)].join(' ');
  const message = typeof rest[0] === 'string' ? rest[0] : '';
  let fields = '';
  if (first instanceof Error) fields = `${first.name}: ${first.message}`;
  else if (first !== undefined && first !== null) {
    try {
      fields = JSON.stringify(first);
    } catch {
      fields = String(first);
    }
  }
  return [message, fields].filter((part) => part !== '' && part !== '{}').join(' ');
}

/** `logger`, whose children bound to a job (`{ requestId }`) also keep their lines in `buffer`. */
export function tapJobLogs(logger: Logger, buffer: JobLogBuffer, now: () => number = () => systemClock.now()): Logger {
  const wrap = (target: Logger, jobId: string | undefined): Logger =>
    new Proxy(target, {
      get(object, key, receiver) {
        const value: unknown = Reflect.get(object, key, receiver);
        if (key === 'child' && typeof value === 'function') {
          return (bindings: Record<string, unknown>, options?: unknown) => {
            const child = (value as (b: unknown, o?: unknown) => Logger).call(object, bindings, options);
            const bound = typeof bindings?.requestId === 'string' ? bindings.requestId : jobId;
            return wrap(child, bound);
          };
        }
        if (jobId !== undefined && typeof value === 'function' && (LEVELS as readonly (string | symbol)[]).includes(key)) {
          const level = key as (typeof LEVELS)[number];
          return (...args: unknown[]) => {
            if (object.isLevelEnabled(level)) buffer.add(jobId, { at: now(), level, line: lineOf(args) });
            return (value as (...a: unknown[]) => unknown).apply(object, args);
          };
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(object) : value;
      },
    });
  return wrap(logger, undefined);
}
