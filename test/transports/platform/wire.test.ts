/**
 * The platform transport on the wire, against a scripted server: exactly the URLs,
 * parameters, headers and bodies of worker-protocol.md section 1, and how it reads
 * the answers a real platform may give.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { isServerlessWorkerError, type JobErrorPayload, type StopReason } from '../../../src/job/index.js';
import { createPlatformTransport, type PlatformTransport, type PlatformTransportSettingsInput } from '../../../src/transports/platform/index.js';
import { RUNTIME_VERSION } from '../../../src/version.js';
import { waitFor, within } from '../../kit/index.js';
import { captureLogs, countingMetrics } from './log-capture.js';
import { json, startScriptedServer, type ScriptedServer } from './scripted-server.js';

const KEY = 'rpa_secret-key';
let server: ScriptedServer;
const transports: PlatformTransport[] = [];

afterEach(async () => {
  for (const transport of transports.splice(0)) await transport.close();
  await server?.close();
});

function envOf(origin: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    RUNPOD_WEBHOOK_GET_JOB: `${origin}/v2/ep/job-take/$ID?`,
    RUNPOD_WEBHOOK_POST_OUTPUT: `${origin}/v2/ep/job-done/$RUNPOD_POD_ID/$ID?`,
    RUNPOD_WEBHOOK_POST_STREAM: `${origin}/v2/ep/job-stream/$RUNPOD_POD_ID/$ID?`,
    RUNPOD_WEBHOOK_PING: `${origin}/v2/ep/ping/$RUNPOD_POD_ID`,
    RUNPOD_PING_INTERVAL: '100',
    RUNPOD_AI_API_KEY: KEY,
    RUNPOD_POD_ID: 'w1',
    ...extra,
  };
}

function transportFor(settings: PlatformTransportSettingsInput & { extraEnv?: NodeJS.ProcessEnv } = {}, logs = captureLogs()) {
  const { extraEnv, ...rest } = settings;
  const metrics = countingMetrics();
  const transport = createPlatformTransport({
    processEnv: envOf(server.origin, extraEnv),
    logger: logs.logger,
    metrics,
    emptyPollGapMs: 0,
    pollBackoffMinMs: 5,
    pollBackoffMaxMs: 20,
    retryMinDelayMs: 5,
    retryMaxDelayMs: 20,
    heartbeat: false,
    ...rest,
  });
  transports.push(transport);
  return { transport, metrics, logs };
}

const take = (transport: PlatformTransport, max = 1, inProgress = false) =>
  within(transport.take({ max, inProgress, signal: new AbortController().signal }), 'take', 5_000);

const bodyOf = (request: { body: string }): Record<string, unknown> => JSON.parse(request.body) as Record<string, unknown>;

describe('take', () => {
  it('reads 204, 400, an empty body, a non-JSON type, broken JSON and a job without input as "no job now", then takes the job', async () => {
    const answers = [
      { status: 204 },
      { status: 400, body: 'FlashBoot' },
      { status: 200, headers: { 'content-type': 'application/json' }, body: '' },
      { status: 200, headers: { 'content-type': 'text/html' }, body: '<html>maintenance</html>' },
      { status: 200, headers: { 'content-type': 'application/json' }, body: '{"id": ' },
      json({ id: 'no-input' }),
      json({ id: 'j1', input: { a: 1 }, webhook: 'https://hook', extra: { kept: true } }),
    ];
    server = await startScriptedServer(() => answers.shift());
    const { transport, logs } = transportFor();
    expect(await take(transport)).toEqual([{ id: 'j1', input: { a: 1 }, webhook: 'https://hook', extra: { kept: true } }]);
    const takes = server.to('/job-take/');
    expect(takes).toHaveLength(7);
    for (const request of takes) {
      expect(request.method).toBe('GET');
      expect(request.url).toBe('/v2/ep/job-take/w1?job_in_progress=0');
      // The bare key, as the platform expects: no "Bearer ".
      expect(request.headers.authorization).toBe(KEY);
    }
    expect(logs.find('without id or input', 50)).toHaveLength(1);
  });

  it('takes a batch from job-take-batch with batch_size and job_in_progress=1', async () => {
    server = await startScriptedServer(() => json([{ id: 'a', input: {} }, { input: {} }, { id: 'b', input: { x: 'y' } }]));
    const { transport } = transportFor();
    expect(await take(transport, 3, true)).toEqual([
      { id: 'a', input: {} },
      { id: 'b', input: { x: 'y' } },
    ]);
    expect(server.requests[0]?.url).toBe('/v2/ep/job-take-batch/w1?batch_size=3&job_in_progress=1');
  });

  it('backs off on 429 and on 5xx, then takes', async () => {
    const answers = [{ status: 429, headers: { 'retry-after': '0' } }, { status: 429 }, { status: 503 }, json({ id: 'j', input: {} })];
    server = await startScriptedServer(() => answers.shift());
    const { transport, logs } = transportFor();
    expect(await take(transport)).toEqual([{ id: 'j', input: {} }]);
    expect(server.to('/job-take/')).toHaveLength(4);
    expect(logs.find('429')).toHaveLength(2);
  });

  it('answers [] when the runtime aborts the long poll, and polls again after the poll bound', async () => {
    server = await startScriptedServer(() => ({ status: 204, delayMs: 60_000 }));
    const { transport } = transportFor({ pollTimeoutMs: 1_000 });
    const controller = new AbortController();
    const pending = transport.take({ max: 1, inProgress: false, signal: controller.signal });
    await waitFor(() => server.to('/job-take/').length >= 2, 'a second poll after the first hit its 1 s bound', 5_000);
    controller.abort();
    expect(await within(pending, 'aborted take', 2_000)).toEqual([]);
  });
});

describe('posts', () => {
  const error: JobErrorPayload = {
    error_type: 'TypeError',
    error_message: 'bad',
    error_traceback: 'TypeError: bad\n    at x',
    error_code: 'SW_HANDLER_ERROR',
    hostname: 'h',
    worker_id: 'w1',
    runtime_version: RUNTIME_VERSION,
  };

  it('posts results to job-done with isStream, {output} or {error: "<JSON text>"}, and stopPod', async () => {
    server = await startScriptedServer(() => json({}));
    const { transport } = transportFor();
    await transport.postResult('j1', { kind: 'output', output: { answer: 42 } }, { isStream: false, stopPod: false });
    await transport.postResult('j2', { kind: 'error', error }, { isStream: false, stopPod: true });
    await transport.postResult('j3', { kind: 'output', output: undefined }, { isStream: true, stopPod: false });
    const [first, second, third] = server.to('/job-done/');
    expect(first?.method).toBe('POST');
    expect(first?.url).toBe('/v2/ep/job-done/w1/j1?isStream=false');
    expect(first?.headers['content-type']).toBe('application/json');
    expect(first?.headers.authorization).toBe(KEY);
    expect(bodyOf(first!)).toEqual({ output: { answer: 42 } });
    expect(second?.url).toBe('/v2/ep/job-done/w1/j2?isStream=false');
    const posted = bodyOf(second!);
    expect(typeof posted.error).toBe('string');
    expect(JSON.parse(posted.error as string)).toEqual(error);
    expect(posted.stopPod).toBe(true);
    expect(third?.url).toBe('/v2/ep/job-done/w1/j3?isStream=true');
    expect(bodyOf(third!)).toEqual({});
  });

  it('posts chunks to job-stream with isStream=false, {output, metrics}; {output} alone with chunkMetrics off', async () => {
    server = await startScriptedServer(() => json({}));
    const { transport } = transportFor();
    await transport.postChunk('j1', { output: 'tok', metrics: { stream_index: 0, output_tokens: 1 } });
    const { transport: plain } = transportFor({ chunkMetrics: false });
    await plain.postChunk('j1', { output: 'tok', metrics: { stream_index: 1 } });
    const [withMetrics, without] = server.to('/job-stream/');
    expect(withMetrics?.url).toBe('/v2/ep/job-stream/w1/j1?isStream=false');
    expect(bodyOf(withMetrics!)).toEqual({ output: 'tok', metrics: { stream_index: 0, output_tokens: 1 } });
    expect(bodyOf(without!)).toEqual({ output: 'tok' });
  });

  it('posts progress to job-done as {status: "IN_PROGRESS", output}, the latest value winning', async () => {
    server = await startScriptedServer(() => ({ ...json({}), delayMs: 50 }));
    const { transport } = transportFor();
    const first = transport.postProgress('j1', { step: 1 });
    await waitFor(() => server.requests.length === 1, 'the first progress post in flight', 5_000);
    // While it is in flight, newer values wait; only the newest goes next.
    const posts = [2, 3, 4].map((step) => transport.postProgress('j1', { step }));
    await within(Promise.all([first, ...posts]), 'progress posts', 5_000);
    const progress = server.to('/job-done/');
    expect(progress.every((request) => request.url === '/v2/ep/job-done/w1/j1?isStream=false')).toBe(true);
    expect(progress.map((request) => bodyOf(request))).toEqual([
      { status: 'IN_PROGRESS', output: { step: 1 } },
      { status: 'IN_PROGRESS', output: { step: 4 } },
    ]);
  });

  it('gives up at once, logged and counted, when the platform refuses a result with a 4xx', async () => {
    server = await startScriptedServer(() => ({ status: 401, body: 'bad key' }));
    const { transport, metrics, logs } = transportFor();
    const failure = await transport.postResult('j1', { kind: 'output', output: 1 }, { isStream: false, stopPod: false }).catch((e: unknown) => e);
    expect(isServerlessWorkerError(failure) && failure.code).toBe('SW_RESULT_UNDELIVERED');
    expect((failure as Error).message).toContain('refused it with HTTP 401');
    expect(server.to('/job-done/')).toHaveLength(1);
    expect(metrics.resultPostGiveUpsTotal.value).toBe(1);
    expect(logs.find('could not be delivered', 50)).toHaveLength(1);
  });

  it('fails a chunk clearly when RUNPOD_WEBHOOK_POST_STREAM is not set', async () => {
    server = await startScriptedServer(() => json({}));
    const { transport } = transportFor({ extraEnv: { RUNPOD_WEBHOOK_POST_STREAM: '' } });
    const failure = await transport.postChunk('j1', { output: 'x' }).catch((e: unknown) => e);
    expect(isServerlessWorkerError(failure) && failure.code).toBe('SW_INVALID_ENV');
    expect((failure as Error).message).toContain('RUNPOD_WEBHOOK_POST_STREAM');
  });
});

describe('job stop', () => {
  it('polls job-stop only while a job is held and maps jobsToStop onto onStop', async () => {
    let stopAnswers: Array<ReturnType<typeof json>> = [json({ jobsToStop: ['j1'] }), json({ jobsToStop: ['j2'], reasons: { j2: 'timeout' } })];
    server = await startScriptedServer((request) =>
      request.path.includes('/job-stop/') ? (stopAnswers.shift() ?? { status: 204, delayMs: 100 }) : { status: 204, delayMs: 100 },
    );
    const { transport } = transportFor();
    const seen: Array<[string, StopReason]> = [];
    transport.onStop((jobId, reason) => seen.push([jobId, reason]));
    await sleep(200);
    expect(server.to('/job-stop/')).toHaveLength(0);
    transport.setJobsInProgress(['j1', 'j2']);
    await waitFor(() => seen.length === 2, 'two stops', 5_000);
    expect(seen).toEqual([
      ['j1', 'cancelled'],
      ['j2', 'timeout'],
    ]);
    const stop = server.to('/job-stop/')[0];
    expect(stop?.path).toBe('/v2/ep/job-stop/w1');
    expect([...(stop?.query.keys() ?? [])]).toEqual([]);
    expect(stop?.headers.authorization).toBe(KEY);
    transport.setJobsInProgress([]);
    await sleep(250);
    const count = server.to('/job-stop/').length;
    await sleep(300);
    expect(server.to('/job-stop/').length).toBe(count);
    stopAnswers = [];
  });
});

describe('heartbeat', () => {
  it('pings every RUNPOD_PING_INTERVAL ms with the jobs in progress and runpod_version, from its own thread', async () => {
    server = await startScriptedServer(() => json({}));
    const { transport } = transportFor({ heartbeat: true });
    transport.setJobsInProgress(['a', 'b']);
    await waitFor(() => server.to('/ping/').length >= 3, 'three pings', 5_000);
    const ping = server.to('/ping/')[1];
    expect(ping?.path).toBe('/v2/ep/ping/w1');
    expect(ping?.query.get('job_id')).toBe('a,b');
    expect(ping?.query.get('runpod_version')).toBe(RUNTIME_VERSION);
    expect(ping?.headers.authorization).toBe(KEY);
    transport.setJobsInProgress([]);
    const before = server.to('/ping/').length;
    await waitFor(() => server.to('/ping/').length > before + 1, 'pings without jobs', 5_000);
    expect(server.to('/ping/').at(-1)?.query.has('job_id')).toBe(false);
    await transport.close();
    const atClose = server.to('/ping/').length;
    await sleep(400);
    expect(server.to('/ping/').length).toBeLessThanOrEqual(atClose + 1);
  });

  it('counts and logs failed pings', async () => {
    server = await startScriptedServer(() => ({ status: 500 }));
    const { transport, metrics, logs } = transportFor({ heartbeat: true });
    transport.setJobsInProgress([]);
    await waitFor(() => metrics.heartbeatFailuresTotal.value >= 2, 'two failed pings counted', 5_000);
    expect(logs.find('heartbeat ping failed', 40).length).toBeGreaterThanOrEqual(1);
  });

  it('reports a failed start-up check once, with the reason cut to 256 characters', async () => {
    server = await startScriptedServer(() => json({}));
    const { transport } = transportFor();
    await transport.reportUnhealthy('gpu', 'x'.repeat(300));
    const [report] = server.to('/ping/');
    expect(report?.path).toBe('/v2/ep/ping/w1');
    expect(report?.query.get('status')).toBe('unhealthy');
    expect(report?.query.get('check')).toBe('gpu');
    expect(report?.query.get('reason')).toBe('x'.repeat(256));
  });
});

describe('close', () => {
  it('answers [] to a take in flight and to takes after it', async () => {
    server = await startScriptedServer(() => ({ status: 204, delayMs: 60_000 }));
    const { transport } = transportFor();
    const pending = transport.take({ max: 1, inProgress: false, signal: new AbortController().signal });
    await waitFor(() => server.requests.length > 0, 'the poll', 5_000);
    await within(transport.close(), 'close', 5_000);
    expect(await within(pending, 'take in flight', 2_000)).toEqual([]);
    expect(await take(transport)).toEqual([]);
  });
});
