/**
 * @module bench/worker-cost
 * Issue 19's worker figures against a fake platform (lib/fake-platform.ts: a bare
 * node:http server, no harness), so that what is measured is the worker alone and a
 * change on the harness side does not move it:
 * - `noop, concurrency N`: worker CPU per no-op job (/proc of the worker process: every
 *   thread, the watchdog's included), jobs/s, and the platform side's own CPU per job;
 * - `memory`: a fresh worker (concurrency 64, --expose-gc): RSS idle (its first job is a
 *   probe that runs gc() and answers memoryUsage()), after 20 000 no-op jobs, and after
 *   40 000 more ("flat after that").
 * Each also as the image runs it (`image command`: the bundle `serverless-worker build`
 * writes, under `node --enable-source-maps`), with `--max-semi-space-size=2` (young
 * generation capped), and for memory with the whole source map (`--full-source-map`,
 * the map before issue 19) and without source maps.
 * BENCH_WORKER_NODE_ARGS (space-separated) adds node flags to the worker, for
 * comparisons.
 */
import type { ChildProcess } from 'node:child_process';
import { spawnNode, stopChild } from './lib/child.js';
import { childScript, type ChildRuntime } from './lib/compiled.js';
import { startFakePlatform, type FakePlatform } from './lib/fake-platform.js';
import { ownCpuMs, readProc } from './lib/proc.js';
import type { BenchCase, Benchmark } from './lib/runner.js';

const MB = 1024 * 1024;

interface Worker {
  readonly platform: FakePlatform;
  readonly child: ChildProcess;
  close(): Promise<void>;
}

function extraNodeArgs(): string[] {
  return (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
}

/** How the worker process runs: the compiled tree (default) or a bundle, with node flags. */
export interface WorkerVariant {
  /** Appended to the case name; empty for the compiled tree with no flags. */
  readonly label: string;
  readonly runtime: ChildRuntime;
  readonly nodeArgs: readonly string[];
}

const COMPILED: WorkerVariant = { label: '', runtime: 'compiled', nodeArgs: [] };
const IMAGE: WorkerVariant = { label: ', image command', runtime: 'bundle', nodeArgs: ['--enable-source-maps'] };
const IMAGE_SEMI_SPACE: WorkerVariant = {
  label: ', image command, --max-semi-space-size=2',
  runtime: 'bundle',
  nodeArgs: ['--max-semi-space-size=2', '--enable-source-maps'],
};
/** The images' command on a `build --splitting` bundle (chunks loaded on demand), young generation capped as the images set it. */
const IMAGE_SPLIT: WorkerVariant = {
  label: ', image command, split, --max-semi-space-size=2',
  runtime: 'bundle-split',
  nodeArgs: ['--max-semi-space-size=2', '--enable-source-maps'],
};
const IMAGE_FULL_MAP: WorkerVariant = { label: ', image command, full source map', runtime: 'bundle-full-map', nodeArgs: ['--enable-source-maps'] };
const BUNDLE_NO_MAPS: WorkerVariant = { label: ', bundle without --enable-source-maps', runtime: 'bundle', nodeArgs: [] };

async function startWorker(concurrency: number, nodeArgs: readonly string[] = [], variant: WorkerVariant = COMPILED): Promise<Worker> {
  const platform = await startFakePlatform();
  const child = spawnNode(await childScript('bench/children/platform-worker.ts', variant.runtime), {
    env: { ...platform.env, RUNPOD_POD_ID: 'bench-worker', BENCH_CONCURRENCY: String(concurrency), LOG_LEVEL: 'info' },
    nodeArgs: [...variant.nodeArgs, ...nodeArgs, ...extraNodeArgs()],
  });
  return {
    platform,
    child,
    async close() {
      await stopChild(child);
      await platform.close();
    },
  };
}

interface Usage {
  readonly rss: number;
  readonly heapUsed: number;
  readonly spaces: Readonly<Record<string, number>>;
}

async function probe(worker: Worker): Promise<Usage> {
  const [body] = await worker.platform.run(1, { probe: true }, true);
  const output = (JSON.parse(body ?? '{}') as { output?: Usage }).output;
  if (!output || typeof output.rss !== 'number') throw new Error(`probe job answered ${body}`);
  return output;
}

function noopCase(concurrency: number, variant: WorkerVariant = COMPILED): BenchCase {
  let worker: Worker | undefined;
  return {
    name: `noop, concurrency ${concurrency}${variant.label}`,
    metrics: {
      'worker CPU/job': { unit: 'µs', ...(concurrency >= 32 ? { target: { op: '<=', value: 100 } as const } : {}) },
      'jobs/s': { unit: 'jobs/s' },
      'platform CPU/job': { unit: 'µs' },
      'worker RSS': { unit: 'MiB' },
      'jobs per take': { unit: 'jobs', digits: 1 },
    },
    async setup() {
      worker = await startWorker(concurrency, [], variant);
    },
    async measure({ quick, warmup }) {
      if (!worker) throw new Error('not set up');
      const jobs = warmup ? 2_000 : quick ? 5_000 : concurrency === 1 ? 5_000 : 20_000;
      const pid = worker.child.pid ?? 0;
      const before = readProc(pid);
      const ownBefore = ownCpuMs();
      const started = performance.now();
      const takes = worker.platform.takes;
      await worker.platform.run(jobs, {});
      const elapsed = performance.now() - started;
      const after = readProc(pid);
      return {
        'worker CPU/job': (((after?.cpuMs ?? Number.NaN) - (before?.cpuMs ?? Number.NaN)) / jobs) * 1000,
        'jobs/s': (jobs / elapsed) * 1000,
        'platform CPU/job': ((ownCpuMs() - ownBefore) / jobs) * 1000,
        'worker RSS': (after?.rssBytes ?? Number.NaN) / MB,
        'jobs per take': jobs / (worker.platform.takes - takes),
      };
    },
    async teardown() {
      await worker?.close();
    },
  };
}

const WARM_JOBS = 20_000;
const AFTER_JOBS = 40_000;

function memoryCase(variant: WorkerVariant = COMPILED): BenchCase {
  return {
    name: `memory, concurrency 64${variant.label}`,
    warmup: false,
    metrics: {
      'RSS idle': { unit: 'MiB', target: { op: '<=', value: 55 } },
      'RSS warm minus idle': { unit: 'MiB', target: { op: '<=', value: 25 } },
      'RSS after minus warm': { unit: 'MiB' },
      'heap used idle': { unit: 'MiB' },
      'new space warm': { unit: 'MiB' },
    },
    async measure() {
      const worker = await startWorker(64, ['--expose-gc'], variant);
      try {
        const idle = await probe(worker);
        await worker.platform.run(WARM_JOBS, {});
        const warm = await probe(worker);
        await worker.platform.run(AFTER_JOBS, {});
        const after = await probe(worker);
        return {
          'RSS idle': idle.rss / MB,
          'RSS warm minus idle': (warm.rss - idle.rss) / MB,
          'RSS after minus warm': (after.rss - warm.rss) / MB,
          'heap used idle': idle.heapUsed / MB,
          'new space warm': (warm.spaces.new_space ?? Number.NaN) / MB,
        };
      } finally {
        await worker.close();
      }
    },
  };
}

export const workerCostBenchmark: Benchmark = {
  name: 'worker-cost',
  title: 'The worker alone against a fake platform (bare node:http): CPU per no-op job and RSS',
  cases: () => [
    noopCase(1),
    noopCase(64),
    noopCase(256),
    noopCase(1, IMAGE),
    noopCase(64, IMAGE),
    noopCase(64, IMAGE_SEMI_SPACE),
    noopCase(64, IMAGE_SPLIT),
    memoryCase(),
    memoryCase(IMAGE),
    memoryCase(IMAGE_SEMI_SPACE),
    memoryCase(IMAGE_SPLIT),
    memoryCase(IMAGE_FULL_MAP),
    memoryCase(BUNDLE_NO_MAPS),
  ],
};
