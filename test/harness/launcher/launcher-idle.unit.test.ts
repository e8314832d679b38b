/**
 * An idle launcher arms no timer (issue 26, part 7: "idle is free"): after a tick with
 * nothing to watch it sleeps, on a ManualClock with no timer pending, and a job queued
 * (or a change of an endpoint) wakes it; while a worker runs it ticks. Workers here are
 * a fake backend's (no process): the test looks only at when the launcher ticks.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Harness, ManualClock } from '../../../src/harness/index.js';
import { Launcher, type LaunchBackend, type WorkerExit, type WorkerStart } from '../../../packages/platform/src/harness/launcher/index.js';
import { InMemoryManagementStore } from '../../../packages/platform/src/harness/management/index.js';
import { EndpointCreateInputSchema, EndpointUpdateInputSchema } from '../../../packages/platform/src/harness/management/schemas/endpoint.js';
import { TemplateCreateInputSchema } from '../../../packages/platform/src/harness/management/schemas/template.js';
import { ScalingLoop } from '../../../packages/platform/src/harness/launcher/scaling-loop.js';
import { waitFor } from '../../kit/index.js';

const IMAGE = 'test/idle:1';

/** Starts nothing: records each start and hands back a runner that exits when signalled. */
function fakeBackend(starts: WorkerStart[]): LaunchBackend {
  return {
    kind: 'docker',
    runs: (template) => template.imageName === IMAGE,
    runKey: () => 'fake',
    startProblem: async () => undefined,
    start(start) {
      starts.push(start);
      let exit: (value: WorkerExit) => void = () => {};
      const exited = new Promise<WorkerExit>((resolve) => (exit = resolve));
      let running = true;
      return {
        label: `fake ${start.id}`,
        get running() {
          return running;
        },
        signal: () => {
          running = false;
          exit({ code: 0, signal: null });
        },
        exited,
      };
    },
    close: async () => {},
  };
}

async function idleLauncher() {
  const clock = new ManualClock();
  const harness = new Harness({ autoCreateEndpoints: false, clock });
  const store = new InMemoryManagementStore({ now: () => clock.now() });
  const starts: WorkerStart[] = [];
  const launcher = new Launcher({ tickMs: 200 }, { harness, store, logger: pino({ level: 'silent' }), containers: fakeBackend(starts) });
  const template = store.createTemplate(TemplateCreateInputSchema.parse({ name: 'idle', imageName: IMAGE, category: 'CPU' }));
  const endpoint = store.createEndpoint(EndpointCreateInputSchema.parse({ templateId: template.id, workersMin: 0, workersMax: 1 }));
  const jobs = harness.createEndpoint(endpoint.id);
  launcher.start({ url: 'http://127.0.0.1:1' });
  return { clock, harness, store, launcher, starts, endpoint, jobs };
}

describe('an idle launcher', () => {
  it('arms no timer once a tick finds nothing to watch, and a queued job wakes it', async () => {
    const { clock, launcher, starts, jobs } = await idleLauncher();
    try {
      // The first tick sees the endpoint (workersMin 0, nothing queued): no timer after it.
      await waitFor(() => launcher.sleeping || undefined, 'the launcher asleep after its first tick');
      expect(clock.pendingTimers).toBe(0);
      clock.advance(10_000);
      expect(starts).toHaveLength(0);
      expect(clock.pendingTimers).toBe(0);

      await jobs.submit({ input: { n: 1 } });
      // The 'queued' event armed a tick now (beside the job's own ttl timer).
      expect(launcher.sleeping).toBe(false);
      clock.advance(0);
      await waitFor(() => starts.length === 1 || undefined, 'a worker started for the queued job');
      // A worker runs: the launcher ticks on (its idle timeout is the scaler's to watch).
      clock.advance(200);
      await waitFor(() => !launcher.sleeping || undefined, 'the launcher awake while a worker runs');
      clock.advance(200);
      expect(launcher.sleeping).toBe(false);
    } finally {
      await launcher.close();
    }
  });

  it('wakes when an endpoint changes (workersMin 1 starts a worker with no job)', async () => {
    const { clock, store, launcher, starts, endpoint } = await idleLauncher();
    try {
      await waitFor(() => launcher.sleeping || undefined, 'the launcher asleep after its first tick');
      store.updateEndpoint(endpoint.id, EndpointUpdateInputSchema.parse({ workersMin: 1 }));
      expect(launcher.sleeping).toBe(false);
      clock.advance(0);
      await waitFor(() => starts.length === 1 || undefined, 'a worker started for workersMin 1');
    } finally {
      await launcher.close();
    }
  });
});

describe('ScalingLoop', () => {
  it('sleeps after a round with nothing to watch, unless a wake came during it; a wake runs a round at once', async () => {
    const clock = new ManualClock();
    let rounds = 0;
    let release: (busy: boolean) => void = () => {};
    const loop = new ScalingLoop({
      clock,
      intervalMs: 200,
      round: () => {
        rounds++;
        return new Promise<boolean>((resolve) => (release = resolve));
      },
      canSleep: () => true,
      onError: (error) => {
        throw error;
      },
    });
    loop.start();
    expect(rounds).toBe(1);
    expect(loop.rounds).toBe(0);
    // A job queued while the round reads the store: the round's "nothing" is stale, the next one is armed.
    loop.wake();
    release(false);
    await waitFor(() => clock.pendingTimers === 1 || undefined, 'the next round armed after a wake during the round');
    expect(loop.sleeping).toBe(false);
    expect(loop.rounds).toBe(1);
    clock.advance(200);
    expect(rounds).toBe(2);
    release(false);
    await waitFor(() => loop.sleeping || undefined, 'asleep after a quiet round');
    expect(clock.pendingTimers).toBe(0);
    loop.wake();
    clock.advance(0);
    expect(rounds).toBe(3);
    release(true);
    await waitFor(() => clock.pendingTimers === 1 || undefined, 'the next round armed while there is work');
    await loop.close();
    clock.advance(1_000);
    expect(rounds).toBe(3);
    // Ended rounds, counted for the tests that wait for rounds to have run.
    expect(loop.rounds).toBe(3);
  });
});
