/**
 * @module s3/s3-target
 * Where an upload goes: the job's `s3Config` (endpoint URL, access id and secret,
 * bucket, optional object path and region) and the helper's options, validated with
 * zod. A job without a usable s3Config is SW_S3_NOT_CONFIGURED.
 */
import { basename } from 'node:path';
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { ServerlessWorkerError, formatIssues, parseOrThrow, summarizeIssues, type S3Config } from '../job/index.js';

/** What the helpers need of a job: its id and its s3Config (a handler's `job` fits). */
export interface S3Job {
  readonly id: string;
  readonly s3Config?: S3Config | undefined;
}

/** Smallest part S3 accepts for all but the last part of a multipart upload: 5 MiB. */
export const MIN_PART_BYTES = 5 * 1024 * 1024;

export const S3UploadOptionsSchema = z.strictObject({
  /** Object key; default `<s3Config.objectPath>/<job id>/<file name>` (a random name for buffers and streams). */
  key: z.string().min(1).max(1024).optional(),
  /** Content-Type of the object; default application/octet-stream. */
  contentType: z.string().min(1).optional(),
  /**
   * Answer a presigned GET URL valid this many seconds (1 to 604 800, 7 days); `true`
   * means 3 600. Default false: the object's plain URL (readable only if the bucket is).
   */
  presign: z.union([z.boolean(), z.number().int().min(1).max(604_800)]).default(false),
  /** Region to sign for; default s3Config.region, else us-east-1 (what most S3-compatible services accept). */
  region: z.string().min(1).optional(),
  /** Bytes per part of a multipart upload (used above one part); default 8 MiB, at least 5 MiB. */
  partSize: z
    .number()
    .int()
    .min(MIN_PART_BYTES)
    .max(5 * 1024 ** 3)
    .default(8 * 1024 * 1024),
  /** Parts uploaded at once; default 4. */
  concurrency: z.number().int().min(1).max(64).default(4),
  /** Path-style URLs (`<endpoint>/<bucket>/<key>`), which every S3-compatible service answers; default true. */
  forcePathStyle: z.boolean().default(true),
  /** Aborts the upload; default none. */
  signal: z.custom<AbortSignal>((value) => value instanceof AbortSignal, { error: 'must be an AbortSignal' }).optional(),
  /** Use this instead of job.s3Config; default the job's. */
  s3Config: z.custom<S3Config>((value) => typeof value === 'object' && value !== null, { error: 'must be an s3Config object' }).optional(),
});

export type S3UploadOptions = z.input<typeof S3UploadOptionsSchema>;
export type ResolvedS3UploadOptions = z.output<typeof S3UploadOptionsSchema>;

/** What an upload answers. */
export interface S3UploadResult {
  /** The presigned GET URL when asked for, else the object's plain URL. */
  readonly url: string;
  readonly bucket: string;
  readonly key: string;
  /** Bytes uploaded. */
  readonly size: number;
  /** The ETag the service answered, if any. */
  readonly etag?: string;
  /** True when the upload took more than one part. */
  readonly multipart: boolean;
}

const S3ConfigUsable = z.object({
  accessId: z.string().min(1, { error: 's3Config.accessId is empty' }),
  accessSecret: z.string().min(1, { error: 's3Config.accessSecret is empty' }),
  bucketName: z.string().min(1, { error: 's3Config.bucketName is empty' }),
  endpointUrl: z.url({ protocol: /^https?$/, error: 's3Config.endpointUrl must be an http:// or https:// URL' }),
  objectPath: z.string().optional(),
  region: z.string().optional(),
});

export interface S3Target {
  readonly config: z.output<typeof S3ConfigUsable>;
  readonly options: ResolvedS3UploadOptions;
  readonly region: string;
  readonly key: string;
}

/** The job's s3Config and the options, checked; throws SW_S3_NOT_CONFIGURED or SW_INVALID_OPTIONS. */
export function resolveS3Target(job: S3Job, options: S3UploadOptions | undefined, fileName: string | undefined): S3Target {
  const resolved = parseOrThrow(S3UploadOptionsSchema, options ?? {}, 'SW_INVALID_OPTIONS', 'S3 upload options');
  const raw = resolved.s3Config ?? job.s3Config;
  if (raw === undefined) {
    throw new ServerlessWorkerError(
      'SW_S3_NOT_CONFIGURED',
      `Job ${job.id} has no s3Config: the request must carry s3Config {accessId, accessSecret, bucketName, endpointUrl} for an S3 upload`,
      { jobId: job.id },
    );
  }
  const parsed = S3ConfigUsable.safeParse(raw);
  if (!parsed.success) {
    // Issues without received values: they could be secrets.
    const issues = summarizeIssues(parsed.error).map(({ path, message }) => ({ path, message }));
    throw new ServerlessWorkerError('SW_S3_NOT_CONFIGURED', `Job ${job.id} has an unusable s3Config: ${formatIssues(issues)}`, { jobId: job.id, issues });
  }
  const config = parsed.data;
  const prefix = (config.objectPath ?? '').replace(/^\/+|\/+$/g, '');
  const name = fileName !== undefined ? basename(fileName) : randomUUID();
  const key = resolved.key ?? [prefix, job.id, name].filter((part) => part !== '').join('/');
  return { config, options: resolved, region: resolved.region ?? config.region ?? 'us-east-1', key };
}

/** The object's plain URL, path-style or virtual-host style. */
export function objectUrl(target: S3Target): string {
  const endpoint = new URL(target.config.endpointUrl);
  const key = target.key.split('/').map(encodeURIComponent).join('/');
  if (target.options.forcePathStyle) {
    const base = endpoint.href.replace(/\/+$/, '');
    return `${base}/${encodeURIComponent(target.config.bucketName)}/${key}`;
  }
  return `${endpoint.protocol}//${target.config.bucketName}.${endpoint.host}${endpoint.pathname.replace(/\/+$/, '')}/${key}`;
}
