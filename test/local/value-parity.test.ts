/**
 * One serialization path (issue 24): the same odd values (functions, Symbols, toJSON,
 * Buffers, class instances with arrow fields, Dates, Maps, NaN, -0, NUL, lone
 * surrogates, nesting at the limit) give the same bytes in every mode: what the platform
 * transport posts to a real harness (a worker process on the worker API), runJob and
 * streamJob (the in-process transport), the dry run and --serve-api (child processes).
 * Before, the local modes kept the handler's own object: the store's copy threw after
 * the job was COMPLETED, and the dry run and runJob waited forever.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { runJob, streamJob } from '../../src/testing/index.js';
import { workerEnvFor } from '../../packages/platform/src/harness/worker-api/worker-env.js';
import { ChildList, REPO_ROOT, jsonLines, runTs } from '../child-process.js';
import { startTestWorker } from '../harness/http/helpers.js';
import { call, startServeApiProcess, startTestServer, type TestServer } from '../kit/index.js';
import { killAllWorkers, startWorkerProcess } from '../platform/worker-process.js';
import { oddHandler, oddValues } from '../fixtures/workers/odd-values-handler.js';

const FIXTURE = join(REPO_ROOT, 'test/fixtures/workers/odd-values.ts');
/** The bytes JSON.stringify gives: what the platform transport posts. */
const ODD_JSON = JSON.stringify(oddValues());
/** The stream's outputs as JSON, one per yield (a top-level Symbol travels as null). */
const STREAM_JSON = [ODD_JSON, JSON.stringify('tok\u0000en\ud800'), 'null', JSON.stringify({ x: 1, y: 2 })];

const children = new ChildList();
let server: TestServer | undefined;

afterEach(async () => {
  await children.killAll();
  await killAllWorkers();
  await server?.close();
  server = undefined;
});

interface StatusBody {
  status: string;
  output?: unknown;
  error?: string;
}

async function finished(url: string, id: string): Promise<StatusBody> {
  for (;;) {
    const answer = await call('GET', `${url}/status-sync/${id}?wait=60000`);
    expect(answer.status).toBe(200);
    const body = answer.json as StatusBody;
    if (['COMPLETED', 'FAILED', 'TIMED_OUT', 'CANCELLED'].includes(body.status)) return body;
  }
}

/** Start the fixture with --serve-api on port 0; answers its endpoint URL. */
async function serveApi(): Promise<string> {
  return (await startServeApiProcess(children, FIXTURE, ['--serve-api', '--port', '0'])).endpointUrl;
}

describe('one serialization path: the same bytes in every mode', () => {
  it('the platform transport posts the bytes JSON.stringify gives, and the harness keeps them', { timeout: 90_000 }, async () => {
    server = await startTestServer();
    startWorkerProcess('odd-worker', { ...workerEnvFor(server.url, 'ep', { pingIntervalMs: 500 }) }, FIXTURE);
    const url = server.endpointUrl();
    const odd = (await call('POST', `${url}/run`, { body: { input: { case: 'odd' } } })).json as { id: string };
    const done = await finished(url, odd.id);
    expect(done.status).toBe('COMPLETED');
    expect(JSON.stringify(done.output)).toBe(ODD_JSON);

    const streamed = (await call('POST', `${url}/run`, { body: { input: { case: 'stream' } } })).json as { id: string };
    expect((await finished(url, streamed.id)).status).toBe('COMPLETED');
    const chunks = (await call('GET', `${url}/stream/${streamed.id}`)).json as { stream: { output: unknown }[] };
    expect(chunks.stream.map((chunk) => JSON.stringify(chunk.output))).toEqual(STREAM_JSON);

    const bigint = (await call('POST', `${url}/run`, { body: { input: { case: 'bigint' } } })).json as { id: string };
    const failed = await finished(url, bigint.id);
    expect(failed.status).toBe('FAILED');
    expect(JSON.parse(failed.error ?? '{}')).toMatchObject({ error_code: 'SW_OUTPUT_NOT_SERIALIZABLE' });
    expect(failed.error).toContain('output.items[3].n');
  });

  it('runJob and streamJob (the in-process transport) give the same bytes', async () => {
    const result = await runJob(oddHandler as never, { input: { case: 'odd' } });
    expect(result.status).toBe('COMPLETED');
    expect(JSON.stringify(result.output)).toBe(ODD_JSON);
    expect(JSON.stringify(result.record.output)).toBe(ODD_JSON);

    const stream = streamJob(oddHandler as never, { input: { case: 'stream' } });
    const seen: string[] = [];
    for await (const chunk of stream) seen.push(JSON.stringify(chunk.output));
    expect(seen).toEqual(STREAM_JSON);
    expect((await stream.result).status).toBe('COMPLETED');
  });

  it('the dry run prints the same bytes, and ends', { timeout: 60_000 }, async () => {
    const child = runTs(FIXTURE, ['--test-input', JSON.stringify({ input: { case: 'odd' } })]);
    children.push(child);
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const record = jsonLines(String(result.stdout)).at(-1) as StatusBody;
    expect(record.status).toBe('COMPLETED');
    expect(JSON.stringify(record.output)).toBe(ODD_JSON);

    const streamed = runTs(FIXTURE, ['--test-input', JSON.stringify({ input: { case: 'stream' } })]);
    children.push(streamed);
    const lines = jsonLines(String((await streamed).stdout)) as { stream?: { output: unknown } }[];
    expect(lines.filter((line) => line.stream).map((line) => JSON.stringify(line.stream?.output))).toEqual(STREAM_JSON);
  });

  it('--serve-api answers the same bytes on /status and /stream', { timeout: 60_000 }, async () => {
    const url = await serveApi();
    const odd = (await call('POST', `${url}/run`, { body: { input: { case: 'odd' } } })).json as { id: string };
    const done = await finished(url, odd.id);
    expect(done.status).toBe('COMPLETED');
    expect(JSON.stringify(done.output)).toBe(ODD_JSON);
    const streamed = (await call('POST', `${url}/run`, { body: { input: { case: 'stream' } } })).json as { id: string };
    expect((await finished(url, streamed.id)).status).toBe('COMPLETED');
    const chunks = (await call('GET', `${url}/stream/${streamed.id}`)).json as { stream: { output: unknown }[] };
    expect(chunks.stream.map((chunk) => JSON.stringify(chunk.output))).toEqual(STREAM_JSON);
  });
});

describe('progress: the same bytes on the platform path and in process', () => {
  /** Submit the progress case and read the output /status shows while the job runs. */
  async function progressShown(url: string): Promise<string> {
    const { id } = (await call('POST', `${url}/run`, { body: { input: { case: 'progress', holdMs: 20_000 } } })).json as { id: string };
    for (;;) {
      const body = (await call('GET', `${url}/status/${id}`)).json as StatusBody;
      if (body.status === 'IN_PROGRESS' && body.output !== undefined) {
        await call('POST', `${url}/cancel/${id}`);
        return JSON.stringify(body.output);
      }
      expect(['IN_QUEUE', 'IN_PROGRESS']).toContain(body.status);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('ctx.progress(odd values) shows as JSON.stringify makes it, through a platform worker and an in-process one', { timeout: 90_000 }, async () => {
    server = await startTestServer();
    startWorkerProcess('odd-progress', { ...workerEnvFor(server.url, 'platform', { pingIntervalMs: 500 }) }, FIXTURE);
    expect(await progressShown(server.endpointUrl('platform'))).toBe(ODD_JSON);
    const local = startTestWorker(server.harness, oddHandler as never, { endpointId: 'local' });
    try {
      expect(await progressShown(server.endpointUrl('local'))).toBe(ODD_JSON);
    } finally {
      await local.stop();
    }
  });
});

describe('values that cannot become JSON end the job FAILED with a code naming the path', () => {
  const cases = [
    { kind: 'bigint', code: 'SW_OUTPUT_NOT_SERIALIZABLE', path: 'a BigInt at output.items[3].n' },
    { kind: 'cycle', code: 'SW_OUTPUT_NOT_SERIALIZABLE', path: 'a cycle at output.self.back' },
    { kind: 'too-deep', code: 'SW_OUTPUT_TOO_DEEP', path: 'at output.deep[0]×999.' },
    { kind: 'stack-deep', code: 'SW_OUTPUT_TOO_DEEP', path: 'at output.deep[0]×999.' },
  ] as const;
  for (const { kind, code, path } of cases) {
    it(`${kind}: FAILED ${code}, naming ${path.slice(0, 40)}`, async () => {
      const result = await runJob(oddHandler as never, { input: { case: kind } });
      expect(result.status).toBe('FAILED');
      const error = result.error as { error_code: string; error_message: string };
      expect(error.error_code).toBe(code);
      expect(error.error_message).toContain(path);
    });
  }

  it('progress that cannot become JSON is dropped with a warning; the job still completes', async () => {
    const result = await runJob(oddHandler as never, { input: { case: 'progress' } });
    expect(result).toMatchObject({ status: 'COMPLETED', output: 'done' });
  });
});
