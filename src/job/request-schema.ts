/**
 * @module job/request-schema
 * zod schemas for the job request of spec section 4.3 (`/run`, `/runsync`), with the
 * extra fields the official clients send (worker-protocol.md section 2).
 */
import * as z from 'zod';
import { EXECUTION_TIMEOUT_MS, TTL_MS } from './limits.js';

function msRange(field: string, range: { min: number; max: number }) {
  return z
    .number({ error: `${field} must be a number of milliseconds` })
    .int({ error: `${field} must be a whole number of milliseconds` })
    .min(range.min, { error: `${field} must be from ${range.min} to ${range.max} ms` })
    .max(range.max, { error: `${field} must be from ${range.min} to ${range.max} ms` });
}

/** An http(s) URL; other schemes (file:, javascript:, ...) are refused. */
export const HttpUrlSchema = z.string({ error: 'must be a URL string' }).refine(
  (value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  },
  { error: 'must be an absolute http:// or https:// URL' },
);

/**
 * A job's policy as the caller sent it: every field optional. The harness resolves
 * the defaults with `resolvePolicy`; a worker receives the policy as sent, so that its
 * own default execution timeout applies when the caller gave none (as on the platform,
 * where the endpoint's setting applies).
 */
export const PolicySchema = z.object({
  /** ms; default 600 000 (10 min); 5 s .. 7 days. */
  executionTimeout: msRange('policy.executionTimeout', EXECUTION_TIMEOUT_MS).optional(),
  /** When true the job does not trigger worker scaling; default false. */
  lowPriority: z.boolean({ error: 'policy.lowPriority must be true or false' }).optional(),
  /** ms from submission; default 86 400 000 (24 h); 10 s .. 7 days. */
  ttl: msRange('policy.ttl', TTL_MS).optional(),
});
export type PolicyInput = z.infer<typeof PolicySchema>;
export type Policy = Required<PolicyInput>;

/** The policy with every default applied (spec 4.3). */
export function resolvePolicy(policy: PolicyInput | undefined): Policy {
  return {
    executionTimeout: policy?.executionTimeout ?? EXECUTION_TIMEOUT_MS.default,
    lowPriority: policy?.lowPriority ?? false,
    ttl: policy?.ttl ?? TTL_MS.default,
  };
}

export const S3ConfigSchema = z.object({
  accessId: z.string({ error: 's3Config.accessId must be a string' }),
  accessSecret: z.string({ error: 's3Config.accessSecret must be a string' }),
  bucketName: z.string({ error: 's3Config.bucketName must be a string' }),
  endpointUrl: z.string({ error: 's3Config.endpointUrl must be a string' }),
  objectPath: z.string({ error: 's3Config.objectPath must be a string' }).optional(),
  /** Not in the service's table: a region for S3 services that need one (the S3 helpers default to us-east-1). */
  region: z.string({ error: 's3Config.region must be a string' }).optional(),
});
export type S3Config = z.infer<typeof S3ConfigSchema>;

export const JobRequestSchema = z.object({
  input: z.record(z.string(), z.unknown(), {
    error: (issue) => (issue.input === undefined ? 'input is required: a JSON object' : 'input must be a JSON object'),
  }),
  webhook: HttpUrlSchema.optional(),
  /** Sent by some official clients beside `webhook`; delivered the same way. */
  webhookV2: HttpUrlSchema.optional(),
  policy: PolicySchema.optional(),
  s3Config: S3ConfigSchema.optional(),
});
/** A job request as the caller sent it (defaults not yet applied). */
export type JobRequestInput = z.input<typeof JobRequestSchema>;
/** A validated job request (policy as sent; see resolvePolicy). */
export type JobRequest = z.infer<typeof JobRequestSchema>;
