import { describe, expect, it } from 'vitest';
import { Harness, ManualClock, MemoryJobStore, Scheduler, type DueOutcome, type JobStore, type StoreEvent } from '../../src/harness/index.js';
import { parseJobRequest } from '../../src/job/index.js';

const request = (policy?: Record<string, number>) => parseJobRequest({ input: {}, ...(policy ? { policy } : {}) });

/** A memory store seen as a shared store would be: no peekNextDueAt, so the scheduler must ask nextDueAt. */
function withoutPeek(store: MemoryJobStore): JobStore {
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'peekNextDueAt') return undefined;
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Let promise callbacks run (the scheduler re-arms after its store answers). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe('Scheduler on a ManualClock', () => {
  it('applies each deadline in one advance at its own time: execution timeout, then retention', async () => {
    const clock = new ManualClock();
    const harness = new Harness({ clock });
    const endpoint = harness.endpoint('ep');
    const { id } = await endpoint.submit(request({ executionTimeout: 5_000 }));
    await endpoint.tryTake('w1', 1);
    // 5 s to the timeout, then 30 min of retention: one advance crosses both.
    clock.advance(5_000 + 30 * 60_000 - 1);
    expect(await endpoint.find(id)).toMatchObject({
      status: 'TIMED_OUT',
      startedAt: clock.now() - 30 * 60_000 - 4_999,
      endedAt: clock.now() - 30 * 60_000 + 1,
    });
    clock.advance(1);
    expect(await endpoint.find(id)).toBeUndefined();
    expect(clock.pendingTimers).toBe(0);
  });

  it('with a store without peekNextDueAt: asks nextDueAt, arms for it, and applies what is due', async () => {
    const clock = new ManualClock();
    const store = withoutPeek(new MemoryJobStore());
    const outcomes: DueOutcome[] = [];
    const scheduler = new Scheduler(store, clock, {
      onDue: (outcome) => outcomes.push(outcome),
      onError: (error) => {
        throw error;
      },
      pollMs: 60_000,
    });
    const job = await store.submit('ep', request({ ttl: 10_000 }), {}, clock.now());
    await settle();
    clock.advance(9_999);
    await settle();
    expect(await store.get('ep', job.id)).toBeDefined();
    clock.advance(1);
    await settle();
    expect(await store.get('ep', job.id)).toBeUndefined();
    expect(outcomes.flatMap((outcome) => outcome.deleted.map((deleted) => deleted.id))).toEqual([job.id]);
    scheduler.close();
    expect(clock.pendingTimers).toBe(0);
  });

  it('with a store without peekNextDueAt: arms for the deadline an event names without asking nextDueAt, and asks on an event that names none', async () => {
    const clock = new ManualClock();
    let listener: ((event: StoreEvent) => void) | undefined;
    let asked = 0;
    const applied: number[] = [];
    const store = {
      subscribe: (added: (event: StoreEvent) => void) => {
        listener = added;
        return () => (listener = undefined);
      },
      nextDueAt: () => {
        asked++;
        return Promise.resolve(undefined);
      },
      applyDue: (now: number) => {
        applied.push(now);
        return Promise.resolve({ ended: [], stops: [], deleted: [] });
      },
    } as unknown as JobStore;
    const scheduler = new Scheduler(store, clock, {
      onDue: () => {},
      onError: (error) => {
        throw error;
      },
      pollMs: 60_000,
    });
    await settle();
    expect(asked).toBe(1);
    listener?.({ type: 'changed', endpointId: 'ep', jobId: 'j', status: 'IN_PROGRESS', due: clock.now() + 5_000 });
    listener?.({ type: 'queued', endpointId: 'ep', due: clock.now() + 70_000 });
    await settle();
    expect(asked).toBe(1);
    clock.advance(4_999);
    await settle();
    expect(applied).toEqual([]);
    clock.advance(1);
    await settle();
    expect(applied).toEqual([clock.now()]);
    expect(asked).toBe(2);
    listener?.({ type: 'changed', endpointId: 'ep', jobId: 'j' });
    await settle();
    expect(asked).toBe(3);
    scheduler.close();
    expect(clock.pendingTimers).toBe(0);
  });

  it('repeat() runs a task every interval on the clock until cancelled, never two at once', async () => {
    const clock = new ManualClock();
    const scheduler = new Scheduler(new MemoryJobStore(), clock, { onDue: () => {}, onError: () => {} });
    let runs = 0;
    const handle = scheduler.repeat(1_000, async () => {
      runs++;
    });
    clock.advance(999);
    expect(runs).toBe(0);
    clock.advance(1);
    await settle();
    expect(runs).toBe(1);
    clock.advance(1_000);
    await settle();
    expect(runs).toBe(2);
    handle.cancel();
    clock.advance(5_000);
    await settle();
    expect(runs).toBe(2);
    scheduler.close();
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('two harnesses on one store (as two processes on one database)', () => {
  function pair(): { clock: ManualClock; a: Harness; b: Harness } {
    const clock = new ManualClock();
    const store = new MemoryJobStore();
    return { clock, a: new Harness({ clock, store }), b: new Harness({ clock, store }) };
  }

  it('a job submitted through one is taken by a worker waiting on the other', async () => {
    const { a, b } = pair();
    const waiting = b.endpoint('ep').take('w1', 1);
    const { id } = await a.endpoint('ep').submit(request());
    expect((await waiting).map((job) => job.id)).toEqual([id]);
    expect((await a.endpoint('ep').status(id)).status).toBe('IN_PROGRESS');
  });

  it('a cancel through one reaches the stop listeners of both; jobEnded fires only where the call ended the job', async () => {
    const { a, b } = pair();
    const stops: string[] = [];
    const ended: string[] = [];
    for (const [name, harness] of [
      ['a', a],
      ['b', b],
    ] as const) {
      harness.endpoint('ep').stopRequested.add((workerId, jobId, reason) => stops.push(`${name}:${workerId}:${reason}`));
      harness.endpoint('ep').jobEnded.add((job) => ended.push(`${name}:${job.status}`));
    }
    const { id } = await a.endpoint('ep').submit(request());
    await b.endpoint('ep').tryTake('w1', 1);
    await a.endpoint('ep').cancel(id);
    expect(stops.sort()).toEqual(['a:w1:cancelled', 'b:w1:cancelled']);
    expect(ended).toEqual(['a:CANCELLED']);
  });

  it('an execution timeout is applied once although both schedulers run', async () => {
    const { clock, a, b } = pair();
    const ended: string[] = [];
    a.endpoint('ep').jobEnded.add((job) => ended.push(`a:${job.status}`));
    b.endpoint('ep').jobEnded.add((job) => ended.push(`b:${job.status}`));
    const { id } = await a.endpoint('ep').submit(request({ executionTimeout: 5_000 }));
    await b.endpoint('ep').tryTake('w1', 1);
    clock.advance(5_000);
    await settle();
    expect((await b.endpoint('ep').status(id)).status).toBe('TIMED_OUT');
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatch(/^[ab]:TIMED_OUT$/);
  });
});
