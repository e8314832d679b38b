/**
 * Issue 46 item 5: a worker on the platform transport gives back the heap a burst of jobs
 * grew once the jobs stop (src/local/idle-compaction.ts), as the worker child of
 * `--serve-api` did alone before. Seen in a real worker process
 * (test/platform/fixtures/idle-compaction-worker.ts): after the burst, with no job in flight,
 * the SDK asks for a memory collection (its diagnostics channel) and Node reports a full
 * collection from that moment on.
 * `idleCompactionMs: 100` in the fixture: the full step 100 ms after the quiet one (5.5 s
 * without a collection), not the default minute.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseJobRequest } from '../../src/job/index.js';
import { startWorkerApiServer, type RunningWorkerApi } from '../harness/http/worker-api/worker-api-server.js';
import { waitFor } from '../kit/index.js';
import { killAllWorkers, startWorkerProcess } from './worker-process.js';

const ENDPOINT = 'idle';
const FIXTURE = new URL('./fixtures/idle-compaction-worker.ts', import.meta.url).pathname;
const JOBS = 600;

let server: RunningWorkerApi | undefined;

afterEach(async () => {
  await killAllWorkers();
  await server?.close();
  server = undefined;
});

describe('a platform worker after a burst of jobs', () => {
  it('runs full collections of its own once no job is in flight', { timeout: 120_000 }, async () => {
    server = await startWorkerApiServer({ longPollMs: 5_000 });
    const running = server;
    const worker = startWorkerProcess('idle-a', running.envFor(ENDPOINT), FIXTURE);
    const endpoint = running.harness.endpoint(ENDPOINT);
    for (let i = 0; i < JOBS; i++) await endpoint.submit(parseJobRequest({ input: { i } }));
    await waitFor(async () => (await endpoint.health()).jobs.completed === JOBS, `${JOBS} jobs completed`, 90_000, 100);
    const burstEnded = Date.now();
    const asked = await worker.waitForEvent(
      (event) => event.event === 'memory-collection' && event.at >= burstEnded,
      'a memory collection after the burst',
      60_000,
    );
    const startedAt = (asked as { startedAt?: number }).startedAt ?? Number.POSITIVE_INFINITY;
    const full = await worker.waitForEvent(
      (event) => event.event === 'major-gc' && ((event as { startTime?: number }).startTime ?? 0) >= startedAt,
      'a full collection reported from its start on',
      10_000,
    );
    expect(full.at).toBeGreaterThanOrEqual(burstEnded);
    expect((await endpoint.health()).jobs).toMatchObject({ completed: JOBS, inProgress: 0 });
  });
});
