/**
 * @module bench/cold-start
 * Cold start: from spawning a worker process to its first job-take request. A tiny
 * HTTP listener on 127.0.0.1 stands in for the platform (RUNPOD_WEBHOOK_* point at
 * it): it stamps the first job-take request (answering 204, "no job") and the bench
 * then stops the worker. Both stamps are taken in the bench process, on one clock.
 * - compiled: the worker compiled by tsc with the options of `npm run build`
 *   (tsconfig.build.json), run by plain `node`, as a worker image runs it;
 * - bundle: the worker as one esbuild bundle (plain Node ESM flags, minified), run by plain `node`;
 * - tsx: the TypeScript sources through `node --import tsx` (a laptop, not an image);
 * - node floor: a bare `node -e` script that sends one GET at once, the least any
 *   Node worker can take on this machine;
 * - dependency floor: the same after importing undici, zod, pino and prom-client, the
 *   least a worker built on them can take.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { REPO_ROOT, spawnNode, stopChild } from './lib/child.js';
import { preciseNow } from './lib/clock.js';
import { childScript, ensureCompiled, type ChildRuntime } from './lib/compiled.js';
import type { BenchCase, Benchmark } from './lib/runner.js';

type Variant = ChildRuntime | 'node floor' | 'dependency floor';

/** The runtime's dependencies a worker on the platform loads before its first take. */
const DEPENDENCIES = ['undici', 'zod', 'pino', 'prom-client'] as const;

interface Listener {
  readonly url: string;
  /** Resolves with the time of the next job-take request. */
  nextTake(): Promise<number>;
  close(): Promise<void>;
}

async function startListener(): Promise<Listener> {
  let waiter: ((at: number) => void) | undefined;
  const server: Server = createServer((req, res) => {
    const at = preciseNow();
    if (req.url?.includes('/job-take/')) {
      waiter?.(at);
      waiter = undefined;
    }
    req.resume();
    res.writeHead(req.url?.includes('/ping/') ? 200 : 204);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    nextTake: () => new Promise((resolve) => (waiter = resolve)),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function coldStartCase(variant: Variant): BenchCase {
  let listener: Listener | undefined;
  return {
    name: variant,
    metrics: { 'to first job-take': { unit: 'ms' } },
    async setup() {
      if (variant === 'compiled') ensureCompiled();
      if (variant === 'bundle' || variant === 'bundle-split') childScript('bench/children/platform-worker.ts', variant);
      listener = await startListener();
    },
    async measure() {
      if (!listener) throw new Error('not set up');
      const base = `${listener.url}/v2/cold`;
      const env = {
        RUNPOD_WEBHOOK_GET_JOB: `${base}/job-take/$ID?`,
        RUNPOD_WEBHOOK_POST_OUTPUT: `${base}/job-done/$RUNPOD_POD_ID/$ID?`,
        RUNPOD_WEBHOOK_POST_STREAM: `${base}/job-stream/$RUNPOD_POD_ID/$ID?`,
        RUNPOD_WEBHOOK_PING: `${base}/ping/$RUNPOD_POD_ID`,
        RUNPOD_POD_ID: 'cold-worker',
        RUNPOD_ENDPOINT_ID: 'cold',
      };
      const take = listener.nextTake();
      const startedAt = preciseNow();
      let child: ChildProcess;
      if (variant === 'node floor' || variant === 'dependency floor') {
        const imports = variant === 'dependency floor' ? DEPENDENCIES.map((m) => `await import(${JSON.stringify(m)});`).join(' ') : '';
        const script = `${imports} (await import('node:http')).get(process.env.URL).on('response', (r) => r.resume()).on('error', () => {});`;
        child = spawn(process.execPath, ['--input-type=module', '-e', script], {
          cwd: REPO_ROOT,
          env: { ...process.env, URL: `${base}/job-take/floor?` },
          stdio: 'ignore',
        });
      } else {
        child = spawnNode(childScript('bench/children/platform-worker.ts', variant), { env });
      }
      try {
        const at = await Promise.race([
          take,
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no job-take within 30 s')), 30_000).unref()),
        ]);
        return { 'to first job-take': at - startedAt };
      } finally {
        await stopChild(child, 5_000);
      }
    },
    async teardown() {
      await listener?.close();
    },
  };
}

export const coldStartBenchmark: Benchmark = {
  name: 'cold-start',
  title: 'Process start to the first job-take request: compiled JS, an esbuild bundle, tsx, a bare node floor and a dependency floor',
  cases: () => [coldStartCase('compiled'), coldStartCase('bundle'), coldStartCase('bundle-split'), coldStartCase('tsx'), coldStartCase('node floor'), coldStartCase('dependency floor')],
};
