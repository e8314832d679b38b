/**
 * TakeWaiters.park on a signal: one 'abort' listener per signal however many takes park on
 * it (the supervised child's standing take parks once per job on the same signal), an abort
 * answering [] to exactly the waiters still parked, and a park on an aborted signal answering
 * [] at once.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { TakeWaiters } from '../../src/harness/core/take-waiters.js';
import type { Job } from '../../src/job/index.js';

const job = (id: string): Job => ({ id, input: {} }) as unknown as Job;

describe('TakeWaiters.park', () => {
  it('keeps one abort listener on a signal across many takes, and answers [] only to the waiters parked when it aborts', async () => {
    const waiters = new TakeWaiters();
    const controller = new AbortController();
    for (let i = 0; i < 50; i++) {
      const parked = waiters.park('w', 1, controller.signal);
      waiters.first()?.resolve([job(`j${i}`)]);
      expect(await parked).toEqual([job(`j${i}`)]);
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    const first = waiters.park('w', 1, controller.signal);
    const second = waiters.park('w', 1, controller.signal);
    const served = waiters.park('w', 1, controller.signal);
    waiters.all()[2]?.resolve([job('kept')]);
    expect(waiters.size).toBe(2);
    controller.abort();
    expect(await first).toEqual([]);
    expect(await second).toEqual([]);
    expect(await served).toEqual([job('kept')]);
    expect(waiters.size).toBe(0);
    expect(await waiters.park('w', 1, controller.signal)).toEqual([]);
    expect(waiters.size).toBe(0);
  });

  it('waiters on different signals are aborted apart', async () => {
    const waiters = new TakeWaiters();
    const [a, b] = [new AbortController(), new AbortController()];
    const onA = waiters.park('w', 1, a.signal);
    const onB = waiters.park('w', 1, b.signal);
    a.abort();
    expect(await onA).toEqual([]);
    expect(waiters.size).toBe(1);
    waiters.first()?.resolve([job('b')]);
    expect(await onB).toEqual([job('b')]);
  });
});
