/**
 * @module test/reliability/blocked-loop.test
 * Handlers that block the event loop synchronously (a busy loop, as a long native call
 * would), in real worker processes: on the platform transport against the harness
 * server, in a dry run and under --serve-api. The watchdog thread must time such a job
 * out about one second after its deadline plus grace, report it (and the other running
 * jobs) and end the process with exit 1; a block shorter than the deadline must change
 * nothing; a long block must stop the heartbeat from claiming the jobs; a SIGTERM that
 * arrives while the loop is blocked must lose no result once it unblocks. The bounds
 * are generous (shared machines); the measured figures are printed.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { JobView } from '../../src/job/index.js';
import { jsonLines, runTs, ChildList } from '../child-process.js';
import { call, startServeApiProcess, within } from '../kit/index.js';
import { printFigures } from './support/figures.js';
import { TestClient } from './support/http.js';
import { QueueCaller, errorOf } from './support/queue.js';
import { startReliabilityServer, type ReliabilityServer } from './support/reliability-server.js';
import { RELIABILITY_WORKER, killWorkers, startWorkerProcess } from './support/worker-process.js';

const ENDPOINT = 'blocked';
const PING_MS = 500;
/**
 * A 2 s execution timeout (the workers' default, DEFAULT_EXECUTION_TIMEOUT_MS: a policy's
 * executionTimeout is at least 5 s) and a 1 s grace: the job must be reported TIMED_OUT
 * before about 4 s. The watchdog's rule is the same at any deadline; these four tests wait
 * out deadline + grace each, so the smallest the worker accepts keeps the file short
 * (5 s + 2 s took 7 s a test).
 */
const TIMEOUT_MS = 2_000;
const GRACE_MS = 1_000;
/** The blocks that must not be timed out (3 s) run under the worker's 5 s deadline: 2 s of margin on a loaded machine. */
const LONG_DEADLINE = { DEFAULT_EXECUTION_TIMEOUT_MS: '5000', TIMEOUT_GRACE_MS: '2000' };
/** Generous bound past deadline + grace for a loaded machine (the aim is about 1 s). */
const SLACK_MS = 6_000;
/** No block in these tests comes near it, unless a test says otherwise. */
const NO_UNCLAIM_MS = '60000';

const client = new TestClient();
let running: ReliabilityServer | undefined;
const children = new ChildList();
afterEach(async () => {
  await killWorkers();
  await children.killAll();
  await running?.close();
  running = undefined;
});
afterAll(() => client.close());

/** The harness server; with `apiKey`, every call (the worker's, the watchdog thread's and the client's) must carry it. */
async function harness(apiKey?: string): Promise<{ server: ReliabilityServer; queue: QueueCaller }> {
  const server = await startReliabilityServer({
    workerApi: { longPollMs: 2_000, liveness: { pingIntervalMs: PING_MS, missedPings: 5 } },
    ...(apiKey !== undefined ? { apiKey } : {}),
  });
  running = server;
  return { server, queue: new QueueCaller(client, `${server.origin}/v2/${ENDPOINT}`, apiKey) };
}

/** The direct children of `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8')
        .split(/\s+/)
        .filter((word) => word !== '')
        .map(Number),
    );
  } catch {
    return [];
  }
}

/** Whether `pid` is a live process (not gone, not a zombie). */
function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

function workerEnv(server: ReliabilityServer, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...server.envFor(ENDPOINT, PING_MS),
    LOG_LEVEL: 'warn',
    TIMEOUT_GRACE_MS: String(GRACE_MS),
    DEFAULT_EXECUTION_TIMEOUT_MS: String(TIMEOUT_MS),
    EVENT_LOOP_BLOCKED_MS: NO_UNCLAIM_MS,
    ...extra,
  };
}

describe('a handler that blocks the event loop', () => {
  it(
    'on the platform transport: TIMED_OUT by the watchdog within its bound, result posted with stopPod and the API key, the process exits 1 and a new worker takes the next job',
    { timeout: 180_000 },
    async () => {
      // The harness refuses any call without the key (401): the watchdog thread's post must carry it to land.
      const { server, queue } = await harness('blocked-loop-key');
      const first = startWorkerProcess('blocked-1', workerEnv(server));
      // No policy: the harness's own execution timer (10 min) stays out of it; only the worker's 2 s default applies.
      const id = await queue.run({ input: { mode: 'busy', ms: 30_000 } });
      const started = await first.waitForEvent((event) => event.event === 'started' && event.jobId === id, 'the busy job started', 60_000);
      const view = await queue.ended(id, TIMEOUT_MS + GRACE_MS + SLACK_MS + 10_000);
      const endedAfterMs = Date.now() - started.at;
      const exit = await within(first.exited, 'the blocked worker process to exit', 20_000);
      const exitedAfterMs = Date.now() - started.at;
      expect(view.status, first.stderr().slice(-2_000)).toBe('TIMED_OUT');
      expect(errorOf(view)).toMatchObject({ error_code: 'SW_EXECUTION_TIMEOUT', worker_id: 'blocked-1' });
      expect(String(errorOf(view).error_message)).toContain('blocked the event loop');
      expect(endedAfterMs).toBeLessThan(TIMEOUT_MS + GRACE_MS + SLACK_MS);
      expect(exit).toEqual({ code: 1, signal: null });
      expect(server.seen.stopPods).toContainEqual({ workerId: 'blocked-1', jobId: id });
      // The watchdog's post was applied (it passed the key check), not only the harness's own view of the job.
      expect(server.seen.results.filter((result) => result.jobId === id && result.workerId === 'blocked-1').map((result) => result.ack.applied)).toEqual([
        true,
      ]);
      expect(first.events.some((event) => event.event === 'unblocked')).toBe(false);
      // The watchdog's line, in the worker's JSON logs.
      await first.waitForStderr('"component":"watchdog"');

      const second = startWorkerProcess('blocked-2', workerEnv(server));
      const next = await queue.run({ input: { mode: 'echo', tag: 'after' } });
      expect(await queue.ended(next, 60_000)).toMatchObject({ status: 'COMPLETED', output: { workerId: 'blocked-2', tag: 'after' } });
      second.signal('SIGTERM');
      printFigures('blocked loop, platform', {
        timeoutMs: TIMEOUT_MS,
        graceMs: GRACE_MS,
        timedOutAfterMs: endedAfterMs,
        exitedAfterMs,
        exitCode: exit.code ?? -1,
      });
    },
  );

  it('with two jobs running, only one blocked: the blocked one TIMED_OUT, the other FAILED SW_WORKER_SHUTDOWN, none lost', { timeout: 180_000 }, async () => {
    const { server, queue } = await harness();
    const worker = startWorkerProcess('pair', workerEnv(server, { TEST_CONCURRENCY: '2' }));
    const calm = await queue.run({ input: { mode: 'sleep', ms: 40_000 }, policy: { executionTimeout: 120_000 } });
    await worker.waitForEvent((event) => event.event === 'started' && event.jobId === calm, 'the calm job started', 60_000);
    const busy = await queue.run({ input: { mode: 'busy', ms: 30_000 } });
    const started = await worker.waitForEvent((event) => event.event === 'started' && event.jobId === busy, 'the busy job started', 30_000);
    const [busyView, calmView] = await Promise.all([queue.ended(busy, 40_000), queue.ended(calm, 40_000)]);
    const endedAfterMs = Date.now() - started.at;
    const exit = await within(worker.exited, 'the worker process to exit', 20_000);
    expect(busyView.status).toBe('TIMED_OUT');
    expect(errorOf(busyView)).toMatchObject({ error_code: 'SW_EXECUTION_TIMEOUT' });
    expect(calmView.status).toBe('FAILED');
    expect(errorOf(calmView)).toMatchObject({ error_code: 'SW_WORKER_SHUTDOWN', worker_id: 'pair' });
    expect(exit.code).toBe(1);
    printFigures('blocked loop, two jobs', { bothEndedAfterMs: endedAfterMs, busy: busyView.status, calm: calmView.status });
  });

  it(
    'a block shorter than the deadline (3 s of 5 s) completes normally: no early watchdog, the heartbeat keeps the job, the worker serves on',
    { timeout: 180_000 },
    async () => {
      const { server, queue } = await harness();
      const worker = startWorkerProcess('short-block', workerEnv(server, LONG_DEADLINE));
      const id = await queue.run({ input: { mode: 'busy', ms: 3_000, tag: 'short' } });
      const view = await queue.ended(id, 60_000);
      expect(view, worker.stderr().slice(-2_000)).toMatchObject({ status: 'COMPLETED', output: { blocked: true, tag: 'short' } });
      expect(server.seen.pingedJobs).toContainEqual({ workerId: 'short-block', jobId: id });
      expect(server.seen.stopPods).toEqual([]);
      expect(server.seen.lost).toEqual([]);
      const next = await queue.run({ input: { mode: 'echo', tag: 'next' } });
      expect(await queue.ended(next, 60_000)).toMatchObject({ status: 'COMPLETED', output: { workerId: 'short-block' } });
      expect(worker.child.exitCode).toBeNull();
      expect(worker.stderr()).not.toContain('"component":"watchdog"');
      printFigures('blocked loop, 3 s of 5 s', { status: view.status, executionTimeMs: view.executionTime ?? -1 });
    },
  );

  it(
    'blocked longer than eventLoopBlockedMs: the heartbeat stops claiming the job, the harness requeues it and another worker completes it',
    { timeout: 180_000 },
    async () => {
      const { server, queue } = await harness();
      const stuck = startWorkerProcess('stuck', workerEnv(server, { EVENT_LOOP_BLOCKED_MS: '1000', DEFAULT_EXECUTION_TIMEOUT_MS: '120000' }));
      const id = await queue.run({ input: { mode: 'busy', ms: 60_000, blockOn: 'stuck' } });
      const started = await stuck.waitForEvent((event) => event.event === 'started' && event.jobId === id, 'the job started on the stuck worker', 60_000);
      const helper = startWorkerProcess('helper', workerEnv(server));
      const view = await queue.ended(id, 60_000);
      const requeuedAfterMs = (server.seen.lost.find((lost) => lost.requeued.includes(id))?.epochMs ?? Number.NaN) - started.at;
      expect(view, stuck.stderr().slice(-2_000)).toMatchObject({ status: 'COMPLETED', output: { workerId: 'helper', blocked: false } });
      expect(server.seen.lost.some((lost) => lost.workerId === 'stuck' && lost.requeued.includes(id))).toBe(true);
      await stuck.waitForStderr('the heartbeat no longer lists');
      helper.signal('SIGTERM');
      printFigures('blocked loop, heartbeat unclaims', { eventLoopBlockedMs: 1_000, silenceMs: PING_MS * 5, requeuedAfterMs, status: view.status });
    },
  );

  it(
    'SIGTERM while blocked: the signal waits for the loop; once it unblocks the job completes, its result is posted, exit 0',
    { timeout: 180_000 },
    async () => {
      const { server, queue } = await harness();
      const worker = startWorkerProcess('sigterm', workerEnv(server, LONG_DEADLINE));
      const id = await queue.run({ input: { mode: 'busy', ms: 3_000, tag: 'kept' } });
      await worker.waitForEvent((event) => event.event === 'started' && event.jobId === id, 'the busy job started', 60_000);
      worker.signal('SIGTERM');
      const exit = await within(worker.exited, 'the worker to drain and exit', 60_000);
      const view = await queue.ended(id, 10_000);
      expect(view, worker.stderr().slice(-2_000)).toMatchObject({ status: 'COMPLETED', output: { tag: 'kept', blocked: true } });
      expect(server.seen.results.some((result) => result.jobId === id && result.ack.applied)).toBe(true);
      expect(exit).toEqual({ code: 0, signal: null });
    },
  );

  it('in a dry run: the final record is printed TIMED_OUT and the process exits 1', { timeout: 120_000 }, async () => {
    const startedAt = Date.now();
    const child = runTs(
      RELIABILITY_WORKER,
      // The deadline as the worker's default: a policy's executionTimeout is at least 5 s.
      ['--test-input', JSON.stringify({ input: { mode: 'busy', ms: 30_000 } })],
      {
        env: { LOG_LEVEL: 'warn', TIMEOUT_GRACE_MS: String(GRACE_MS), DEFAULT_EXECUTION_TIMEOUT_MS: String(TIMEOUT_MS) },
      },
    );
    children.push(child);
    const result = await child;
    const elapsedMs = Date.now() - startedAt;
    const record = jsonLines(String(result.stdout)).at(-1) as JobView & { error: Record<string, unknown> };
    expect(result.exitCode, String(result.stderr)).toBe(1);
    expect(record).toMatchObject({ status: 'TIMED_OUT', error: { error_code: 'SW_EXECUTION_TIMEOUT' } });
    expect(record.executionTime).toBeGreaterThanOrEqual(TIMEOUT_MS + GRACE_MS - 100);
    expect(record.executionTime).toBeLessThan(TIMEOUT_MS + GRACE_MS + SLACK_MS);
    printFigures('blocked loop, dry run', { executionTimeMs: record.executionTime ?? -1, processMs: elapsedMs, exitCode: result.exitCode ?? -1 });
  });

  it(
    'under --serve-api: the worker child is timed out by its watchdog (TIMED_OUT), replaced, and the next /runsync completes',
    { timeout: 120_000 },
    async () => {
      const { child, url } = await startServeApiProcess(children, RELIABILITY_WORKER, ['--serve-api', '--port', '0'], {
        // The deadline as the worker child's default (it inherits this environment): a policy's executionTimeout is at least 5 s.
        env: { LOG_LEVEL: 'warn', TIMEOUT_GRACE_MS: String(GRACE_MS), DEFAULT_EXECUTION_TIMEOUT_MS: String(TIMEOUT_MS) },
      });
      const startedAt = Date.now();
      // The harness is in the parent process now: /runsync is answered although the worker's loop is blocked.
      const blocked = await call('POST', `${url}/v2/local/runsync?wait=60000`, {
        body: { input: { mode: 'busy', ms: 30_000 } },
      });
      const endedAfterMs = Date.now() - startedAt;
      expect(blocked.json).toMatchObject({ status: 'TIMED_OUT' });
      const next = await call('POST', `${url}/v2/local/runsync?wait=60000`, { body: { input: { tag: 'after' } } });
      const nextAfterMs = Date.now() - startedAt;
      expect(next.json).toMatchObject({ status: 'COMPLETED', output: { tag: 'after', workerId: 'local-2' } });
      expect(child.exitCode).toBeNull();
      printFigures('blocked loop, --serve-api', { timedOutAfterMs: endedAfterMs, nextServedAfterMs: nextAfterMs });
    },
  );

  it(
    'blocked in a native call (execFileSync of sleep 30 with a 2 s timeout): TIMED_OUT record, the sleep child killed, the process ends',
    { timeout: 120_000 },
    async () => {
      const timeoutMs = 2_000;
      const graceMs = 1_000;
      const startedAt = Date.now();
      // The worker's default timeout (a policy's executionTimeout is at least 5 s).
      const child = runTs(RELIABILITY_WORKER, ['--test-input', JSON.stringify({ input: { mode: 'native', ms: 30_000 } })], {
        env: { LOG_LEVEL: 'warn', TIMEOUT_GRACE_MS: String(graceMs), DEFAULT_EXECUTION_TIMEOUT_MS: String(timeoutMs) },
      });
      children.push(child);
      const pid = child.pid ?? -1;
      // The sleep child of the worker, once execFileSync started it.
      let sleepPid: number | undefined;
      await within(
        (async () => {
          while (sleepPid === undefined && child.exitCode === null) {
            sleepPid = childrenOf(pid).find((candidate) => {
              try {
                return readFileSync(`/proc/${candidate}/comm`, 'utf8').trim() === 'sleep';
              } catch {
                return false;
              }
            });
            if (sleepPid === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
          }
        })(),
        'the sleep child to start',
        60_000,
      );
      const result = await child;
      const elapsedMs = Date.now() - startedAt;
      const record = jsonLines(String(result.stdout)).at(-1) as JobView & { error: Record<string, unknown> };
      expect(record, String(result.stderr)).toMatchObject({ status: 'TIMED_OUT', error: { error_code: 'SW_EXECUTION_TIMEOUT' } });
      expect(String(record.error.error_message)).toContain('blocked the event loop');
      // process.exit(1) cannot run inside the native call: after EXIT_WAIT_MS the watchdog kills the
      // process's children; execFileSync then returns, the main thread runs the pending exit: code 1.
      // (A native call with no child to kill ends in the watchdog's SIGKILL of the process instead.)
      expect({ exitCode: result.exitCode, signal: result.signal ?? null }, String(result.stderr)).toEqual({ exitCode: 1, signal: null });
      expect(sleepPid).toBeDefined();
      // Not orphaned: the 30 s sleep is gone well before its 30 s.
      await within(
        (async () => {
          while (sleepPid !== undefined && alive(sleepPid)) await new Promise((resolve) => setTimeout(resolve, 50));
        })(),
        'the sleep child to be gone',
        10_000,
      );
      expect(String(result.stdout)).not.toContain('"event":"unblocked"');
      printFigures('blocked loop, native call', { timeoutMs, graceMs, processMs: elapsedMs, exitCode: result.exitCode ?? -1, signal: result.signal ?? 'none' });
    },
  );
});
