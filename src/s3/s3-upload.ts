/**
 * @module s3/s3-upload
 * The uploads themselves, with the AWS SDK v3 (`@aws-sdk/client-s3`, its managed
 * multipart `Upload` from `@aws-sdk/lib-storage`, and the presigner). This module is
 * imported only when a helper is first called (see s3/index.ts), so a worker that
 * never uploads never loads the SDK.
 *
 * Checksums are sent and checked only where S3 requires them: the SDK's default CRC
 * checksums are not understood by every S3-compatible service.
 */
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { ServerlessWorkerError, isServerlessWorkerError } from '../job/index.js';
import { objectUrl, type S3Target, type S3UploadResult } from './s3-target.js';
const { createReadStream } = process.getBuiltinModule('node:fs');

/** What can be uploaded: bytes, text, a Node or web stream, or any async iterable of bytes. */
export type S3Body = Uint8Array | string | Readable | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

function clientFor(target: S3Target): S3Client {
  return new S3Client({
    endpoint: target.config.endpointUrl,
    region: target.region,
    forcePathStyle: target.options.forcePathStyle,
    credentials: { accessKeyId: target.config.accessId, secretAccessKey: target.config.accessSecret },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

function failed(target: S3Target, what: string, error: unknown): ServerlessWorkerError {
  if (isServerlessWorkerError(error)) return error;
  const code = (error as { Code?: unknown; name?: unknown } | null)?.Code ?? (error as { name?: unknown } | null)?.name ?? 'Error';
  const status = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
  const host = new URL(target.config.endpointUrl).host;
  return new ServerlessWorkerError(
    'SW_S3_UPLOAD_FAILED',
    `${what} s3://${target.config.bucketName}/${target.key} at ${host} failed: ${String(code)}${status !== undefined ? ` (HTTP ${status})` : ''}: ${(error as Error)?.message ?? String(error)}`,
    { bucket: target.config.bucketName, key: target.key, endpoint: host, serviceCode: String(code), ...(status !== undefined ? { httpStatus: status } : {}) },
    { cause: error },
  );
}

function toNodeBody(body: S3Body): Uint8Array | Readable {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array || body instanceof Readable) return body;
  if (typeof (body as ReadableStream<Uint8Array>).getReader === 'function')
    return Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>);
  return Readable.from(body as AsyncIterable<Uint8Array>);
}

/** Upload `body` to the target and answer its URL (presigned when asked). */
export async function uploadBody(target: S3Target, body: S3Body): Promise<S3UploadResult> {
  const { options, config, key } = target;
  const client = clientFor(target);
  const upload = new Upload({
    client,
    params: { Bucket: config.bucketName, Key: key, Body: toNodeBody(body), ContentType: options.contentType ?? 'application/octet-stream' },
    partSize: options.partSize,
    queueSize: options.concurrency,
    leavePartsOnError: false,
  });
  let size = 0;
  upload.on('httpUploadProgress', (progress) => {
    if (typeof progress.loaded === 'number') size = Math.max(size, progress.loaded);
  });
  const abort = (): void => void upload.abort().catch(() => undefined);
  options.signal?.addEventListener('abort', abort, { once: true });
  try {
    if (options.signal?.aborted) throw options.signal.reason ?? new Error('aborted');
    const answer = await upload.done();
    const etag = (answer as { ETag?: string }).ETag;
    const expiresIn = options.presign === true ? 3_600 : options.presign === false ? undefined : options.presign;
    let url = objectUrl(target);
    if (expiresIn !== undefined) {
      try {
        url = await getSignedUrl(client, new GetObjectCommand({ Bucket: config.bucketName, Key: key }), { expiresIn });
      } catch (error) {
        throw failed(target, 'Presigning', error);
      }
    }
    return { url, bucket: config.bucketName, key, size, multipart: size > options.partSize, ...(etag !== undefined ? { etag } : {}) };
  } catch (error) {
    throw failed(target, 'Upload to', error);
  } finally {
    options.signal?.removeEventListener('abort', abort);
    client.destroy();
  }
}

/** Upload the file at `path` (streamed from disk, multipart above one part). */
export async function uploadPath(target: S3Target, path: string): Promise<S3UploadResult> {
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new Error('not a regular file');
  } catch (error) {
    throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `Cannot upload ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, {
      path,
    });
  }
  return uploadBody(target, createReadStream(path));
}
