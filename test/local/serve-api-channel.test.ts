/**
 * The supervised worker of `--serve-api` joined over its IPC channel (issue 34): a real
 * harness server in this process, a real child worker process (tsx) started by the
 * WorkerSupervisor, the HTTP requests the server receives counted by Node's
 * `http.server.request.start` diagnostics channel. Over the channel the child sends no
 * job-take, job-done, job-stream, ping or job-stop request (over HTTP it does, which the same test
 * shows can be seen; its heartbeat is the supervisor's, heard by the worker API), and jobs, large inputs, stream chunks in order, progress and errors arrive
 * as over HTTP; a child SIGKILLed mid-job has its job requeued and completed by the next,
 * and so do all the jobs pushed to a child of concurrency 4 that dies with them: none lost,
 * none run twice by the next child; a cancelled job (its stop sent over the channel: no job-stop
 * request either), which ends without a result, gives its
 * slot back (without its `free` message the next job would never be pushed).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../child-process.js';
import { nodeArgsFor } from '../compiled-fixtures.js';
import { call, waitFor } from '../kit/index.js';
import { composeHarness, type ComposedHarness } from '../../packages/platform/src/harness/compose.js';
import { WorkerApiDirect } from '../../packages/platform/src/harness/worker-api/index.js';
import { WorkerSupervisor } from '../../packages/platform/src/local/supervisor.js';
import { RUNTIME_VERSION } from '../../src/version.js';

const FIXTURE = join(REPO_ROOT, 'test/local/fixtures/channel-worker.ts');
const PING_MS = 10_000;

interface JobAnswer {
  id: string;
  status: string;
  output?: unknown;
  error?: unknown;
}

interface Setup {
  readonly app: ComposedHarness;
  readonly supervisor: WorkerSupervisor;
  readonly base: string;
  /** Requests the server received since the start, by worker API route (`queue` for the rest). */
  readonly requests: Record<string, number>;
  /** The heartbeats the worker API heard (over HTTP, or from the supervisor for a child over IPC). */
  readonly pings: Array<{ workerId: string; jobIds: string[]; version?: string }>;
}

const running: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of running.splice(0)) await close();
});

async function start(channel: 'ipc' | 'http', env: Record<string, string> = {}): Promise<Setup> {
  const requests: Record<string, number> = {};
  const pings: Setup['pings'] = [];
  const direct = new WorkerApiDirect();
  const app = await composeHarness({
    store: 'memory',
    harnessOptions: { endpoints: ['local'] },
    port: 0,
    rateLimits: false,
    dashboard: false,
    workerApi: { liveness: { pingIntervalMs: PING_MS }, direct, events: { onPing: (info) => pings.push(info) } },
  });
  const port = app.server.port;
  const onRequest = (message: unknown): void => {
    const request = (message as { request?: IncomingMessage }).request;
    // Only this server's requests (other tests' servers may share this process).
    if (request?.socket.localPort !== port) return;
    const route = /\/(job-take-batch|job-take|job-done|job-stream|job-stop|ping)\//.exec(request.url ?? '')?.[1] ?? 'queue';
    requests[route] = (requests[route] ?? 0) + 1;
  };
  subscribe('http.server.request.start', onRequest);
  const supervisor = new WorkerSupervisor({
    endpoint: app.harness.endpoint('local'),
    url: app.server.url,
    pingIntervalMs: PING_MS,
    stopBoundMs: 15_000,
    logger: pino({ level: 'silent' }),
    command: { file: process.execPath, args: nodeArgsFor(FIXTURE) },
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    channel: channel === 'ipc' ? direct.calls : undefined,
  });
  supervisor.start();
  running.push(async () => {
    await supervisor.stop();
    unsubscribe('http.server.request.start', onRequest);
    await app.close();
  });
  const first = await supervisor.firstStart;
  expect(first).toEqual({ ready: true });
  return { app, supervisor, base: `${app.server.url}/v2/local`, requests, pings };
}

const runsync = async (base: string, input: Record<string, unknown>): Promise<JobAnswer> =>
  (await call('POST', `${base}/runsync?wait=60000`, { body: { input } })).json as JobAnswer;

const status = async (base: string, id: string): Promise<JobAnswer> => (await call('GET', `${base}/status/${id}`)).json as JobAnswer;

/** Every chunk of a streaming job, read from /stream until it ends. */
async function readStream(base: string, id: string): Promise<unknown[]> {
  const outputs: unknown[] = [];
  for (let i = 0; i < 200; i++) {
    const answer = (await call('GET', `${base}/stream/${id}`)).json as { status: string; stream?: Array<{ output: unknown }> };
    for (const item of answer.stream ?? []) outputs.push(item.output);
    if (answer.status !== 'IN_QUEUE' && answer.status !== 'IN_PROGRESS') return outputs;
  }
  throw new Error(`job ${id} did not end`);
}

/** Jobs of every kind; answers nothing, fails on a wrong answer. */
async function exercise(base: string): Promise<void> {
  const echo = await runsync(base, { tag: 'a' });
  expect(echo).toMatchObject({ status: 'COMPLETED', output: { echo: 'a' } });
  // A large input (kept as its text by the harness) reaches the handler whole.
  const text = 'x'.repeat(300_000);
  expect(await runsync(base, { tag: 'big', text })).toMatchObject({ status: 'COMPLETED', output: { echo: 'big', textLength: text.length } });
  const { id: streamId } = (await call('POST', `${base}/run`, { body: { input: { mode: 'stream', n: 20 } } })).json as { id: string };
  // In order and whole; text yielded while a post is under way may be merged into one chunk (the runtime's chunker).
  const streamed = await readStream(base, streamId);
  expect(streamed.every((output) => typeof output === 'string')).toBe(true);
  expect(streamed.join('')).toBe(Array.from({ length: 20 }, (_, i) => `chunk-${i}`).join(''));
  expect((await status(base, streamId)).status).toBe('COMPLETED');
  const { id: progressId } = (await call('POST', `${base}/run`, { body: { input: { mode: 'progress' } } })).json as { id: string };
  await waitFor(
    async () => {
      const view = await status(base, progressId);
      return view.status === 'IN_PROGRESS' && JSON.stringify(view.output) === '{"step":1}';
    },
    'the progress value on /status',
    20_000,
    20,
  );
  await waitFor(async () => (await status(base, progressId)).status === 'COMPLETED', 'the progress job to complete', 20_000, 20);
  const failed = await runsync(base, { mode: 'fail' });
  expect(failed.status).toBe('FAILED');
  expect(JSON.stringify(failed.error)).toContain('boom from the channel worker');
}

describe('--serve-api: the supervised worker over its IPC channel', () => {
  it(
    'jobs, large inputs, stream chunks, progress and errors: no job-take, job-done or job-stream request over HTTP (over HTTP there are)',
    { timeout: 120_000 },
    async () => {
      const ipc = await start('ipc');
      await exercise(ipc.base);
      const viaIpc = { ...ipc.requests };
      const http = await start('http');
      await exercise(http.base);
      const viaHttp = { ...http.requests };
      expect(viaIpc['job-take'] ?? 0, JSON.stringify(viaIpc)).toBe(0);
      expect(viaIpc['job-take-batch'] ?? 0, JSON.stringify(viaIpc)).toBe(0);
      expect(viaIpc['job-done'] ?? 0, JSON.stringify(viaIpc)).toBe(0);
      expect(viaIpc['job-stream'] ?? 0, JSON.stringify(viaIpc)).toBe(0);
      // The child's heartbeat is its supervisor's, a call in this process: none over HTTP, and the harness hears it.
      expect(viaIpc.ping ?? 0, JSON.stringify(viaIpc)).toBe(0);
      expect(ipc.pings.length).toBeGreaterThanOrEqual(1);
      expect(ipc.pings[0]).toMatchObject({ workerId: 'local-1', version: RUNTIME_VERSION });
      // Over HTTP the child pings itself.
      expect(viaHttp.ping ?? 0, JSON.stringify(viaHttp)).toBeGreaterThanOrEqual(1);
      // Its job-stop wait is its supervisor's too (stops come over the channel); over HTTP it polls job-stop while it holds jobs.
      expect(viaIpc['job-stop'] ?? 0, JSON.stringify(viaIpc)).toBe(0);
      expect(viaHttp['job-stop'] ?? 0, JSON.stringify(viaHttp)).toBeGreaterThanOrEqual(1);
      // The same jobs over HTTP: a take and a done per job at least, and chunk posts.
      expect((viaHttp['job-take'] ?? 0) + (viaHttp['job-take-batch'] ?? 0), JSON.stringify(viaHttp)).toBeGreaterThanOrEqual(5);
      expect(viaHttp['job-done'] ?? 0, JSON.stringify(viaHttp)).toBeGreaterThanOrEqual(5);
      expect(viaHttp['job-stream'] ?? 0, JSON.stringify(viaHttp)).toBeGreaterThanOrEqual(1);
    },
  );

  it('a child SIGKILLed while it runs a job: the job goes back to the queue and a new child completes it', { timeout: 120_000 }, async () => {
    const { base, supervisor } = await start('ipc');
    const pid = ((await runsync(base, { tag: 'first' })).output as { pid: number }).pid;
    const { id } = (await call('POST', `${base}/run`, { body: { input: { mode: 'hold', ms: 2_000 } } })).json as { id: string };
    await waitFor(async () => (await status(base, id)).status === 'IN_PROGRESS', 'the held job to start', 20_000, 20);
    process.kill(pid, 'SIGKILL');
    const done = await waitFor(
      async () => {
        const view = await status(base, id);
        return view.status === 'IN_QUEUE' || view.status === 'IN_PROGRESS' ? undefined : view;
      },
      'the held job to end',
      60_000,
      50,
    );
    expect(done).toMatchObject({ status: 'COMPLETED', output: { held: true } });
    expect((done.output as { pid: number }).pid).not.toBe(pid);
    expect(supervisor.generation).toBe(2);
    const next = await runsync(base, { tag: 'after' });
    expect(next).toMatchObject({ status: 'COMPLETED', output: { echo: 'after' } });
  });

  it(
    'a child SIGKILLed with every slot holding a pushed job: all go back to the queue, none lost, none run twice by the next child',
    { timeout: 120_000 },
    async () => {
      const runsFile = join(mkdtempSync(join(tmpdir(), 'channel-runs-')), 'runs.txt');
      const { base, supervisor } = await start('ipc', { CHANNEL_WORKER_CONCURRENCY: '4', CHANNEL_WORKER_RUNS: runsFile });
      const runs = (): string[][] => {
        try {
          return readFileSync(runsFile, 'utf8')
            .trim()
            .split('\n')
            .filter((line) => line !== '')
            .map((line) => line.split(' '));
        } catch {
          return [];
        }
      };
      const pid = ((await runsync(base, { tag: 'first' })).output as { pid: number }).pid;
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push(((await call('POST', `${base}/run`, { body: { input: { mode: 'hold-first' } } })).json as { id: string }).id);
      // Four pushed and running in the first child (its four slots), two waiting in the queue.
      await waitFor(() => runs().length === 5, 'four jobs running in the first child (after the first one)', 20_000, 20);
      const views = await Promise.all(ids.map((id) => status(base, id)));
      expect(views.map((view) => view.status).sort()).toEqual(['IN_PROGRESS', 'IN_PROGRESS', 'IN_PROGRESS', 'IN_PROGRESS', 'IN_QUEUE', 'IN_QUEUE']);
      expect(supervisor.workerId).toBe('local-1');
      process.kill(pid, 'SIGKILL');
      const ended = await waitFor(
        async () => {
          const all = await Promise.all(ids.map((id) => status(base, id)));
          return all.every((view) => view.status !== 'IN_QUEUE' && view.status !== 'IN_PROGRESS') ? all : undefined;
        },
        'every job to end',
        60_000,
        50,
      );
      expect(ended.map((view) => view.status)).toEqual(ids.map(() => 'COMPLETED'));
      expect(supervisor.generation).toBe(2);
      const byWorker = (workerId: string): string[] =>
        runs()
          .filter((run) => run[2] === workerId)
          .map((run) => run[0] ?? '');
      // Each job ran once in the second child, whatever the first did with it.
      expect(byWorker('local-2').sort()).toEqual([...ids].sort());
      expect(byWorker('local-1')).toHaveLength(5);
    },
  );

  it('a cancelled job ends without a result and gives its slot back: the same child (concurrency 1) runs the next job', { timeout: 120_000 }, async () => {
    const { base, supervisor, requests } = await start('ipc');
    const pid = ((await runsync(base, { tag: 'first' })).output as { pid: number }).pid;
    const { id } = (await call('POST', `${base}/run`, { body: { input: { mode: 'until-stopped' } } })).json as { id: string };
    await waitFor(async () => (await status(base, id)).status === 'IN_PROGRESS', 'the job to start', 20_000, 20);
    await call('POST', `${base}/cancel/${id}`);
    // Its only slot was taken by the cancelled job: the next job is pushed only once that run has ended and said so.
    const next = await runsync(base, { tag: 'after' });
    expect(next).toMatchObject({ status: 'COMPLETED', output: { echo: 'after', pid } });
    expect((await status(base, id)).status).toBe('CANCELLED');
    expect(supervisor.generation).toBe(1);
    // The stop reached the handler over the channel: no job-stop request was made.
    expect(requests['job-stop'] ?? 0, JSON.stringify(requests)).toBe(0);
  });
});
