/**
 * The S3 output helpers against a real S3-compatible server (s3rver, started here on
 * 127.0.0.1 port 0 with a temporary directory): buffers, streams, a file uploaded in
 * parts, presigned URLs read back over HTTP, coded errors, and the SDK loaded only
 * when a helper is used (real child processes).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadBuffer, uploadFile, uploadStream } from '../../src/index.js';
import { MIN_PART_BYTES } from '../../src/s3/index.js';
import { REPO_ROOT, jsonLines, runTs } from '../child-process.js';

const BUCKET = 'outputs';
let server: S3rver;
let dir: string;
let endpointUrl: string;
/** How s3rver stored each key: ObjectCreated:Put (one request) or ObjectCreated:Post (a completed multipart upload). */
const stored = new Map<string, string>();

const s3Config = () => ({ accessId: 'S3RVER', accessSecret: 'S3RVER', bucketName: BUCKET, endpointUrl, objectPath: 'jobs' });
const job = (id = 'job-1') => ({ id, input: {}, s3Config: s3Config() });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sw-s3-'));
  server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: join(dir, 'data'), configureBuckets: [{ name: BUCKET }] });
  server.on('event', (event) => {
    for (const record of event.Records) stored.set(decodeURIComponent(record.s3.object.key), record.eventName);
  });
  const { port } = await server.run();
  endpointUrl = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function fetchBytes(url: string): Promise<Buffer> {
  const response = await fetch(url);
  expect(
    response.status,
    await response
      .clone()
      .text()
      .catch(() => ''),
  ).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

const sha = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

describe('S3 upload helpers (s3rver)', () => {
  it('uploads a buffer under <objectPath>/<job id>/ and answers a presigned URL that reads it back', async () => {
    const result = await uploadBuffer(job(), 'hello s3', { presign: 600, contentType: 'text/plain' });
    expect(result.key).toMatch(/^jobs\/job-1\/[0-9a-f-]{36}$/);
    expect(result.bucket).toBe(BUCKET);
    expect(result.size).toBe(8);
    expect(result.multipart).toBe(false);
    expect(stored.get(result.key)).toBe('ObjectCreated:Put');
    expect(result.url).toContain('X-Amz-Signature=');
    expect((await fetchBytes(result.url)).toString()).toBe('hello s3');
  });

  it('answers the plain path-style URL when no presigned one is asked for', async () => {
    const result = await uploadBuffer(job(), new Uint8Array([1, 2, 3]), { key: 'plain/three.bin' });
    expect(result.url).toBe(`${endpointUrl}/${BUCKET}/plain/three.bin`);
  });

  it('uploads a file over the part size in parts (multipart) and it reads back byte for byte', { timeout: 120_000 }, async () => {
    const bytes = randomBytes(2 * MIN_PART_BYTES + 1_234);
    const file = join(dir, 'big.bin');
    writeFileSync(file, bytes);
    const started = performance.now();
    const result = await uploadFile(job('job-big'), file, { partSize: MIN_PART_BYTES, presign: true });
    console.log(`multipart upload of ${bytes.length} bytes in 3 parts: ${Math.round(performance.now() - started)} ms`);
    expect(result.key).toBe('jobs/job-big/big.bin');
    expect(result.size).toBe(bytes.length);
    expect(result.multipart).toBe(true);
    // Stored by CompleteMultipartUpload, not by one PUT.
    expect(stored.get(result.key)).toBe('ObjectCreated:Post');
    expect(sha(await fetchBytes(result.url))).toBe(sha(bytes));
  });

  it('uploads a Node stream, a web stream and an async generator of unknown length', { timeout: 120_000 }, async () => {
    const chunk = randomBytes(1024 * 1024);
    async function* generate(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < 6; i++) yield chunk;
    }
    const expected = sha(Buffer.concat(Array.from({ length: 6 }, () => chunk)));
    const sources = [Readable.from(generate()), Readable.toWeb(Readable.from(generate())) as ReadableStream<Uint8Array>, generate()];
    for (const source of sources) {
      const result = await uploadStream(job(), source, { partSize: MIN_PART_BYTES, presign: 60 });
      expect(result.multipart).toBe(true);
      expect(stored.get(result.key)).toBe('ObjectCreated:Post');
      expect(sha(await fetchBytes(result.url))).toBe(expected);
    }
  });

  it('a job without s3Config: SW_S3_NOT_CONFIGURED; an incomplete one names the field', async () => {
    await expect(uploadBuffer({ id: 'j' }, 'x')).rejects.toMatchObject({ code: 'SW_S3_NOT_CONFIGURED', message: expect.stringContaining('has no s3Config') });
    await expect(uploadBuffer({ id: 'j', s3Config: { ...s3Config(), endpointUrl: 'ftp://x' } }, 'x')).rejects.toMatchObject({
      code: 'SW_S3_NOT_CONFIGURED',
      message: expect.stringContaining('s3Config.endpointUrl'),
    });
    await expect(uploadBuffer(job(), 'x', { returnUrl: true } as never)).rejects.toMatchObject({ code: 'SW_INVALID_OPTIONS' });
  });

  it('a refused upload: SW_S3_UPLOAD_FAILED naming bucket and service code, never the secret', async () => {
    const missing = uploadBuffer({ id: 'j', s3Config: { ...s3Config(), bucketName: 'no-such-bucket' } }, 'x');
    await expect(missing).rejects.toMatchObject({ code: 'SW_S3_UPLOAD_FAILED', message: expect.stringContaining('NoSuchBucket') });
    const secret = 'the-wrong-secret-value';
    const error = (await uploadBuffer({ id: 'j', s3Config: { ...s3Config(), accessId: 'UNKNOWN-ID', accessSecret: secret } }, 'x').then(
      () => new Error('the upload was accepted'),
      (e: unknown) => e as Error,
    )) as Error & { code?: string };
    expect(error.code, error.message).toBe('SW_S3_UPLOAD_FAILED');
    expect(error.message).toContain('InvalidAccessKeyId');
    expect(error.message).toContain(`s3://${BUCKET}/`);
    expect(JSON.stringify({ message: error.message, details: (error as { details?: unknown }).details })).not.toContain(secret);
  });
});

describe('S3 helpers in a worker process: the SDK is loaded only when used', () => {
  const LOG_IMPORTS = join(REPO_ROOT, 'test/fixtures/log-aws-imports.mjs');

  it('a worker that never uploads does not load @aws-sdk; one that uploads does, and its job answers a working URL', { timeout: 120_000 }, async () => {
    const idle = await runTs(join(REPO_ROOT, 'examples/echo/worker.ts'), [], { env: { NODE_OPTIONS: `--import ${LOG_IMPORTS}` } });
    expect(idle.exitCode).toBe(0);
    expect(String(idle.stderr)).not.toContain('LOADED @aws-sdk');

    const request = { input: { text: 'from a worker' }, s3Config: s3Config() };
    const uploading = await runTs(join(REPO_ROOT, 'test/fixtures/workers/s3-upload.ts'), ['--test-input', JSON.stringify(request)], {
      env: { NODE_OPTIONS: `--import ${LOG_IMPORTS}` },
    });
    expect(uploading.exitCode, String(uploading.stderr)).toBe(0);
    expect(String(uploading.stderr)).toContain('LOADED @aws-sdk/client-s3');
    const records = jsonLines(String(uploading.stdout)) as Array<{ status: string; output: { url: string } }>;
    const record = records[records.length - 1];
    expect(record?.status).toBe('COMPLETED');
    expect((await fetchBytes(record?.output.url ?? '')).toString()).toBe('from a worker');
  });
});
