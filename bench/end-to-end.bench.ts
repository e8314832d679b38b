/**
 * @module bench/end-to-end
 * The harness end to end: its queue API over HTTP with a worker in the same process
 * (the in-process transport, concurrency 64, no-op handler), in a process of its own;
 * closed-loop clients in the bench process (undici, one connection each):
 * - `/run` then `/status` polled at once until COMPLETED: latency from the /run call
 *   to the /status answer that shows COMPLETED;
 * - `/runsync`: latency of the call (it answers with the finished job).
 * The spec's rate limits are off (with them, /run is capped at 100 requests/s).
 */
import { ForkedChild } from './lib/child.js';
import { childScript } from './lib/compiled.js';
import { QueueClient, preciseNow, runOneJob } from './lib/http-client.js';
import { ownCpuMs, readProc } from './lib/proc.js';
import type { BenchCase, Benchmark } from './lib/runner.js';
import { Samples } from './lib/stats.js';

type Mode = 'run+status' | 'runsync';

const ENDPOINT = 'e2e';

function endToEndCase(mode: Mode, clients: number): BenchCase {
  let server: ForkedChild | undefined;
  let client: QueueClient | undefined;
  const metrics = {
    'jobs/s': { unit: 'jobs/s' },
    'latency p50': { unit: 'ms' },
    'latency p99': { unit: 'ms' },
    ...(mode === 'run+status' ? { 'status calls/job': { unit: '' } } : {}),
    'server CPU/job': { unit: 'µs' },
    'client CPU/job': { unit: 'µs' },
  };
  return {
    name: `${mode}, ${clients} client${clients > 1 ? 's' : ''}`,
    metrics,
    async setup() {
      server = new ForkedChild(await childScript('bench/children/local-server.ts', 'compiled'), { env: { BENCH_ENDPOINT: ENDPOINT, BENCH_CONCURRENCY: '64' } });
      const ready = await server.next<{ type: 'ready'; url: string }>('ready', 30_000);
      client = new QueueClient(ready.url, ENDPOINT, clients);
    },
    async measure({ quick, warmup }) {
      if (!client || !server) throw new Error('not set up');
      const durationMs = warmup ? 1_000 : quick ? 1_500 : 3_000;
      const latencies = new Samples();
      let polls = 0;
      const pid = server.process.pid ?? 0;
      const serverCpu = readProc(pid)?.cpuMs ?? Number.NaN;
      const clientCpu = ownCpuMs();
      const start = preciseNow();
      const until = start + durationMs;
      const c = client;
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (preciseNow() < until) {
            const t = preciseNow();
            const calls = await runOneJob(c, mode);
            polls += calls;
            latencies.push(preciseNow() - t);
          }
        }),
      );
      const elapsed = preciseNow() - start;
      const jobs = latencies.length;
      return {
        'jobs/s': (jobs / elapsed) * 1000,
        'latency p50': latencies.percentile(50),
        'latency p99': latencies.percentile(99),
        ...(mode === 'run+status' ? { 'status calls/job': polls / jobs } : {}),
        'server CPU/job': (((readProc(pid)?.cpuMs ?? Number.NaN) - serverCpu) / jobs) * 1000,
        'client CPU/job': ((ownCpuMs() - clientCpu) / jobs) * 1000,
      };
    },
    async teardown() {
      await client?.close();
      await server?.stop();
    },
  };
}

export const endToEndBenchmark: Benchmark = {
  name: 'end-to-end',
  title: 'Queue API over HTTP with an in-process worker: /run then /status, and /runsync, with 1 and 64 clients',
  cases: () => [endToEndCase('run+status', 1), endToEndCase('run+status', 64), endToEndCase('runsync', 1), endToEndCase('runsync', 64)],
};
