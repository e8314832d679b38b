/**
 * @module bench/dispatch
 * Dispatch: no-op jobs through the platform transport. The harness (its worker API
 * over HTTP on 127.0.0.1) runs in the bench process, the worker in its own process
 * (`serve()` on the platform transport, default logger), as a worker and the platform
 * would. A batch of jobs is queued at once; jobs/s is the batch over the time from the
 * first hand-out to the last result; per-job latency is from the job handed out
 * (job-take answered) to its result received (job-done applied), stamped by the
 * harness itself.
 */
import type { Benchmark, BenchCase } from './lib/runner.js';
import { NOOP_REQUEST, runBatch, startPlatformSetup, type PlatformSetup } from './lib/platform-setup.js';
import { ownCpuMs, readProc } from './lib/proc.js';
import { percentile } from './lib/stats.js';

const CONCURRENCIES = [1, 8, 64, 256] as const;

function jobsPerRun(concurrency: number, quick: boolean): number {
  const full = concurrency === 1 ? 2_000 : concurrency === 8 ? 5_000 : 10_000;
  return quick ? Math.round(full / 4) : full;
}

function dispatchCase(concurrency: number): BenchCase {
  let setup: PlatformSetup | undefined;
  const metrics = {
    'jobs/s': {
      unit: 'jobs/s',
      ...(concurrency === 1 ? { target: { op: '>=', value: 1_000 } as const } : {}),
      ...(concurrency === 64 ? { target: { op: '>=', value: 10_000 } as const } : {}),
    },
    'latency p50': { unit: 'ms', ...(concurrency === 1 ? { target: { op: '<=', value: 0.5 } as const } : {}) },
    'latency p99': { unit: 'ms' },
    'worker CPU/job': { unit: 'µs' },
    'harness CPU/job': { unit: 'µs' },
  };
  return {
    name: `concurrency ${concurrency}`,
    metrics,
    async setup() {
      setup = await startPlatformSetup({ endpointId: `dispatch-c${concurrency}`, concurrency });
    },
    async measure({ quick, warmup }) {
      if (!setup) throw new Error('not set up');
      const n = warmup ? Math.min(1_000, jobsPerRun(concurrency, quick)) : jobsPerRun(concurrency, quick);
      const pid = setup.worker.pid ?? 0;
      const workerCpu = readProc(pid)?.cpuMs ?? Number.NaN;
      const harnessCpu = ownCpuMs();
      const batch = await runBatch(setup.endpoint, new Array(n).fill(NOOP_REQUEST), 60_000);
      const workerCpuPerJob = (((readProc(pid)?.cpuMs ?? Number.NaN) - workerCpu) / batch.jobs) * 1000;
      const harnessCpuPerJob = ((ownCpuMs() - harnessCpu) / batch.jobs) * 1000;
      const latencies = Array.from(batch.latencies);
      return {
        'worker CPU/job': workerCpuPerJob,
        'harness CPU/job': harnessCpuPerJob,
        'jobs/s': (batch.jobs / batch.elapsedMs) * 1000,
        'latency p50': percentile(latencies, 50),
        'latency p99': percentile(latencies, 99),
      };
    },
    async teardown() {
      await setup?.close();
    },
  };
}

export const dispatchBenchmark: Benchmark = {
  name: 'dispatch',
  title: 'No-op jobs through the platform transport against the harness worker API (loopback)',
  cases: () => CONCURRENCIES.map(dispatchCase),
};
