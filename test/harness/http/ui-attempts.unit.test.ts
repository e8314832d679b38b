/**
 * The dashboard's attempt, scale-event and example routes over HTTP: a job taken by
 * one worker over the worker API, requeued when that worker reports itself unhealthy,
 * taken by another, refused a stale result from the first and completed by the second
 * shows both attempts with their workers, outcomes and the refused post; the
 * scale-event route says when the launcher is off; the overview carries an example
 * made from each endpoint's input schema.
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { toDocumentSchema } from '../../../packages/platform/src/harness/openapi/index.js';
import { validateInput } from '../../../src/worker/input-check.js';
import { call, errorCode, startTestServer, type TestServer } from '../../kit/index.js';

const KEY = 'ui-key';
const auth = { authorization: `Bearer ${KEY}` };
let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface AttemptsAnswer {
  attempt: number;
  retries: number;
  lost: number;
  status: string;
  attempts: Array<{ attempt: number | null; workerId?: string; outcome: string; reason?: string; stalePosts: number; startedAt?: string; endedAt?: string }>;
  limits: { maxJobs: number; maxAttemptsPerJob: number };
}

describe('dashboard attempts', () => {
  it('shows each attempt of a job whose first worker was lost: workers, outcomes, the refused stale result', async () => {
    server = await startTestServer({ apiKey: KEY });
    const base = server.endpointUrl('http-workers');
    const submitted = await call('POST', `${base}/run`, { headers: auth, body: { input: { n: 1 } } });
    const jobId = (submitted.json as { id: string }).id;
    const attemptsUrl = `${server.url}/ui/api/endpoints/http-workers/jobs/${jobId}/attempts`;

    const first = await call('GET', `${base}/job-take/worker-a`, { headers: auth });
    expect(first.json).toMatchObject({ id: jobId, attempt: 1 });
    const running = (await call('GET', attemptsUrl, { headers: auth })).json as AttemptsAnswer;
    expect(running.attempts).toMatchObject([{ attempt: 1, workerId: 'worker-a', outcome: 'running' }]);

    await call('GET', `${base}/ping/worker-a?status=unhealthy&check=cuda&reason=gone`, { headers: auth });
    const second = await call('GET', `${base}/job-take/worker-b`, { headers: auth });
    expect(second.json).toMatchObject({ id: jobId, attempt: 2 });
    const late = await call('POST', `${base}/job-done/worker-a/${jobId}?attempt=1`, { headers: auth, body: { output: 'late' } });
    expect(late.status).toBe(409);
    expect(errorCode(late)).toBe('SW_STALE_ATTEMPT');
    const done = await call('POST', `${base}/job-done/worker-b/${jobId}?attempt=2`, { headers: auth, body: { output: { ok: true } } });
    expect(done.status).toBe(200);

    const answer = await call('GET', attemptsUrl, { headers: auth });
    expect(answer.status).toBe(200);
    const view = answer.json as AttemptsAnswer;
    expect(view).toMatchObject({ status: 'COMPLETED', attempt: 2, retries: 1, lost: 1, limits: { maxJobs: 10_000, maxAttemptsPerJob: 16 } });
    expect(view.attempts).toMatchObject([
      { attempt: 1, workerId: 'worker-a', outcome: 'requeued', reason: 'requeued: its worker was declared gone (it reported itself unhealthy)', stalePosts: 1 },
      { attempt: 2, workerId: 'worker-b', outcome: 'COMPLETED', stalePosts: 0 },
    ]);
    for (const attempt of view.attempts) expect(Date.parse(attempt.endedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(attempt.startedAt ?? ''));

    expect((await call('GET', attemptsUrl)).status).toBe(401);
    const missing = await call('GET', `${server.url}/ui/api/endpoints/http-workers/jobs/nope/attempts`, { headers: auth });
    expect(missing.status).toBe(404);
    expect(errorCode(missing)).toBe('SW_JOB_NOT_FOUND');
  });

  it('answers that the launcher is off on the scale-event route, and refuses a bad max', async () => {
    server = await startTestServer({ apiKey: KEY });
    const answer = await call('GET', `${server.url}/ui/api/scale-events`, { headers: auth });
    expect(answer.json).toEqual({ launcher: false, seq: 0, events: [] });
    const bad = await call('GET', `${server.url}/ui/api/scale-events?max=0`, { headers: auth });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toContain('max must be a whole number from 1 to 5000');
  });

  it("gives the submit form an example made from an endpoint's input schema, and the API lists the schema's issues", async () => {
    const schema = z.object({ prompt: z.string().min(3), steps: z.number().int().min(1).default(4) });
    server = await startTestServer({
      apiKey: KEY,
      endpointInputs: { gen: { jsonSchema: toDocumentSchema(schema), check: (input) => validateInput(schema, input) } },
    });
    const overview = (await call('GET', `${server.url}/ui/api/overview`, { headers: auth })).json as {
      testInputGiven: boolean;
      inputExamples: Record<string, { input: unknown }>;
    };
    expect(overview.testInputGiven).toBe(false);
    expect(overview.inputExamples).toEqual({ gen: { input: { prompt: 'example prompt', steps: 4 } } });
    const accepted = await call('POST', `${server.endpointUrl('gen')}/run`, { headers: auth, body: overview.inputExamples.gen });
    expect(accepted.status).toBe(200);
    const refused = await call('POST', `${server.endpointUrl('gen')}/run`, { headers: auth, body: { input: { prompt: 1 } } });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ error: { code: 'SW_INPUT_VALIDATION', details: { issues: [{ path: 'prompt' }] } } });
  });
});
