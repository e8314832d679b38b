/**
 * @module test/reliability/security.test
 * Security of the harness and the worker, over 127.0.0.1:
 * - with an API key, every route answers 401 without it (or with a wrong one), before
 *   anything else (body limits, routing, long polls);
 * - API keys and s3Config secrets never appear in the logs of the harness or of a
 *   worker process, captured at trace level while jobs run, fail, retry through
 *   injected faults, and webhooks fail;
 * - a non-loopback bind without a key is refused (library, CLI, --serve-api) unless
 *   explicitly allowed;
 * - a webhook URL that is not http(s) is refused with 400.
 */
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Harness } from '../../src/harness/index.js';
import { checkBindAddress, createHarnessServer } from '../../packages/platform/src/harness/server-api.js';
import { isServerlessWorkerError } from '../../src/job/index.js';
import { ECHO_FIXTURE, REPO_ROOT, runTs } from '../child-process.js';
import { captureLogs } from '../transports/platform/log-capture.js';
import { waitFor, within } from '../kit/index.js';
import { startFaultProxy } from './support/fault-proxy.js';
import { printFigures } from './support/figures.js';
import { TestClient } from './support/http.js';
import { QueueCaller } from './support/queue.js';
import { startReliabilityServer } from './support/reliability-server.js';
import { HARNESS_ROUTES, STREAMING_ROUTES, fillPath, registeredRouteCount } from './support/routes.js';
import { killWorkers, startWorkerProcess } from './support/worker-process.js';

const API_KEY = 'rpa_RELIABILITY_KEY_7f3c9e2a41d8';
const ACCESS_ID = 'AKIA_RELIABILITY_ID_5b8d1c';
const ACCESS_SECRET = 'S3_RELIABILITY_SECRET_9e4f2a7c';
const SECRETS = [API_KEY, ACCESS_ID, ACCESS_SECRET];
const S3 = { accessId: ACCESS_ID, accessSecret: ACCESS_SECRET, bucketName: 'bucket', endpointUrl: 'http://127.0.0.1:9/s3' };

const client = new TestClient();
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await killWorkers();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => client.close());

const FILLED = { endpointId: 'ep', jobId: 'some-job', workerId: 'w1', id: 'some-id', rest: 'chat/completions' };
const codeOf = (json: unknown): unknown => (json as { error?: { code?: unknown } } | undefined)?.error?.code;

describe('API key', () => {
  it('every route answers 401 without the key, or with a wrong one, before anything else', { timeout: 60_000 }, async () => {
    const server = await startReliabilityServer({ apiKey: API_KEY, workerApi: { longPollMs: 50 } });
    cleanups.push(() => server.close());
    expect(registeredRouteCount(server.server.app)).toBe(HARNESS_ROUTES.length + STREAMING_ROUTES.length);
    let checked = 0;
    for (const route of [...HARNESS_ROUTES, ...STREAMING_ROUTES]) {
      const url = `${server.origin}${fillPath(route, FILLED)}`;
      if (route.public) {
        // The dashboard's page and modules: no data in them, served to a browser before it has the key.
        expect([200, 404], `${route.method} ${route.path}`).toContain((await client.call(route.method, url)).status);
        continue;
      }
      const body = route.method === 'GET' ? undefined : { input: {} };
      const attempts: Array<Record<string, string>> = [
        {},
        { authorization: 'Bearer wrong-key' },
        { authorization: 'wrong-key' },
        { authorization: `Bearer ${API_KEY}x` },
      ];
      for (const headers of attempts) {
        const answer = await client.call(route.method, url, { headers, ...(body ? { body } : {}) });
        expect(answer.status, `${route.method} ${route.path} ${JSON.stringify(headers)}`).toBe(401);
        expect(codeOf(answer.json), `${route.method} ${route.path}`).toBe('SW_UNAUTHORIZED');
        checked++;
      }
    }
    // Unknown paths too (no route listing without the key), and a body past the limit is not even read.
    expect((await client.call('GET', `${server.origin}/v2/ep/no-such-route`)).status).toBe(401);
    expect((await client.call('POST', `${server.origin}/v2/ep/run`, { body: { input: { blob: 'x'.repeat(11_000_000) } } })).status).toBe(401);
    // With the key (Bearer, or bare as workers send it), the same routes answer.
    const bearer = { authorization: `Bearer ${API_KEY}` };
    expect((await client.call('GET', `${server.origin}/v2/ep/health`, { headers: bearer })).status).toBe(200);
    expect((await client.call('GET', `${server.origin}/metrics`, { headers: bearer })).status).toBe(200);
    expect((await client.call('GET', `${server.origin}/v1/templates`, { headers: bearer })).status).toBe(200);
    expect((await client.call('GET', `${server.origin}/v2/ep/job-take/w1`, { headers: { authorization: API_KEY } })).status).toBe(204);
    printFigures('auth', { routes: HARNESS_ROUTES.length, requestsWithoutKey: checked + 2, all401: true });
  });
});

describe('secrets in logs', () => {
  it('API keys and s3Config secrets never appear in the harness or worker logs', { timeout: 90_000 }, async () => {
    const harnessLogs = captureLogs('trace');
    const server = await startReliabilityServer({
      apiKey: API_KEY,
      logger: harnessLogs.logger,
      webhook: { retryDelayMs: 20, timeoutMs: 1_000 },
      workerApi: { longPollMs: 1_000, liveness: { pingIntervalMs: 200, missedPings: 10 } },
    });
    cleanups.push(() => server.close());
    // Faults between worker and harness, so that the retry and failure paths log too.
    const proxy = await startFaultProxy(server.origin, {
      seed: 7,
      rates: { 'job-done': 0.5, 'job-take': 0.2, ping: 0.3 },
      faults: ['5xx', 'reset', 'lose-answer', '5xx-after'],
    });
    cleanups.push(() => proxy.close());
    const worker = startWorkerProcess('secret-keeper', { ...server.envFor('ep', 200, proxy.origin), LOG_LEVEL: 'trace' });
    const queue = new QueueCaller(client, `${server.origin}/v2/ep`, API_KEY);
    const ids = [
      await queue.run({ input: { mode: 'log-secrets' }, s3Config: S3 }),
      await queue.run({ input: { mode: 'throw' }, s3Config: S3, webhook: 'http://127.0.0.1:9/hook' }),
      await queue.run({ input: { mode: 'log-secrets', tag: 2 }, s3Config: S3 }),
    ];
    const views = [];
    for (const id of ids) views.push(await queue.ended(id, 60_000));
    expect(views.map((view) => view.status)).toEqual(['COMPLETED', 'FAILED', 'COMPLETED']);
    // Refused calls: wrong keys, and a malformed request that carries the secrets.
    await client.call('POST', `${server.origin}/v2/ep/run`, {
      headers: { authorization: `Bearer ${API_KEY.slice(0, -1)}` },
      body: { input: {}, s3Config: S3 },
    });
    await client.call('POST', `${server.origin}/v2/ep/run`, { headers: { authorization: `Bearer ${API_KEY}` }, body: { input: 'no', s3Config: S3 } });
    await waitFor(() => harnessLogs.find('webhook given up').length === 1, 'the webhook give-up', 20_000);
    worker.signal('SIGTERM');
    await within(worker.exited, 'the worker to stop', 30_000);

    const harnessText = harnessLogs.lines.map((line) => JSON.stringify(line)).join('\n');
    const workerText = worker.stderr();
    for (const secret of SECRETS) {
      expect(harnessText.includes(secret), `harness logs hold ${secret}`).toBe(false);
      expect(workerText.includes(secret), `worker logs hold ${secret}`).toBe(false);
    }
    // The lines that would have held them are there, censored.
    expect(workerText).toContain('"msg":"the whole job"');
    expect(workerText).toContain('[redacted]');
    const workerLines = workerText.split('\n').filter((line) => line.startsWith('{')).length;
    printFigures('secrets-in-logs', {
      harnessLogLines: harnessLogs.lines.length,
      workerLogLines: workerLines,
      faultsInjected: proxy.totalFaults(),
      secretsFound: 0,
    });
  });

  it('a worker given a malformed key says so without printing it', { timeout: 60_000 }, async () => {
    const server = await startReliabilityServer();
    cleanups.push(() => server.close());
    const bad = `${API_KEY} with spaces`;
    const worker = startWorkerProcess('bad-key', { ...server.envFor('ep', 200), RUNPOD_AI_API_KEY: bad });
    const exit = await within(worker.exited, 'the worker to refuse its environment', 40_000);
    expect(exit.code).toBe(1);
    expect(worker.stderr()).toContain('RUNPOD_AI_API_KEY');
    expect(worker.stderr().includes(API_KEY)).toBe(false);
  });
});

describe('binding to a non-loopback address', () => {
  it('is refused without a key, allowed with a key or the explicit opt-out', { timeout: 60_000 }, async () => {
    for (const host of ['0.0.0.0', '::', '192.0.2.10', 'example.internal']) {
      const refused = await createHarnessServer({ harness: new Harness(), host, port: 0 }).then(
        async (server) => {
          await server.close();
          return undefined;
        },
        (error: unknown) => error,
      );
      expect(isServerlessWorkerError(refused) && refused.code, host).toBe('SW_INSECURE_BIND');
      // The explicit opt-out lifts the refusal (checked without listening unauthenticated on the network).
      expect(() => checkBindAddress(host, false, true), host).not.toThrow();
    }
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1'])
      expect(() => checkBindAddress(host, false, false), host).not.toThrow();

    // With a key it listens on every interface; only 127.0.0.1 is called, and only with the key.
    const keyed = await createHarnessServer({ harness: new Harness(), host: '0.0.0.0', port: 0, apiKey: API_KEY, rateLimits: false });
    try {
      expect(keyed.url).toBe(`http://127.0.0.1:${keyed.port}`);
      expect((await client.call('GET', `${keyed.url}/v2/ep/health`)).status).toBe(401);
      expect((await client.call('GET', `${keyed.url}/v2/ep/health`, { headers: { authorization: `Bearer ${API_KEY}` } })).status).toBe(200);
    } finally {
      await keyed.close();
    }
  });

  it('the harness CLI and --serve-api refuse it without a key, naming the way out', { timeout: 90_000 }, async () => {
    // No SERVERLESS_WORKER_API_KEY from the environment of the test run.
    const env = { PATH: process.env.PATH ?? '', SW_NODE_VERSION_WARNING: 'off' };
    const [cli, serveApi] = await Promise.all([
      runTs(join(REPO_ROOT, 'src/cli/main.ts'), ['harness', '--host', '0.0.0.0', '--port', '0'], { env, extendEnv: false, timeout: 60_000 }),
      runTs(ECHO_FIXTURE, ['--serve-api', '--host', '0.0.0.0', '--port', '0'], { env, extendEnv: false, timeout: 60_000 }),
    ]);
    for (const [name, result] of [
      ['harness', cli],
      ['--serve-api', serveApi],
    ] as const) {
      expect(result.exitCode, `${name}: ${String(result.stderr)}`).toBe(1);
      expect(String(result.stderr), name).toContain('Refusing to listen on 0.0.0.0 without an API key');
      expect(String(result.stderr), name).toContain('--insecure-no-auth');
      expect(String(result.stdout), name).not.toContain('listening on');
    }
  });
});

describe('webhook URLs', () => {
  it('a webhook that is not http(s) is refused with 400 and no job is made', { timeout: 30_000 }, async () => {
    const server = await startReliabilityServer();
    cleanups.push(() => server.close());
    const schemes = [
      'file:///etc/passwd',
      'ftp://127.0.0.1/x',
      'javascript:alert(1)',
      'data:text/plain,hi',
      'ws://127.0.0.1:9/',
      'gopher://127.0.0.1:9/_',
      'mailto:a@b.c',
      '//127.0.0.1:9/no-scheme',
      '127.0.0.1:9/hook',
      'http//127.0.0.1',
      '',
    ];
    let refused = 0;
    for (const route of ['run', 'runsync']) {
      for (const field of ['webhook', 'webhookV2']) {
        for (const url of schemes) {
          const answer = await client.call('POST', `${server.origin}/v2/ep/${route}`, { body: { input: {}, [field]: url } });
          expect(answer.status, `${route} ${field} ${url}`).toBe(400);
          expect(codeOf(answer.json)).toBe('SW_INVALID_JOB_REQUEST');
          refused++;
        }
      }
    }
    expect((await server.harness.findEndpoint('ep')?.jobs()) ?? []).toHaveLength(0);
    // An http URL is accepted.
    const accepted = await client.call('POST', `${server.origin}/v2/ep/run`, { body: { input: {}, webhook: 'http://127.0.0.1:9/hook' } });
    expect(accepted.status).toBe(200);
    printFigures('webhook-schemes', { refused, accepted: 1 });
  });
});
