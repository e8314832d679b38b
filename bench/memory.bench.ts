/**
 * @module bench/memory
 * Memory, each side in its own process so that its RSS is its own (read after a full
 * GC, with --expose-gc):
 * - the worker: a platform worker process (`serve()`, platform transport, default
 *   logger) against the harness in the bench process; RSS when idle (its first job is
 *   a probe that reports memoryUsage), when warm (after 20 000 no-op jobs, the figure of issue 19: V8's young
 *   generation and malloc's arenas grow to their working size in the first jobs), and
 *   after 100 000 more at concurrency 64; growth per 100 000 jobs is after minus warm;
 * - the floor: RSS of a bare `node` and of one that only imported the runtime's
 *   dependencies, which no worker can go under;
 * - the harness: a harness process (store and HTTP server) holding 100 000 finished
 *   jobs within their retention; RSS and heap before and after, and bytes per job.
 *   Filled two ways: straight into the store (submit, take, complete), and as a user
 *   would, through /run over HTTP with the in-process worker completing the jobs.
 */
import { parseJobRequest } from '../src/job/index.js';
import { spawn } from 'node:child_process';
import { ForkedChild, REPO_ROOT } from './lib/child.js';
import { QueueClient } from './lib/http-client.js';
import { childScript, type ChildRuntime } from './lib/compiled.js';
import { NOOP_REQUEST, runBatch, startPlatformSetup, type PlatformSetup } from './lib/platform-setup.js';
import type { BenchCase, Benchmark } from './lib/runner.js';

const MB = 1024 * 1024;
const PROBE = parseJobRequest({ input: { probe: true } });

interface Usage {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly spaces: Readonly<Record<string, number>>;
}

async function probe(setup: PlatformSetup): Promise<Usage> {
  const batch = await runBatch(setup.endpoint, [PROBE], 30_000);
  const output = batch.records[0]?.output as Usage | undefined;
  if (!output || typeof output.rss !== 'number') throw new Error(`probe job answered ${JSON.stringify(batch.records[0]?.output)}`);
  return output;
}

/** Jobs run before the "warm" reading: V8's young generation and malloc's arenas grow to their working size during the first jobs. */
const WARMUP_JOBS = 20_000;

function workerCase(jobs: number, runtime: ChildRuntime): BenchCase {
  const per100k = (bytes: number): number => (bytes / MB) * (100_000 / jobs);
  return {
    name: `worker (${runtime}), ${jobs.toLocaleString('en-US')} jobs`,
    warmup: false,
    metrics: {
      'RSS idle': { unit: 'MB', target: { op: '<=', value: 55 } },
      'RSS warm': { unit: 'MB' },
      // Issue 19: RSS after 20 000 no-op jobs at most 25 MiB above idle.
      'RSS warm minus idle': { unit: 'MB', target: { op: '<=', value: 25 } },
      'RSS after': { unit: 'MB' },
      'RSS growth per 100k': { unit: 'MB', target: { op: '<=', value: 10 } },
      'heap growth per 100k': { unit: 'MB' },
      'new space after': { unit: 'MB' },
    },
    async measure() {
      // A fresh worker process each run: "idle" must mean a worker that has run nothing yet.
      const setup = await startPlatformSetup({ endpointId: 'memory', concurrency: 64, nodeArgs: ['--expose-gc'], runtime });
      try {
        const idle = await probe(setup);
        await runBatch(setup.endpoint, new Array(WARMUP_JOBS).fill(NOOP_REQUEST), 120_000);
        const warm = await probe(setup);
        const BATCH = 10_000;
        for (let done = 0; done < jobs; done += BATCH) {
          await runBatch(setup.endpoint, new Array(Math.min(BATCH, jobs - done)).fill(NOOP_REQUEST), 120_000);
        }
        const after = await probe(setup);
        return {
          'RSS idle': idle.rss / MB,
          'RSS warm': warm.rss / MB,
          'RSS warm minus idle': (warm.rss - idle.rss) / MB,
          'RSS after': after.rss / MB,
          'RSS growth per 100k': per100k(after.rss - warm.rss),
          'heap growth per 100k': per100k(after.heapUsed - warm.heapUsed),
          'new space after': (after.spaces.new_space ?? Number.NaN) / MB,
        };
      } finally {
        await setup.close();
      }
    },
  };
}

/** RSS of a bare Node process, and of one that has only imported the runtime's dependencies: the floor under any worker's RSS. */
function floorCase(label: string, imports: readonly string[]): BenchCase {
  return {
    name: `floor: ${label}`,
    warmup: false,
    metrics: { RSS: { unit: 'MB' }, 'heap used': { unit: 'MB' } },
    async measure() {
      const script = `${imports.map((m) => `await import(${JSON.stringify(m)});`).join(' ')} gc(); gc(); process.stdout.write(JSON.stringify(process.memoryUsage()));`;
      const child = spawn(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (data: Buffer) => (out += data.toString()));
      await new Promise((resolve) => child.once('exit', resolve));
      const usage = JSON.parse(out) as NodeJS.MemoryUsage;
      return { RSS: usage.rss / MB, 'heap used': usage.heapUsed / MB };
    },
  };
}

interface HarnessDone {
  readonly type: 'done';
  readonly before: NodeJS.MemoryUsage;
  readonly after: NodeJS.MemoryUsage;
  readonly held: number;
}

function harnessCase(jobs: number): BenchCase {
  return {
    name: `harness, ${jobs.toLocaleString('en-US')} finished jobs`,
    warmup: false,
    metrics: {
      'RSS before': { unit: 'MB' },
      'RSS holding': { unit: 'MB' },
      'heap per job': { unit: 'bytes' },
      'RSS per job': { unit: 'bytes' },
    },
    async measure() {
      const child = new ForkedChild(await childScript('bench/children/harness-memory.ts', 'compiled'), { nodeArgs: ['--expose-gc'] });
      try {
        await child.next('ready', 30_000);
        const done = await child.ask<HarnessDone>({ type: 'go', jobs }, 'done', 300_000);
        if (done.held !== jobs) throw new Error(`the harness holds ${done.held} finished jobs, expected ${jobs}`);
        return {
          'RSS before': done.before.rss / MB,
          'RSS holding': done.after.rss / MB,
          'heap per job': (done.after.heapUsed - done.before.heapUsed) / jobs,
          'RSS per job': (done.after.rss - done.before.rss) / jobs,
        };
      } finally {
        await child.stop();
      }
    },
  };
}

interface MemoryAnswer {
  readonly type: 'memory';
  readonly usage: NodeJS.MemoryUsage;
  readonly jobs: number;
}

/** The harness as `--serve-api` runs it, filled through /run over HTTP and completed by its in-process worker. */
function harnessOverHttpCase(jobs: number): BenchCase {
  return {
    name: `harness via /run, ${jobs.toLocaleString('en-US')} finished jobs`,
    warmup: false,
    metrics: {
      'RSS before': { unit: 'MB' },
      'RSS holding': { unit: 'MB' },
      'heap per job': { unit: 'bytes' },
      'RSS per job': { unit: 'bytes' },
    },
    async measure() {
      const endpointId = 'memory';
      const server = new ForkedChild(await childScript('bench/children/local-server.ts', 'compiled'), {
        nodeArgs: ['--expose-gc'],
        env: { BENCH_ENDPOINT: endpointId, BENCH_CONCURRENCY: '64' },
      });
      const ready = await server.next<{ type: 'ready'; url: string }>('ready', 30_000);
      const client = new QueueClient(ready.url, endpointId, 32);
      try {
        const before = await server.ask<MemoryAnswer>({ type: 'memory' }, 'memory', 30_000);
        let next = 0;
        await Promise.all(
          Array.from({ length: 32 }, async () => {
            while (next < jobs) {
              const n = next++;
              await client.json('POST', '/run', { input: { prompt: 'Say hello', n } });
            }
          }),
        );
        // Every job must have finished: wait until the last one submitted is COMPLETED.
        let after = await server.ask<MemoryAnswer>({ type: 'memory' }, 'memory', 30_000);
        for (let i = 0; i < 100 && after.jobs < jobs; i++) after = await server.ask<MemoryAnswer>({ type: 'memory' }, 'memory', 30_000);
        if (after.jobs !== jobs) throw new Error(`the harness holds ${after.jobs} jobs, expected ${jobs}`);
        return {
          'RSS before': before.usage.rss / MB,
          'RSS holding': after.usage.rss / MB,
          'heap per job': (after.usage.heapUsed - before.usage.heapUsed) / jobs,
          'RSS per job': (after.usage.rss - before.usage.rss) / jobs,
        };
      } finally {
        await client.close();
        await server.stop();
      }
    },
  };
}

export const memoryBenchmark: Benchmark = {
  name: 'memory',
  title: 'Worker RSS idle and after 100 000 jobs; harness RSS holding 100 000 finished jobs (separate processes)',
  cases: ({ quick }) => {
    const runs = quick ? 1 : 3;
    return [
      { ...floorCase('bare node', []), runs },
      { ...floorCase('node + undici, zod, pino, prom-client', ['undici', 'zod', 'pino', 'prom-client']), runs },
      { ...workerCase(quick ? 20_000 : 100_000, 'compiled'), runs },
      { ...workerCase(quick ? 20_000 : 100_000, 'bundle'), runs },
      { ...workerCase(quick ? 20_000 : 100_000, 'tsx'), runs },
      { ...harnessCase(quick ? 20_000 : 100_000), runs },
      { ...harnessOverHttpCase(quick ? 20_000 : 100_000), runs },
    ];
  },
};
