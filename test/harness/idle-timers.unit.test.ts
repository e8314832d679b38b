/**
 * An idle harness arms no timer (issue 26, part 7: "idle is free"): timers run only while
 * someone watches or work is due. Checked structurally, not by timing: the harness's own
 * clock counts the timers armed on it (scheduler, liveness sweeps, webhook retries), the
 * load-balancing ping timer says whether it is armed, and the worker API's pending stops
 * ask for their prune timer only when a stop is recorded. The CPU an idle server uses is
 * measured in bench/idle.bench.ts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Harness } from '../../src/exports/harness.js';
import { createHarnessServer, type HarnessServer } from '../../packages/platform/src/index.js';
import { ManualClock, systemClock, type Clock, type TimerHandle } from '../../src/clock/index.js';
import { PendingStops } from '../../packages/platform/src/harness/worker-api/pending-stops.js';
import { WorkerLiveness, type GoneWorker } from '../../packages/platform/src/harness/worker-api/worker-liveness.js';

/** The system clock, counting the timers armed on it that have neither fired nor been cancelled. */
class CountingClock implements Clock {
  armed = 0;
  now(): number {
    return systemClock.now();
  }
  setTimer(delayMs: number, callback: () => void): TimerHandle {
    this.armed++;
    let live = true;
    const done = (): void => {
      if (live) this.armed--;
      live = false;
    };
    const handle = systemClock.setTimer(delayMs, () => {
      done();
      callback();
    });
    return {
      cancel: () => {
        done();
        handle.cancel();
      },
    };
  }
}

let server: HarnessServer | undefined;
let pingTarget: Server | undefined;

afterEach(async () => {
  await server?.close();
  await server?.config.harness.close();
  server = undefined;
  await new Promise<void>((resolve) => (pingTarget ? pingTarget.close(() => resolve()) : resolve()));
  pingTarget = undefined;
});

describe('an idle harness', () => {
  it('arms no timer on its clock and no load-balancing ping timer while nobody calls', async () => {
    const clock = new CountingClock();
    server = await createHarnessServer({ harness: new Harness({ clock }), port: 0, host: '127.0.0.1' });
    expect(clock.armed).toBe(0);
    expect(server.loadBalancing.pingTimerArmed).toBe(false);
  });

  it('pings load-balancing workers only while some are registered', async () => {
    server = await createHarnessServer({ harness: new Harness(), port: 0, host: '127.0.0.1', loadBalancing: { pingIntervalMs: 60_000 } });
    pingTarget = createServer((_req, res) => res.end('{}'));
    await new Promise<void>((resolve) => pingTarget?.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(pingTarget.address() as AddressInfo).port}`;
    const lb = server.loadBalancing;
    expect(lb.pingTimerArmed).toBe(false);
    lb.register('ep', { workerId: 'w1', url, healthUrl: url, concurrency: 1 });
    expect(lb.pingTimerArmed).toBe(true);
    expect(lb.remove('ep', 'w1')).toBe(true);
    // The round after the last worker left stops the timer.
    lb.pingAll();
    expect(lb.pingTimerArmed).toBe(false);
    lb.register('ep', { workerId: 'w2', url, healthUrl: url, concurrency: 1 });
    expect(lb.pingTimerArmed).toBe(true);
  });
});

describe('pending stops', () => {
  it('ask for pruning only once a stop is recorded, and hold nothing once pruned or after an empty poll', async () => {
    let now = 1_000;
    let asked = 0;
    const stops = new PendingStops(
      100,
      () => now,
      () => asked++,
    );
    expect(stops.holdsStops).toBe(false);

    // A job-stop poll that ends with nothing leaves nothing behind.
    const poll = new AbortController();
    const waiting = stops.wait('ep', 'w1', poll.signal);
    poll.abort();
    await waiting;
    expect(stops.holdsStops).toBe(false);
    expect(asked).toBe(0);

    stops.record('ep', 'w1', 'job-1', 'cancelled');
    expect(asked).toBe(1);
    expect(stops.holdsStops).toBe(true);
    // Handed out: remembered for the retention (a heartbeat may ask for it again), then dropped.
    expect(stops.drain('ep', 'w1')?.jobIds).toEqual(['job-1']);
    expect(stops.holdsStops).toBe(true);
    now += 101;
    stops.prune();
    expect(stops.holdsStops).toBe(false);
  });
});

/** A ManualClock that counts every timer armed on it. */
class CountedManualClock extends ManualClock {
  timersArmed = 0;
  override setTimer(delayMs: number, callback: () => void): TimerHandle {
    this.timersArmed++;
    return super.setTimer(delayMs, callback);
  }
}

describe('liveness sweeps', () => {
  it('wake once per silence window while a worker keeps pinging, not every sweep interval, and still sweep it once silent', async () => {
    const clock = new CountedManualClock();
    const harness = new Harness({ clock });
    const endpoint = harness.endpoint('ep');
    const gone: GoneWorker[] = [];
    // Pings every second, gone after 3 missed; sweeps at most every 100 ms.
    const liveness = new WorkerLiveness(harness, { pingIntervalMs: 1_000, missedPings: 3, sweepIntervalMs: 100 }, (worker) => gone.push(worker));
    const step = async (ms: number): Promise<void> => {
      clock.advance(ms);
      for (let i = 0; i < 50; i++) await Promise.resolve();
    };
    await liveness.seen(endpoint, 'w1');
    const armedBefore = clock.timersArmed;
    // 30 s of pings every second, time moving in 100 ms steps: 300 sweeps at the fixed interval.
    for (let ms = 0; ms < 30_000; ms += 100) {
      if (ms % 1_000 === 0) await liveness.seen(endpoint, 'w1');
      await step(100);
    }
    expect(gone).toEqual([]);
    // One wake at most per window (3 s) the worker's deadline moved on: about 10, far below 300.
    expect(clock.timersArmed - armedBefore).toBeLessThanOrEqual(20);
    // Silent now: swept once its window has passed.
    for (let ms = 0; ms < 4_000; ms += 100) await step(100);
    expect(gone.map((worker) => worker.workerId)).toEqual(['w1']);
    liveness.stop();
    await harness.close();
  });
});
