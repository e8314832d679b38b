/**
 * A harness whose own event loop stalls longer than the silence window (a loaded
 * machine, a long synchronous task) does not take its live workers for gone: the pings
 * that arrived meanwhile wait in its sockets and are read only after the sweep's timer,
 * so a sweep after a stall waits for a tick on time (at most one silence window). A real
 * child process pings every 50 ms over HTTP on 127.0.0.1 while this process (the harness)
 * blocks, twice (CASES: 1 s with a 300 ms window, 2 s with 1 s windows). Once the
 * child is killed, it is gone after the window as usual.
 *
 * Sized to what it proves: a stall of twice the window or more leaves the worker's last read
 * ping older than the window when the late tick comes (without the fix the sweep takes it
 * for gone on every stall); the second stall comes after ticks that skipped and swept again.
 * Checked on 2026-12-02 with worker-liveness.ts changed back: without the skip of late ticks
 * every case fails; with the lateness counted from the first tick again, the third fails.
 * The stalls are the test's CPU (the loop spins): 9.8 s over 3 cases instead of 19.5 s.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { parseJobRequest } from '../../../../src/job/index.js';
import { waitFor } from '../../../kit/index.js';
import { startWorkerApiServer, type RunningWorkerApi } from './worker-api-server.js';

let server: RunningWorkerApi | undefined;
let child: ChildProcess | undefined;

afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
  child = undefined;
  await server?.close();
  server = undefined;
});

/** Block this thread for `ms` (no timer, no socket is served meanwhile). */
function block(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: the event loop does not turn
  }
}

/** The silence window (pings every 100 ms, so many missed) and how long the harness blocks, STALLS times. */
const CASES = [
  { pingIntervalMs: 100, missedPings: 3, stallMs: 1_000 },
  // Longer: some 40 connections queue in the stall, accepted one per turn of the loop afterwards.
  { pingIntervalMs: 100, missedPings: 10, stallMs: 2_000 },
  // A 1 s window swept with ticks every 250 ms: the first stall came before the sweep's first
  // tick, whose lateness was not measured (it failed every time before worker-liveness.ts
  // counted from the arming).
  { pingIntervalMs: 250, missedPings: 4, stallMs: 2_000 },
];
/** Stalls per case: the first (just after the worker was first seen), and one after ticks that skipped and swept again. */
const STALLS = 2;

describe('liveness when the harness itself stalls', () => {
  it.each(CASES)(
    'keeps a worker that pinged all along through stalls of $stallMs ms ($missedPings pings of $pingIntervalMs ms missed), and still takes it for gone once it stops',
    { timeout: 90_000 },
    async ({ pingIntervalMs, missedPings, stallMs }) => {
      server = await startWorkerApiServer({ longPollMs: 1_000, liveness: { pingIntervalMs, missedPings } });
      const running = server;
      const endpoint = running.harness.endpoint('ep');
      const { id } = await endpoint.submit(parseJobRequest({ input: {} }));
      expect(await endpoint.tryTake('pinger', 1)).toHaveLength(1);
      const url = `${running.origin}/v2/ep/ping/pinger?job_id=${id}`;
      child = spawn(process.execPath, ['-e', `setInterval(() => fetch(${JSON.stringify(url)}).catch(() => {}), 50)`], { stdio: 'ignore' });
      await waitFor(() => running.seen.pings.filter((ping) => ping.workerId === 'pinger').length >= 5, 'the child to ping', 20_000, 10);
      for (let stall = 0; stall < STALLS; stall++) {
        block(stallMs);
        // Let a few sweep ticks pass after the stall.
        const pings = running.seen.pings.length;
        await waitFor(() => running.seen.pings.length >= pings + 5, 'pings after the stall', 20_000, 10);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(running.seen.gone).toEqual([]);
      expect(await endpoint.status(id)).toMatchObject({ status: 'IN_PROGRESS' });
      child.kill('SIGKILL');
      await waitFor(() => running.seen.gone.length > 0, 'the killed pinger declared gone', 20_000, 10);
      expect(running.seen.gone).toEqual([{ endpointId: 'ep', workerId: 'pinger', requeued: [id], reason: 'silent' }]);
    },
  );
});
