/**
 * @module cli/commands/harness-settings
 * Every flag of `serverless-worker harness`, declared once (settings/setting.ts): the
 * commander options, the validation of what they give and the README's flag table
 * (scripts/settings-docs.ts) are made from this table. Ranges and defaults come from
 * the library's own option schemas (createHarnessServer, the worker API, load
 * balancing, the Harness), so the flag and the option cannot drift apart.
 */
import * as z from 'zod';
import {
  AllowListSchema,
  API_KEY_ENV,
  commaListSetting,
  DEFAULT_MAX_QUEUED_BYTES,
  DEFAULT_MAX_REQUEUES,
  type Setting,
  settingsSchema,
  switchSetting,
  textSetting,
  wholeNumberSetting,
} from 'serverless-worker/internal';
import { HarnessServerOptionsSchema, RateLimitSettingsSchema, WebhookSettingsSchema } from '../../harness/server-options.js';
import { LivenessSchema } from '../../harness/worker-api/options.js';
import { LoadBalancingSettingsSchema } from '../../harness/load-balancing/options.js';
import { DEFAULT_POOL_SIZE } from '../../harness/postgres/database.js';
import { PoolSizeSchema, STORE_ENV, StoreSpecSchema } from '../../harness/open-store.js';
import { JOB_LINES_LIMITS, JobLinesLimitsSchema } from '../../harness/launcher/job-lines.js';
import { DEFAULT_START_FAILURE_TIMEOUT_MS, StartFailureTimeoutSchema } from '../../harness/launcher/launcher-options.js';

const server = HarnessServerOptionsSchema.shape;
const jobLines = JobLinesLimitsSchema.shape;
const bytesText = (bytes: number): string => `\`${bytes}\` (${bytes >= 1024 * 1024 ? `${bytes / 1024 / 1024} MiB` : `${bytes / 1024} KiB`})`;
const endpointId = z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, { error: 'endpoint ids are 1-128 letters, digits, ".", "-" or "_"' });

export const HARNESS_SETTINGS = {
  host: textSetting(server.host, { flag: '--host <address>', description: 'address to listen on; without an API key only loopback is allowed' }),
  port: wholeNumberSetting(server.port, { flag: '--port <port>', description: 'port to listen on; 0 picks a free one' }),
  apiKey: textSetting(z.string().min(1, { error: '--api-key must not be empty' }).optional(), {
    flag: '--api-key <key>',
    env: API_KEY_ENV,
    defaultText: 'none',
    description: 'require this key on every route (Authorization: Bearer <key>)',
  }),
  insecureNoAuth: switchSetting({
    flag: '--insecure-no-auth',
    description: 'allow a non-loopback --host without an API key (anyone who reaches it can run jobs)',
  }),
  endpoint: {
    flag: '--endpoint <id...>',
    schema: z.array(endpointId).default([]),
    defaultText: 'any id works',
    description: 'create these endpoints at start and serve only them (and those made through /v1/endpoints)',
    details:
      'Without it, an endpoint is made by the first job sent to it (or a worker joining it), with a warning in the log once per id, marked "created on first use" in the dashboard\'s endpoints table (`createdOnUse` in `GET /ui/api/overview`); a read (`/health`, `/status`, `/stream`, `/requests`, `/cancel`, `/purge-queue`) on an unknown id makes nothing (zeros, or 404 `SW_JOB_NOT_FOUND`); once endpoints exist in `/v1/endpoints`, a job sent to any other id answers 404 `SW_ENDPOINT_NOT_FOUND`, as the service answers a wrong endpoint id',
  },
  rateLimit: switchSetting({
    flag: '--no-rate-limit',
    defaultText: 'limits on',
    description: "turn off the platform's per-endpoint rate limits on /run, /runsync and the other queue operations (429 with Retry-After when on)",
  }),
  requestsPerWorker: wholeNumberSetting(RateLimitSettingsSchema.shape.requestsPerWorker, {
    flag: '--requests-per-worker <n>',
    description: 'rate per 10 s each running worker adds: the limit is max(base, workers x n)',
  }),
  webhookRetryDelayMs: wholeNumberSetting(WebhookSettingsSchema.shape.retryDelayMs, {
    flag: '--webhook-retry-delay-ms <ms>',
    description: 'wait between webhook attempts (3 attempts in all)',
  }),
  webhookTimeoutMs: wholeNumberSetting(WebhookSettingsSchema.shape.timeoutMs, {
    flag: '--webhook-timeout-ms <ms>',
    description: 'time one webhook attempt may take',
  }),
  webhookAllow: commaListSetting(AllowListSchema.default([]), {
    flag: '--webhook-allow <targets>',
    description:
      'webhook targets allowed beyond the default policy: CIDR ranges, addresses, loopback, link-local, metadata (comma-separated, repeatable; never the harness itself)',
    details: 'See "Webhooks".',
  }),
  openaiTimeoutMs: wholeNumberSetting(server.openaiTimeoutMs, {
    flag: '--openai-timeout-ms <ms>',
    description: 'longest an OpenAI-compatible call waits for its job (then the job is cancelled, 504)',
  }),
  maxConnections: wholeNumberSetting(server.maxConnections, {
    flag: '--max-connections <n>',
    defaultText: 'descriptor limit less a quarter (at least 128 kept)',
    description: 'client connections open at once; a connection past it is closed at once',
    details:
      "The default keeps a quarter of the process's open-file limit (`ulimit -n`), at least 128 descriptors, for outgoing calls (load-balancing pings and requests, webhooks, PostgreSQL), launched workers and files: with the usual limit of 1 024 that is 768 connections. Raise `ulimit -n` to take more (`maxConnections` in the library).",
  }),
  headersTimeoutMs: wholeNumberSetting(server.headersTimeoutMs, {
    flag: '--headers-timeout-ms <ms>',
    description: "time for a request's headers to arrive (an idle new connection too); then 400 SW_INVALID_REQUEST and the connection is closed",
    details: 'Checked every second. At most --request-timeout-ms (`headersTimeoutMs` in the library).',
  }),
  requestTimeoutMs: wholeNumberSetting(server.requestTimeoutMs, {
    flag: '--request-timeout-ms <ms>',
    description: 'time for a whole request, body included, to arrive; then 400 SW_INVALID_REQUEST and the connection is closed',
    details:
      'It bounds a client sending slowly, not the answer: /runsync waits, streams and long polls take as long as they need. A 20 MB /runsync body needs at least 350 kB/s with the default (`requestTimeoutMs` in the library).',
  }),
  streamWaitMs: wholeNumberSetting(server.streamWaitMs, {
    flag: '--stream-wait-ms <ms>',
    description: 'how long GET /stream waits for a chunk when none is unread (per call: ?wait=)',
  }),
  management: switchSetting({ flag: '--no-management', description: 'leave the management API (/v1) out' }),
  pingIntervalMs: wholeNumberSetting(LivenessSchema.shape.pingIntervalMs, {
    flag: '--ping-interval-ms <ms>',
    description: "the workers' heartbeat interval (RUNPOD_PING_INTERVAL, printed for them)",
  }),
  missedPings: wholeNumberSetting(LivenessSchema.shape.missedPings, {
    flag: '--missed-pings <n>',
    description: 'a worker silent this many ping intervals is gone: its jobs go back to the queue',
    details: 'Within about interval × missed + 1 s.',
  }),
  maxRequeues: wholeNumberSetting(z.number().int().min(0).max(1_000).default(DEFAULT_MAX_REQUEUES), {
    flag: '--max-requeues <n>',
    description: 'times a job lost with its worker goes back to the queue before it ends FAILED (SW_REQUEUE_LIMIT)',
    details: 'A job whose take answer was lost counts too (`maxRequeues` in the library).',
  }),
  maxQueuedBytes: wholeNumberSetting(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).default(DEFAULT_MAX_QUEUED_BYTES), {
    flag: '--max-queued-bytes <n>',
    defaultText: `\`${DEFAULT_MAX_QUEUED_BYTES}\` (${DEFAULT_MAX_QUEUED_BYTES / 1024 / 1024} MiB)`,
    description:
      'bytes of request bodies that queued jobs may hold in memory, every endpoint together; past it /run and /runsync answer 503 SW_QUEUE_FULL with Retry-After (memory store only)',
    details: '`maxQueuedBytes` in the library.',
  }),
  store: textSetting(StoreSpecSchema.default('memory'), {
    flag: '--store <store>',
    env: STORE_ENV,
    description:
      'where jobs live: memory (default; lost when the process ends) or postgres://user:password@host:5432/database (durable; harnesses on one database share the queue)',
    details: 'See "Job stores: memory or PostgreSQL".',
  }),
  pgPoolSize: wholeNumberSetting(PoolSizeSchema.default(DEFAULT_POOL_SIZE), {
    flag: '--pg-pool-size <n>',
    description:
      'with --store postgres://: connections in the one pool every store of this process shares (jobs, /v1 records, launcher slots); LISTEN takes one more',
    details: '`storePoolSize` in the library.',
  }),
  drainTimeoutMs: wholeNumberSetting(z.number().int().min(0).max(3_600_000).default(30_000), {
    flag: '--drain-timeout-ms <ms>',
    description: 'on SIGTERM/SIGINT, how long running jobs may take to finish before the harness stops',
  }),
  lbRequestTimeoutMs: wholeNumberSetting(LoadBalancingSettingsSchema.shape.requestTimeoutMs, {
    flag: '--lb-request-timeout-ms <ms>',
    description: 'load-balancing endpoints: answer 524 past this (the platform: about 5.5 min)',
    details: 'See "Load-balancing workers and endpoints".',
  }),
  lbAllow: commaListSetting(AllowListSchema.default([]), {
    flag: '--lb-allow <targets>',
    description:
      'load-balancing worker URLs allowed beyond the default policy (without an API key: loopback only): CIDR ranges, addresses, loopback, link-local, metadata (comma-separated, repeatable)',
    details: 'See "Registration".',
  }),
  lbPingIntervalMs: wholeNumberSetting(LoadBalancingSettingsSchema.shape.pingIntervalMs, {
    flag: '--lb-ping-interval-ms <ms>',
    description: "load-balancing endpoints: how often each worker's /ping is checked",
  }),
  image: {
    flag: '--image <NAME=COMMAND...>',
    schema: z.array(z.string()).optional(),
    defaultText: 'none',
    description: 'run the workers of templates whose imageName is NAME as local processes running COMMAND, scaled by their endpoint settings (repeatable)',
    details: 'See "Run your endpoint locally: the launcher".',
  },
  launcher: {
    flag: '--launcher <kind>',
    schema: z.enum(['process', 'docker'], { error: '--launcher must be process or docker' }).default('process'),
    default: 'process',
    choices: ['process', 'docker'],
    description:
      "process: run only the --image commands; docker: run every template's imageName as containers on a Docker engine (--image commands still run as processes)",
    details: 'See "Run the images themselves: `--launcher docker`".',
  },
  dockerHost: textSetting(z.string().min(1).optional(), {
    flag: '--docker-host <host>',
    env: 'DOCKER_HOST',
    defaultText: '`unix:///var/run/docker.sock`',
    description: 'with --launcher docker: the engine, unix:///path/to/docker.sock or tcp://host:port (plain HTTP)',
  }),
  dataDir: textSetting(z.string().min(1).optional(), {
    flag: '--data-dir <dir>',
    defaultText: '`~/.serverless-worker/harness`',
    description:
      "the launcher's data folder: with --launcher docker, network volumes are its volumes/<id> folders, bound at /runpod-volume; launched worker processes are recorded in launched-processes/, so a harness started after a crash stops those the crashed one left",
  }),
  launcherConfig: textSetting(z.string().min(1).optional(), {
    flag: '--launcher-config <file>',
    defaultText: 'none',
    description: 'JSON file: {"images": {"NAME": "COMMAND"}, "gpus": "0,1", "shutdownDeadlineMs": 40000, ...}',
  }),
  startFailureTimeoutMs: wholeNumberSetting(StartFailureTimeoutSchema.optional(), {
    flag: '--start-failure-timeout-ms <ms>',
    defaultText: `\`startFailureTimeoutMs\` of --launcher-config, else \`${DEFAULT_START_FAILURE_TIMEOUT_MS}\` (3 min)`,
    description:
      'while no worker of an endpoint can start (its image missing, its workers exiting during start-up), how long before its queued jobs fail SW_WORKER_START_FAILED with the reason (jobs queued later while it lasts fail at once) instead of waiting until their ttl',
  }),
  gpus: textSetting(z.string().min(1).optional(), {
    flag: '--gpus <list>',
    defaultText: 'read with `nvidia-smi` / `rocm-smi`',
    description:
      'GPUs the launcher hands out, like 0,1,2,3 or amd:0,1; none: no GPUs here, GPU endpoints run without device assignment on any store (with none found and no flag, harnesses sharing a PostgreSQL database leave GPU endpoints to those with GPUs)',
  }),
  jobLogBytes: wholeNumberSetting(jobLines.bytesPerJob, {
    flag: '--job-log-bytes <n>',
    defaultText: bytesText(JOB_LINES_LIMITS.bytesPerJob),
    description: "bytes of one job's own log lines kept for its page (launched workers' lines naming the job); past it its oldest lines go",
    details:
      "The endpoint's last `logLines` lines (`/v2/<endpoint>/logs`) turn over in minutes under load; a job's own lines are kept apart, under these three bounds, and the job page says how many were dropped and why (`jobLines` in the launcher options).",
  }),
  jobLogKeepMs: wholeNumberSetting(jobLines.keepMs, {
    flag: '--job-log-keep-ms <ms>',
    description: "how long a job's own log lines stay after its last line (default: a /run result's retention)",
  }),
  jobLogTotalBytes: wholeNumberSetting(jobLines.totalBytes, {
    flag: '--job-log-total-bytes <n>',
    defaultText: bytesText(JOB_LINES_LIMITS.totalBytes),
    description: "bytes of every job's own log lines together; past it the jobs that logged longest ago go whole (at least --job-log-bytes)",
  }),
  machineId: textSetting(z.string().trim().min(1, { error: '--machine-id must not be empty' }).max(200).optional(), {
    flag: '--machine-id <id>',
    defaultText: '`<hostname>-<pid>`',
    description: "this machine's name on the worker slots it claims (with --store postgres://, harnesses on several machines share the slots)",
    details: 'See "Several machines".',
  }),
} as const satisfies Record<string, Setting>;

/** What the harness command's flags give, validated. */
export const HarnessCommandOptionsSchema = settingsSchema(HARNESS_SETTINGS);
export type HarnessCommandOptions = z.infer<typeof HarnessCommandOptionsSchema>;
