/**
 * @module bench/serve-api-cost
 * What the supervised worker of `--serve-api` costs per job (issue 24): the compiled
 * bench worker (no-op handler) run as `worker.js --serve-api --port 0 --no-rate-limit`,
 * its CPU and RSS summed over the process and every descendant (since issue 24 the
 * worker is a child process joined over the worker API; before, it ran in the same
 * process through the in-process transport). Cases:
 * - `runsync, 1 client`: sequential POST /runsync on one keep-alive connection: median
 *   and 99th-percentile latency, CPU per job of every process;
 * - `runsync, 8 clients`: closed loop of 8 keep-alive clients: requests/s, CPU per job,
 *   RSS of every process at the end;
 * - `worker restart`: SIGKILL the worker child, then time a /runsync from the kill to
 *   its answer (a new child started, ready, and ran it); NaN when there is no child.
 * Run it in two checkouts for a before/after (bench/README.md says how).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { REPO_ROOT, childExecArgv, stopChild, track } from './lib/child.js';
import { childScript } from './lib/compiled.js';
import { QueueClient, preciseNow, runOneJob } from './lib/http-client.js';
import { processTree, readProcTree } from './lib/proc.js';
import type { BenchCase, Benchmark, Measurement, MetricSpec } from './lib/runner.js';

const MB = 1024 * 1024;
const CLIENTS = 8;

interface Server {
  readonly child: ChildProcess;
  readonly origin: string;
}

async function startServer(): Promise<Server> {
  const script = await childScript('bench/children/platform-worker.ts', 'compiled');
  const child = track(
    spawn(process.execPath, [...childExecArgv(script), script, '--serve-api', '--port', '0', '--no-rate-limit'], {
      cwd: REPO_ROOT,
      env: { ...process.env, BENCH_CONCURRENCY: String(CLIENTS), LOG_LEVEL: 'info' },
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
  return { child, origin };
}

/** The worker process under `pid` (a node process, not the watchdog's), if any. */
function workerChild(pid: number): number | undefined {
  return processTree(pid).find((member) => member !== pid);
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
}

type Mode = 'latency' | 'throughput' | 'restart';

function serveApiCase(mode: Mode): BenchCase {
  let server: Server | undefined;
  let client: QueueClient | undefined;
  const metrics: Record<string, MetricSpec> =
    mode === 'latency'
      ? { 'median latency': { unit: 'ms', digits: 3 }, 'p99 latency': { unit: 'ms', digits: 3 }, 'CPU/job, all processes': { unit: 'µs' } }
      : mode === 'throughput'
        ? { 'requests/s': { unit: 'req/s' }, 'CPU/job, all processes': { unit: 'µs' }, 'RSS after, all processes': { unit: 'MiB' } }
        : { 'kill to answer': { unit: 'ms' } };
  return {
    name: mode === 'latency' ? 'runsync, 1 client' : mode === 'throughput' ? `runsync, ${CLIENTS} clients` : 'worker restart',
    metrics,
    ...(mode === 'restart' ? { warmup: false } : {}),
    async setup() {
      server = await startServer();
      client = new QueueClient(server.origin, 'local', mode === 'throughput' ? CLIENTS : 1);
      await runOneJob(client, 'runsync');
    },
    async measure({ quick, warmup }): Promise<Measurement> {
      if (!client || !server) throw new Error('not set up');
      const pid = server.child.pid ?? 0;
      const c = client;
      if (mode === 'restart') {
        const worker = workerChild(pid);
        if (worker === undefined) return { 'kill to answer': Number.NaN };
        const start = preciseNow();
        process.kill(worker, 'SIGKILL');
        await runOneJob(c, 'runsync');
        return { 'kill to answer': preciseNow() - start };
      }
      const durationMs = warmup ? 1_000 : quick ? 1_500 : 4_000;
      const before = readProcTree(pid) ?? { cpuMs: Number.NaN, rssBytes: Number.NaN };
      const start = preciseNow();
      const until = start + durationMs;
      const latencies: number[] = [];
      let calls = 0;
      await Promise.all(
        Array.from({ length: mode === 'throughput' ? CLIENTS : 1 }, async () => {
          while (preciseNow() < until) {
            const sent = preciseNow();
            await runOneJob(c, 'runsync');
            latencies.push(preciseNow() - sent);
            calls++;
          }
        }),
      );
      const elapsed = preciseNow() - start;
      const after = readProcTree(pid) ?? { cpuMs: Number.NaN, rssBytes: Number.NaN };
      const cpuPerJob = ((after.cpuMs - before.cpuMs) / calls) * 1000;
      if (mode === 'latency') {
        latencies.sort((a, b) => a - b);
        return { 'median latency': percentile(latencies, 0.5), 'p99 latency': percentile(latencies, 0.99), 'CPU/job, all processes': cpuPerJob };
      }
      return { 'requests/s': (calls / elapsed) * 1000, 'CPU/job, all processes': cpuPerJob, 'RSS after, all processes': after.rssBytes / MB };
    },
    async teardown() {
      await client?.close();
      if (server) await stopChild(server.child, 15_000);
    },
  };
}

export const serveApiCostBenchmark: Benchmark = {
  name: 'serve-api-cost',
  title: '--serve-api --no-rate-limit (no-op handler): /runsync latency, CPU per job and RSS of every process, and the restart of a killed worker',
  cases: () => [serveApiCase('latency'), serveApiCase('throughput'), serveApiCase('restart')],
};
