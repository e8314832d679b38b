/**
 * @module bench/children/big-bodies-harness
 * The harness under bench/big-bodies.ts: a harness server (memory store, rate limits
 * off, no worker) on 127.0.0.1 port 0 in a process of its own, run with --expose-gc.
 * Prints `{"url"}` when listening; then answers each line on stdin with one JSON line:
 * `reset` (clears the event-loop delay histogram), `stats` (its max and p99 in ms since
 * the last reset, and after a full GC heapUsed, heapTotal, external, arrayBuffers and rss), `exit`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { Harness } from '../../src/harness/index.js';
import { createHarnessServer } from '../../packages/platform/src/harness/server-api.js';
import { createMetrics } from '../../src/metrics/index.js';

const maxQueuedBytes = Number(process.env.BENCH_MAX_QUEUED_BYTES ?? '0');
const harness = new Harness(maxQueuedBytes > 0 ? { maxQueuedBytes } : {});
const server = await createHarnessServer({ harness, host: '127.0.0.1', port: 0, rateLimits: false, metrics: createMetrics({ defaultMetrics: false }) });
const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
// BENCH_TRACE_HEALTH=1: when each /health connection was accepted, its request parsed and answered (Date.now()).
const trace: Array<Record<string, number>> = [];
if (process.env.BENCH_TRACE_HEALTH === '1') {
  const accepted = new WeakMap<object, number>();
  server.app.server.on('connection', (socket) => accepted.set(socket, Date.now()));
  server.app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (!(request.url ?? '').endsWith('/health')) return;
    const requestAt = Date.now();
    response.once('finish', () =>
      trace.push({ port: request.socket.remotePort ?? 0, acceptedAt: accepted.get(request.socket) ?? -1, requestAt, answeredAt: Date.now() }),
    );
  });
}
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);

const gc = (globalThis as { gc?: () => void }).gc;
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'reset') {
    delay.reset();
    process.stdout.write('{"ok":true}\n');
  } else if (line === 'stats') {
    gc?.();
    gc?.();
    const { heapUsed, heapTotal, external, arrayBuffers, rss } = process.memoryUsage();
    process.stdout.write(
      `${JSON.stringify({ maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6, heapUsed, heapTotal, external, arrayBuffers, rss })}\n`,
    );
  } else if (line === 'trace') {
    process.stdout.write(`${JSON.stringify({ trace })}\n`);
  } else if (line === 'exit') {
    await server.close();
    await harness.close();
    process.exit(0);
  }
}
