/**
 * src/clock: the ManualClock moves only when told, and the helpers built on a Clock
 * (sleep, withinTime, repeatEvery) follow the clock they are given, so a test drives
 * a poll gap, a bound or a periodic task by advancing it.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, backoffDelay, repeatEvery, sleep, systemClock, withinTime } from '../../src/clock/index.js';

/** Let promise callbacks that a timer started run to their end. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('ManualClock', () => {
  it('fires due timers in order of due time, then of arming, and not the cancelled ones', () => {
    const clock = new ManualClock(1_000);
    const fired: string[] = [];
    clock.setTimer(20, () => fired.push(`b at ${clock.now()}`));
    clock.setTimer(10, () => fired.push(`a at ${clock.now()}`));
    clock.setTimer(20, () => fired.push(`c at ${clock.now()}`));
    clock.setTimer(15, () => fired.push('cancelled')).cancel();
    expect(clock.nextDueAt).toBe(1_010);
    clock.advance(19);
    expect(fired).toEqual(['a at 1010']);
    expect(clock.nextDueAt).toBe(1_020);
    clock.advance(1);
    expect(fired).toEqual(['a at 1010', 'b at 1020', 'c at 1020']);
    expect(clock.now()).toBe(1_020);
    expect(clock.pendingTimers).toBe(0);
    expect(clock.nextDueAt).toBeUndefined();
  });
});

describe('helpers on a clock', () => {
  it('sleep resolves when the clock passes the time, or at once on abort', async () => {
    const clock = new ManualClock();
    let slept = false;
    void sleep(100, undefined, clock).then(() => (slept = true));
    clock.advance(99);
    await settle();
    expect(slept).toBe(false);
    clock.advance(1);
    await settle();
    expect(slept).toBe(true);

    const abort = new AbortController();
    const aborted = sleep(60_000, abort.signal, clock);
    abort.abort();
    await aborted;
    expect(clock.pendingTimers).toBe(0);
  });

  it('withinTime answers the promise, or the expired value once the clock passes the bound', async () => {
    const clock = new ManualClock();
    await expect(withinTime(Promise.resolve('done'), 10, 'late', clock)).resolves.toBe('done');
    expect(clock.pendingTimers).toBe(0);
    const late = withinTime(new Promise<string>(() => {}), 10, 'late', clock);
    clock.advance(10);
    await expect(late).resolves.toBe('late');
  });

  it('repeatEvery runs every interval until cancelled', () => {
    const clock = new ManualClock();
    let runs = 0;
    const handle = repeatEvery(clock, 10, () => runs++);
    clock.advance(35);
    expect(runs).toBe(3);
    handle.cancel();
    clock.advance(100);
    expect(runs).toBe(3);
    expect(clock.pendingTimers).toBe(0);
  });

  it('backoffDelay doubles from min to max, jittered into [half, whole]', () => {
    const policy = { minMs: 100, maxMs: 1_000 };
    expect([1, 2, 3, 4, 5].map((failures) => backoffDelay(failures, policy, () => 1))).toEqual([100, 200, 400, 800, 1_000]);
    expect(backoffDelay(3, policy, () => 0)).toBe(200);
  });

  it('the system clock fires its timers on real time, and cancels them', async () => {
    const fired = await new Promise<boolean>((resolve) => systemClock.setTimer(1, () => resolve(true), { keepAlive: true }));
    expect(fired).toBe(true);
    let late = false;
    systemClock.setTimer(1, () => (late = true)).cancel();
    await sleep(5);
    expect(late).toBe(false);
  });
});
