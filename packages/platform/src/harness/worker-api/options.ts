/**
 * @module harness/worker-api/options
 * Options of the worker API plugin, validated once at registration and frozen.
 */
import type { WorkerApiDirect } from './direct-calls.js';
import * as z from 'zod';
import { Harness, parseOnceOrThrow, type ResultAck, ServerlessWorkerError, type StopReason } from 'serverless-worker/internal';

const ms = (name: string, min: number, max: number) =>
  z
    .number({ error: `${name} must be a number of milliseconds` })
    .int({ error: `${name} must be a whole number of milliseconds` })
    .min(min, { error: `${name} must be from ${min} to ${max} ms` })
    .max(max, { error: `${name} must be from ${min} to ${max} ms` });

/** When a worker reached only through HTTP counts as gone. */
export const LivenessSchema = z.object({
  /** The ping interval workers use (RUNPOD_PING_INTERVAL), ms; default 10 000. */
  pingIntervalMs: ms('liveness.pingIntervalMs', 10, 3_600_000).default(10_000),
  /** A worker silent for this many intervals is gone; default 3. */
  missedPings: z.number().int().min(1).max(1_000, { error: 'liveness.missedPings must be a whole number from 1 to 1000' }).default(3),
  /** How often silence is checked, ms; default a third of the silence, at most the ping interval and at most 1 000. */
  sweepIntervalMs: ms('liveness.sweepIntervalMs', 10, 3_600_000).optional(),
});

export const WorkerApiSettingsSchema = z.object({
  /** Required on every worker route when set (bare or `Bearer`); default none (leave unset when the server checks keys for all of /v2). */
  apiKey: z.string().min(1, { error: 'apiKey must not be empty' }).optional(),
  /** How long job-take and job-stop hold a request open before answering 204, ms; default 30 000 (below the worker's 90 s poll bound). */
  longPollMs: ms('longPollMs', 10, 600_000).default(30_000),
  /** Worker liveness from the heartbeat, or `false` to never declare workers gone; default `{ pingIntervalMs: 10 000, missedPings: 3 }`. */
  liveness: z.union([z.literal(false), LivenessSchema], { error: 'liveness must be false or { pingIntervalMs, missedPings, sweepIntervalMs }' }).prefault({}),
  /** Largest job-done or job-stream body, bytes; default 20 000 000 (the platform's result limit). */
  maxBodyBytes: z.number().int().min(1_024).max(1_000_000_000, { error: 'maxBodyBytes must be from 1024 to 1e9 bytes' }).default(20_000_000),
  /**
   * Hand out jobs on a job-done post that asks (`&take=N`), and say so on job-take answers
   * (`x-sw-take-on-done: 1`, job/take-on-done.ts), so that our worker's result and its next
   * take go in one request; default true. `false`: job-done ignores `take`, nothing is advertised.
   */
  takeOnDone: z.boolean({ error: 'takeOnDone must be true or false' }).default(true),
  /** How long a stop request waits for its worker's next job-stop poll before it is dropped, ms; default 600 000. */
  stopRetentionMs: ms('stopRetentionMs', 1_000, 86_400_000).default(600_000),
});

export type WorkerApiSettings = Readonly<z.output<typeof WorkerApiSettingsSchema>>;
export type LivenessSettings = z.output<typeof LivenessSchema>;

/** What the worker API saw, for logs, the CLI and tests; every hook optional. */
export interface WorkerApiEvents {
  /** A heartbeat arrived. */
  onPing?(info: { endpointId: string; workerId: string; jobIds: string[]; version?: string }): void;
  /** A job-done (not a progress post) was answered. */
  onResult?(info: { endpointId: string; workerId: string; jobId: string; ack: ResultAck }): void;
  /** A worker took jobs through job-take (each with its attempt number). */
  onJobsTaken?(info: { endpointId: string; workerId: string; jobs: Array<{ id: string; attempt?: number | undefined }> }): void;
  /** A post (result, progress, stream chunk) named an attempt other than the job's current one and was refused (409 SW_STALE_ATTEMPT). */
  onStaleAttempt?(info: { endpointId: string; workerId: string; jobId: string; attempt: number; currentAttempt: number; what: string }): void;
  /** A worker was declared gone; its IN_PROGRESS jobs went back to the queue. */
  onWorkerGone?(info: { endpointId: string; workerId: string; requeued: string[]; reason: 'silent' | 'unhealthy' }): void;
  /** Jobs handed to a live worker were missing from its heartbeat for the silence window (a lost job-take answer); they went back to the queue. */
  onJobsLost?(info: { endpointId: string; workerId: string; requeued: string[] }): void;
  /** A worker asked to be recycled after a job (stopPod). The harness cannot recycle processes: it only reports it. */
  onStopPod?(info: { endpointId: string; workerId: string; jobId: string }): void;
  /** A worker reported a failed start-up check. */
  onUnhealthy?(info: { endpointId: string; workerId: string; check: string; reason: string }): void;
  /** A stop request was handed to a worker through job-stop. */
  onStopDelivered?(info: {
    endpointId: string;
    workerId: string;
    jobIds: string[];
    reasons: Record<string, StopReason>;
    attempts: Record<string, number>;
  }): void;
}

export interface WorkerApiOptions extends z.input<typeof WorkerApiSettingsSchema> {
  /** The job store the routes work on. */
  harness: Harness;
  /** Hooks; default none. */
  events?: WorkerApiEvents;
  /** Filled with the routes' job-take, job-done and job-stream as calls (direct-calls.ts); default none. */
  direct?: WorkerApiDirect;
}

/** Validate and freeze the settings; throws SW_INVALID_OPTIONS naming the bad one. */
export function resolveWorkerApiSettings(options: WorkerApiOptions): WorkerApiSettings {
  if (!(options.harness instanceof Harness)) {
    throw new ServerlessWorkerError('SW_INVALID_OPTIONS', 'Invalid worker API options: harness must be a Harness instance', { option: 'harness' });
  }
  return Object.freeze(parseOnceOrThrow(WorkerApiSettingsSchema, options, 'SW_INVALID_OPTIONS', 'worker API options'));
}
