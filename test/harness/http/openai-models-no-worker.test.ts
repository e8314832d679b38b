/**
 * `GET .../openai/v1/models` with no worker (issue 32 item 8): answered at once with 400
 * SW_NO_WORKER_AVAILABLE in OpenAI's error shape, and no job is left queued (it used to
 * queue a job nobody took and wait the whole OpenAI timeout, 600 s by default). With a
 * worker polling, the same call runs as a job and answers the worker's models.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openAiHandler } from '../../../examples/openai/handler.js';
import { startTestWorker } from './helpers.js';
import { call, eventually, startTestServer, type TestServer } from '../../kit/index.js';

let server: TestServer | undefined;
let stopWorker: (() => Promise<void>) | undefined;

afterEach(async () => {
  await stopWorker?.();
  stopWorker = undefined;
  await server?.close();
  server = undefined;
});

describe('GET openai/v1/models', () => {
  it('answers 400 SW_NO_WORKER_AVAILABLE at once when no worker serves the endpoint, and queues nothing', async () => {
    // A 60 s OpenAI wait: the old behaviour outlives the 15 s the call is given.
    server = await startTestServer({ openaiTimeoutMs: 60_000 });
    const answer = await call('GET', `${server.endpointUrl()}/openai/v1/models`, { signal: AbortSignal.timeout(15_000) });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: { code: 'SW_NO_WORKER_AVAILABLE' } });
    expect(JSON.stringify(answer.json)).toContain('No worker serves endpoint ep');
    const health = await call('GET', `${server.endpointUrl()}/health`);
    expect(health.json).toMatchObject({ jobs: { inQueue: 0, inProgress: 0 } });
  });

  it('runs as a job once a worker polls, and answers its models', async () => {
    server = await startTestServer({ openaiTimeoutMs: 60_000 });
    const running = server;
    stopWorker = startTestWorker(running.harness, openAiHandler as never).stop;
    await eventually(async () => expect((await call('GET', `${running.endpointUrl()}/health`)).json).toMatchObject({ workers: { idle: 1 } }), 10_000, 50);
    const answer = await call('GET', `${running.endpointUrl()}/openai/v1/models`, { signal: AbortSignal.timeout(30_000) });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ object: 'list' });
  });
});
