/**
 * The routes about a whole endpoint over real HTTP: /purge-queue, /health, /requests.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/harness/index.js';
import type { RequestsListing } from '../../../packages/platform/src/harness/server-api.js';
import { startTestWorker, submit } from './helpers.js';
import { call, errorCode, startTestServer, type TestServer } from '../../kit/index.js';

let running: TestServer | undefined;
let stopWorker: (() => Promise<void>) | undefined;

afterEach(async () => {
  await stopWorker?.();
  await running?.close();
  running = undefined;
  stopWorker = undefined;
});

describe('POST /purge-queue', () => {
  it('removes every queued job, answers the count, and leaves running jobs alone', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    const url = running.endpointUrl();
    const endpoint = running.harness.endpoint('ep');
    const ids = [await submit(url), await submit(url), await submit(url)];
    await endpoint.tryTake('w', 1);
    const answer = await call('POST', `${url}/purge-queue`);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ removed: 2, status: 'completed' });
    expect((await call('GET', `${url}/status/${ids[0]}`)).json).toMatchObject({ status: 'IN_PROGRESS' });
    expect((await call('GET', `${url}/status/${ids[1]}`)).status).toBe(404);
    expect((await call('GET', `${url}/status/${ids[2]}`)).status).toBe(404);
    expect((await call('POST', `${url}/purge-queue`)).json).toEqual({ removed: 0, status: 'completed' });
  });
});

describe('GET /health', () => {
  it('counts jobs and workers in the spec shape', async () => {
    running = await startTestServer();
    stopWorker = startTestWorker(running.harness, async () => 'ok').stop;
    await call('POST', `${running.endpointUrl()}/runsync`, { body: { input: {} } });
    const answer = await call('GET', `${running.endpointUrl()}/health`);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      jobs: { completed: 1, failed: 0, inProgress: 0, inQueue: 0, retried: 0 },
      workers: { idle: 1, running: 0, initializing: 0, ready: 1, throttled: 0 },
    });
  });
});

describe('GET /requests', () => {
  it('lists the endpoint jobs newest first, filtered by status and cut at limit', async () => {
    const clock = new ManualClock();
    running = await startTestServer({}, { clock });
    const url = running.endpointUrl();
    const endpoint = running.harness.endpoint('ep');
    const first = await submit(url, { input: {}, webhook: 'http://127.0.0.1:9/hook' });
    clock.advance(1_000);
    const second = await submit(url);
    clock.advance(1_000);
    const third = await submit(url);
    await endpoint.tryTake('w', 1);
    clock.advance(500);
    await endpoint.complete(first, 'w', { kind: 'output', output: 'x' });

    const all = (await call('GET', `${url}/requests`)).json as RequestsListing;
    expect(all.endpointId).toBe('ep');
    expect(all.total).toBe(3);
    expect(all.limit).toBe(100);
    expect(all.requests.map((r) => r.id)).toEqual([third, second, first]);
    expect(all.requests[2]).toEqual({
      id: first,
      status: 'COMPLETED',
      kind: 'run',
      submittedAt: new Date(clock.now() - 2_500).toISOString(),
      startedAt: new Date(clock.now() - 500).toISOString(),
      endedAt: new Date(clock.now()).toISOString(),
      delayTime: 2_000,
      executionTime: 500,
      retries: 0,
      expiresAt: new Date(clock.now() - 2_500 + 86_400_000).toISOString(),
      chunks: 0,
      unreadChunks: 0,
      webhook: true,
    });

    const queued = (await call('GET', `${url}/requests?status=in_queue&limit=1`)).json as RequestsListing;
    expect(queued.total).toBe(2);
    expect(queued.requests.map((r) => r.id)).toEqual([third]);
    const several = (await call('GET', `${url}/requests?status=COMPLETED,IN_QUEUE`)).json as RequestsListing;
    expect(several.total).toBe(3);
  });

  it('400 for a bad status or limit', async () => {
    running = await startTestServer();
    for (const query of ['status=DONE', 'limit=0', 'limit=1001', 'limit=x']) {
      const answer = await call('GET', `${running.endpointUrl()}/requests?${query}`);
      expect(answer.status, query).toBe(400);
      expect(errorCode(answer)).toBe('SW_INVALID_REQUEST');
    }
  });
});
