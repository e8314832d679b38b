/**
 * @module bench/ceiling
 * What loopback HTTP itself allows on this machine: a bare undici POST loop (in its own
 * process, like the worker) against a bare `node:http` server and against a bare
 * fastify route (in the bench process, like the harness), each answering `{}`. A
 * dispatched job costs two such requests (job-take and job-done), so half the bare
 * rate is the most the dispatch benchmark can reach; anything above that in the
 * targets is out of reach on this machine, whatever the runtime does. The same loop
 * with 1 MB bodies, and the JSON work a 1 MB chunk needs, bound large-text streaming.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { ForkedChild, repoPath } from './lib/child.js';
import { ownCpuMs, readProc } from './lib/proc.js';
import type { BenchCase, Benchmark } from './lib/runner.js';

interface Done {
  readonly type: 'done';
  readonly requests: number;
  readonly elapsedMs: number;
  readonly p50: number;
  readonly p99: number;
}

type ServerKind = 'node:http' | 'fastify';

async function startServer(kind: ServerKind): Promise<{ url: string; close(): Promise<void> }> {
  if (kind === 'node:http') {
    const server: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) };
  }
  const app: FastifyInstance = Fastify({ logger: false });
  app.post('/', async () => ({}));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, close: () => app.close() };
}

function ceilingCase(kind: ServerKind, concurrency: number, textBytes = 0): BenchCase {
  let server: { url: string; close(): Promise<void> } | undefined;
  let client: ForkedChild | undefined;
  return {
    name: `${kind}, concurrency ${concurrency}${textBytes > 0 ? `, ${textBytes / 1e6} MB bodies` : ''}`,
    metrics: {
      ...(textBytes > 0 ? { 'MB/s': { unit: 'MB/s' } } : {}),
      'requests/s': { unit: 'req/s' },
      'jobs/s bound': { unit: 'jobs/s' },
      'latency p50': { unit: 'ms' },
      'latency p99': { unit: 'ms' },
      'client CPU/req': { unit: 'µs' },
      'server CPU/req': { unit: 'µs' },
    },
    async setup() {
      server = await startServer(kind);
      client = new ForkedChild(repoPath('bench/children/bare-client.ts'));
      await client.next('ready', 30_000);
    },
    async measure({ quick, warmup }) {
      if (!server || !client) throw new Error('not set up');
      const durationMs = warmup ? 500 : quick ? 1_000 : 2_000;
      const pid = client.process.pid ?? 0;
      const clientCpu = readProc(pid)?.cpuMs ?? Number.NaN;
      const serverCpu = ownCpuMs();
      const done = await client.ask<Done>({ type: 'go', url: server.url, concurrency, durationMs, textBytes }, 'done', durationMs + 30_000);
      const rate = (done.requests / done.elapsedMs) * 1000;
      return {
        ...(textBytes > 0 ? { 'MB/s': (rate * textBytes) / 1e6 } : {}),
        'requests/s': rate,
        'jobs/s bound': rate / 2,
        'latency p50': done.p50,
        'latency p99': done.p99,
        'client CPU/req': (((readProc(pid)?.cpuMs ?? Number.NaN) - clientCpu) / done.requests) * 1000,
        'server CPU/req': ((ownCpuMs() - serverCpu) / done.requests) * 1000,
      };
    },
    async teardown() {
      await client?.stop();
      await server?.close();
    },
  };
}

/**
 * What a 1 MB text chunk costs in JSON alone, in one process: the worker serializes the
 * post body and the harness parses it, one chunk after the other (one in-order post per
 * chunk), so MB/s through the platform transport cannot pass 1 / (stringify + parse).
 */
function jsonCase(): BenchCase {
  const text = 'lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(20_000).slice(0, 1_000_000);
  return {
    name: 'JSON of a 1 MB text chunk (stringify + parse)',
    metrics: { 'stringify ms/MB': { unit: 'ms' }, 'parse ms/MB': { unit: 'ms' }, 'MB/s bound': { unit: 'MB/s' } },
    async measure() {
      const n = 40;
      let body = '';
      let t = performance.now();
      for (let i = 0; i < n; i++) body = JSON.stringify({ output: text, metrics: { stream_index: i } });
      const stringifyMs = (performance.now() - t) / n;
      t = performance.now();
      for (let i = 0; i < n; i++) JSON.parse(body);
      const parseMs = (performance.now() - t) / n;
      return { 'stringify ms/MB': stringifyMs, 'parse ms/MB': parseMs, 'MB/s bound': 1000 / (stringifyMs + parseMs) };
    },
  };
}

export const ceilingBenchmark: Benchmark = {
  name: 'ceiling',
  title: 'Bare undici POST loop to a bare node:http server and a bare fastify route on loopback: the physical ceiling',
  cases: () => [
    ceilingCase('node:http', 1),
    ceilingCase('node:http', 64),
    ceilingCase('fastify', 1),
    ceilingCase('fastify', 64),
    ceilingCase('node:http', 1, 1_000_000),
    jsonCase(),
  ],
};
