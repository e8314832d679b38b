/**
 * What the job page's GPU line says of a job run by a launched worker (issue 48 item 7),
 * against a harness of our own (dashboard-fixture.ts) whose launcher runs a real worker
 * process: the harness takes no GPU reading for it, and the page says that the worker
 * reads its own and where its figures are, not that "no GPU reading was taken while an
 * in-process worker ran it". A job of the in-process worker is described as that worker's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchOkJson } from '../kit/index.js';
import { API_KEY, ENDPOINT, WORKER_IMAGE, startDashboardFixture, type DashboardFixture } from './dashboard-fixture.js';

let fixture: DashboardFixture;
const auth = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

beforeAll(async () => {
  fixture = await startDashboardFixture();
}, 60_000);

afterAll(async () => {
  await fixture?.close();
});

function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  return fetchOkJson<T>(`${fixture.server.url}${path}`, method, body, auth);
}

interface Detail {
  status: string;
  workerId?: string;
  gpu: { available: false; reason: string } | { available: true };
}

describe("the job page's GPU line says what is true of the worker that ran the job", () => {
  it('a launched worker: it reads its own GPUs, the harness takes none for it', { timeout: 120_000 }, async () => {
    const template = await call<{ id: string }>('POST', '/v1/templates', {
      name: 'gpu-reason-template',
      imageName: WORKER_IMAGE,
      isServerless: true,
      category: 'CPU',
    });
    const endpoint = await call<{ id: string }>('POST', '/v1/endpoints', { name: 'gpu-reason', templateId: template.id, workersMin: 1, workersMax: 1 });
    try {
      const job = await call<{ id: string }>('POST', `/v2/${endpoint.id}/run`, { input: { tag: 'gpu' } });
      await fixture.harness.endpoint(endpoint.id).waitForEnd(job.id, 90_000);
      const detail = await call<Detail>('GET', `/ui/api/endpoints/${endpoint.id}/jobs/${job.id}`);
      expect(detail.status).toBe('COMPLETED');
      expect(detail.gpu.available).toBe(false);
      const reason = detail.gpu.available ? '' : detail.gpu.reason;
      expect(reason).toBe(
        `${detail.workerId} ran it: a worker process this harness launched, which reads its own GPUs; the harness takes no reading for it, its GPU use is in its own job-finished log line (in the log lines below, when the harness captures them)`,
      );
      expect(reason).not.toContain('while an in-process worker ran it');
    } finally {
      await call('DELETE', `/v1/endpoints/${endpoint.id}`);
    }
  });

  it("the in-process worker's job, and a job no worker took yet", async () => {
    const endpoint = fixture.harness.endpoint(ENDPOINT);
    const { id } = await endpoint.submit({ input: { mode: 'echo' } });
    await endpoint.waitForEnd(id, 20_000);
    const ran = await call<Detail>('GET', `/ui/api/endpoints/${ENDPOINT}/jobs/${id}`);
    expect(ran.gpu.available ? '' : ran.gpu.reason).toBe(
      `this harness has no GPU source: only in-process workers (--serve-api with GPU sampling) report it here; ${fixture.worker.transport.workerId} ran it`,
    );
    const queued = await fixture.harness.endpoint('gpu-reason-queued').submit({ input: {} });
    const waiting = await call<Detail>('GET', `/ui/api/endpoints/gpu-reason-queued/jobs/${queued.id}`);
    expect(waiting.gpu.available ? '' : waiting.gpu.reason).toBe('no worker has run it yet');
  });
});
