/**
 * @module s3
 * Upload a job's outputs to the bucket of its `s3Config` (any S3-compatible service)
 * and answer a URL, presigned when asked:
 *
 *     const { url } = await uploadFile(job, '/tmp/out.png', { presign: 3600, contentType: 'image/png' });
 *
 * The AWS SDK behind them is imported on the first call only: a worker that never
 * uploads pays nothing for it at start. A job without s3Config: SW_S3_NOT_CONFIGURED;
 * a refused or failed upload: SW_S3_UPLOAD_FAILED (naming bucket, key and the
 * service's error code, never the credentials).
 * Layer: worker side, over the utilities (docs/architecture.md).
 */
import type { Readable } from 'node:stream';
import { resolveS3Target, type S3Job, type S3UploadOptions, type S3UploadResult } from './s3-target.js';
import { ServerlessWorkerError } from '../job/index.js';

export { MIN_PART_BYTES, type S3Job, type S3UploadOptions, type S3UploadResult } from './s3-target.js';

/** The AWS SDK packages the upload helpers load on first use (optional peer dependencies of the SDK). */
export const S3_CLIENT_PACKAGES = ['@aws-sdk/client-s3', '@aws-sdk/lib-storage', '@aws-sdk/s3-request-presigner'] as const;

/** The uploads module; where the AWS SDK is not installed, SW_S3_CLIENT_MISSING naming what to install. */
async function load(): Promise<typeof import('./s3-upload.js')> {
  try {
    return await import('./s3-upload.js');
  } catch (error) {
    const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
    const missing = S3_CLIENT_PACKAGES.find((name) => typeof message === 'string' && message.includes(`'${name}'`));
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && missing) {
      throw new ServerlessWorkerError(
        'SW_S3_CLIENT_MISSING',
        `the S3 upload helpers need the AWS SDK, which is not installed (${missing} is missing): npm install ${S3_CLIENT_PACKAGES.join(' ')}`,
        { missing, install: [...S3_CLIENT_PACKAGES] },
        { cause: error },
      );
    }
    throw error;
  }
}

/**
 * Upload the file at `path`; the key defaults to `<objectPath>/<job id>/<file name>`.
 * Files over `partSize` (default 8 MiB) go up in parts.
 */
export async function uploadFile(job: S3Job, path: string, options?: S3UploadOptions): Promise<S3UploadResult> {
  const target = resolveS3Target(job, options, path);
  return (await load()).uploadPath(target, path);
}

/** Upload bytes or text; the key defaults to `<objectPath>/<job id>/<random uuid>`. */
export async function uploadBuffer(job: S3Job, data: Uint8Array | string, options?: S3UploadOptions): Promise<S3UploadResult> {
  const target = resolveS3Target(job, options, undefined);
  return (await load()).uploadBody(target, data);
}

/**
 * Upload a Node stream, a web ReadableStream or an async iterable of bytes, of any
 * length (multipart above `partSize`); the key defaults to `<objectPath>/<job id>/<random uuid>`.
 */
export async function uploadStream(
  job: S3Job,
  stream: Readable | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  options?: S3UploadOptions,
): Promise<S3UploadResult> {
  const target = resolveS3Target(job, options, undefined);
  return (await load()).uploadBody(target, stream);
}
