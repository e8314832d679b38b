/**
 * @module harness/launcher/job-lines
 * Each job's own log lines from the workers the launcher runs, for the dashboard's job
 * page. The endpoint's ring (worker-logs.ts, 1 000 lines) turns over in minutes under
 * load, and the page then said "No line for this job (yet)" of a job that had logged
 * (issue 32). A line naming its job (`"requestId":"<id>"`: what `ctx.log`, the
 * runtime's job lines and what a handler prints during its job carry, as the platform's
 * Python SDK's do; or `"jobId"`, `"job_id"`; or, in a plain line, the job's id itself, a
 * UUID as the harness makes them) is also kept here, under its job, bounded three ways
 * (JOB_LINES_LIMITS):
 * - by bytes per job: past `bytesPerJob` the job's oldest lines go, counted;
 * - by time: a job's lines go `keepMs` after its last line (the /run result's retention);
 * - in all: past `totalBytes` the jobs logged to longest ago go whole.
 * What went, and why, is remembered (for the last `rememberedDrops` jobs dropped whole),
 * so the page says so instead of "no line".
 */
import * as z from 'zod';
import type { WorkerLogLine } from './worker-logs.js';

export const JOB_LINES_LIMITS = {
  /** Bytes (UTF-8) of one job's lines kept; the oldest go first. */
  bytesPerJob: 256 * 1024,
  /** How long a job's lines stay after its last line, ms (30 min: a /run result's retention). */
  keepMs: 30 * 60_000,
  /** Bytes of every job's lines together; past it the jobs logged to longest ago go whole. */
  totalBytes: 32 * 1024 * 1024,
  /** Jobs dropped whole whose reason is remembered. */
  rememberedDrops: 10_000,
} as const;

export type JobLinesLimits = { -readonly [K in keyof typeof JOB_LINES_LIMITS]: number };

/** The limits as a launcher option (`jobLines`, the harness's --job-log-* flags): ranges, defaults, and one job's bound within the total. */
export const JobLinesLimitsSchema = z
  .object({
    bytesPerJob: z
      .number()
      .int()
      .min(1_024)
      .max(1024 ** 3)
      .default(JOB_LINES_LIMITS.bytesPerJob),
    keepMs: z
      .number()
      .int()
      .min(1_000)
      .max(7 * 24 * 3_600_000)
      .default(JOB_LINES_LIMITS.keepMs),
    totalBytes: z
      .number()
      .int()
      .min(1_024)
      .max(16 * 1024 ** 3)
      .default(JOB_LINES_LIMITS.totalBytes),
    rememberedDrops: z.number().int().min(0).max(1_000_000).default(JOB_LINES_LIMITS.rememberedDrops),
  })
  .refine((limits) => limits.bytesPerJob <= limits.totalBytes, {
    error: (issue) => {
      const limits = issue.input as { bytesPerJob: number; totalBytes: number };
      return `one job's bound (bytesPerJob, --job-log-bytes: ${limits.bytesPerJob}) must be at most every job's together (totalBytes, --job-log-total-bytes: ${limits.totalBytes})`;
    },
  });

/** One job's lines, and what was dropped of them. */
export interface JobLinesRead {
  readonly lines: readonly WorkerLogLine[];
  /** Why lines of this job are missing, in words; undefined when none are. */
  readonly dropped?: string;
  /**
   * Of a job still kept: how many of its oldest lines its byte bound dropped here, and why.
   * The endpoint's ring may still hold some of them, so a reader that shows both counts
   * what is really missing (issue 49 item 8: "33 older lines were dropped" above all 50).
   */
  readonly droppedLines?: { readonly count: number; readonly because: string };
  /** Of a job no longer kept: how many lines it had when they were all dropped. */
  readonly goneLines?: number;
}

/** The sentence for `count` lines of a job missing, `because` why. */
export function droppedLinesText(count: number, because: string): string {
  return `${count} older lines of this job were dropped: ${because}`;
}

interface Kept {
  readonly lines: WorkerLogLine[];
  bytes: number;
  lastAt: number;
  droppedLines: number;
}

const REQUEST_ID = /"(?:requestId|jobId|job_id)":"([^"\\]{1,200})"/;
/** A job id as the harness makes them (store/job-id.ts): a UUID, `sync-` in front for /runsync. */
const JOB_ID_IN_TEXT = /(?:sync-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

/**
 * The job a worker's output line names: `"requestId"`, `"jobId"` or `"job_id"` of a JSON
 * log line, else the first job id in its text (a plain line such as `job <id>: done`, which
 * vanished with the endpoint's ring before); undefined for a line that names none.
 */
export function jobIdOfLine(line: string): string | undefined {
  return REQUEST_ID.exec(line)?.[1] ?? JOB_ID_IN_TEXT.exec(line)?.[0];
}

const kib = (bytes: number): string => `${Math.round(bytes / 1024)} KiB`;

export class JobLines {
  /** By `endpoint/job`, in the order of their last line (a job that logs moves to the end). */
  readonly #byJob = new Map<string, Kept>();
  /** Jobs dropped whole: why and how many lines, oldest first, at most limits.rememberedDrops. */
  readonly #drops = new Map<string, { why: string; lines: number }>();
  readonly #limits: JobLinesLimits;
  #bytes = 0;

  constructor(limits: Partial<JobLinesLimits> = {}) {
    this.#limits = { ...JOB_LINES_LIMITS, ...limits };
  }

  /** Bytes kept now, every job together (at most limits.totalBytes, but for the job being logged). */
  get bytes(): number {
    return this.#bytes;
  }

  add(endpointId: string, jobId: string, entry: WorkerLogLine): void {
    const key = `${endpointId}/${jobId}`;
    this.#expire(entry.at);
    let kept = this.#byJob.get(key);
    if (kept) this.#byJob.delete(key);
    else kept = { lines: [], bytes: 0, lastAt: entry.at, droppedLines: 0 };
    this.#byJob.set(key, kept);
    const size = Buffer.byteLength(entry.line);
    kept.lines.push(entry);
    kept.bytes += size;
    kept.lastAt = entry.at;
    this.#bytes += size;
    while (kept.bytes > this.#limits.bytesPerJob && kept.lines.length > 1) {
      const gone = kept.lines.shift() as WorkerLogLine;
      const goneBytes = Buffer.byteLength(gone.line);
      kept.bytes -= goneBytes;
      this.#bytes -= goneBytes;
      kept.droppedLines++;
    }
    for (const [other] of this.#byJob) {
      if (this.#bytes <= this.#limits.totalBytes || other === key) break;
      this.#dropJob(
        other,
        `every job's lines together passed ${kib(this.#limits.totalBytes)}: this job's lines, among those logged to longest ago, were dropped`,
      );
    }
  }

  /** The job's lines kept (oldest first) and why some are missing; undefined when nothing is known of it. */
  read(endpointId: string, jobId: string, now: number): JobLinesRead | undefined {
    this.#expire(now);
    const key = `${endpointId}/${jobId}`;
    const kept = this.#byJob.get(key);
    if (kept) {
      if (kept.droppedLines === 0) return { lines: kept.lines };
      const because = `a job keeps its last ${kib(this.#limits.bytesPerJob)} of lines`;
      return {
        lines: kept.lines,
        dropped: droppedLinesText(kept.droppedLines, because),
        droppedLines: { count: kept.droppedLines, because },
      };
    }
    const gone = this.#drops.get(key);
    return gone === undefined ? undefined : { lines: [], dropped: gone.why, goneLines: gone.lines };
  }

  #expire(now: number): void {
    for (const [key, kept] of this.#byJob) {
      if (now - kept.lastAt < this.#limits.keepMs) break;
      this.#dropJob(key, `this job's lines were dropped ${Math.round(this.#limits.keepMs / 60_000)} min after its last line`);
    }
  }

  #dropJob(key: string, why: string): void {
    const kept = this.#byJob.get(key);
    if (!kept) return;
    this.#byJob.delete(key);
    this.#bytes -= kept.bytes;
    this.#drops.delete(key);
    const lines = kept.lines.length + kept.droppedLines;
    this.#drops.set(key, { why: `${lines} lines: ${why}`, lines });
    if (this.#drops.size > this.#limits.rememberedDrops) this.#drops.delete(this.#drops.keys().next().value as string);
  }
}
