/**
 * @module bench/runpod-python
 * Issue 34 item 5: runpod-python (the platform's own Python worker SDK, located and run
 * by lib/runpod-python.ts) beside this package, in the same runs, alternating which
 * side goes first, with the same clients: 8 closed-loop keep-alive undici clients in
 * the bench process, a no-op handler. Every figure is given for both sides and as the
 * ratio ours / runpod-python. CPU and RSS are of every process of a side (/proc of the
 * server and all below it: ours is the harness process and its supervised worker child).
 * - `runsync sustained`: runpod-python's `--rp_serve_api` and `worker.js --serve-api
 *   --no-rate-limit` (the compiled bench worker, concurrency 8): /runsync requests/s over
 *   5 s, server CPU per /runsync, RSS after;
 * - `burst after idle`: 11 s with no request (server CPU over it, ms/s, and RSS at its
 *   end), then 1 900 /runsync from the 8 clients, then the same burst again at once
 *   (warm): requests/s of each and their ratio;
 * - `memory`: fresh servers each run: RSS after one job and 3 s idle (and 10 s), then after
 *   20 000 /runsync and 3 s idle (and 10 s, and 70 s: settled, past ours' idle compaction);
 *   PSS (issue 46's measure: pages the side's processes share counted once, in shares)
 *   idle at 10 s, 3 s after the jobs and 70 s after them;
 * - `stream 1 KiB x 1 000`: each side's worker against a fake platform of its own
 *   (lib/fake-platform.ts), as issue 34's table measured it: runpod-python's worker
 *   (`RUNPOD_WEBHOOK_*`, an async generator handler) and `serve()` (default options);
 *   one job yielding 1 000 strings of 1 KiB: chunks (yields) per second from the job
 *   handed out to its result received, the job-stream posts it took, worker CPU per
 *   chunk, worker RSS after;
 * - `stream objects 1 KiB x 1 000` (issue 46 item 4): the same with 1 000 `{ i, text }`
 *   objects of 1 KiB of text, the fake platform advertising ordering by stream_index and
 *   batches (`x-sw-stream-order`, `x-sw-stream-batch: 64`, as our harness does), so ours
 *   sends the chunks queued when a post goes out in one post (about 33 posts a job).
 * With BENCH_SERVE_API_BARE=1, ours is replaced by bench/children/bare-runsync-server.ts (a
 * bare node:http server answering a completed job, nothing behind it): the floor of any Node
 * server with these clients on these cores, to read our figures against; with
 * BENCH_SERVE_API_BARE=child, by the same server handing each body to a child process over
 * IPC: the floor of a local API whose handler is isolated in another process. With
 * BENCH_SERVE_API_SCRIPT=<path>, ours is that script in place of the compiled bench worker
 * (e.g. a copy of an earlier commit's compiled tree: a before / after in alternating runs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { REPO_ROOT, stopChild, track } from './lib/child.js';
import { childScript } from './lib/compiled.js';
import { startFakePlatform, type FakePlatform } from './lib/fake-platform.js';
import { QueueClient, preciseNow, runOneJob } from './lib/http-client.js';
import { readProcTree, readPssTree } from './lib/proc.js';
import { freePort, locateRunpodPython, spawnRunpod, spawnRunpodServeApi, stopRunpod, type RunpodPython } from './lib/runpod-python.js';
import type { BenchCase, BenchOptions, Benchmark, Measurement, MetricSpec } from './lib/runner.js';

const MB = 1024 * 1024;
const CLIENTS = 8;
const SUSTAINED_MS = 5_000;
const BURST = 1_900;
const IDLE_MS = 11_000;
const MEMORY_JOBS = 20_000;
/** The memory case's second reading, ms after the first job or the last one (past ours' idle compaction, src/local/idle-compaction.ts). */
const SETTLED_MS = 10_000;
/** The memory case's last reading, ms after the last job (issue 46's "70 s after 20 000 jobs"). */
const LATER_MS = 70_000;
const STREAM = { count: 1_000, size: 1_024 } as const;

type SideName = 'runpod-python' | 'ours';
const SIDES: readonly SideName[] = ['runpod-python', 'ours'];

let located: RunpodPython | undefined;
function runpod(): RunpodPython {
  if (located === undefined) {
    located = locateRunpodPython();
    process.stderr.write(`  runpod-python: ${located.source}, run by ${located.python}\n`);
  }
  return located;
}

/** BENCH_SERVE_API_NODE_ARGS (space-separated): node flags for our --serve-api process (its worker child inherits them), for comparisons. */
const nodeArgs = (): string[] => (process.env.BENCH_SERVE_API_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The local API of `side` on a free port, answering /runsync (a first job run) before it resolves. */
async function startServer(side: SideName): Promise<Running> {
  const port = await freePort();
  let child: ChildProcess;
  if (side === 'runpod-python') child = spawnRunpodServeApi(runpod(), port);
  else {
    // BENCH_SERVE_API_BARE=1: a bare node:http server in place of ours, the floor of any Node server here; =child: the same
    // with each body handled in a child process over IPC, the floor of an isolated handler (bench/children/bare-runsync-server.ts).
    const bareMode = process.env.BENCH_SERVE_API_BARE;
    const bare = bareMode === '1' || bareMode === 'child';
    const script =
      !bare && process.env.BENCH_SERVE_API_SCRIPT
        ? process.env.BENCH_SERVE_API_SCRIPT
        : await childScript(bare ? 'bench/children/bare-runsync-server.ts' : 'bench/children/platform-worker.ts', 'compiled');
    child = track(
      spawn(
        process.execPath,
        [...nodeArgs(), script, '--port', String(port), ...(bare ? (bareMode === 'child' ? ['--child'] : []) : ['--serve-api', '--no-rate-limit'])],
        {
          cwd: REPO_ROOT,
          env: { ...process.env, BENCH_CONCURRENCY: String(CLIENTS) },
          stdio: ['ignore', 'ignore', process.env.BENCH_VERBOSE ? 'inherit' : 'ignore'],
        },
      ),
    );
  }
  const client = new QueueClient(`http://127.0.0.1:${port}`, '', CLIENTS);
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${side} server exited (${child.exitCode}) before answering (BENCH_VERBOSE=1 shows its stderr)`);
    try {
      await runOneJob(client, 'runsync');
      return { side, child, client };
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${side} server did not answer /runsync within 120 s: ${String(error)}`, { cause: error });
      await sleep(200);
    }
  }
}

interface Running {
  readonly side: SideName;
  readonly child: ChildProcess;
  readonly client: QueueClient;
}

const stopSide = (side: SideName, child: ChildProcess): Promise<void> => (side === 'runpod-python' ? stopRunpod(child, 15_000) : stopChild(child, 15_000));

async function stopServer(running: Running): Promise<void> {
  await running.client.close();
  await stopSide(running.side, running.child);
}

/** CPU (ms) and RSS (bytes) of every process of a side. */
function sample(child: ChildProcess): { cpuMs: number; rssBytes: number } {
  return readProcTree(child.pid ?? 0) ?? { cpuMs: Number.NaN, rssBytes: Number.NaN };
}

/** PSS (bytes) of every process of a side: pages shared between them counted once, in shares (issue 46's measure). */
const pss = (child: ChildProcess): number => readPssTree(child.pid ?? 0);

/** `CLIENTS` closed loops of /runsync until `until` (ms, preciseNow) or `jobs` in all; answers the calls made. */
async function closedLoop(client: QueueClient, until: number, jobs = Number.POSITIVE_INFINITY): Promise<number> {
  let started = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (preciseNow() < until && started < jobs) {
        started++;
        await runOneJob(client, 'runsync');
        done++;
      }
    }),
  );
  return done;
}

async function burstRate(client: QueueClient): Promise<number> {
  const start = preciseNow();
  const calls = await closedLoop(client, Number.POSITIVE_INFINITY, BURST);
  return (calls / (preciseNow() - start)) * 1000;
}

type Mode = 'sustained' | 'burst' | 'memory' | 'stream' | 'stream objects';

const MODE_METRICS: Record<Mode, Record<string, MetricSpec>> = {
  sustained: { 'requests/s': { unit: 'req/s' }, 'server CPU/request': { unit: 'µs' }, 'RSS after': { unit: 'MiB' } },
  burst: {
    'burst after idle': { unit: 'req/s' },
    'burst warm': { unit: 'req/s' },
    'after idle / warm': { unit: 'x', digits: 2 },
    'idle CPU': { unit: 'ms/s', digits: 2 },
    'RSS idle': { unit: 'MiB' },
    'RSS after': { unit: 'MiB' },
  },
  memory: {
    'RSS idle': { unit: 'MiB' },
    [`RSS idle ${SETTLED_MS / 1000} s`]: { unit: 'MiB' },
    [`RSS after ${MEMORY_JOBS / 1000}k jobs`]: { unit: 'MiB' },
    [`RSS after ${MEMORY_JOBS / 1000}k jobs, ${SETTLED_MS / 1000} s`]: { unit: 'MiB' },
    [`RSS after ${MEMORY_JOBS / 1000}k jobs, ${LATER_MS / 1000} s`]: { unit: 'MiB' },
    [`PSS idle ${SETTLED_MS / 1000} s`]: { unit: 'MiB' },
    [`PSS after ${MEMORY_JOBS / 1000}k jobs`]: { unit: 'MiB' },
    [`PSS after ${MEMORY_JOBS / 1000}k jobs, ${LATER_MS / 1000} s`]: { unit: 'MiB' },
  },
  stream: { 'chunks/s': { unit: 'chunks/s' }, 'posts per job': { unit: '' }, 'worker CPU/chunk': { unit: 'µs' }, 'worker RSS after': { unit: 'MiB' } },
  'stream objects': {
    'chunks/s': { unit: 'chunks/s' },
    'posts per job': { unit: '' },
    'worker CPU/chunk': { unit: 'µs' },
    'worker RSS after': { unit: 'MiB' },
  },
};

const CASE_NAMES: Record<Mode, string> = {
  sustained: `runsync sustained ${SUSTAINED_MS / 1000} s, ${CLIENTS} clients`,
  burst: `burst of ${BURST} after ${IDLE_MS / 1000} s idle`,
  memory: `memory, ${MEMORY_JOBS} runsync`,
  stream: `stream ${STREAM.size / 1024} KiB x ${STREAM.count}, worker on a fake platform`,
  'stream objects': `stream objects ${STREAM.size / 1024} KiB x ${STREAM.count}, worker on a fake platform ordering by stream_index`,
};

/** The figures of both sides and, for each, ours / runpod-python. */
function metricsOf(mode: Mode): Record<string, MetricSpec> {
  const metrics: Record<string, MetricSpec> = {};
  for (const [name, spec] of Object.entries(MODE_METRICS[mode])) {
    for (const side of SIDES) metrics[`${name}, ${side}`] = spec;
    metrics[`${name}, ours / runpod-python`] = { unit: 'x', digits: 2 };
  }
  return metrics;
}

function withRatios(mode: Mode, result: Record<string, number>): Measurement {
  for (const name of Object.keys(MODE_METRICS[mode]))
    result[`${name}, ours / runpod-python`] = (result[`${name}, ours`] ?? NaN) / (result[`${name}, runpod-python`] ?? NaN);
  return result;
}

/** Alternate which side goes first, run to run. */
const orderOf = (index: number): readonly SideName[] => (index % 2 === 0 ? SIDES : [...SIDES].reverse());

async function measureServer(mode: 'sustained' | 'burst', running: Running, warmup: boolean, quick: boolean): Promise<Measurement> {
  if (mode === 'sustained') {
    const before = sample(running.child);
    const start = preciseNow();
    const calls = await closedLoop(running.client, start + (warmup ? 1_000 : quick ? 2_000 : SUSTAINED_MS));
    const elapsed = preciseNow() - start;
    const after = sample(running.child);
    return { 'requests/s': (calls / elapsed) * 1000, 'server CPU/request': ((after.cpuMs - before.cpuMs) / calls) * 1000, 'RSS after': after.rssBytes / MB };
  }
  const idleMs = warmup ? 1_000 : IDLE_MS;
  const idleBefore = sample(running.child);
  await sleep(idleMs);
  const idleAfter = sample(running.child);
  const cold = await burstRate(running.client);
  const warm = await burstRate(running.client);
  return {
    'burst after idle': cold,
    'burst warm': warm,
    'after idle / warm': cold / warm,
    'idle CPU': (idleAfter.cpuMs - idleBefore.cpuMs) / (idleMs / 1000),
    'RSS idle': idleAfter.rssBytes / MB,
    'RSS after': sample(running.child).rssBytes / MB,
  };
}

function serverCase(mode: 'sustained' | 'burst'): BenchCase {
  const servers = new Map<SideName, Running>();
  return {
    name: CASE_NAMES[mode],
    metrics: metricsOf(mode),
    async setup() {
      for (const side of SIDES) servers.set(side, await startServer(side));
    },
    async measure({ index, warmup, quick }) {
      const result: Record<string, number> = {};
      for (const side of orderOf(index)) {
        const running = servers.get(side);
        if (!running) throw new Error('not set up');
        for (const [name, value] of Object.entries(await measureServer(mode, running, warmup, quick))) result[`${name}, ${side}`] = value;
      }
      return withRatios(mode, result);
    },
    async teardown() {
      for (const running of servers.values()) await stopServer(running);
      servers.clear();
    },
  };
}

function memoryCase(options: BenchOptions): BenchCase {
  const after = `RSS after ${MEMORY_JOBS / 1000}k jobs`;
  return {
    name: CASE_NAMES.memory,
    metrics: metricsOf('memory'),
    warmup: false,
    runs: Math.min(options.runs, 3),
    // 20 000 jobs a side take 1-2 min each on a loaded 2-core machine: the runs asked for, within 12 min.
    budgetMs: options.quick ? undefined : 720_000,
    async measure({ index, quick }) {
      const result: Record<string, number> = {};
      const servers = new Map<SideName, Running>();
      try {
        for (const side of orderOf(index)) servers.set(side, await startServer(side));
        await sleep(3_000);
        for (const [side, running] of servers) result[`RSS idle, ${side}`] = sample(running.child).rssBytes / MB;
        await sleep(SETTLED_MS - 3_000);
        for (const [side, running] of servers) {
          result[`RSS idle ${SETTLED_MS / 1000} s, ${side}`] = sample(running.child).rssBytes / MB;
          result[`PSS idle ${SETTLED_MS / 1000} s, ${side}`] = pss(running.child) / MB;
        }
        for (const side of orderOf(index)) {
          const running = servers.get(side) as Running;
          await closedLoop(running.client, Number.POSITIVE_INFINITY, quick ? MEMORY_JOBS / 10 : MEMORY_JOBS);
        }
        await sleep(3_000);
        for (const [side, running] of servers) {
          result[`${after}, ${side}`] = sample(running.child).rssBytes / MB;
          result[`PSS after ${MEMORY_JOBS / 1000}k jobs, ${side}`] = pss(running.child) / MB;
        }
        await sleep(SETTLED_MS - 3_000);
        for (const [side, running] of servers) result[`${after}, ${SETTLED_MS / 1000} s, ${side}`] = sample(running.child).rssBytes / MB;
        await sleep(LATER_MS - SETTLED_MS);
        for (const [side, running] of servers) {
          result[`${after}, ${LATER_MS / 1000} s, ${side}`] = sample(running.child).rssBytes / MB;
          result[`PSS after ${MEMORY_JOBS / 1000}k jobs, ${LATER_MS / 1000} s, ${side}`] = pss(running.child) / MB;
        }
      } finally {
        for (const running of servers.values()) await stopServer(running);
      }
      return withRatios('memory', result);
    },
  };
}

interface StreamWorker {
  readonly side: SideName;
  readonly platform: FakePlatform;
  readonly child: ChildProcess;
}

async function startStreamWorker(side: SideName, streamOrder: boolean): Promise<StreamWorker> {
  const platform = await startFakePlatform({ streamOrder });
  const env = { ...platform.env, RUNPOD_POD_ID: 'bench-worker' };
  let child: ChildProcess;
  if (side === 'runpod-python') {
    // An API key, so that runpod-python runs its ping process as on the platform (ours pings from its own process).
    child = spawnRunpod(runpod(), [], { ...env, RUNPOD_AI_API_KEY: 'bench', BENCH_RUNPOD_HANDLER: 'stream' });
  } else {
    const script = await childScript('bench/children/platform-worker.ts', 'compiled');
    child = track(
      spawn(process.execPath, [script], {
        cwd: REPO_ROOT,
        env: { ...process.env, ...env, BENCH_CONCURRENCY: '1' },
        stdio: ['ignore', 'ignore', process.env.BENCH_VERBOSE ? 'inherit' : 'ignore'],
      }),
    );
  }
  return { side, platform, child };
}

/**
 * `stream`: strings (joined by ours while a post is in flight), against the fake platform as
 * it is. `stream objects`: `{ i, text }` objects (never joined), against the fake platform
 * answering job-take with `x-sw-stream-order: stream_index` and `x-sw-stream-batch: 64` as
 * our harness does, so that ours sends several chunks in a post (runpod-python ignores the
 * headers; the fake stores no chunk, so it keeps the ordering promise vacuously).
 */
function streamCase(mode: 'stream' | 'stream objects'): BenchCase {
  const workers = new Map<SideName, StreamWorker>();
  const objects = mode === 'stream objects';
  const spec = objects ? { ...STREAM, objects } : STREAM;
  return {
    name: CASE_NAMES[mode],
    metrics: metricsOf(mode),
    async setup() {
      for (const side of SIDES) {
        const worker = await startStreamWorker(side, objects);
        workers.set(side, worker);
        await worker.platform.run(1, { stream: { ...spec, count: 10 } });
      }
    },
    async measure({ index }) {
      const result: Record<string, number> = {};
      for (const side of orderOf(index)) {
        const worker = workers.get(side);
        if (!worker) throw new Error('not set up');
        const before = sample(worker.child);
        const posts = worker.platform.streamPosts;
        const start = preciseNow();
        await worker.platform.run(1, { stream: spec });
        const elapsed = preciseNow() - start;
        const after = sample(worker.child);
        result[`chunks/s, ${side}`] = (STREAM.count / elapsed) * 1000;
        result[`posts per job, ${side}`] = worker.platform.streamPosts - posts;
        result[`worker CPU/chunk, ${side}`] = ((after.cpuMs - before.cpuMs) / STREAM.count) * 1000;
        result[`worker RSS after, ${side}`] = after.rssBytes / MB;
      }
      return withRatios(mode, result);
    },
    async teardown() {
      for (const worker of workers.values()) {
        await stopSide(worker.side, worker.child);
        await worker.platform.close();
      }
      workers.clear();
    },
  };
}

export const runpodPythonBenchmark: Benchmark = {
  name: 'runpod-python',
  title:
    "runpod-python's --rp_serve_api and worker beside ours (issue 34 item 5), alternating: /runsync sustained, burst after idle, RSS idle and after 20 000 jobs, 1 KiB stream chunks/s; ratios ours / runpod-python",
  cases: (options) => [serverCase('sustained'), serverCase('burst'), memoryCase(options), streamCase('stream'), streamCase('stream objects')],
};
