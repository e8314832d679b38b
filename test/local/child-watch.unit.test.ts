/**
 * The heartbeat and deadline watchdog the supervisor of `--serve-api` keeps for its worker
 * child (packages/platform/src/local/child-watch.ts), on a ManualClock with worker API calls
 * that record what they are given: pings from the child's first message, every interval,
 * listing the jobs out with it; a job past its deadline plus grace ended TIMED_OUT
 * (SW_EXECUTION_TIMEOUT, stopPod) and the child ended, only while the child is silent; a
 * child that ticks, a job that ended, or a silence within the deadline, left alone.
 * The real processes: test/reliability/blocked-loop.test.ts (`under --serve-api`) and
 * test/local/serve-api-channel.test.ts.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock/index.js';
import { runKey, type Job } from '../../src/job/index.js';
import type { WorkerApiCalls } from '../../packages/platform/src/harness/worker-api/index.js';
import { CHILD_WATCH, ChildWatch, type WatchedJob } from '../../packages/platform/src/local/child-watch.js';

const PING_MS = 10_000;
const DEFAULT_MS = 5_000;
const GRACE_MS = 1_000;

function setup() {
  const clock = new ManualClock();
  const pings: string[][] = [];
  const done: Array<{ jobId: string; attempt: number | undefined; body: Record<string, unknown> }> = [];
  let blocked = 0;
  const calls: WorkerApiCalls = {
    take: () => Promise.resolve([]),
    done: (_endpoint, _worker, jobId, body, attempt) => {
      done.push({ jobId, attempt, body: JSON.parse(body) as Record<string, unknown> });
      return Promise.resolve({ acknowledged: true, applied: true });
    },
    stream: () => Promise.resolve({ acknowledged: true, applied: true }),
    ping: (_endpoint, _worker, jobIds) => {
      pings.push([...jobIds]);
      return Promise.resolve();
    },
    stops: () => Promise.resolve(undefined),
  };
  // The channel's record of the jobs out with the child, which the watch reads.
  const jobs = new Map<string, WatchedJob>();
  const watch = new ChildWatch({
    jobs,
    calls,
    endpointId: 'local',
    workerId: 'local-1',
    logger: pino({ level: 'silent' }),
    clock,
    pingIntervalMs: PING_MS,
    onBlocked: () => blocked++,
  });
  /** As the channel does at a push, and at a result or `free`. */
  const push = (list: readonly Job[]): void => {
    for (const job of list)
      jobs.set(runKey(job.id, job.attempt), { id: job.id, attempt: job.attempt, pushedAt: clock.now(), timeoutMs: job.policy?.executionTimeout });
    watch.pushed();
  };
  const end = (jobId: string, attempt: number | undefined): void => {
    jobs.delete(runKey(jobId, attempt));
    watch.ended();
  };
  return { clock, watch, push, end, pings, done, blocked: () => blocked };
}

const job = (id: string, attempt?: number, executionTimeout?: number): Job =>
  ({ id, input: {}, ...(attempt !== undefined ? { attempt } : {}), ...(executionTimeout !== undefined ? { policy: { executionTimeout } } : {}) }) as Job;

/** Let the watchdog's posts settle. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe("the child's heartbeat, from its supervisor", () => {
  it('starts with the first message, lists the jobs out every interval, and ends with stop()', () => {
    const { clock, watch, push, end, pings } = setup();
    clock.advance(3 * PING_MS);
    expect(pings).toEqual([]);
    watch.heard();
    expect(pings).toEqual([[]]);
    push([job('a', 1), job('b', 1)]);
    clock.advance(PING_MS);
    expect(pings.at(-1)).toEqual(['a', 'b']);
    end('a', 1);
    clock.advance(PING_MS);
    expect(pings.at(-1)).toEqual(['b']);
    watch.stop();
    clock.advance(3 * PING_MS);
    expect(pings).toHaveLength(3);
  });
});

describe("the child's deadline watchdog, from its supervisor", () => {
  it('ends a job past its deadline plus grace TIMED_OUT while the child is silent, and ends the child once', async () => {
    const { clock, watch, push, done, blocked, pings } = setup();
    watch.heard();
    watch.timeouts(DEFAULT_MS, GRACE_MS);
    // One with the default timeout, one whose policy gives it 20 s.
    push([job('short', 2), job('long', 1, 20_000)]);
    clock.advance(DEFAULT_MS + GRACE_MS - 1);
    await settle();
    expect(done).toEqual([]);
    clock.advance(CHILD_WATCH.checkMs);
    await settle();
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ jobId: 'short', attempt: 2, body: { stopPod: true } });
    expect(JSON.parse(String(done[0]?.body.error))).toMatchObject({
      error_code: 'SW_EXECUTION_TIMEOUT',
      worker_id: 'local-1',
      error_type: 'ServerlessWorkerError',
    });
    expect(String(JSON.parse(String(done[0]?.body.error)).error_message)).toContain('execution timeout of 5000 ms plus the 1000 ms grace');
    expect(blocked()).toBe(1);
    // The other job goes back to the queue with the child's exit; no second verdict, and the heartbeat lists nothing.
    clock.advance(30_000);
    await settle();
    expect(done).toHaveLength(1);
    expect(blocked()).toBe(1);
    expect(pings.at(-1)).toEqual([]);
  });

  it('leaves a child that keeps talking alone (its own runtime times a job out), a job that ended, and a silence within the deadline', async () => {
    const { clock, watch, push, end, done, blocked } = setup();
    watch.heard();
    watch.timeouts(DEFAULT_MS, GRACE_MS);
    push([job('ticking')]);
    // Ticks every 500 ms, far past the deadline.
    for (let t = 0; t < 4 * (DEFAULT_MS + GRACE_MS); t += 500) {
      clock.advance(500);
      watch.heard();
    }
    await settle();
    expect(done).toEqual([]);
    // Its result came: then a silence as long as any deadline times nothing out.
    end('ticking', undefined);
    push([job('blocks-3-s')]);
    clock.advance(3_000);
    await settle();
    expect(done).toEqual([]);
    watch.heard();
    end('blocks-3-s', undefined);
    clock.advance(60_000);
    await settle();
    expect(done).toEqual([]);
    expect(blocked()).toBe(0);
  });

  it('waits for the child to say its timeouts', async () => {
    const { clock, watch, push, done } = setup();
    watch.heard();
    push([job('early')]);
    clock.advance(60_000);
    await settle();
    expect(done).toEqual([]);
    // Told them: the job pushed a minute ago is long past its deadline, and the child silent.
    watch.timeouts(DEFAULT_MS, GRACE_MS);
    clock.advance(CHILD_WATCH.checkMs);
    await settle();
    expect(done.map((entry) => entry.jobId)).toEqual(['early']);
  });
});
