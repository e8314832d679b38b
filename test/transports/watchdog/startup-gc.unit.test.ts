/**
 * Issue 46: the watchdog thread collects what loading its modules left in its heap, once
 * (transports/watchdog/thread-startup-gc.ts), and not when it is stopped first.
 */
import { describe, expect, it } from 'vitest';
import { collectStartupGarbage, STARTUP_COLLECTION_DELAY_MS } from '../../../src/transports/watchdog/thread-startup-gc.js';
import type { Collector } from '../../../src/metrics/garbage-collector.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A collector factory that counts the collections asked of it. */
function counting(): { factory: () => Collector; collections: () => number } {
  let count = 0;
  return { factory: () => () => void count++, collections: () => count };
}

describe('collectStartupGarbage', () => {
  it('runs one full collection after its delay, and no other', async () => {
    const counted = counting();
    collectStartupGarbage(10, counted.factory);
    expect(counted.collections()).toBe(0);
    await sleep(80);
    expect(counted.collections()).toBe(1);
    await sleep(40);
    expect(counted.collections()).toBe(1);
  });

  it('does nothing once cancelled (the thread stopped first)', async () => {
    const counted = counting();
    collectStartupGarbage(10, counted.factory).cancel();
    await sleep(80);
    expect(counted.collections()).toBe(0);
  });

  it("waits a second by default and uses V8's own collector, leaving no gc in the global scope", async () => {
    expect(STARTUP_COLLECTION_DELAY_MS).toBe(1_000);
    const hadGc = typeof (globalThis as { gc?: unknown }).gc === 'function';
    collectStartupGarbage(0);
    await sleep(30);
    expect(typeof (globalThis as { gc?: unknown }).gc === 'function').toBe(hadGc);
  });

  it('does not hold a process open: its timer is unref-ed', () => {
    const handles = (): number =>
      (process as unknown as { getActiveResourcesInfo(): string[] }).getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
    const before = handles();
    const scheduled = collectStartupGarbage(60_000, counting().factory);
    expect(handles()).toBe(before);
    scheduled.cancel();
  });
});
