/**
 * @module harness/launcher/launcher-options
 * Options of the Launcher, validated with zod (they come from argv and a config file).
 */
import * as z from 'zod';
import { DEFAULT_CRASH_BACKOFF } from './crash-backoff.js';
import { JOB_LINES_LIMITS, JobLinesLimitsSchema } from './job-lines.js';

/** `NAME=COMMAND`: templates whose imageName is NAME run their workers as COMMAND. */
export const ImageCommandSchema = z.object({
  command: z.string().trim().min(1, { error: 'the command must not be empty' }),
  /** Working directory of the workers; default the harness's. */
  cwd: z.string().min(1).optional(),
});
export type ImageCommand = z.infer<typeof ImageCommandSchema>;

export const GpuListSchema = z.object({
  vendor: z.enum(['nvidia', 'amd']),
  devices: z.array(z.string().regex(/^[A-Za-z0-9:._-]{1,128}$/, { error: 'GPU ids are indexes or UUIDs' })),
  name: z.string().min(1).optional(),
});

/** `startFailureTimeoutMs` when none is given, ms (3 min). */
export const DEFAULT_START_FAILURE_TIMEOUT_MS = 180_000;
const START_FAILURE_TIMEOUT_MAX_MS = 604_800_000;
/** `startFailureTimeoutMs` without its default: the harness flag reads it too. */
export const StartFailureTimeoutSchema = z
  .number({ error: 'startFailureTimeoutMs must be a number of milliseconds' })
  .int({ error: 'startFailureTimeoutMs must be a whole number of milliseconds' })
  .min(0, { error: `startFailureTimeoutMs must be from 0 to ${START_FAILURE_TIMEOUT_MAX_MS} ms (7 days)` })
  .max(START_FAILURE_TIMEOUT_MAX_MS, { error: `startFailureTimeoutMs must be from 0 to ${START_FAILURE_TIMEOUT_MAX_MS} ms (7 days)` });

export const LauncherOptionsSchema = z.object({
  /** Image name -> how to run it as a local process. At least one, unless the launcher also has a container backend (LauncherDeps.containers). */
  images: z.record(z.string().min(1), ImageCommandSchema).default(() => ({})),
  /**
   * The machine's GPUs. `'none'`: this machine has none, and runs GPU endpoints' workers
   * without device assignment, whatever the store. Left out (none known): the same when
   * the harness is alone (memory store); on a database shared with other harnesses
   * (PostgreSQL), GPU endpoints are left to the harnesses that have GPUs.
   */
  gpus: z.union([GpuListSchema, z.literal('none')]).optional(),
  /** How often the scaler looks at the queue, ms, while an endpoint has a job queued or running, a worker, or one wanted (else it sleeps until a job or a change wakes it); default 200. */
  tickMs: z.number().int().min(10).max(60_000).default(200),
  /**
   * After SIGTERM, how long a worker may take to exit before SIGKILL, ms; default 40 000:
   * the worker's own drain (shutdownTimeoutMs, default 30 s) plus the grace of an aborted
   * handler (timeoutGraceMs, 5 s) plus 5 s to post the results and exit. A launched
   * container gets it as its stop timeout (Docker's StopTimeout, whole seconds).
   */
  shutdownDeadlineMs: z.number().int().min(0).max(3_600_000).default(40_000),
  /** Crash backoff: first wait, longest wait (ms), start-up crashes in a row that mark the endpoint unhealthy. */
  backoff: z
    .object({
      baseMs: z.number().int().min(0).max(3_600_000).default(DEFAULT_CRASH_BACKOFF.baseMs),
      maxMs: z.number().int().min(0).max(3_600_000).default(DEFAULT_CRASH_BACKOFF.maxMs),
      unhealthyAfter: z.number().int().min(1).max(1_000).default(DEFAULT_CRASH_BACKOFF.unhealthyAfter),
    })
    .default(() => ({ ...DEFAULT_CRASH_BACKOFF })),
  /**
   * While no worker of an endpoint can start (its backend's start problem, an image
   * missing; or start-up crashes in a row that mark it unhealthy), how long before its
   * queued jobs fail SW_WORKER_START_FAILED with the reason, ms (and those queued later
   * while it lasts, at once); default 180 000: longer than a crash backoff's first rounds,
   * far shorter than a job's ttl (24 h), which they waited out before.
   */
  startFailureTimeoutMs: StartFailureTimeoutSchema.default(DEFAULT_START_FAILURE_TIMEOUT_MS),
  /** Output lines kept per endpoint for GET /v2/{endpoint}/logs; default 1000. */
  logLines: z.number().int().min(1).max(1_000_000).default(1_000),
  /** Each job's own lines (the dashboard's job page): bytes per job, time after its last line, bytes in all (job-lines.ts). */
  jobLines: JobLinesLimitsSchema.default(() => ({ ...JOB_LINES_LIMITS })),
});
export type LauncherOptionsInput = z.input<typeof LauncherOptionsSchema>;
export type LauncherSettings = z.output<typeof LauncherOptionsSchema>;

/** Parse `NAME=COMMAND` (the first `=` splits; the command may hold more). */
export function parseImageFlag(value: string): [string, ImageCommand] {
  const at = value.indexOf('=');
  const name = at > 0 ? value.slice(0, at).trim() : '';
  const command = at > 0 ? value.slice(at + 1).trim() : '';
  if (name.length === 0 || command.length === 0) {
    throw new Error(`--image expects NAME=COMMAND, like "ghcr.io/me/worker:1=node dist/worker.js"; got ${JSON.stringify(value)}`);
  }
  return [name, { command }];
}
