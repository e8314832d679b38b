/**
 * The platform transport takes its time from the Clock it is given (issue 26, part 2):
 * on a ManualClock, the gap after an empty job-take waits until the test moves the clock,
 * however long the test runs, and the next take follows once it did.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/index.js';
import { createPlatformTransport } from '../../../src/transports/platform/index.js';
import type { PlatformTransport } from '../../../src/transports/platform/platform-transport.js';
import { waitFor, within } from '../../kit/index.js';
import { captureLogs } from './log-capture.js';
import { json, startScriptedServer, type ScriptedServer } from './scripted-server.js';

let server: ScriptedServer | undefined;
let transport: PlatformTransport | undefined;

afterEach(async () => {
  await transport?.close();
  transport = undefined;
  await server?.close();
  server = undefined;
});

describe('the platform transport on a ManualClock', () => {
  it('waits the empty-poll gap on its clock: no second take until the clock moved past it', async () => {
    let takes = 0;
    server = await startScriptedServer((request) => {
      if (!request.path.includes('/job-take/')) return { status: 204 };
      takes++;
      return takes === 1 ? { status: 204 } : json({ id: 'j1', input: {} });
    });
    const clock = new ManualClock();
    const start = clock.now();
    transport = createPlatformTransport({
      processEnv: {
        RUNPOD_WEBHOOK_GET_JOB: `${server.origin}/v2/ep/job-take/$ID?`,
        RUNPOD_WEBHOOK_POST_OUTPUT: `${server.origin}/v2/ep/job-done/$RUNPOD_POD_ID/$ID?`,
        RUNPOD_POD_ID: 'w1',
      },
      logger: captureLogs().logger,
      heartbeat: false,
      emptyPollGapMs: 60_000,
      clock,
    });
    const taking = transport.take({ max: 1, inProgress: false, signal: new AbortController().signal });
    await waitFor(() => takes === 1, 'the first take');
    // Armed on the clock once the empty answer is read (the take's own bound, 90 s, was due first until then).
    await waitFor(() => clock.nextDueAt === start + 60_000, 'the gap armed on the clock');
    clock.advance(59_999);
    await new Promise((resolve) => setImmediate(resolve));
    expect(takes).toBe(1);
    clock.advance(1);
    const jobs = await within(taking, 'the take after the gap');
    expect(takes).toBe(2);
    expect(jobs.map((job) => job.id)).toEqual(['j1']);
  });
});
