/**
 * @module bench/serve-api-cost
 * What the supervised worker of `--serve-api` costs per job (issues 24 and 34): the
 * compiled bench worker (no-op handler) run as `worker.js --serve-api --port 0
 * --no-rate-limit`, its CPU read apart for the harness process and its worker child
 * (since issue 24 the worker is a child process). Every case starts two servers, one per
 * way the child is joined (`SW_SERVE_API_CHANNEL`): `http`, the whole worker API over
 * HTTP as a platform worker (the path before issue 34), and `ipc`, jobs and results over
 * the child's IPC channel (issue 34); each run measures both, alternating which goes
 * first, so that both see the same machine. Cases:
 * - `runsync, 1 client`: sequential POST /runsync on one keep-alive connection: median
 *   latency, CPU per job of each process, wake-ups per job of each process's main
 *   thread (its voluntary context switches: lib/proc.ts);
 * - `runsync, 8 clients`: closed loop of 8 keep-alive clients: requests/s, CPU per job
 *   of each process, wake-ups per job of each, RSS of both at the end;
 * - `HTTP requests per job`: the requests the harness process receives (counted by a
 *   preloaded diagnostics-channel subscriber, children/request-counter.ts) per
 *   sequential /runsync, the caller's included;
 * - `burst after idle`: 1 900 /runsync from 8 clients after 11 s with none, then the
 *   same burst again at once (warm);
 * - `worker restart`: SIGKILL the worker child, then time a /runsync from the kill to
 *   its answer (a new child started, ready, and ran it).
 *
 * BENCH_SERVE_API_BASELINE=<folder>: a third server, `ipc, baseline`, run from another
 * compiled tree (a copy of this bench's compiled folder, lib/compiled.ts, made at the
 * commit to compare with: its package links pointed at the copy), measured in the same
 * runs, alternating with the other two: a before/after of the same bench on a loaded machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT, childExecArgv, stopChild, track } from './lib/child.js';
import { childScript } from './lib/compiled.js';
import { QueueClient, preciseNow, runOneJob } from './lib/http-client.js';
import { mainThreadWakeups, processTree, readProc } from './lib/proc.js';
import type { BenchCase, Benchmark, Measurement, MetricSpec } from './lib/runner.js';

const MB = 1024 * 1024;
const CLIENTS = 8;
const BURST = 1_900;
const IDLE_MS = 11_000;

/**
 * How the worker runs: `compiled` (as an image runs it; BENCH_SERVE_API_RUNTIME=compiled)
 * needs both packages built (`npm run build:all`: --serve-api loads the platform from
 * packages/platform/dist); default tsx from the sources, whose per-job code is the same.
 */
const RUNTIME = process.env.BENCH_SERVE_API_RUNTIME === 'compiled' ? 'compiled' : 'tsx';

type Channel = 'http' | 'ipc' | 'ipc, baseline';
const BASELINE = process.env.BENCH_SERVE_API_BASELINE;
const CHANNELS: readonly Channel[] = BASELINE ? ['http', 'ipc', 'ipc, baseline'] : ['http', 'ipc'];

interface Server {
  readonly child: ChildProcess;
  readonly origin: string;
  readonly countDir: string | undefined;
}

async function startServer(channel: Channel, countRequests: boolean): Promise<Server> {
  const script =
    channel === 'ipc, baseline' ? join(BASELINE ?? '', 'bench/children/platform-worker.js') : await childScript('bench/children/platform-worker.ts', RUNTIME);
  const countDir = countRequests ? mkdtempSync(join(tmpdir(), 'serve-api-requests-')) : undefined;
  // After tsx's own --import (childExecArgv), so that tsx loads it.
  const counter = countRequests ? ['--import', pathToFileURL(await childScript('bench/children/request-counter.ts', RUNTIME)).href] : [];
  const child = track(
    spawn(process.execPath, [...childExecArgv(script), ...counter, script, '--serve-api', '--port', '0', '--no-rate-limit'], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        BENCH_CONCURRENCY: String(CLIENTS),
        LOG_LEVEL: 'info',
        SW_SERVE_API_CHANNEL: channel === 'http' ? 'http' : 'ipc',
        ...(countDir !== undefined ? { BENCH_REQUEST_COUNT_DIR: countDir } : {}),
      },
      stdio: ['ignore', 'pipe', process.env.BENCH_VERBOSE ? 'inherit' : 'ignore'],
    }),
  );
  const origin = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no address within 30 s: ${out}`)), 30_000);
    child.stdout?.on('data', (data: Buffer) => {
      out += data.toString();
      const match = /(http:\/\/127\.0\.0\.1:\d+)\/v2\/local/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`--serve-api exited (${code}) before listening: ${out}`)));
  });
  child.stdout?.resume();
  return { child, origin, countDir };
}

/** The worker process under `pid` (a node process, not the watchdog's), if any. */
function workerChild(pid: number): number | undefined {
  return processTree(pid).find((member) => member !== pid);
}

/**
 * CPU of the harness process and of everything below it (the worker child), ms; RSS of
 * all, bytes; wake-ups of the harness process's main thread and of the worker child's
 * (voluntary context switches, lib/proc.ts).
 */
function split(pid: number): { harnessMs: number; workerMs: number; rssBytes: number; harnessWakes: number; workerWakes: number } {
  let harnessMs = Number.NaN;
  let workerMs = 0;
  let rssBytes = 0;
  const worker = workerChild(pid);
  for (const member of processTree(pid)) {
    const sample = readProc(member);
    if (sample === undefined) continue;
    rssBytes += sample.rssBytes;
    if (member === pid) harnessMs = sample.cpuMs;
    else workerMs += sample.cpuMs;
  }
  const harnessWakes = mainThreadWakeups(pid) ?? Number.NaN;
  const workerWakes = worker === undefined ? Number.NaN : (mainThreadWakeups(worker) ?? Number.NaN);
  return { harnessMs, workerMs, rssBytes, harnessWakes, workerWakes };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
}

/** The harness process's request counts by route (children/request-counter.ts). */
function readCounts(server: Server): Record<string, number> {
  try {
    return JSON.parse(readFileSync(join(server.countDir ?? '', `${server.child.pid ?? 0}.json`), 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

const total = (counts: Record<string, number>): number => Object.values(counts).reduce((sum, n) => sum + n, 0);

type Mode = 'latency' | 'throughput' | 'requests' | 'burst' | 'restart';

const MODE_METRICS: Record<Mode, Record<string, MetricSpec>> = {
  latency: {
    'median latency': { unit: 'ms', digits: 3 },
    'CPU/job, harness': { unit: 'µs' },
    'CPU/job, worker': { unit: 'µs' },
    'wake-ups/job, harness': { unit: '', digits: 2 },
    'wake-ups/job, worker': { unit: '', digits: 2 },
  },
  throughput: {
    'requests/s': { unit: 'req/s' },
    'CPU/job, harness': { unit: 'µs' },
    'CPU/job, worker': { unit: 'µs' },
    'wake-ups/job, harness': { unit: '', digits: 2 },
    'wake-ups/job, worker': { unit: '', digits: 2 },
    'RSS after, both': { unit: 'MiB' },
  },
  requests: { 'HTTP requests/job': { unit: 'req', digits: 3 }, 'worker API requests/job': { unit: 'req', digits: 3 } },
  burst: {
    'burst after idle': { unit: 'req/s' },
    'burst warm': { unit: 'req/s' },
    'idle CPU, harness': { unit: 'ms/s', digits: 2 },
    'idle CPU, worker': { unit: 'ms/s', digits: 2 },
  },
  restart: { 'kill to answer': { unit: 'ms' } },
};

const CASE_NAMES: Record<Mode, string> = {
  latency: 'runsync, 1 client',
  throughput: `runsync, ${CLIENTS} clients`,
  requests: 'HTTP requests per job',
  burst: `burst of ${BURST} after ${IDLE_MS / 1000} s idle`,
  restart: 'worker restart',
};

/** `clients` closed loops of /runsync until `until` (or `jobs` in all); answers the calls and their latencies. */
async function closedLoop(
  client: QueueClient,
  clients: number,
  until: number,
  jobs = Number.POSITIVE_INFINITY,
): Promise<{ calls: number; latencies: number[] }> {
  const latencies: number[] = [];
  let started = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (preciseNow() < until && started < jobs) {
        started++;
        const sent = preciseNow();
        await runOneJob(client, 'runsync');
        latencies.push(preciseNow() - sent);
      }
    }),
  );
  return { calls: latencies.length, latencies };
}

async function measureOne(mode: Mode, server: Server, client: QueueClient, quick: boolean, warmup: boolean): Promise<Measurement> {
  const pid = server.child.pid ?? 0;
  if (mode === 'restart') {
    const worker = workerChild(pid);
    if (worker === undefined) return { 'kill to answer': Number.NaN };
    const start = preciseNow();
    process.kill(worker, 'SIGKILL');
    await runOneJob(client, 'runsync');
    return { 'kill to answer': preciseNow() - start };
  }
  if (mode === 'requests') {
    const jobs = warmup ? 50 : quick ? 200 : 500;
    await new Promise((resolve) => setTimeout(resolve, 250));
    const before = readCounts(server);
    for (let i = 0; i < jobs; i++) await runOneJob(client, 'runsync');
    await new Promise((resolve) => setTimeout(resolve, 250));
    const after = readCounts(server);
    const all = total(after) - total(before);
    const queue = (after.queue ?? 0) - (before.queue ?? 0);
    return { 'HTTP requests/job': all / jobs, 'worker API requests/job': (all - queue) / jobs };
  }
  if (mode === 'burst') {
    const idleBefore = split(pid);
    await new Promise((resolve) => setTimeout(resolve, warmup ? 1_000 : IDLE_MS));
    const idleAfter = split(pid);
    const idleSeconds = (warmup ? 1_000 : IDLE_MS) / 1000;
    const burst = async (): Promise<number> => {
      const start = preciseNow();
      const { calls } = await closedLoop(client, CLIENTS, Number.POSITIVE_INFINITY, BURST);
      return (calls / (preciseNow() - start)) * 1000;
    };
    const cold = await burst();
    const warm = await burst();
    return {
      'burst after idle': cold,
      'burst warm': warm,
      'idle CPU, harness': (idleAfter.harnessMs - idleBefore.harnessMs) / idleSeconds,
      'idle CPU, worker': (idleAfter.workerMs - idleBefore.workerMs) / idleSeconds,
    };
  }
  const clients = mode === 'throughput' ? CLIENTS : 1;
  const durationMs = warmup ? 1_000 : quick ? 1_500 : 4_000;
  const before = split(pid);
  const start = preciseNow();
  const { calls, latencies } = await closedLoop(client, clients, start + durationMs);
  const elapsed = preciseNow() - start;
  const after = split(pid);
  const perJob = (ms: number): number => (ms / calls) * 1000;
  const cpu = {
    'CPU/job, harness': perJob(after.harnessMs - before.harnessMs),
    'CPU/job, worker': perJob(after.workerMs - before.workerMs),
    'wake-ups/job, harness': (after.harnessWakes - before.harnessWakes) / calls,
    'wake-ups/job, worker': (after.workerWakes - before.workerWakes) / calls,
  };
  if (mode === 'latency') {
    latencies.sort((a, b) => a - b);
    return { 'median latency': percentile(latencies, 0.5), ...cpu };
  }
  return { 'requests/s': (calls / elapsed) * 1000, ...cpu, 'RSS after, both': after.rssBytes / MB };
}

function serveApiCase(mode: Mode): BenchCase {
  const servers = new Map<Channel, { server: Server; client: QueueClient }>();
  const metrics: Record<string, MetricSpec> = {};
  for (const channel of CHANNELS) for (const [name, spec] of Object.entries(MODE_METRICS[mode])) metrics[`${name}, ${channel}`] = spec;
  return {
    name: CASE_NAMES[mode],
    metrics,
    ...(mode === 'restart' ? { warmup: false } : {}),
    async setup() {
      for (const channel of CHANNELS) {
        const server = await startServer(channel, mode === 'requests');
        const client = new QueueClient(server.origin, 'local', mode === 'throughput' || mode === 'burst' ? CLIENTS : 1);
        servers.set(channel, { server, client });
        await runOneJob(client, 'runsync');
      }
    },
    async measure({ index, quick, warmup }): Promise<Measurement> {
      const result: Record<string, number> = {};
      // Alternate which channel goes first, run to run (three: each goes first in turn, the order rotated).
      const order =
        CHANNELS.length === 2
          ? index % 2 === 0
            ? CHANNELS
            : [...CHANNELS].reverse()
          : CHANNELS.map((_, i) => CHANNELS[(i + index) % CHANNELS.length] as Channel);
      for (const channel of order) {
        const entry = servers.get(channel);
        if (!entry) throw new Error('not set up');
        const measured = await measureOne(mode, entry.server, entry.client, quick, warmup);
        for (const [name, value] of Object.entries(measured)) result[`${name}, ${channel}`] = value;
      }
      return result;
    },
    async teardown() {
      for (const { server, client } of servers.values()) {
        await client.close();
        await stopChild(server.child, 15_000);
      }
      servers.clear();
    },
  };
}

export const serveApiCostBenchmark: Benchmark = {
  name: 'serve-api-cost',
  title:
    '--serve-api --no-rate-limit (no-op handler), its worker joined over HTTP (SW_SERVE_API_CHANNEL=http, before issue 34) and over its IPC channel (ipc, after), alternating: /runsync latency, rate, CPU per job of each process, HTTP requests per job, burst after idle, the restart of a killed worker',
  cases: () => [serveApiCase('latency'), serveApiCase('throughput'), serveApiCase('requests'), serveApiCase('burst'), serveApiCase('restart')],
};
