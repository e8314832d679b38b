/**
 * The official JS client (npm runpod-sdk), unchanged, against the harness: run,
 * runSync (also its /status-sync fallback when /runsync's wait elapses), status,
 * stream, cancel, health, purgeQueue. Its base URL setting is `<harness>/v2`.
 */
import runpodSdk from 'runpod-sdk';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../src/harness/index.js';
import { startTestWorker } from './helpers.js';
import { startTestServer, type TestServer, waitFor } from '../../kit/index.js';

const KEY = 'sdk-test-key';
let running: TestServer | undefined;
let stopWorker: (() => Promise<void>) | undefined;

beforeEach(() => {
  // The client prints progress with console.log.
  vi.spyOn(console, 'log').mockImplementation(() => undefined);
});

afterEach(async () => {
  vi.restoreAllMocks();
  await stopWorker?.();
  await running?.close();
  running = undefined;
  stopWorker = undefined;
});

function sdkEndpoint(server: TestServer, endpointId = 'ep') {
  const endpoint = runpodSdk(KEY, { baseUrl: server.server.baseUrl }).endpoint(endpointId);
  if (!endpoint) throw new Error('no endpoint');
  return endpoint;
}

describe('runpod-sdk against the harness', () => {
  it('run, then status until COMPLETED', async () => {
    running = await startTestServer({ apiKey: KEY });
    stopWorker = startTestWorker(running.harness, async (job: { input: { n: number } }) => ({ doubled: job.input.n * 2 })).stop;
    const endpoint = sdkEndpoint(running);
    const submitted = (await endpoint.run({ input: { n: 21 } })) as { id: string; status: string };
    expect(submitted.status).toBe('IN_QUEUE');
    let status: { status: string; output?: unknown; completed?: boolean; succeeded?: boolean } = { status: '' };
    await waitFor(async () => {
      status = (await endpoint.status(submitted.id)) as typeof status;
      return status.completed === true;
    }, 'the job to complete');
    expect(status).toMatchObject({ id: submitted.id, status: 'COMPLETED', output: { doubled: 42 }, started: true, succeeded: true });
  });

  it('runSync', async () => {
    running = await startTestServer({ apiKey: KEY });
    stopWorker = startTestWorker(running.harness, async () => 'done').stop;
    const result = await sdkEndpoint(running).runSync({ input: {} }, 60_000);
    expect(result).toMatchObject({ status: 'COMPLETED', output: 'done', completed: true, succeeded: true });
  });

  it('runSync falls back to /status-sync when /runsync answers before the job ends', async () => {
    const clock = new ManualClock();
    running = await startTestServer({ apiKey: KEY }, { clock });
    const jobs = running.harness.endpoint('ep');
    const pending = sdkEndpoint(running).runSync({ input: {} }, 60_000);
    await waitFor(async () => (await jobs.jobs()).length === 1, 'the runsync to arrive');
    const armedTimers = clock.pendingTimers;
    clock.advance(60_000);
    // The client now waits in /status-sync: finish the job as a worker would.
    await waitFor(() => clock.pendingTimers >= armedTimers, 'the status-sync to wait');
    const [job] = await jobs.tryTake('worker-1', 1);
    await jobs.complete(job!.id, 'worker-1', { kind: 'output', output: 'late' });
    expect(await pending).toMatchObject({ id: job!.id, status: 'COMPLETED', output: 'late', completed: true });
  });

  it('stream yields every chunk until the job ends', async () => {
    running = await startTestServer({ apiKey: KEY });
    stopWorker = startTestWorker(running.harness, async function* (job: { input: { words: string[] } }) {
      for (const word of job.input.words) yield word;
    }).stop;
    const endpoint = sdkEndpoint(running);
    const { id } = (await endpoint.run({ input: { words: ['a', 'b', 'c'] } })) as { id: string };
    const outputs: unknown[] = [];
    for await (const chunk of endpoint.stream(id)) outputs.push((chunk as { output: unknown }).output);
    expect(outputs).toEqual(['a', 'b', 'c']);
  });

  it('cancel', async () => {
    running = await startTestServer({ apiKey: KEY }, { clock: new ManualClock() });
    const endpoint = sdkEndpoint(running);
    const { id } = (await endpoint.run({ input: {} })) as { id: string };
    expect(await endpoint.cancel(id)).toEqual({ id, status: 'CANCELLED' });
  });

  it('health and purgeQueue', async () => {
    running = await startTestServer({ apiKey: KEY }, { clock: new ManualClock() });
    const endpoint = sdkEndpoint(running);
    await endpoint.run({ input: {} });
    await endpoint.run({ input: {} });
    const health = await endpoint.health();
    expect(health).toMatchObject({ jobs: { inQueue: 2, inProgress: 0, completed: 0, failed: 0, retried: 0 }, workers: { idle: 0, running: 0 } });
    expect(await endpoint.purgeQueue()).toEqual({ removed: 2, status: 'completed' });
    expect(await endpoint.health()).toMatchObject({ jobs: { inQueue: 0 } });
  });
});
