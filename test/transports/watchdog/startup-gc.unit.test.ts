/**
 * Issue 46: the watchdog thread collects what loading its modules left in its heap, once
 * (transports/watchdog/thread-startup-gc.ts), and not when it is stopped first.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../../src/clock/index.js';
import { collectStartupGarbage, STARTUP_COLLECTION_DELAY_MS } from '../../../src/transports/watchdog/thread-startup-gc.js';
import type { Collector } from '../../../src/metrics/garbage-collector.js';

/** A collector factory that counts the collections asked of it. */
function counting(): { factory: () => Collector; collections: () => number } {
  let count = 0;
  return { factory: () => () => void count++, collections: () => count };
}

describe('collectStartupGarbage', () => {
  it('runs one full collection once its delay has passed, and no other', () => {
    const clock = new ManualClock();
    const counted = counting();
    collectStartupGarbage(STARTUP_COLLECTION_DELAY_MS, counted.factory, clock);
    clock.advance(STARTUP_COLLECTION_DELAY_MS - 1);
    expect(counted.collections()).toBe(0);
    clock.advance(1);
    expect(counted.collections()).toBe(1);
    clock.advance(60_000);
    expect(counted.collections()).toBe(1);
  });

  it('does nothing once cancelled (the thread stopped first)', () => {
    const clock = new ManualClock();
    const counted = counting();
    collectStartupGarbage(STARTUP_COLLECTION_DELAY_MS, counted.factory, clock).cancel();
    clock.advance(60_000);
    expect(counted.collections()).toBe(0);
  });

  it("waits a second by default, and V8's own collector leaves no gc in the global scope", async () => {
    expect(STARTUP_COLLECTION_DELAY_MS).toBe(1_000);
    const hadGc = typeof (globalThis as { gc?: unknown }).gc === 'function';
    collectStartupGarbage(0);
    await new Promise<void>((resolve) => systemClock.setTimer(30, resolve, { keepAlive: true }));
    expect(typeof (globalThis as { gc?: unknown }).gc === 'function').toBe(hadGc);
  });

  it('does not hold a thread open: its timer is not kept alive', () => {
    const timeouts = (): number => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
    const before = timeouts();
    const scheduled = collectStartupGarbage(60_000, counting().factory);
    expect(timeouts()).toBe(before);
    scheduled.cancel();
  });
});
