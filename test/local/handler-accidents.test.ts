/**
 * Handler accidents, in real child processes (issue 24, part 4): a stray rejection or
 * a throw outside the handler's promise is logged with its job and the worker keeps
 * serving (dry run, platform mode, load-balancing mode); `process.exit()` in a handler
 * makes the dry run print a FAILED `SW_HANDLER_EXITED` record and exit non-zero, and on
 * the platform path the job is requeued by the harness's rules, not lost; the first
 * SIGTERM stops a dry run whose handler hangs, with a record saying what happened.
 * (--serve-api: serve-api-supervisor.test.ts.)
 */
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Harness } from '../../src/harness/index.js';
import { REPO_ROOT, jsonLines, runTs, ChildList } from '../child-process.js';
import { startLbWorker } from '../load-balancing/lb-process.js';
import { freePort, waitFor, within } from '../kit/index.js';
import { killAllWorkers, startWorkerProcess } from '../platform/worker-process.js';
import { TestClient } from '../reliability/support/http.js';
import { QueueCaller, errorOf } from '../reliability/support/queue.js';
import { startReliabilityServer, type ReliabilityServer } from '../reliability/support/reliability-server.js';

const WORKER = join(REPO_ROOT, 'test/local/fixtures/accidents-worker.ts');
const LB_WORKER = join(REPO_ROOT, 'test/local/fixtures/accidents-lb-worker.ts');
const ENDPOINT = 'accidents';
const PING_MS = 200;

const children = new ChildList();
const client = new TestClient();
let running: ReliabilityServer | undefined;
afterEach(async () => {
  await children.killAll();
  await killAllWorkers();
  await running?.close();
  running = undefined;
});
afterAll(() => client.close());

function lastRecord(stdout: unknown): Record<string, unknown> {
  const lines = jsonLines(String(stdout));
  return lines[lines.length - 1] as Record<string, unknown>;
}

describe('dry run', () => {
  it.each(['stray-rejection', 'stray-throw'])('%s: the record is printed, COMPLETED, exit 0, the stray error logged with its job', async (mode) => {
    const result = await runTs(WORKER, ['--test-input', JSON.stringify({ input: { mode, tag: 'dry' } })]);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const record = lastRecord(result.stdout);
    expect(record).toMatchObject({ status: 'COMPLETED', output: { survived: mode } });
    expect(String(result.stderr)).toContain(`stray error from job ${String(record.id)}`);
    expect(String(result.stderr)).toContain(mode === 'stray-rejection' ? 'stray rejection from dry' : 'stray throw from dry');
  });

  it('process.exit(0) in the handler: a FAILED SW_HANDLER_EXITED record naming where, exit 1; process.exit(3) keeps its code', async () => {
    const result = await runTs(WORKER, ['--test-input', '{"input":{"mode":"exit","code":0}}']);
    expect(result.exitCode).toBe(1);
    const record = lastRecord(result.stdout);
    expect(record.status).toBe('FAILED');
    const error = record.error as Record<string, unknown>;
    expect(error).toMatchObject({ error_code: 'SW_HANDLER_EXITED', error_type: 'ProcessExit' });
    expect(String(error.error_message)).toContain(`exited with code 0 while job ${String(record.id)} was running`);
    expect(String(error.error_traceback)).toContain('accidents-worker.ts');
    expect(String(result.stderr)).toContain('SW_HANDLER_EXITED');

    const three = await runTs(WORKER, ['--test-input', '{"input":{"mode":"exit","code":3}}']);
    expect(three.exitCode).toBe(3);
    expect(lastRecord(three.stdout)).toMatchObject({ status: 'FAILED', error: { error_code: 'SW_HANDLER_EXITED' } });
  });

  it('the first SIGTERM stops a dry run whose handler hangs ignoring its signal: FAILED SW_WORKER_SHUTDOWN saying so, exit 1', async () => {
    const child = runTs(WORKER, ['--test-input', '{"input":{"mode":"hang-ignore"}}'], { env: { SHUTDOWN_TIMEOUT_MS: '300', TIMEOUT_GRACE_MS: '300' } });
    children.push(child);
    let stderr = '';
    child.stderr?.on('data', (data: Buffer) => (stderr += data.toString('utf8')));
    await waitFor(() => stderr.includes('dry run: job submitted'), 'the job to be submitted', 30_000, 20);
    child.kill('SIGTERM');
    const result = await within(child, 'the dry run to end after one SIGTERM', 30_000);
    expect(result.exitCode).toBe(1);
    const record = lastRecord(result.stdout);
    expect(record).toMatchObject({ status: 'FAILED', error: { error_code: 'SW_WORKER_SHUTDOWN' } });
    expect(String((record.error as Record<string, unknown>).error_message)).toContain('ignored its abort signal');
  });

  it('a second SIGTERM during the drain exits at once (143), still with a FAILED record saying so', async () => {
    const child = runTs(WORKER, ['--test-input', '{"input":{"mode":"hang-ignore"}}'], { env: { SHUTDOWN_TIMEOUT_MS: '60000' } });
    children.push(child);
    let stderr = '';
    child.stderr?.on('data', (data: Buffer) => (stderr += data.toString('utf8')));
    await waitFor(() => stderr.includes('dry run: job submitted'), 'the job to be submitted', 30_000, 20);
    child.kill('SIGTERM');
    await waitFor(() => stderr.includes('shutdown signal received'), 'the first signal to be seen', 30_000, 20);
    child.kill('SIGTERM');
    const result = await within(child, 'the dry run to end after the second SIGTERM', 30_000);
    expect(result.exitCode).toBe(143);
    const record = lastRecord(result.stdout);
    expect(record).toMatchObject({ status: 'FAILED', error: { error_code: 'SW_WORKER_SHUTDOWN' } });
    expect(String((record.error as Record<string, unknown>).error_message)).toContain('still draining after SIGTERM');
  });
});

describe('platform mode (a worker process joined to a harness)', () => {
  it('stray errors are logged with their job, and the same process keeps taking jobs', { timeout: 90_000 }, async () => {
    running = await startReliabilityServer({ workerApi: { longPollMs: 2_000, liveness: { pingIntervalMs: PING_MS, missedPings: 5 } } });
    const queue = new QueueCaller(client, `${running.origin}/v2/${ENDPOINT}`);
    const worker = startWorkerProcess('stray', { ...running.envFor(ENDPOINT, PING_MS), LOG_LEVEL: 'info' }, WORKER);
    const pids = new Set<unknown>();
    for (const mode of ['stray-rejection', 'stray-throw', 'echo']) {
      const id = await queue.run({ input: { mode, tag: mode } });
      const view = await queue.ended(id, 60_000);
      expect(view.status, `${mode}: ${worker.stderr().slice(-2_000)}`).toBe('COMPLETED');
      pids.add((view.output as { pid: unknown }).pid);
      if (mode !== 'echo') await worker.waitForStderr(`stray error from job ${id}`);
    }
    expect(pids.size).toBe(1);
    expect(worker.child.exitCode).toBeNull();
    expect(running.seen.gone).toEqual([]);
  });

  it(
    'process.exit(0) in the handler: the worker exits 1, the job goes back to the queue, and past maxRequeues it ends FAILED SW_REQUEUE_LIMIT; another worker serves on',
    { timeout: 120_000 },
    async () => {
      running = await startReliabilityServer({
        harness: new Harness({ maxRequeues: 1 }),
        workerApi: { longPollMs: 2_000, liveness: { pingIntervalMs: PING_MS, missedPings: 5 } },
      });
      const queue = new QueueCaller(client, `${running.origin}/v2/${ENDPOINT}`);
      const env = { ...running.envFor(ENDPOINT, PING_MS), LOG_LEVEL: 'info' };
      const id = await queue.run({ input: { mode: 'exit', code: 0 } });
      const first = startWorkerProcess('exit-1', env, WORKER);
      const firstExit = await within(first.exited, 'the first worker to exit', 60_000);
      expect(firstExit.code).toBe(1);
      expect(first.stderr()).toContain(`exited (code 0) with jobs running: ${id}`);
      // Requeued once the worker is gone (retries 1), taken by the next worker, lost again: FAILED.
      await waitFor(async () => (await running?.harness.endpoint(ENDPOINT).status(id))?.retries === 1, 'the job to be requeued', 30_000, 50);
      const second = startWorkerProcess('exit-2', env, WORKER);
      expect((await within(second.exited, 'the second worker to exit', 60_000)).code).toBe(1);
      const view = await queue.ended(id, 60_000);
      expect(view.status).toBe('FAILED');
      expect(errorOf(view)).toMatchObject({ error_code: 'SW_REQUEUE_LIMIT' });
      const third = startWorkerProcess('after', env, WORKER);
      const next = await queue.ended(await queue.run({ input: { tag: 'next' } }), 60_000);
      expect(next, third.stderr().slice(-2_000)).toMatchObject({ status: 'COMPLETED', output: { echo: 'next' } });
    },
  );
});

describe('load-balancing mode', () => {
  it('a stray rejection or throw in the app is logged and the worker keeps answering', { timeout: 90_000 }, async () => {
    const port = await freePort();
    const worker = startLbWorker('lb-stray', { PORT: String(port), LOG_LEVEL: 'info' }, LB_WORKER);
    const base = `http://127.0.0.1:${port}`;
    const get = async (path: string): Promise<{ status: number; body: { pid?: number } }> => {
      const response = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(5_000) });
      return { status: response.status, body: (await response.json()) as { pid?: number } };
    };
    await waitFor(
      async () => (await get('/ok').catch(() => undefined))?.status === 200,
      `the app to answer (stderr: ${worker.stderr().slice(-1_000)})`,
      30_000,
      50,
    );
    const { body } = await get('/stray-rejection');
    await worker.waitForStderr('stray rejection from the app');
    await get('/stray-throw');
    await worker.waitForStderr('stray throw from the app');
    expect(worker.stderr()).toContain('not attributed to a job; the worker keeps serving');
    expect(await get('/ok')).toEqual({ status: 200, body: { path: '/ok', pid: body.pid } });
    expect(worker.child.exitCode).toBeNull();
  });
});
