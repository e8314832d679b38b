/**
 * A result post waiting between two attempts tries again as soon as its RetryWake fires
 * (a worker whose harness was gone saw the harness's address answer again:
 * local/harness-gone.ts), not after its backoff. The backoff runs on the delivery's clock:
 * a ManualClock that never moves, so without the wake the post would wait forever.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/index.js';
import { RetryWake, deliver } from '../../../src/transports/platform/deliver.js';
import { PlatformHttp } from '../../../src/transports/platform/http-client.js';
import { createPlatformTransport } from '../../../src/transports/platform/index.js';
import { waitFor } from '../../kit/index.js';
import { captureLogs } from './log-capture.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A job-done route that answers 503 to the first `refusals` posts, then 200. */
async function flakyServer(refusals: number): Promise<{ url: string; posts: () => number }> {
  let posts = 0;
  server = createServer((request, reply) => {
    request.resume();
    request.on('end', () => {
      posts++;
      if (posts <= refusals) reply.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"down"}');
      else reply.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, posts: () => posts };
}

/** Retries a minute apart on a clock that never moves: only a wake brings the next attempt. */
const POLICY = { deadlineMs: 600_000, minDelayMs: 60_000, maxDelayMs: 60_000, attemptTimeoutMs: 5_000 };

describe('RetryWake', () => {
  it('ends the wait between two attempts of a result post: the next attempt goes at once', async () => {
    const harness = await flakyServer(2);
    const clock = new ManualClock();
    const http = new PlatformHttp({ clock });
    const wake = new RetryWake();
    const retries: number[] = [];
    const delivered = await deliver({
      http,
      url: `${harness.url}/v2/ep/job-done/w1/job-1?`,
      body: '{"output":1}',
      jobId: 'job-1',
      what: 'result',
      policy: POLICY,
      signal: new AbortController().signal,
      clock,
      wake,
      // Fired once the wait has begun (after this turn): as a probe finding the address open again would.
      onRetry: ({ attempt }) => {
        retries.push(attempt);
        setImmediate(() => wake.wake());
      },
    });
    expect(delivered.attempts).toBe(3);
    expect(harness.posts()).toBe(3);
    expect(retries).toEqual([1, 2]);
    await http.close();
  });

  it("is the platform transport's retryNow: its result posts waiting to be tried again go at once", async () => {
    const harness = await flakyServer(1);
    const clock = new ManualClock();
    const logs = captureLogs();
    const transport = createPlatformTransport({
      logger: logs.logger,
      clock,
      retryMinDelayMs: 60_000,
      retryMaxDelayMs: 60_000,
      heartbeat: false,
      processEnv: {
        RUNPOD_WEBHOOK_GET_JOB: `${harness.url}/v2/ep/job-take/$ID?`,
        RUNPOD_WEBHOOK_POST_OUTPUT: `${harness.url}/v2/ep/job-done/$RUNPOD_POD_ID/$ID?`,
        RUNPOD_POD_ID: 'w1',
      },
    });
    const posted = transport.postResult('job-1', { kind: 'output', output: 1 }, { isStream: false, stopPod: false });
    // The first post was refused: it waits a minute of a clock that does not move, until retryNow.
    await waitFor(() => logs.find('result post failed; retrying').length === 1, 'the first attempt refused', 10_000, 5);
    // The retry line is logged just before the wait begins: after this turn, it waits.
    await new Promise((resolve) => setImmediate(resolve));
    expect(transport.deliveriesUnderWay).toBe(1);
    transport.retryNow();
    await posted;
    expect(harness.posts()).toBe(2);
    expect(transport.deliveriesUnderWay).toBe(0);
    await transport.close();
  });
});
