/**
 * @module bench/streaming
 * Streaming: an async generator yielding 1 000 strings of 1 KiB, 1 000 objects of 1 KiB
 * of text (`{ i, text }`, read back in order or the case fails), 10 000 small tokens
 * (4 characters), or 50 MB of text (50 yields of 1 MB), in process (harness and worker
 * in one process, as --serve-api) and through the platform transport (harness in the
 * bench process, the worker in its own; up to 16 chunk posts in flight, the harness
 * advertising ordering, or one at a time with `one post at a time`). A client in a
 * process of its own reads /stream over HTTP (long polls) as the job runs.
 * - yields/s and MB/s: over the job's execution time as the harness stamps it (handed
 *   out to result received; the result goes after the last chunk);
 * - visible delay: for each yield, from the generator yielding it (the worker notes
 *   the time, microsecond resolution) to the /stream answer that made its text
 *   visible to the client.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseJobRequest } from '../src/job/index.js';
import { ForkedChild } from './lib/child.js';
import { childScript } from './lib/compiled.js';
import { QueueClient, visibleDelays, type JobView, type StreamRead } from './lib/http-client.js';
import { startPlatformSetup, type PlatformSetup } from './lib/platform-setup.js';
import type { BenchCase, Benchmark, MetricSpec } from './lib/runner.js';
import { percentile } from './lib/stats.js';

interface Shape {
  readonly label: string;
  readonly count: number;
  readonly size: number;
  /** Yield `{ i, text }` objects (one chunk each: objects are not joined). */
  readonly objects?: boolean;
}

const SHAPES: readonly Shape[] = [
  { label: '1 KiB x 1 000', count: 1_000, size: 1_024 },
  { label: '1 KiB objects x 1 000', count: 1_000, size: 1_024, objects: true },
  { label: 'tokens x 10 000', count: 10_000, size: 4 },
  { label: '50 MB text', count: 50, size: 1_000_000 },
];

/**
 * `platform`: default options (coalescing on since issue 19, the chunk window of 16 since
 * issue 46, several chunks in one post since its second round); `platform, one chunk per
 * yield`: coalesceStreamChunks false, chunkWindow 1 and chunkBatch 1, one post a yield as
 * before issue 19 (what issue 19's ratio divides by); `platform, one post at a
 * time`: chunkWindow 1 and chunkBatch 1, the default before issue 46 (for objects, the A/B
 * of the window); `platform, one chunk a post`: chunkBatch 1, the window alone (for
 * objects, the A/B of the batches).
 */
type Path = 'in-process' | 'platform' | 'platform, one chunk per yield' | 'platform, one post at a time' | 'platform, one chunk a post';

function targets(shape: Shape, path: Path): Record<string, MetricSpec> {
  const yieldsTarget = shape.size >= 1_000_000 ? undefined : path === 'in-process' ? 50_000 : 8_000;
  return {
    'yields/s': { unit: 'yields/s', ...(yieldsTarget ? { target: { op: '>=', value: yieldsTarget } } : {}) },
    'MB/s': { unit: 'MB/s', ...(shape.size >= 1_000_000 ? { target: { op: '>=', value: 200 } } : {}) },
    'chunks posted': { unit: '' },
    'visible delay p50': { unit: 'ms' },
    'visible delay p99': { unit: 'ms' },
  };
}

interface Side {
  readonly url: string;
  readonly endpointId: string;
  /** Submit the job; answers its id. */
  submit(count: number, size: number, objects: boolean): Promise<string>;
  /** Hand-out to result, ms, once the job has ended. */
  executionMs(id: string): Promise<number>;
  close(): Promise<void>;
}

async function inProcessSide(yieldLog: string): Promise<Side> {
  const endpointId = 'stream';
  const server = new ForkedChild(await childScript('bench/children/local-server.ts', 'compiled'), {
    env: { BENCH_ENDPOINT: endpointId, BENCH_YIELD_LOG: yieldLog },
  });
  const ready = await server.next<{ type: 'ready'; url: string }>('ready', 30_000);
  const client = new QueueClient(ready.url, endpointId, 1);
  return {
    url: ready.url,
    endpointId,
    async submit(count, size, objects) {
      return (await client.json<JobView>('POST', '/run', { input: { stream: { count, size, objects } } })).id;
    },
    async executionMs(id) {
      const view = await client.json<JobView>('GET', `/status/${id}`);
      if (view.executionTime === undefined) throw new Error(`job ${id} has no executionTime (${view.status})`);
      return view.executionTime;
    },
    async close() {
      await client.close();
      await server.stop();
    },
  };
}

async function platformSide(yieldLog: string, path: Path): Promise<Side> {
  const setup: PlatformSetup = await startPlatformSetup({
    endpointId: 'stream',
    concurrency: 1,
    env: {
      BENCH_YIELD_LOG: yieldLog,
      ...(path === 'platform, one chunk per yield' ? { BENCH_COALESCE: '0', BENCH_CHUNK_WINDOW: '1', BENCH_CHUNK_BATCH: '1' } : {}),
      ...(path === 'platform, one post at a time' ? { BENCH_CHUNK_WINDOW: '1', BENCH_CHUNK_BATCH: '1' } : {}),
      ...(path === 'platform, one chunk a post' ? { BENCH_CHUNK_BATCH: '1' } : {}),
    },
  });
  return {
    url: setup.server.url,
    endpointId: 'stream',
    async submit(count, size, objects) {
      return (await setup.endpoint.submit(parseJobRequest({ input: { stream: { count, size, objects } } }))).id;
    },
    async executionMs(id) {
      const record = await setup.endpoint.find(id);
      if (record?.startedAt === undefined || record.endedAt === undefined) throw new Error(`job ${id} has not ended`);
      return record.endedAt - record.startedAt;
    },
    async close() {
      await setup.close();
    },
  };
}

function streamingCase(shape: Shape, path: Path): BenchCase {
  let side: Side | undefined;
  let reader: ForkedChild | undefined;
  let yieldLog = '';
  return {
    name: `${shape.label}, ${path}`,
    metrics: targets(shape, path),
    async setup() {
      yieldLog = mkdtempSync(join(tmpdir(), 'sw-bench-yields-'));
      side = path === 'in-process' ? await inProcessSide(yieldLog) : await platformSide(yieldLog, path);
      reader = new ForkedChild(await childScript('bench/children/stream-reader.ts', 'compiled'));
      await reader.next('ready', 30_000);
    },
    async measure() {
      if (!side || !reader) throw new Error('not set up');
      const id = await side.submit(shape.count, shape.size, shape.objects === true);
      const read = await reader.ask<StreamRead & { type: 'read' }>(
        { type: 'read', url: side.url, endpointId: side.endpointId, jobId: id, timeoutMs: 120_000 },
        'read',
        130_000,
      );
      if (read.status !== 'COMPLETED') throw new Error(`job ${id} ended ${read.status}`);
      if (read.textLength !== shape.count * shape.size) throw new Error(`read ${read.textLength} characters, expected ${shape.count * shape.size}`);
      const executionMs = await side.executionMs(id);
      const log = readFileSync(join(yieldLog, `${id}.f64`));
      const yields = new Float64Array(log.buffer.slice(log.byteOffset, log.byteOffset + log.byteLength));
      const delays = visibleDelays(read, yields, shape.size);
      return {
        'yields/s': (shape.count / executionMs) * 1000,
        'MB/s': (shape.count * shape.size) / 1e6 / (executionMs / 1000),
        'chunks posted': read.chunks,
        'visible delay p50': percentile(delays, 50),
        'visible delay p99': percentile(delays, 99),
      };
    },
    async teardown() {
      await reader?.stop();
      await side?.close();
      rmSync(yieldLog, { recursive: true, force: true });
    },
  };
}

export const streamingBenchmark: Benchmark = {
  name: 'streaming',
  title: 'Stream chunks: 1 KiB x 1 000, 10 000 tokens, 50 MB of text; in process and through the platform transport',
  cases: () => {
    const paths: Path[] = ['in-process', 'platform', 'platform, one chunk per yield', 'platform, one post at a time', 'platform, one chunk a post'];
    // One post at a time and one chunk a post are the A/Bs of the window and the batches: measured for objects, which they are for.
    const objectsOnly = new Set<Path>(['platform, one post at a time', 'platform, one chunk a post']);
    return paths.flatMap((path) => SHAPES.filter((shape) => !objectsOnly.has(path) || shape.objects === true).map((shape) => streamingCase(shape, path)));
  },
};
