/**
 * POST /run and POST /runsync over real HTTP: answers, ids, and the runsync wait.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/harness/index.js';
import { startTestWorker } from './helpers.js';
import { call, startTestServer, type TestServer, waitFor } from '../../kit/index.js';

let running: TestServer | undefined;
let stopWorker: (() => Promise<void>) | undefined;

afterEach(async () => {
  await stopWorker?.();
  await running?.close();
  running = undefined;
  stopWorker = undefined;
});

describe('POST /run', () => {
  it('queues the job and answers its id with IN_QUEUE', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    const answer = await call('POST', `${running.endpointUrl()}/run`, { body: { input: { n: 1 } } });
    expect(answer.status).toBe(200);
    const body = answer.json as { id: string; status: string };
    expect(body).toEqual({ id: expect.any(String), status: 'IN_QUEUE' });
    expect(body.id.startsWith('sync-')).toBe(false);
    expect((await running.harness.endpoint('ep').status(body.id)).status).toBe('IN_QUEUE');
  });

  it('runs on a worker; /status then shows the output and the times', async () => {
    running = await startTestServer();
    stopWorker = startTestWorker(running.harness, async (job: { input: unknown }) => ({ echo: job.input })).stop;
    const { id } = (await call('POST', `${running.endpointUrl()}/run`, { body: { input: { n: 1 } } })).json as { id: string };
    let view: Record<string, unknown> = {};
    await waitFor(async () => {
      view = (await call('GET', `${running!.endpointUrl()}/status/${id}`)).json as Record<string, unknown>;
      return view.status === 'COMPLETED';
    }, 'the job to complete');
    expect(view).toMatchObject({ id, status: 'COMPLETED', output: { echo: { n: 1 } } });
    expect(typeof view.delayTime).toBe('number');
    expect(typeof view.executionTime).toBe('number');
  });

  it('accepts a JSON body sent without content-type: application/json (curl -d)', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    const answer = await call('POST', `${running.endpointUrl()}/run`, {
      body: '{"input":{"a":1}}',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(answer.status).toBe(200);
  });
});

describe('POST /runsync', () => {
  it('answers the finished job: sync- id, COMPLETED, output, delayTime, executionTime', async () => {
    running = await startTestServer();
    stopWorker = startTestWorker(running.harness, async (job: { input: { word: string } }) => job.input.word.toUpperCase()).stop;
    const answer = await call('POST', `${running.endpointUrl()}/runsync`, { body: { input: { word: 'hi' } } });
    expect(answer.status).toBe(200);
    const body = answer.json as Record<string, unknown>;
    expect(body).toMatchObject({ status: 'COMPLETED', output: 'HI' });
    expect(String(body.id).startsWith('sync-')).toBe(true);
    expect(Object.keys(body).sort()).toEqual(['delayTime', 'executionTime', 'id', 'output', 'status']);
  });

  it('answers a FAILED job with its error (as JSON text, like the platform)', async () => {
    running = await startTestServer();
    stopWorker = startTestWorker(running.harness, async () => {
      throw new Error('boom');
    }).stop;
    const body = (await call('POST', `${running.endpointUrl()}/runsync`, { body: { input: {} } })).json as Record<string, unknown>;
    expect(body.status).toBe('FAILED');
    expect(JSON.parse(String(body.error))).toMatchObject({ error_message: 'boom' });
  });

  it('answers {id, status} when its wait elapses first; clients then poll', async () => {
    const clock = new ManualClock();
    running = await startTestServer({}, { clock });
    const pending = call('POST', `${running.endpointUrl()}/runsync?wait=1000`, { body: { input: {} } });
    const endpoint = running.harness.endpoint('ep');
    await waitFor(async () => (await endpoint.jobs()).length === 1, 'the job to be submitted');
    clock.advance(1000);
    const answer = await pending;
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ id: (await endpoint.jobs())[0]!.id, status: 'IN_QUEUE' });
  });
});
