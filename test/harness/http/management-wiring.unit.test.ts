/**
 * The management API on the same server: an endpoint created through /v1/endpoints
 * serves the queue API at once, also when the harness does not auto-create endpoints,
 * and stops when it is deleted; the in-process worker shows up in /v1/pods.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startTestWorker } from './helpers.js';
import { call, errorCode, startTestServer, type TestServer } from '../../kit/index.js';

let running: TestServer | undefined;
let stopWorker: (() => Promise<void>) | undefined;

afterEach(async () => {
  await stopWorker?.();
  await running?.close();
  running = undefined;
  stopWorker = undefined;
});

describe('management API wiring', () => {
  it('endpoints created and deleted through /v1 appear and disappear under /v2', async () => {
    running = await startTestServer({}, { autoCreateEndpoints: false });
    const template = (
      await call('POST', `${running.url}/v1/templates`, {
        body: { name: 'wiring', imageName: 'example/worker:1', isServerless: true, category: 'CPU' },
      })
    ).json as { id: string };
    const created = await call('POST', `${running.url}/v1/endpoints`, {
      body: { name: 'wired', templateId: template.id, workersMin: 0, workersMax: 1 },
    });
    expect(created.status).toBe(200);
    const { id } = created.json as { id: string };
    expect((await call('POST', `${running.endpointUrl(id)}/run`, { body: { input: {} } })).status).toBe(200);
    expect((await call('DELETE', `${running.url}/v1/endpoints/${id}`)).status).toBeLessThan(300);
    const gone = await call('POST', `${running.endpointUrl(id)}/run`, { body: { input: {} } });
    expect(gone.status).toBe(404);
    expect(errorCode(gone)).toBe('SW_ENDPOINT_NOT_FOUND');
  });

  it('lists the workers the harness knows as pods', async () => {
    running = await startTestServer();
    stopWorker = startTestWorker(running.harness, async () => 'ok', { workerId: 'pod-worker' }).stop;
    const pods = (await call('GET', `${running.url}/v1/pods`)).json as Array<{ id: string; endpointId: string; desiredStatus: string }>;
    expect(pods).toEqual([expect.objectContaining({ id: 'pod-worker', endpointId: 'ep', desiredStatus: 'RUNNING' })]);
    expect((await call('GET', `${running.url}/v1/pods/pod-worker`)).status).toBe(200);
  });
});
