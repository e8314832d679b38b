/**
 * The dashboard's routes over HTTP (no browser): the page and its modules are public,
 * every data route answers 401 without the key like every other route, `dashboard:
 * false` leaves /ui out, the jobs route pages, filters and searches (its time at 100 000
 * retained jobs is bench/dashboard.bench.ts's), and the live hub streams a job's chunks in order,
 * holding a timer and listeners only while a page is connected.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createGpuSampler, type GpuReadResult } from '../../../src/gpu/index.js';
import { Harness } from '../../../src/harness/index.js';
import { DashboardSettingsSchema, LiveHub, WebhookLog } from '../../../packages/platform/src/harness/dashboard/index.js';
import { startTestWorker } from './helpers.js';
import { call, errorCode, startReceiver, startTestServer, type TestServer, waitFor } from '../../kit/index.js';

const KEY = 'ui-key';
const auth = { authorization: `Bearer ${KEY}` };
let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Read SSE frames from `url` until `until(frames)` holds; answers them. */
async function readEvents(url: string, until: (frames: Array<{ event: string; data: unknown }>) => boolean, headers: Record<string, string> = auth) {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const frames: Array<{ event: string; data: unknown }> = [];
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    while (!until(frames)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let at: number;
      while ((at = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
        const data = /^data: (.*)$/m.exec(block)?.[1];
        frames.push({ event, data: data === undefined ? undefined : JSON.parse(data) });
      }
    }
  } finally {
    abort.abort();
  }
  return frames;
}

describe('dashboard routes', () => {
  it('serves the page and its modules without the key, and every data route only with it', async () => {
    server = await startTestServer({ apiKey: KEY });
    const page = await call('GET', `${server.url}/ui`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain('/ui/static/app.js');
    for (const file of [
      '/ui/static/app.js',
      '/ui/static/style.css',
      '/ui/vendor/preact.mjs',
      '/ui/vendor/hooks.mjs',
      '/ui/vendor/htm.mjs',
      '/ui/vendor/uplot.mjs',
      '/ui/vendor/uplot.css',
    ]) {
      const answer = await call('GET', `${server.url}${file}`);
      expect(answer.status, file).toBe(200);
      expect(answer.text.length, file).toBeGreaterThan(100);
    }
    expect((await call('GET', `${server.url}/ui/static/..%2Fpackage.json`)).status).toBe(404);
    expect((await call('GET', `${server.url}/ui/vendor/fastify.mjs`)).status).toBe(404);
    await server.harness.endpoint('ep').submit({ input: {} });
    const jobId = (await server.harness.endpoint('ep').jobs())[0]!.id;
    for (const path of ['/ui/api/overview', '/ui/api/endpoints/ep/jobs', `/ui/api/endpoints/ep/jobs/${jobId}`, '/ui/api/events']) {
      const without = await call('GET', `${server.url}${path}`);
      expect(without.status, path).toBe(401);
      expect(errorCode(without)).toBe('SW_UNAUTHORIZED');
      expect((await call('GET', `${server.url}${path}`, { headers: { authorization: 'Bearer wrong' } })).status, path).toBe(401);
    }
    const overview = await call('GET', `${server.url}/ui/api/overview`, { headers: auth });
    expect(overview.status).toBe(200);
    expect(overview.json).toMatchObject({ authenticated: true, testInput: { input: {} }, endpoints: [{ id: 'ep', queueDepth: 1 }] });
    const job = await call('GET', `${server.url}/ui/api/endpoints/ep/jobs/${jobId}`, { headers: auth });
    expect(job.json).toMatchObject({
      id: jobId,
      status: 'IN_QUEUE',
      input: { complete: true, bytes: 2, value: {} },
      recentChunks: [],
      chunkBase: 0,
      terminal: false,
    });
    expect(errorCode(await call('GET', `${server.url}/ui/api/endpoints/ep/jobs/nope`, { headers: auth }))).toBe('SW_JOB_NOT_FOUND');
    expect(server.server.dashboardUrl).toBe(`${server.url}/ui`);
  });

  it("shows a job's webhook deliveries once they end, the URL without its query", async () => {
    server = await startTestServer({ webhook: { retryDelayMs: 10 } });
    const receiver = await startReceiver((attempt) => (attempt === 1 ? 500 : 200));
    const worker = startTestWorker(server.harness, async () => ({ ok: true }));
    try {
      const submitted = await call('POST', `${server.endpointUrl()}/run`, { body: { input: {}, webhook: `${receiver.url}?token=secret` } });
      const { id } = submitted.json as { id: string };
      const detail = async () =>
        (await call('GET', `${server!.url}/ui/api/endpoints/ep/jobs/${id}`)).json as { webhook: boolean; webhookDeliveries: unknown[] };
      await waitFor(async () => (await detail()).webhookDeliveries.length > 0, 'the delivery to end', 20_000, 20);
      const job = await detail();
      expect(job.webhook).toBe(true);
      expect(job.webhookDeliveries).toEqual([
        { url: `${receiver.url} (query, fragment and credentials hidden)`, delivered: true, attempts: 2, last: 200, at: expect.any(Number) },
      ]);
      expect(JSON.stringify(job)).not.toContain('secret');
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });

  it('shows the load-balancing pools and the launched workers as overview panels', async () => {
    server = await startTestServer();
    type Panel = { id: string; title: string; data: unknown };
    const panels = async () => ((await call('GET', `${server!.url}/ui/api/overview`)).json as { panels: Panel[] }).panels;
    const before = await panels();
    expect(before.find((panel) => panel.id === 'load-balancing')?.data).toBe('none registered');
    expect(before.find((panel) => panel.id === 'launcher')?.data).toBe('the launcher is off');
    // A worker told to the harness (nothing listens there: its first ping fails, and the panel says so).
    const registered = await call('POST', `${server.url}/v2/lb-ep/load-balancing/workers`, { body: { url: 'http://127.0.0.1:9', workerId: 'lb-1' } });
    expect(registered.status).toBeLessThan(300);
    const pools = (await panels()).find((panel) => panel.id === 'load-balancing')?.data as Array<{ endpointId: string; workers: Array<{ id: string }> }>;
    expect(pools).toEqual([expect.objectContaining({ endpointId: 'lb-ep', workers: [expect.objectContaining({ id: 'lb-1' })] })]);
  });

  it('is left out with dashboard: false', async () => {
    server = await startTestServer({ dashboard: false });
    expect((await call('GET', `${server.url}/ui`)).status).toBe(404);
    expect((await call('GET', `${server.url}/ui/api/overview`)).status).toBe(404);
    expect(server.server.dashboardUrl).toBeUndefined();
  });

  it('pages jobs newest first, filters by state, searches by id, refuses bad parameters', async () => {
    // A few pages' worth; the same queries at 100 000 retained jobs are timed by `npm run bench -- dashboard --case "jobs route"` (bench/README.md).
    const JOBS = 260;
    server = await startTestServer();
    const endpoint = server.harness.endpoint('big');
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) ids.push((await endpoint.submit({ input: { i } })).id);
    for (const id of ids.slice(0, 10)) await endpoint.cancel(id);
    const get = async (query: string) => {
      const answer = await call('GET', `${server!.url}/ui/api/endpoints/big/jobs${query}`);
      expect(answer.status, query).toBe(200);
      return answer.json as { total: number; offset: number; jobs: Array<{ id: string; status: string }> };
    };
    const first = await get('?limit=50');
    expect(first.total).toBe(JOBS);
    expect(first.jobs.map((j) => j.id)).toEqual(ids.slice(-50).reverse());
    const second = await get('?offset=50&limit=50');
    expect(second.offset).toBe(50);
    expect(second.jobs.map((j) => j.id)).toEqual(ids.slice(-100, -50).reverse());
    const deep = await get(`?offset=${JOBS - 50}&limit=50`);
    expect(deep.jobs.map((j) => j.id)).toEqual(ids.slice(0, 50).reverse());
    // Past the end: a short last page, then an empty one.
    expect((await get(`?offset=${JOBS - 20}&limit=50`)).jobs.map((j) => j.id)).toEqual(ids.slice(0, 20).reverse());
    expect((await get(`?offset=${JOBS}&limit=50`)).jobs).toEqual([]);
    const cancelled = await get('?state=CANCELLED');
    expect(cancelled.total).toBe(10);
    expect(cancelled.jobs.map((j) => j.id).sort()).toEqual(ids.slice(0, 10).sort());
    const exact = await get(`?q=${ids[123]}`);
    expect(exact.jobs.map((j) => j.id)).toEqual([ids[123]]);
    const partial = await get(`?q=${ids[77]!.slice(0, 13).toUpperCase()}`);
    expect(partial.jobs.map((j) => j.id)).toContain(ids[77]);
    // History filters look at every job kept (in memory): text in the input, the oldest first.
    const text = await get('?text=%22i%22%3A123%7D');
    expect(text.jobs.map((j) => j.id)).toEqual([ids[123]]);
    const oldest = await get('?order=oldest&limit=50');
    expect(oldest.jobs.map((j) => j.id)).toEqual(ids.slice(0, 50));
    expect((await call('GET', `${server.url}/ui/api/overview`)).status).toBe(200);
    for (const bad of ['?state=DONE', '?limit=0', '?limit=501', '?offset=-1']) {
      const answer = await call('GET', `${server.url}/ui/api/endpoints/big/jobs${bad}`);
      expect(answer.status, bad).toBe(400);
      expect(errorCode(answer)).toBe('SW_INVALID_REQUEST');
    }
    expect(((await call('GET', `${server.url}/ui/api/endpoints/none-yet/jobs`)).json as { total: number }).total).toBe(0);
    expect(server.harness.findEndpoint('none-yet')).toBeUndefined();
  });

  it("streams a job's status and chunks in order over SSE; the stream needs the key", async () => {
    server = await startTestServer({ apiKey: KEY, dashboard: { sampleIntervalMs: 100 } });
    const endpoint = server.harness.endpoint('ep');
    const job = await endpoint.submit({ input: { stream: true } });
    await endpoint.tryTake('w1', 1);
    await endpoint.pushChunk(job.id, 'w1', { output: 'a' });
    const url = `${server.url}/ui/api/events?endpoint=ep&job=${job.id}`;
    const pushing = (async () => {
      await waitFor(async () => (await server!.harness.endpoint('ep').find(job.id)) !== undefined, 'job');
      await new Promise((resolve) => setTimeout(resolve, 300));
      for (const token of ['b', 'c', 'd']) await endpoint.pushChunk(job.id, 'w1', { output: token });
      await endpoint.complete(job.id, 'w1', { kind: 'output', output: 'abcd' });
    })();
    const frames = await readEvents(url, (f) => f.some((x) => x.event === 'job' && (x.data as { status: string }).status === 'COMPLETED'));
    await pushing;
    const names = frames.map((f) => f.event);
    expect(names[0]).toBe('hello');
    const firstJob = frames.find((f) => f.event === 'job')!.data as { status: string; recentChunks: Array<{ output: unknown }>; chunkBase: number };
    expect(firstJob).toMatchObject({ status: 'IN_PROGRESS', recentChunks: [{ index: 0, output: 'a' }], chunkBase: 0 });
    expect(frames.filter((f) => f.event === 'chunk').map((f) => f.data)).toEqual([
      { index: 1, output: 'b' },
      { index: 2, output: 'c' },
      { index: 3, output: 'd' },
    ]);
    // The last job frame (an overview tick every 100 ms may come after it in the same read).
    expect(frames.filter((f) => f.event === 'job').at(-1)?.data).toMatchObject({
      status: 'COMPLETED',
      output: { complete: true, value: 'abcd' },
      terminal: true,
    });
    // The page's data routes and the stream need the key.
    const refused = await fetch(url);
    expect(refused.status).toBe(401);
    expect((await call('GET', `${server.url}/ui/api/events?job=x`, { headers: auth })).status).toBe(400);
  });

  it('shows GPU readings from a sampler it polls only while a page is open', async () => {
    let reads = 0;
    const reading: GpuReadResult = {
      ok: true,
      vendor: 'nvidia',
      tool: 'nvidia-smi',
      hidden: 0,
      readAt: Date.now(),
      gpus: [
        {
          vendor: 'nvidia',
          index: 0,
          uuid: 'GPU-test',
          name: 'Test Card',
          utilizationPercent: 42,
          memoryUtilizationPercent: 10,
          memoryUsedBytes: 2 ** 30,
          memoryTotalBytes: 2 ** 34,
          temperatureCelsius: 50,
          powerDrawWatts: 100,
          powerLimitWatts: 300,
          driverVersion: '1.0',
        },
      ],
    };
    // A sampler whose reader answers a fixed reading (the tool itself needs a GPU).
    const gpu = createGpuSampler({ intervalMs: 50, reader: async () => (reads++, reading) });
    server = await startTestServer({ dashboard: { gpu, sampleIntervalMs: 100 } });
    const before = (await call('GET', `${server.url}/ui/api/overview`)).json as { gpu: { available: boolean; reason?: string } };
    expect(before.gpu).toMatchObject({ available: false, reason: expect.stringContaining('no reading yet') });
    expect(gpu.state).toBe('idle');
    const frames = await readEvents(
      `${server.url}/ui/api/events`,
      (f) => f.some((x) => x.event === 'tick' && (x.data as { point: { gpus: unknown[] } }).point.gpus.length > 0),
      {},
    );
    const tick = frames.findLast((x) => x.event === 'tick')!.data as { gpu: { available: boolean; gpus: unknown[] }; point: { gpus: unknown[] } };
    expect(tick.gpu).toMatchObject({ available: true, gpus: [{ name: 'Test Card', utilizationPercent: 42 }] });
    expect(tick.point.gpus).toEqual([{ index: 0, name: 'Test Card', utilizationPercent: 42, memoryUsedBytes: 2 ** 30, memoryTotalBytes: 2 ** 34 }]);
    await waitFor(() => gpu.state === 'idle', 'the sampler to stop once the page left');
    const after = reads;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(reads).toBe(after);
    await gpu.close();
  });

  it('holds no timer and no listener while no page is connected (the harness pays nothing for it)', async () => {
    const harness = new Harness();
    const hub = new LiveHub({ harness, settings: DashboardSettingsSchema.parse({ sampleIntervalMs: 50 }), webhookLog: new WebhookLog() });
    const endpoint = harness.endpoint('ep');
    const job = await endpoint.submit({ input: {} });
    const http: Server = createServer((request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      void hub.connect(response, request.url === '/job' ? { endpointId: 'ep', jobId: job.id } : undefined);
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    try {
      expect(hub.active).toBe(false);
      const ticks = readEvents(`${base}/`, (f) => f.filter((x) => x.event === 'tick').length >= 2, {});
      const watching = readEvents(`${base}/job`, (f) => f.filter((x) => x.event === 'tick').length >= 2, {});
      await waitFor(() => hub.clientCount === 2, 'two pages');
      expect(hub.active).toBe(true);
      expect(hub.watchedJobs).toBe(1);
      const [plain, watched] = await Promise.all([ticks, watching]);
      expect(plain.map((f) => f.event).slice(0, 2)).toEqual(['hello', 'tick']);
      expect(watched.map((f) => f.event)).toContain('job');
      await waitFor(() => hub.clientCount === 0, 'pages gone');
      expect(hub.active).toBe(false);
      expect(hub.watchedJobs).toBe(0);
    } finally {
      hub.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await harness.close();
    }
  });
});
