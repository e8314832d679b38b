/**
 * @module transports/platform/options
 * Settings of the platform transport, validated once with zod and frozen. The
 * defaults follow the reference worker where it has one (a 90 s long poll) and choose
 * "never drop a result" where it does not (results retried for 5 min, not twice).
 */
import type { Logger } from 'pino';
import * as z from 'zod';
import type { Clock } from '../../clock/index.js';
import { parseOnceOrThrow } from '../../job/index.js';
import { DEFAULT_MAX_RESULT_BYTES } from '../result-limits.js';
import { MAX_CONNECTIONS } from './http-client.js';
import type { PlatformEnv } from './platform-env.js';

const ms = (name: string, min: number, max: number) =>
  z
    .number({ error: `${name} must be a number of milliseconds` })
    .int({ error: `${name} must be a whole number of milliseconds` })
    .min(min, { error: `${name} must be from ${min} to ${max} ms` })
    .max(max, { error: `${name} must be from ${min} to ${max} ms` });

// Each setting's README words are in its .meta() (settings/option-table.ts); its default and range are the schema's.
// The one-line doc comments are what an editor shows on hover (z.input keeps them).
export const PlatformTransportSettingsSchema = z
  .object({
    /** Bound of one job-take or job-stop long poll, ms; default 90 000 (as the reference worker). */
    pollTimeoutMs: ms('pollTimeoutMs', 1_000, 3_600_000)
      .default(90_000)
      .meta({ description: "Bound of one job-take or job-stop long poll, ms (the default is the reference worker's)." }),
    /** Least time between the starts of two take polls that came back empty at once, ms; default 1 000 (a platform that does not hold polls is not hammered). */
    emptyPollGapMs: ms('emptyPollGapMs', 0, 60_000).default(1_000).meta({
      description:
        'Least time between the starts of two take polls that came back empty at once, ms, so that a platform that does not hold polls is not hammered.',
    }),
    /** First wait after a failed take or stop poll, or a 429, ms; default 1 000. */
    pollBackoffMinMs: ms('pollBackoffMinMs', 1, 600_000)
      .default(1_000)
      .meta({ description: 'First wait after a failed take or stop poll, or a 429, ms; at most `pollBackoffMaxMs`.' }),
    /** Longest wait after failed polls, ms; default 30 000. */
    pollBackoffMaxMs: ms('pollBackoffMaxMs', 1, 3_600_000).default(30_000).meta({ description: 'Longest wait after failed polls, ms.' }),
    /** Bound of one post (result, chunk, progress) or unhealthy report, ms; default 30 000. */
    requestTimeoutMs: ms('requestTimeoutMs', 100, 600_000)
      .default(30_000)
      .meta({ description: 'Bound of one post (result, chunk, progress) or unhealthy report, ms.' }),
    /** A result or chunk post is retried until it lands or this long has passed since its first attempt, ms; default 300 000 (5 min). */
    resultDeadlineMs: ms('resultDeadlineMs', 0, 86_400_000).default(300_000).meta({
      description:
        'A result or chunk post is retried until it lands or this long has passed since its first attempt, ms (never drop a result: retried for minutes, not twice).',
    }),
    /** Wait before the first retry of a post, ms; doubles each retry, times a random 1-2; default 250. */
    retryMinDelayMs: ms('retryMinDelayMs', 0, 600_000)
      .default(250)
      .meta({ description: 'Wait before the first retry of a post, ms; it doubles each retry, times a random 1-2; at most `retryMaxDelayMs`.' }),
    /** Longest wait between two attempts of a post, ms; default 15 000. */
    retryMaxDelayMs: ms('retryMaxDelayMs', 1, 3_600_000).default(15_000).meta({ description: 'Longest wait between two attempts of a post, ms.' }),
    /** On close, how long posts still retrying may take to land before they are abandoned (and logged, counted), ms; default 10 000. */
    closeDrainMs: ms('closeDrainMs', 0, 600_000)
      .default(10_000)
      .meta({ description: 'On close, how long posts still retrying may take to land before they are abandoned (and logged, counted), ms.' }),
    /** Send a chunk's metrics (stream_index, handler metrics) beside its output; default true. See the module doc of platform-transport. */
    chunkMetrics: z
      .boolean({ error: 'chunkMetrics must be true or false' })
      .default(true)
      .meta({ description: 'Send a chunk\'s metrics (`stream_index`, handler metrics) beside its output (see "Result delivery").' }),
    /**
     * Chunk posts of one job in flight at once, when the platform advertises that it
     * orders chunks by `stream_index` (the harness's `x-sw-stream-order` header) and
     * chunkMetrics is on; one at a time otherwise. At most 2 with batches (chunk-posts.ts). Default 16.
     */
    chunkWindow: z
      .number({ error: 'chunkWindow must be a number of posts' })
      .int({ error: 'chunkWindow must be a whole number of posts' })
      .min(1, { error: 'chunkWindow must be from 1 to 64 posts' })
      .max(64, { error: 'chunkWindow must be from 1 to 64 posts' })
      .default(16)
      .meta({
        description:
          'Stream chunk posts of one job kept in flight at once, when the platform advertises that it stores chunks in `stream_index` order (the local harness\'s `x-sw-stream-order` header on job-take answers) and `chunkMetrics` is on; otherwise one at a time, in order. When the platform also takes several chunks in one post (`chunkBatch`), at most 2 posts. Text that can be joined still goes one post at a time (see "Result delivery").',
      }),
    /**
     * Most stream chunks of one job in one post, when the platform advertises that its
     * job-stream takes several (the harness's `x-sw-stream-batch` header) and it orders
     * them (chunkWindow's conditions); one a post otherwise. Default 64.
     */
    chunkBatch: z
      .number({ error: 'chunkBatch must be a number of chunks' })
      .int({ error: 'chunkBatch must be a whole number of chunks' })
      .min(1, { error: 'chunkBatch must be from 1 to 64 chunks' })
      .max(64, { error: 'chunkBatch must be from 1 to 64 chunks' })
      .default(64)
      .meta({
        description:
          "Most stream chunks of one job sent in one post, when the platform advertises that its job-stream route takes several as a JSON array (the local harness's `x-sw-stream-batch` header on job-take answers, beside `x-sw-stream-order`) and `chunkMetrics` is on: the chunks queued when a post goes out travel in one body, each still its own item on `/stream`; at most the advertised count are in flight over all posts, and at most 2 posts (`chunkWindow` if lower), so that chunks gather behind them. 1: one chunk a post (and the whole `chunkWindow` of posts). The real platform advertises neither, so there every chunk has its own post.",
      }),
    maxResultBytes: z
      .number({ error: 'maxResultBytes must be a number of bytes' })
      .int({ error: 'maxResultBytes must be a whole number of bytes' })
      .min(1_024, { error: 'maxResultBytes must be from 1024 to 1e9 bytes' })
      .max(1_000_000_000, { error: 'maxResultBytes must be from 1024 to 1e9 bytes' })
      .default(DEFAULT_MAX_RESULT_BYTES)
      .meta({
        description:
          "Largest result the platform accepts in one job-done body, bytes (the default is the worker API's limit; the platform sets no variable for it). A larger result is not posted: the job fails at once with `SW_RESULT_TOO_LARGE`; the same limit applies in the dry run, `--serve-api` and `runJob`.",
      }),
    /** Most connections to the platform open at once; a request past them waits for one; default 32 (MAX_CONNECTIONS). */
    maxConnections: z
      .number({ error: 'maxConnections must be a number of connections' })
      .int({ error: 'maxConnections must be a whole number of connections' })
      .min(4, { error: 'maxConnections must be from 4 to 1024 connections' })
      .max(1_024, { error: 'maxConnections must be from 4 to 1024 connections' })
      .default(MAX_CONNECTIONS)
      .meta({
        description:
          "Most connections to the platform open at once (keep-alive, reused); a take, post or report past them waits until one is free, within its own timeout. The take's and the job-stop poll's long polls hold one each. Without a bound a worker at concurrency 256 opened about 500, and their buffers stayed with the C library after they closed (about 8 MiB of RSS).",
      }),
    /** Run the heartbeat (when RUNPOD_WEBHOOK_PING is set); default true. */
    heartbeat: z
      .boolean({ error: 'heartbeat must be true or false' })
      .default(true)
      .meta({ description: 'Run the heartbeat (when `RUNPOD_WEBHOOK_PING` is set).' }),
  })
  .refine((s) => s.pollBackoffMinMs <= s.pollBackoffMaxMs, { error: 'pollBackoffMinMs must not exceed pollBackoffMaxMs', path: ['pollBackoffMinMs'] })
  .refine((s) => s.retryMinDelayMs <= s.retryMaxDelayMs, { error: 'retryMinDelayMs must not exceed retryMaxDelayMs', path: ['retryMinDelayMs'] });

/** Settings as a caller writes them (every field optional). */
export type PlatformTransportSettingsInput = z.input<typeof PlatformTransportSettingsSchema>;
/** Settings with defaults applied, frozen. */
export type PlatformTransportSettings = Readonly<z.output<typeof PlatformTransportSettingsSchema>>;

/** A counter as prom-client's Counter offers it; `createMetrics()` fits. */
export interface CounterLike {
  inc(value?: number): void;
}

/** The counters the transport moves: a `createMetrics()` object fits as it is. */
export interface PlatformTransportMetrics {
  /** Result and stream-chunk posts tried again after a failed attempt. */
  readonly resultPostRetriesTotal: CounterLike;
  /** Results and stream chunks abandoned (deadline passed, or refused with a 4xx). */
  readonly resultPostGiveUpsTotal: CounterLike;
  /** Failed heartbeat pings. */
  readonly heartbeatFailuresTotal: CounterLike;
}

export interface PlatformTransportOptions extends PlatformTransportSettingsInput {
  /** The parsed platform variables (parsePlatformEnv). */
  readonly env: PlatformEnv;
  /** Worker id; default RUNPOD_POD_ID, else a random id. */
  readonly workerId?: string;
  readonly logger: Logger;
  /** Counters to move; default none. */
  readonly metrics?: PlatformTransportMetrics;
  /**
   * The deadline watchdog in the heartbeat thread (serve() sets it); default none: the
   * thread only pings. See transports/watchdog.
   */
  readonly watchdog?: PlatformWatchdogOptions;
  /**
   * Times poll gaps, backoff, request bounds and the close drain; default the system
   * clock. The heartbeat thread keeps real time (transports/watchdog).
   */
  readonly clock?: Clock;
}

/** What the platform transport's watchdog needs from the worker. */
export interface PlatformWatchdogOptions {
  /** The worker's timeoutGraceMs: a blocked job is reported this long after its deadline. */
  readonly timeoutGraceMs: number;
  /** Host name for error payloads. */
  readonly hostname: string;
  /** While the event loop is blocked longer than this, the heartbeat lists no job, ms; default 3 ping intervals, at least 10 000. */
  readonly blockedUnclaimMs?: number;
  /** Jobs watched at once; default 256. */
  readonly slots?: number;
}

/** Validate and freeze the settings; throws SW_INVALID_OPTIONS naming the bad one. */
export function resolvePlatformSettings(input: PlatformTransportSettingsInput = {}): PlatformTransportSettings {
  // z.object drops the keys that are not settings (env, logger, metrics), so whole options can be passed.
  return Object.freeze(parseOnceOrThrow(PlatformTransportSettingsSchema, input, 'SW_INVALID_OPTIONS', 'platform transport options'));
}
