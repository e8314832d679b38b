/**
 * @module bench/local-api
 * Issue 19's table 2: the local API as a worker author starts it, `node worker.js
 * --serve-api --port 0 --no-rate-limit` (the compiled bench worker, no-op handler,
 * concurrency 8, default logger to stderr, which the bench discards), against 8
 * keep-alive undici clients in the bench process, closed loop:
 * - `runsync, 8 clients`: POST /runsync; requests/s, server CPU per request (/proc of the
 *   server and its worker child process since issue 24, every thread), their RSS at the end of the run;
 * - `run+status, 8 clients`: POST /run, then GET /status until COMPLETED: pairs/s (one
 *   /run and its /status calls), status calls per pair;
 * - `floor: node:http, 8 clients`: a bare `node:http` server in its own process
 *   answering a fixed job view to every POST: the most 8 clients get from loopback HTTP
 *   on this machine in this run, and the least server CPU a request can cost. The
 *   issue's targets are ratios (2x the Python SDK's local API, which is not installable
 *   here: bench/README.md), so the run reports each figure against this floor.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { REPO_ROOT, childExecArgv, stopChild, track } from './lib/child.js';
import { childScript } from './lib/compiled.js';
import { QueueClient, preciseNow, runOneJob } from './lib/http-client.js';
import { readProcTree } from './lib/proc.js';
import type { BenchCase, Benchmark } from './lib/runner.js';

const MB = 1024 * 1024;
const CLIENTS = 8;

type Mode = 'runsync' | 'run+status' | 'floor';

interface Server {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly endpointId: string;
}

/** The floor: a bare node:http server answering a completed job view to every request. */
const FLOOR_SCRIPT = `
const body = JSON.stringify({ id: 'floor-job', status: 'COMPLETED', output: {} });
const server = require('node:http').createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(body); });
});
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => process.stdout.write('listening http://127.0.0.1:' + server.address().port + '/v2/floor\\n'));
process.on('SIGTERM', () => process.exit(0));
`;

async function startServer(mode: Mode): Promise<Server> {
  let child: ChildProcess;
  if (mode === 'floor') {
    child = track(spawn(process.execPath, [...childExecArgv('floor.js'), '-e', FLOOR_SCRIPT], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'ignore'] }));
  } else {
    const script = await childScript('bench/children/platform-worker.ts', 'compiled');
    child = track(
      spawn(process.execPath, [...childExecArgv(script), script, '--serve-api', '--port', '0', '--no-rate-limit'], {
        cwd: REPO_ROOT,
        env: { ...process.env, BENCH_CONCURRENCY: String(CLIENTS), LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', process.env.BENCH_VERBOSE ? 'inherit' : 'ignore'],
      }),
    );
  }
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no address from the ${mode} server within 30 s: ${out}`)), 30_000);
    child.stdout?.on('data', (data: Buffer) => {
      out += data.toString();
      const match = /http:\/\/127\.0\.0\.1:\d+\/v2\/[\w-]+/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[0]);
      }
    });
    child.once('exit', (code) => reject(new Error(`the ${mode} server exited (${code}) before listening: ${out}`)));
  });
  // Keep reading its stdout, so that the pipe never fills.
  child.stdout?.resume();
  const url = new URL(base);
  return { child, origin: url.origin, endpointId: url.pathname.split('/')[2] ?? 'local' };
}

function localApiCase(mode: Mode): BenchCase {
  let server: Server | undefined;
  let client: QueueClient | undefined;
  return {
    name: mode === 'floor' ? `floor: node:http, ${CLIENTS} clients` : `${mode}, ${CLIENTS} clients`,
    metrics: {
      [mode === 'run+status' ? 'pairs/s' : 'requests/s']: { unit: 'req/s' },
      ...(mode === 'run+status' ? { 'status calls/pair': { unit: '', digits: 2 } } : {}),
      'server CPU/req': { unit: 'µs' },
      'server RSS after': { unit: 'MiB' },
    },
    async setup() {
      server = await startServer(mode);
      client = new QueueClient(server.origin, server.endpointId, CLIENTS);
    },
    async measure({ quick, warmup }) {
      if (!client || !server) throw new Error('not set up');
      const durationMs = warmup ? 1_000 : quick ? 1_500 : 4_000;
      const pid = server.child.pid ?? 0;
      const cpuBefore = readProcTree(pid)?.cpuMs ?? Number.NaN;
      const start = preciseNow();
      const until = start + durationMs;
      let calls = 0;
      let polls = 0;
      const c = client;
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (preciseNow() < until) {
            const statusCalls = await runOneJob(c, mode === 'floor' ? 'runsync' : mode);
            polls += statusCalls;
            calls++;
          }
        }),
      );
      const elapsed = preciseNow() - start;
      const after = readProcTree(pid);
      const rate = (calls / elapsed) * 1000;
      return {
        [mode === 'run+status' ? 'pairs/s' : 'requests/s']: rate,
        ...(mode === 'run+status' ? { 'status calls/pair': polls / calls } : {}),
        // Per /runsync; per pair (one /run and its /status calls) for run+status.
        'server CPU/req': (((after?.cpuMs ?? Number.NaN) - cpuBefore) / calls) * 1000,
        'server RSS after': (after?.rssBytes ?? Number.NaN) / MB,
      };
    },
    async teardown() {
      await client?.close();
      // SIGTERM: --serve-api stops cleanly, so that BENCH_CPU_PROF gets its profile.
      if (server) await stopChild(server.child, 10_000);
    },
  };
}

export const localApiBenchmark: Benchmark = {
  name: 'local-api',
  title: `--serve-api --no-rate-limit (no-op handler) under ${CLIENTS} keep-alive clients: /runsync, /run+/status, against a bare node:http floor`,
  cases: () => [localApiCase('floor'), localApiCase('runsync'), localApiCase('run+status')],
};
