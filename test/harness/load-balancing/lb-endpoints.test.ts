/**
 * Load-balancing endpoints of the harness with real worker processes (the examples)
 * that register themselves (SERVERLESS_WORKER_HARNESS_URL), over loopback: /health
 * counts them, requests go round-robin to healthy workers only, a worker killed
 * mid-traffic gets no request after its failed ping, bodies pass untouched and the
 * caller's key stays at the harness, 401 without the key, 400 when no worker has room,
 * 524 past the request time limit, SSE through with the official openai client, and a
 * worker's graceful SIGTERM finishes the request in flight. Bounded waits only.
 */
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { HarnessServer } from '../../../packages/platform/src/index.js';
import type { LoadBalancingSettingsInput } from '../../../packages/platform/src/harness/load-balancing/index.js';
import { FASTIFY_WORKER, startLbWorker, statusOf } from '../../load-balancing/lb-process.js';
import { freePort, startHarnessServer, waitFor, within } from '../../kit/index.js';
import { killAllWorkers, type WorkerProcess } from '../../platform/worker-process.js';

const KEY = 'lb-test-key';
const ENDPOINT = 'lb-ep';
const START_BOUND_MS = 40_000;
const auth = { authorization: `Bearer ${KEY}` };

let server: HarnessServer | undefined;

afterEach(async () => {
  await killAllWorkers();
  await stopHarness();
});

async function startHarness(loadBalancing: LoadBalancingSettingsInput = {}, port = 0): Promise<HarnessServer> {
  server = await startHarnessServer({ port, apiKey: KEY, rateLimits: {}, loadBalancing: { pingIntervalMs: 100, ...loadBalancing } });
  return server;
}

async function stopHarness(): Promise<void> {
  await server?.close();
  await server?.config.harness.close();
  server = undefined;
}

function joinHarness(running: HarnessServer, workerId: string, extra: Record<string, string> = {}, fixture?: string): WorkerProcess {
  const env = { PORT: '0', SERVERLESS_WORKER_HARNESS_URL: running.url, RUNPOD_ENDPOINT_ID: ENDPOINT, RUNPOD_AI_API_KEY: KEY, ...extra };
  return startLbWorker(workerId, env, fixture);
}

interface Health {
  workers: { idle: number; running: number; initializing: number; unhealthy?: number };
  loadBalancing?: { workers: Array<{ id: string; state: string; requests: number; coldStartMs?: number; lastError?: string }> };
}

async function health(running: HarnessServer): Promise<Health> {
  return (await (await fetch(`${running.url}/v2/${ENDPOINT}/health`, { headers: auth })).json()) as Health;
}

async function healthyCount(running: HarnessServer, count: number, workers: WorkerProcess[]): Promise<Health> {
  return waitFor(
    async () => {
      // A connection kept alive to a harness that since restarted on the same port fails once: ask again.
      const body = await health(running).catch(() => undefined);
      return body && body.workers.idle + body.workers.running === count ? body : undefined;
    },
    `${count} healthy load-balancing workers (stderr: ${workers.map((worker) => worker.stderr().slice(-600)).join(' | ')})`,
    START_BOUND_MS,
    50,
  );
}

const lbUrl = (running: HarnessServer, path: string): string => `${running.url}/lb/${ENDPOINT}${path}`;

/** GET with `path` sent as the request target exactly as written (fetch would normalize `..` and such). */
function rawGet(running: HarnessServer, path: string): Promise<{ status: number; body: string }> {
  const base = new URL(running.url);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ hostname: base.hostname, port: base.port, path, method: 'GET', headers: auth, agent: false, timeout: 10_000 }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (text: string) => (body += text));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('timeout', () => request.destroy(new Error(`no answer to GET ${path} within 10 s`)));
    request.on('error', reject);
    request.end();
  });
}

describe('harness load-balancing endpoints', () => {
  it('routes round-robin to healthy workers only, and none to a worker killed mid-traffic after its failed ping', { timeout: 120_000 }, async () => {
    const running = await startHarness();
    const a = joinHarness(running, 'lb-a', { INIT_DELAY_MS: '1500' });
    const b = joinHarness(running, 'lb-b', { INIT_DELAY_MS: '1500' });
    // Registered before init: the harness shows them initializing (its /ping got 204).
    const initializing = await waitFor(
      async () => {
        const body = await health(running);
        return body.workers.initializing > 0 ? body : undefined;
      },
      'a worker shown initializing',
      START_BOUND_MS,
      20,
    );
    expect(initializing.workers.initializing).toBeGreaterThan(0);
    const ready = await healthyCount(running, 2, [a, b]);
    expect(ready.loadBalancing?.workers.map((worker) => worker.state).sort()).toEqual(['healthy', 'healthy']);
    expect(ready.loadBalancing?.workers.every((worker) => typeof worker.coldStartMs === 'number')).toBe(true);
    console.log(
      `cold starts measured by the harness (first 204 to first 200): ${ready.loadBalancing?.workers.map((worker) => `${worker.id} ${worker.coldStartMs} ms`).join(', ')}`,
    );

    const who = async (): Promise<string> => ((await (await fetch(lbUrl(running, '/whoami'), { headers: auth })).json()) as { workerId: string }).workerId;
    const first = [];
    for (let i = 0; i < 6; i++) first.push(await who());
    // Round-robin: they alternate.
    expect(new Set(first)).toEqual(new Set(['lb-a', 'lb-b']));
    for (let i = 1; i < first.length; i++) expect(first[i]).not.toBe(first[i - 1]);

    // Traffic on, then b is killed: requests fail at most until the harness takes b out.
    /** `at`: when the request was sent. */
    const outcomes: Array<{ status: number; workerId?: string; at: number }> = [];
    let traffic = true;
    const loop = (async () => {
      while (traffic) {
        const at = Date.now();
        const response = await fetch(lbUrl(running, '/whoami'), { headers: auth }).catch(() => undefined);
        const body = response ? ((await response.json().catch(() => ({}))) as { workerId?: string }) : {};
        outcomes.push({ status: response?.status ?? 0, ...(body.workerId ? { workerId: body.workerId } : {}), at });
      }
    })();
    await waitFor(() => outcomes.length >= 5, 'some traffic', 10_000);
    b.signal('SIGKILL');
    const pool = running.loadBalancing.pool(ENDPOINT)!;
    await waitFor(() => pool.get('lb-b')?.state === 'unhealthy', 'the harness to take lb-b out of the pool', 10_000, 10);
    const outAt = Date.now();
    const requestsToB = pool.get('lb-b')!.requests;
    await waitFor(() => outcomes.filter((outcome) => outcome.at > outAt).length >= 20, 'twenty requests after lb-b left', 30_000);
    traffic = false;
    await within(loop, 'the traffic loop', 10_000);
    const after = outcomes.filter((outcome) => outcome.at > outAt);
    expect(after.every((outcome) => outcome.status === 200 && outcome.workerId === 'lb-a')).toBe(true);
    expect(pool.get('lb-b')?.requests ?? requestsToB).toBe(requestsToB);
    const failed = outcomes.filter((outcome) => outcome.status !== 200);
    console.log(
      `traffic: ${outcomes.length} requests, ${failed.length} failed around the kill (${[...new Set(failed.map((f) => f.status))].join(', ') || 'none'})`,
    );
    const view = await health(running);
    expect(view.workers).toMatchObject({ idle: 1, unhealthy: 1 });
  });

  it('registers a worker started before the harness once the harness is up, and again after the harness restarts', { timeout: 120_000 }, async () => {
    const harnessPort = await freePort();
    const workerPort = await freePort();
    const harnessUrl = `http://127.0.0.1:${harnessPort}`;
    const worker = startLbWorker('lb-early', {
      PORT: String(workerPort),
      SERVERLESS_WORKER_HARNESS_URL: harnessUrl,
      RUNPOD_ENDPOINT_ID: ENDPOINT,
      RUNPOD_AI_API_KEY: KEY,
      LOG_LEVEL: 'info',
    });
    // Ready on its own, with no harness to register with yet.
    await waitFor(
      async () => (await statusOf(`http://127.0.0.1:${workerPort}/ping`)) === 200,
      `the worker to be ready (stderr: ${worker.stderr().slice(-1_000)})`,
      START_BOUND_MS,
      50,
    );
    await worker.waitForStderr('could not register with the harness');
    const first = await startHarness({}, harnessPort);
    await healthyCount(first, 1, [worker]);
    expect(await statusOf(lbUrl(first, '/whoami'), { headers: auth })).toBe(200);
    // The harness restarts with nothing in memory: the worker's next refresh registers it again.
    await stopHarness();
    const second = await startHarness({}, harnessPort);
    const startedAt = Date.now();
    await healthyCount(second, 1, [worker]);
    console.log(`registered again ${Date.now() - startedAt} ms after the harness restarted (refresh every 5 s)`);
    expect(await (await fetch(lbUrl(second, '/whoami'), { headers: auth })).json()).toEqual({ workerId: 'lb-early' });
    // The harness holds the worker as soon as it answers the POST; the worker logs once that answer reaches it, a moment later.
    await worker.waitForStderr('re-registered with the harness');
    // A refresh (the same registration again) keeps the entry as it is; its counters are not reset.
    const pool = second.loadBalancing.pool(ENDPOINT)!;
    const entry = pool.get('lb-early')!;
    expect(entry.requests).toBeGreaterThan(0);
    const again = await fetch(`${second.url}/v2/${ENDPOINT}/load-balancing/workers`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ workerId: 'lb-early', url: entry.url, healthUrl: entry.healthUrl, concurrency: entry.concurrency }),
    });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ workerId: 'lb-early', created: false });
    expect(pool.get('lb-early')).toBe(entry);
    expect(entry.state).toBe('healthy');
    // Draining, it unregisters.
    worker.signal('SIGTERM');
    expect((await within(worker.exited, 'the worker to exit', 20_000)).code).toBe(0);
    expect(second.loadBalancing.pool(ENDPOINT)?.size).toBe(0);
  });

  it('shows why a worker is unhealthy: the reason its /ping gives after a failed start-up', { timeout: 60_000 }, async () => {
    const running = await startHarness();
    const worker = joinHarness(running, 'lb-broken', { INIT_MODE: 'fail', FAILURE_EXIT_DELAY_MS: '60000' });
    const seen = await waitFor(
      async () => {
        const body = await health(running);
        return body.workers.unhealthy === 1 ? body : undefined;
      },
      `the failed worker shown unhealthy (stderr: ${worker.stderr().slice(-600)})`,
      START_BOUND_MS,
      50,
    );
    expect(seen.loadBalancing?.workers).toEqual([
      expect.objectContaining({ id: 'lb-broken', state: 'unhealthy', lastError: '/ping answered HTTP 503: init failed: weights not found' }),
    ]);
    const refused = await fetch(lbUrl(running, '/whoami'), { headers: auth });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('no healthy worker: 0 initializing, 1 unhealthy');
  });

  it(
    'keeps every path on the chosen worker ("//host/..." and ".." are paths there), and such requests take no worker out of the pool',
    { timeout: 90_000 },
    async () => {
      const running = await startHarness();
      const worker = joinHarness(running, 'lb-paths');
      await healthyCount(running, 1, [worker]);
      // Another local server, which a path must never reach through the harness.
      let otherHits = 0;
      const other = createServer((_request, response) => {
        otherHits++;
        response.end('secret');
      });
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      const otherPort = (other.address() as AddressInfo).port;
      try {
        const toOther = await rawGet(running, `/lb/${ENDPOINT}//127.0.0.1:${otherPort}/secret?x=1`);
        expect(toOther.status).toBe(404);
        expect(JSON.parse(toOther.body)).toMatchObject({ workerId: 'lb-paths', path: `//127.0.0.1:${otherPort}/secret?x=1` });
        expect(otherHits).toBe(0);
        // A host that does not exist: before the fix a 502 that took the healthy worker out of the pool.
        const toNowhere = await rawGet(running, `/lb/${ENDPOINT}//foo/bar`);
        expect(toNowhere.status).toBe(404);
        expect(JSON.parse(toNowhere.body)).toMatchObject({ workerId: 'lb-paths', path: '//foo/bar' });
        // Dot segments are sent as they came; the worker resolves them on its own side.
        const dots = await rawGet(running, `/lb/${ENDPOINT}/../../whoami?y=2`);
        expect(dots.status).toBe(200);
        expect(JSON.parse(dots.body)).toEqual({ workerId: 'lb-paths' });
        const dotsMissing = await rawGet(running, `/lb/${ENDPOINT}/a/../../v2/${ENDPOINT}/health`);
        expect(JSON.parse(dotsMissing.body)).toMatchObject({ workerId: 'lb-paths', path: `/a/../../v2/${ENDPOINT}/health` });
        // The endpoint id percent-encoded: only the path after it reaches the worker.
        const encodedId = await rawGet(running, `/lb/${ENDPOINT.replace('-', '%2D')}/nothing?z=3`);
        expect(JSON.parse(encodedId.body)).toMatchObject({ workerId: 'lb-paths', path: '/nothing?z=3' });
        expect(running.loadBalancing.pool(ENDPOINT)?.get('lb-paths')?.state).toBe('healthy');
        expect((await health(running)).workers).toMatchObject({ idle: 1, unhealthy: 0 });
        expect(await statusOf(lbUrl(running, '/whoami'), { headers: auth })).toBe(200);
      } finally {
        await new Promise<void>((resolve) => other.close(() => resolve()));
      }
    },
  );

  it('passes bodies and SSE untouched, keeps the key at the harness, answers 401 without it, 400 when no worker has room', { timeout: 90_000 }, async () => {
    // The default request time limit (330 s): the held stream below stays open as long as the test needs.
    const running = await startHarness();
    expect((await fetch(lbUrl(running, '/whoami'), { headers: auth })).status).toBe(400);
    const worker = joinHarness(running, 'lb-one', { LB_CONCURRENCY: '2' });
    await healthyCount(running, 1, [worker]);

    const unauthorized = await fetch(lbUrl(running, '/whoami'));
    expect(unauthorized.status).toBe(401);
    expect(((await unauthorized.json()) as { error: { code: string } }).error.code).toBe('SW_UNAUTHORIZED');

    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256));
    const echoed = await fetch(lbUrl(running, '/echo?x=1'), { method: 'POST', headers: { ...auth, 'content-type': 'application/octet-stream' }, body: bytes });
    expect(echoed.status).toBe(200);
    expect(Buffer.from(await echoed.arrayBuffer()).equals(bytes)).toBe(true);
    expect(echoed.headers.get('x-seen-authorization')).toBe('');

    // SSE passes through as it is written: the first event arrives while the worker still holds the stream.
    const hold = await fetch(lbUrl(running, '/hold'), { headers: auth });
    expect(hold.headers.get('content-type')).toBe('text/event-stream');
    const reader = hold.body!.getReader();
    const first = await within(reader.read(), 'the first event through the harness', 10_000);
    expect(Buffer.from(first.value!).toString()).toBe('data: first\n\n');
    // Both slots are taken (the held stream and a slow request): the next request gets 400.
    const slow = await fetch(lbUrl(running, '/slow?ms=1000'), { headers: auth });
    const busy = await fetch(lbUrl(running, '/whoami'), { headers: auth });
    expect(busy.status).toBe(400);
    expect(((await busy.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'SW_NO_WORKER_AVAILABLE' });
    expect(await slow.json()).toEqual({ workerId: 'lb-one', slept: 1000 });
    expect(await (await fetch(lbUrl(running, '/release'), { method: 'POST', headers: auth })).json()).toEqual({ released: 1 });
    let rest = '';
    for (;;) {
      const step = await within(reader.read(), 'the rest of the held stream', 10_000);
      if (step.done) break;
      rest += Buffer.from(step.value).toString();
    }
    expect(rest).toBe('data: released\n\n');
  });

  it('answers 524 past the request time limit when nothing was answered yet, and cuts a stream already answering', { timeout: 90_000 }, async () => {
    // A harness of its own with a short limit, so that the other tests' streams are not bound by it.
    const running = await startHarness({ requestTimeoutMs: 1_500 });
    const worker = joinHarness(running, 'lb-late');
    await healthyCount(running, 1, [worker]);
    const late = await fetch(lbUrl(running, '/slow?ms=5000&late=1'), { headers: auth });
    expect(late.status).toBe(524);
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('SW_LB_REQUEST_TIMEOUT');
    const cut = await fetch(lbUrl(running, '/slow?ms=5000'), { headers: auth });
    await expect(cut.text()).rejects.toThrow();
    expect(await statusOf(lbUrl(running, '/whoami'), { headers: auth })).toBe(200);
  });

  it('streams SSE through to the official openai client, and a worker SIGTERMed mid-request finishes it', { timeout: 120_000 }, async () => {
    const running = await startHarness();
    const worker = joinHarness(running, 'lb-openai', { MODEL_LOAD_MS: '200' }, FASTIFY_WORKER);
    await healthyCount(running, 1, [worker]);
    const client = new OpenAI({ baseURL: lbUrl(running, '/v1'), apiKey: KEY, maxRetries: 0 });
    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toEqual(['upper-words-1']);
    const plain = await client.chat.completions.create({ model: 'upper-words-1', messages: [{ role: 'user', content: 'hello load balancer' }] });
    expect(plain.choices[0]?.message.content).toBe('HELLO LOAD BALANCER');
    const stream = await client.chat.completions.create({ model: 'upper-words-1', messages: [{ role: 'user', content: 'one two three four' }], stream: true });
    const tokens: string[] = [];
    const arrivals: number[] = [];
    for await (const chunk of stream) {
      const content = chunk.choices[0]?.delta.content;
      if (content) {
        tokens.push(content);
        arrivals.push(Date.now());
      }
    }
    expect(tokens).toEqual(['ONE', ' TWO', ' THREE', ' FOUR']);
    console.log(`SSE tokens arrived over ${arrivals[arrivals.length - 1]! - arrivals[0]!} ms`);

    // Graceful SIGTERM through the harness: the stream in flight completes.
    const inFlight = await client.chat.completions.create({
      model: 'upper-words-1',
      messages: [{ role: 'user', content: Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ') }],
      stream: true,
    });
    const iterator = inFlight[Symbol.asyncIterator]();
    await iterator.next();
    worker.signal('SIGTERM');
    let count = 0;
    for (;;) {
      const step = await iterator.next();
      if (step.done) break;
      if (step.value.choices[0]?.delta.content) count++;
    }
    expect(count).toBe(40);
    expect((await within(worker.exited, 'the worker to exit', 20_000)).code).toBe(0);
    // It unregistered as it drained: no worker is left.
    expect(running.loadBalancing.pool(ENDPOINT)?.size).toBe(0);
    expect(await statusOf(lbUrl(running, '/v1/models'), { headers: auth })).toBe(400);
  });
});
