/**
 * Load only what a mode needs: a platform worker process (the package index imported,
 * serve() in platform mode, one job served) resolves no module of fastify, undici,
 * prom-client, execa or commander; the metrics port and the GPU tools are off. Every
 * module resolution (ESM imports and CommonJS requires) is recorded by a resolve hook.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseJobRequest } from '../../src/job/index.js';
import { startWorkerApiServer, type RunningWorkerApi } from '../harness/http/worker-api/worker-api-server.js';
import { within } from '../kit/index.js';
import { killAllWorkers, startWorkerProcess } from './worker-process.js';

const dir = mkdtempSync(join(tmpdir(), 'sw-lazy-'));
let server: RunningWorkerApi | undefined;

afterAll(async () => {
  await killAllWorkers();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a platform worker process', () => {
  it('loads none of fastify, undici, prom-client, execa, commander', { timeout: 90_000 }, async () => {
    server = await startWorkerApiServer({ liveness: { pingIntervalMs: 500, missedPings: 6 }, longPollMs: 5_000 });
    const file = join(dir, 'packages.txt');
    const hook = new URL('./fixtures/record-packages.mjs', import.meta.url).href;
    // Every package from node_modules, as an installed SDK loads them (the test bundle would hold some: compiled-fixtures.ts).
    const worker = startWorkerProcess('lazy-1', { ...server.envFor('lazy', 500), NODE_OPTIONS: `--import ${hook}`, SW_TEST_PACKAGES_FILE: file }, undefined, {
      packages: 'imported',
    });
    const endpoint = server.harness.endpoint('lazy');
    const job = await endpoint.submit(parseJobRequest({ input: { tag: 'lazy' } }));
    expect(await endpoint.waitForEnd(job.id, 60_000), worker.stderr().slice(-2_000)).toMatchObject({ status: 'COMPLETED' });
    worker.signal('SIGTERM');
    await within(worker.exited, 'the worker to exit', 20_000);
    const packages = new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean));
    console.log(`packages resolved by a platform worker: ${[...packages].sort().join(', ')}`);
    // The hook works: what the platform path needs is there.
    expect(packages).toContain('pino');
    expect(packages).toContain('zod');
    for (const heavy of ['fastify', 'undici', 'prom-client', 'execa', 'commander', 'pino-pretty']) expect(packages, heavy).not.toContain(heavy);
  });
});
