/**
 * @module bench/cold-start
 * Cold start: from spawning a worker process to its first job-take request. A tiny
 * HTTP listener on 127.0.0.1 stands in for the platform (RUNPOD_WEBHOOK_* point at
 * it): it stamps the first job-take request (answering 204, "no job") and the bench
 * then stops the worker. Both stamps are taken in the bench process, on one clock.
 * - compiled: the worker compiled by tsc with the options of `npm run build`
 *   (tsconfig.build.json), run by plain `node`, as a worker image runs it;
 * - bundle: the worker as `serverless-worker build` writes it, run by plain `node`;
 * - image command: the same as the images start it, `node --enable-source-maps`;
 * - image command, split: `build --splitting`, started the same way;
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
import { childScript, type ChildRuntime } from './lib/compiled.js';
import type { BenchCase, Benchmark } from './lib/runner.js';

type Variant = 'compiled' | 'tsx' | 'bundle' | 'image command' | 'image command, split' | 'node floor' | 'dependency floor';

/** How each worker variant runs: the build and node's flags. */
const WORKER_VARIANTS: Readonly<Record<Exclude<Variant, 'node floor' | 'dependency floor'>, { runtime: ChildRuntime; nodeArgs: string[] }>> = {
  compiled: { runtime: 'compiled', nodeArgs: [] },
  tsx: { runtime: 'tsx', nodeArgs: [] },
  bundle: { runtime: 'bundle', nodeArgs: [] },
  'image command': { runtime: 'bundle', nodeArgs: ['--enable-source-maps'] },
  'image command, split': { runtime: 'bundle-split', nodeArgs: ['--enable-source-maps'] },
};

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
      if (variant !== 'node floor' && variant !== 'dependency floor') await childScript('bench/children/platform-worker.ts', WORKER_VARIANTS[variant].runtime);
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
        const { runtime, nodeArgs } = WORKER_VARIANTS[variant];
        child = spawnNode(await childScript('bench/children/platform-worker.ts', runtime), { env, nodeArgs });
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
  cases: () => [
    coldStartCase('compiled'),
    coldStartCase('bundle'),
    coldStartCase('image command'),
    coldStartCase('image command, split'),
    coldStartCase('tsx'),
    coldStartCase('node floor'),
    coldStartCase('dependency floor'),
  ],
};
