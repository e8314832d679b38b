/**
 * @module bench/children/local-server
 * The harness with a worker in the same process (the in-process transport), as
 * `--serve-api` runs it but without the spec's rate limits (they would cap /run at
 * 100 requests/s and measure the limiter, not the harness): the queue API on
 * 127.0.0.1 and a free port, the bench handler, the default JSON logger (to stderr,
 * discarded by the bench). The harness runs on the precise clock, so /status carries
 * sub-millisecond executionTime. BENCH_CONCURRENCY sets the worker's concurrency
 * (default 64). Sends `{ type: 'ready', url }` over IPC; answers `{ type: 'memory' }` with
 * its memoryUsage() (after a full GC when run with --expose-gc) and the jobs it holds.
 */
import { Harness, startLocalWorker } from '../../src/exports/harness.js';
import { createLogger, resolveOptions } from '../../src/exports/runtime.js';
import { createHarnessServer } from '../../packages/platform/src/harness/server-api.js';
import { preciseClock } from '../lib/clock.js';
import { benchHandler } from './bench-handler.js';

const harness = new Harness({ clock: preciseClock });
const server = await createHarnessServer({ harness, port: 0, rateLimits: false, management: false });
const config = resolveOptions({
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? '64'),
  gpuSampling: false,
  endpointId: process.env.BENCH_ENDPOINT ?? 'local',
  ...(process.env.BENCH_COALESCE !== undefined ? { coalesceStreamChunks: process.env.BENCH_COALESCE === '1' } : {}),
});
const worker = startLocalWorker(benchHandler, config, createLogger(), { harness });
process.on('message', async (message: { type?: string }) => {
  if (message.type !== 'memory') return;
  // With --expose-gc: a full collection first, so the figures are what is held.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const endpoint = harness.findEndpoint(config.endpointId);
  process.send?.({ type: 'memory', usage: process.memoryUsage(), jobs: (await endpoint?.stateCounts())?.retained ?? 0 });
});
process.send?.({ type: 'ready', url: server.url });
process.on('disconnect', () => {
  void (async () => {
    await worker.stop();
    await server.close();
    await harness.close();
    process.exit(0);
  })();
});
