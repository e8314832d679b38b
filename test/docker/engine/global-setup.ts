/**
 * Vitest global setup: one private Docker engine for the whole test run, started lazily
 * (the pattern of test/postgres/global-setup.ts). This setup only opens a small HTTP
 * broker on 127.0.0.1 (its URL reaches the test processes through `provide`); the first
 * test that asks (test/docker/engine/use-docker-engine.ts) makes it start dockerd, once,
 * and each stand-in base image is built on the first ask for it. The teardown removes the
 * containers and stops dockerd and its containerd: nothing is left running. A run without
 * Docker tests costs one idle socket.
 *
 * `SW_TEST_DOCKER_HOST=unix:///path/docker.sock` uses an engine of your own instead (left
 * running, its images and build cache kept: quicker when working on these tests; the
 * stand-ins are built on it, which needs root for debootstrap).
 *
 *   GET /engine                  -> { socketPath, host }
 *   GET /base?kind=node&node=24  -> { tag }   (kind: node | cuda | rocm)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';
import * as z from 'zod';
import { startDockerEngine, type DockerEngine } from './docker-engine.js';
import { standInBuilder } from './stand-in-base.js';
import { makeEagerly } from '../../setup/eager-setup.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the broker that starts (once) the run's Docker engine and builds stand-in bases. */
    dockerBrokerUrl: string;
  }
}

const BaseQuery = z.object({
  kind: z.enum(['node', 'cuda', 'rocm']),
  node: z.coerce.number().int().min(18).max(40).default(24),
});

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let starting: Promise<DockerEngine> | undefined;
  let builder: ReturnType<typeof standInBuilder> | undefined;
  const engine = (): Promise<DockerEngine> => {
    const own = process.env.SW_TEST_DOCKER_HOST;
    starting ??= own
      ? Promise.resolve({ socketPath: own.replace(/^unix:\/\//, ''), host: own, dir: '', env: { DOCKER_HOST: own }, stop: () => Promise.resolve() })
      : startDockerEngine();
    return starting;
  };
  const answer = async (url: URL): Promise<unknown> => {
    const started = await engine();
    if (url.pathname === '/engine') return { socketPath: started.socketPath, host: started.host };
    if (url.pathname === '/base') {
      const query = BaseQuery.parse(Object.fromEntries(url.searchParams));
      builder ??= standInBuilder(started);
      return { tag: await builder(query.kind, query.node) };
    }
    throw new Error(`no route ${url.pathname}; expected /engine or /base?kind=node|cuda|rocm&node=<major>`);
  };
  const broker = createServer((request, reply) => {
    answer(new URL(request.url ?? '/', 'http://broker')).then(
      (body) => reply.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
      (error: unknown) =>
        reply.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: error instanceof Error ? error.message : String(error) })),
    );
    request.resume();
  });
  // Stand-in builds take minutes on a fresh machine: no socket timeout on the broker.
  broker.requestTimeout = 0;
  broker.headersTimeout = 0;
  broker.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => broker.listen(0, '127.0.0.1', resolve));
  const { port } = broker.address() as AddressInfo;
  project.provide('dockerBrokerUrl', `http://127.0.0.1:${port}`);
  // `npm test`: the engine and the stand-ins the tests ask for made from the start, after the pack
  // (test/setup/eager-setup.ts); the Node one first (the most asked, and the longest to build).
  for (const base of ['kind=node&node=24', 'kind=cuda', 'kind=rocm'])
    makeEagerly(`Docker stand-in ${base}`, () => answer(new URL(`/base?${base}`, 'http://broker')));
  return async () => {
    broker.close();
    const started = starting ? await starting.catch(() => undefined) : undefined;
    if (started?.dir) {
      // Its folder holds every layer built in the run (GBs of node_modules): removing it
      // takes a while on a busy disk, so the time is shown.
      const stopping = performance.now();
      await started.stop();
      console.log(`[docker] test engine stopped and its folder removed in ${((performance.now() - stopping) / 1000).toFixed(1)} s`);
    }
  };
}
