/**
 * @module transports/platform/platform-env
 * The environment the platform starts a worker with (worker-protocol.md section 1),
 * parsed once with zod. A malformed variable throws SW_INVALID_ENV with a message that
 * names the variable, the format it expects and the value it got.
 */
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { ServerlessWorkerError, parseOnceOrThrow } from '../../job/index.js';

/** Heartbeat period when RUNPOD_PING_INTERVAL is unset, ms (the platform's default). */
export const DEFAULT_PING_INTERVAL_MS = 10_000;
/** RUNPOD_PING_INTERVAL bounds, ms: faster floods the platform, slower looks dead. */
export const PING_INTERVAL_RANGE_MS = { min: 100, max: 3_600_000 } as const;

/** The platform variables, validated; URLs still hold their `$ID` / `$RUNPOD_POD_ID` placeholders. */
export interface PlatformEnv {
  /** RUNPOD_WEBHOOK_GET_JOB: job-take URL, `$ID` = worker id. */
  readonly getJobUrl: string;
  /** RUNPOD_WEBHOOK_POST_OUTPUT: job-done URL, `$RUNPOD_POD_ID` = worker id, `$ID` = job id. */
  readonly postOutputUrl: string;
  /** RUNPOD_WEBHOOK_POST_STREAM: job-stream URL, same placeholders; unset = no streaming. */
  readonly postStreamUrl?: string;
  /** RUNPOD_WEBHOOK_PING: heartbeat URL, `$RUNPOD_POD_ID` = worker id; unset = no heartbeat. */
  readonly pingUrl?: string;
  /** RUNPOD_PING_INTERVAL in ms; default 10 000. */
  readonly pingIntervalMs: number;
  /** RUNPOD_AI_API_KEY, sent bare as `Authorization`; unset = no header. */
  readonly apiKey?: string;
  /** RUNPOD_POD_ID, the worker id; unset = a random id (see resolveWorkerId). */
  readonly podId?: string;
  /** RUNPOD_POD_HOSTNAME, reported in error payloads. */
  readonly podHostname?: string;
  /** RUNPOD_ENDPOINT_ID; when set, logs are JSON lines. */
  readonly endpointId?: string;
}

/** Unset and blank variables read the same: a platform template may leave a value empty. */
const blankAsUnset = (value: unknown): unknown => (typeof value === 'string' && value.trim() === '' ? undefined : value);

/** True when `template`, with its placeholders filled, is an absolute http(s) URL. */
function isHttpUrlTemplate(template: string): boolean {
  try {
    const url = new URL(template.replaceAll('$RUNPOD_POD_ID', 'worker').replaceAll('$ID', 'id'));
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function urlVariable(name: string, example: string, required: boolean) {
  const expected = `${name} must be an absolute http:// or https:// URL such as ${example}`;
  const missing = `${name} is required when RUNPOD_WEBHOOK_GET_JOB is set (the worker runs on the platform); expected a URL such as ${example}`;
  return z
    .string({ error: (issue) => (required && issue.input === undefined ? missing : expected) })
    .trim()
    .refine(isHttpUrlTemplate, { error: expected });
}

function requiredUrl(name: string, example: string) {
  return z.preprocess(blankAsUnset, urlVariable(name, example, true));
}

function optionalUrl(name: string, example: string) {
  return z.preprocess(blankAsUnset, urlVariable(name, example, false).optional());
}

const pingIntervalMessage = `RUNPOD_PING_INTERVAL must be a whole number of milliseconds from ${PING_INTERVAL_RANGE_MS.min} to ${PING_INTERVAL_RANGE_MS.max}, such as 10000`;

const PlatformEnvSchema = z.object({
  RUNPOD_WEBHOOK_GET_JOB: requiredUrl('RUNPOD_WEBHOOK_GET_JOB', 'https://api.example/v2/<endpoint>/job-take/$ID?'),
  RUNPOD_WEBHOOK_POST_OUTPUT: requiredUrl('RUNPOD_WEBHOOK_POST_OUTPUT', 'https://api.example/v2/<endpoint>/job-done/$RUNPOD_POD_ID/$ID?'),
  RUNPOD_WEBHOOK_POST_STREAM: optionalUrl('RUNPOD_WEBHOOK_POST_STREAM', 'https://api.example/v2/<endpoint>/job-stream/$RUNPOD_POD_ID/$ID?'),
  RUNPOD_WEBHOOK_PING: optionalUrl('RUNPOD_WEBHOOK_PING', 'https://api.example/v2/<endpoint>/ping/$RUNPOD_POD_ID'),
  RUNPOD_PING_INTERVAL: z.preprocess(
    blankAsUnset,
    z
      .string({ error: pingIntervalMessage })
      .trim()
      .regex(/^\d{1,10}$/, { error: pingIntervalMessage })
      .transform(Number)
      .refine((ms) => ms >= PING_INTERVAL_RANGE_MS.min && ms <= PING_INTERVAL_RANGE_MS.max, { error: pingIntervalMessage })
      .optional(),
  ),
  // Checked after parsing: a zod issue would echo the value, and this one is a secret.
  RUNPOD_AI_API_KEY: z.preprocess(blankAsUnset, z.string().trim().optional()),
  RUNPOD_POD_ID: z.preprocess(
    blankAsUnset,
    z
      .string()
      // Substituted into URL paths as it is, so only characters that need no escaping.
      .regex(/^[A-Za-z0-9._~-]{1,256}$/, { error: 'RUNPOD_POD_ID must be 1-256 letters, digits, ".", "_", "~" or "-" (it becomes part of the worker URLs)' })
      .optional(),
  ),
  RUNPOD_POD_HOSTNAME: z.preprocess(blankAsUnset, z.string().max(1024, { error: 'RUNPOD_POD_HOSTNAME must be at most 1024 characters' }).optional()),
  RUNPOD_ENDPOINT_ID: z.preprocess(blankAsUnset, z.string().max(256, { error: 'RUNPOD_ENDPOINT_ID must be at most 256 characters' }).optional()),
});

/**
 * Read the platform variables from `env` (default process.env).
 * @throws ServerlessWorkerError SW_INVALID_ENV naming each malformed or missing variable.
 */
export function parsePlatformEnv(env: NodeJS.ProcessEnv = process.env): PlatformEnv {
  const parsed = parseOnceOrThrow(PlatformEnvSchema, env, 'SW_INVALID_ENV', 'platform environment');
  if (parsed.RUNPOD_AI_API_KEY !== undefined && !/^[\x21-\x7e]+$/.test(parsed.RUNPOD_AI_API_KEY)) {
    throw new ServerlessWorkerError(
      'SW_INVALID_ENV',
      'Invalid platform environment: RUNPOD_AI_API_KEY must be printable ASCII without spaces, since it is sent as the Authorization header (value not shown)',
      { variable: 'RUNPOD_AI_API_KEY' },
    );
  }
  const result: { -readonly [K in keyof PlatformEnv]: PlatformEnv[K] } = {
    getJobUrl: parsed.RUNPOD_WEBHOOK_GET_JOB,
    postOutputUrl: parsed.RUNPOD_WEBHOOK_POST_OUTPUT,
    pingIntervalMs: parsed.RUNPOD_PING_INTERVAL ?? DEFAULT_PING_INTERVAL_MS,
  };
  if (parsed.RUNPOD_WEBHOOK_POST_STREAM !== undefined) result.postStreamUrl = parsed.RUNPOD_WEBHOOK_POST_STREAM;
  if (parsed.RUNPOD_WEBHOOK_PING !== undefined) result.pingUrl = parsed.RUNPOD_WEBHOOK_PING;
  if (parsed.RUNPOD_AI_API_KEY !== undefined) result.apiKey = parsed.RUNPOD_AI_API_KEY;
  if (parsed.RUNPOD_POD_ID !== undefined) result.podId = parsed.RUNPOD_POD_ID;
  if (parsed.RUNPOD_POD_HOSTNAME !== undefined) result.podHostname = parsed.RUNPOD_POD_HOSTNAME;
  if (parsed.RUNPOD_ENDPOINT_ID !== undefined) result.endpointId = parsed.RUNPOD_ENDPOINT_ID;
  return Object.freeze(result);
}

/** The worker id: `explicit` (serve's workerId option), else RUNPOD_POD_ID, else `worker-<random>`. */
export function resolveWorkerId(env: PlatformEnv, explicit?: string): string {
  return explicit ?? env.podId ?? `worker-${randomUUID().slice(0, 12)}`;
}
