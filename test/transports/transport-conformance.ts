/**
 * @module test/transports/transport-conformance
 * The Transport contract (src/transports/transport.ts) as one suite that every
 * transport runs (the pattern of hono's common router cases): long-poll take and its
 * abort, batches, in-order chunks, results (idempotent, errors, timeouts, for ended
 * jobs), progress, stop delivery with its reason, and the jobs in progress.
 *
 * A transport under test works against a Harness on a ManualClock, so that execution
 * timeouts and ttl expiry happen when the test says. Like the runtime, the suite tells
 * the transport which jobs it holds (setJobsInProgress) before it expects stops.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EndpointJobs, Harness, ManualClock } from '../../src/harness/index.js';
import { parseJobRequest, type Job, type JobErrorPayload, type JobRequestInput, type StopReason } from '../../src/job/index.js';
import type { Transport } from '../../src/transports/index.js';
import { waitFor, within } from '../kit/index.js';

export interface TransportUnderTest {
  readonly transport: Transport;
  readonly harness: Harness;
  /** The harness's clock. */
  readonly clock: ManualClock;
  /** The endpoint the transport takes from. */
  readonly endpoint: EndpointJobs;
  /** Job ids the harness last heard this worker report as in progress, for transports that report them (a heartbeat). */
  readonly reportedJobs?: () => readonly string[] | undefined;
  close(): Promise<void>;
}

export type TransportSetup = () => Promise<TransportUnderTest>;

/** The result limit each transport under test is given (its maxResultBytes option). */
export const CONFORMANCE_MAX_RESULT_BYTES = 4_096;

/** Generous bound for anything that crosses a socket on a loaded machine. */
const BOUND_MS = 5_000;

export function describeTransportConformance(name: string, setup: TransportSetup): void {
  describe(`Transport contract: ${name}`, () => {
    let subject: TransportUnderTest;
    const controllers: AbortController[] = [];

    beforeEach(async () => {
      subject = await setup();
    });

    afterEach(async () => {
      for (const controller of controllers.splice(0)) controller.abort();
      await subject.close();
    });

    const submit = async (request: JobRequestInput = { input: {} }): Promise<string> => (await subject.endpoint.submit(parseJobRequest(request))).id;

    const take = (max = 1, inProgress = false): { jobs: Promise<Job[]>; abort: () => void } => {
      const controller = new AbortController();
      controllers.push(controller);
      return { jobs: subject.transport.take({ max, inProgress, signal: controller.signal }), abort: () => controller.abort() };
    };

    /** Submit one job, take it, and tell the transport it is held (as the runtime does). */
    const holdOne = async (request: JobRequestInput = { input: { n: 1 } }): Promise<string> => {
      const id = await submit(request);
      const jobs = await within(take().jobs, 'take of a queued job', BOUND_MS);
      expect(jobs.map((job) => job.id)).toEqual([id]);
      subject.transport.setJobsInProgress([id]);
      return id;
    };

    const stops = (): Array<[string, StopReason]> => {
      const seen: Array<[string, StopReason]> = [];
      subject.transport.onStop((jobId, reason) => seen.push([jobId, reason]));
      return seen;
    };

    const payload = (overrides: Partial<JobErrorPayload> = {}): JobErrorPayload => ({
      error_type: 'Error',
      error_message: 'boom',
      error_traceback: 'Error: boom\n    at handler',
      error_code: 'SW_HANDLER_ERROR',
      hostname: 'test-host',
      worker_id: subject.transport.workerId,
      runtime_version: '0.0.0-test',
      ...overrides,
    });

    describe('take', () => {
      it('waits for a job (long poll) and delivers it with its fields unchanged', async () => {
        let settled = false;
        const pending = take().jobs.then((jobs) => {
          settled = true;
          return jobs;
        });
        await sleep(150);
        expect(settled).toBe(false);
        const request = {
          input: { prompt: 'hi', nested: { list: [1, 'two', null] } },
          webhook: 'https://example.com/hook',
          policy: { executionTimeout: 60_000, ttl: 3_600_000 },
          s3Config: { accessId: 'a', accessSecret: 's', bucketName: 'b', endpointUrl: 'https://s3.example', objectPath: 'p/' },
        };
        const id = await submit(request);
        const jobs = await within(pending, 'take answered after submit', BOUND_MS);
        // The request's fields unchanged, and the attempt the worker sends back with its posts.
        expect(jobs).toEqual([{ id, ...request, attempt: 1 }]);
        expect((await subject.endpoint.status(id)).status).toBe('IN_PROGRESS');
      });

      it('answers a job that is already queued at once', async () => {
        const id = await submit({ input: { queued: true } });
        const jobs = await within(take().jobs, 'take of a queued job', BOUND_MS);
        expect(jobs).toEqual([{ id, input: { queued: true }, attempt: 1 }]);
      });

      it('answers up to max jobs in one take (a batch)', async () => {
        const ids = await Promise.all([submit(), submit(), submit()]);
        const first = await within(take(2).jobs, 'batch take', BOUND_MS);
        expect(first.map((job) => job.id)).toEqual(ids.slice(0, 2));
        const second = await within(take(2, true).jobs, 'second batch take', BOUND_MS);
        expect(second.map((job) => job.id)).toEqual(ids.slice(2));
      });

      it('answers [] when aborted, and a job submitted afterwards stays queued for the next take', async () => {
        const { jobs, abort } = take();
        await sleep(100);
        abort();
        expect(await within(jobs, 'aborted take', BOUND_MS)).toEqual([]);
        // Give the other side time to see the abort (a closed socket), then check nothing was lost to it.
        await sleep(300);
        const id = await submit();
        await sleep(300);
        expect((await subject.endpoint.status(id)).status).toBe('IN_QUEUE');
        const next = await within(take().jobs, 'take after an aborted take', BOUND_MS);
        expect(next.map((job) => job.id)).toEqual([id]);
      });

      it('answers [] at once for a signal that is already aborted when no job is queued', async () => {
        const controller = new AbortController();
        controller.abort();
        expect(await within(subject.transport.take({ max: 1, inProgress: false, signal: controller.signal }), 'pre-aborted take', BOUND_MS)).toEqual([]);
      });
    });

    describe('chunks', () => {
      it('delivers the chunks of a job in order, with their metrics', async () => {
        const id = await holdOne();
        for (let i = 0; i < 6; i++) {
          await subject.transport.postChunk(id, { output: `part ${i}`, metrics: { stream_index: i, output_tokens: i + 1 } });
        }
        const { stream } = await subject.endpoint.readStream(id);
        expect(stream.map((chunk) => chunk.output)).toEqual([0, 1, 2, 3, 4, 5].map((i) => `part ${i}`));
        expect(stream.map((chunk) => chunk.metrics?.stream_index)).toEqual([0, 1, 2, 3, 4, 5]);
        expect(stream[5]?.metrics).toMatchObject({ output_tokens: 6 });
      });

      it('carries any JSON value as a chunk output', async () => {
        const id = await holdOne();
        const outputs = [{ a: [1, { b: null }] }, 42, null, 'ünïcödé ✓ 🎉', [true, false]];
        for (const [i, output] of outputs.entries()) await subject.transport.postChunk(id, { output, metrics: { stream_index: i } });
        expect((await subject.endpoint.readStream(id)).stream.map((chunk) => chunk.output)).toEqual(outputs);
      });
    });

    describe('results', () => {
      it('completes the job with its output', async () => {
        const id = await holdOne();
        await subject.transport.postResult(id, { kind: 'output', output: { answer: 42 } }, { isStream: false, stopPod: false });
        expect(await subject.endpoint.status(id)).toMatchObject({ status: 'COMPLETED', output: { answer: 42 } });
      });

      it('is idempotent: a repeated result resolves and the first one stands', async () => {
        const id = await holdOne();
        await subject.transport.postResult(id, { kind: 'output', output: 'first' }, { isStream: false, stopPod: false });
        await subject.transport.postResult(id, { kind: 'output', output: 'first' }, { isStream: false, stopPod: false });
        await subject.transport.postResult(id, { kind: 'output', output: 'second' }, { isStream: false, stopPod: false });
        expect(await subject.endpoint.status(id)).toMatchObject({ status: 'COMPLETED', output: 'first' });
        expect((await subject.endpoint.health()).jobs.completed).toBe(1);
      });

      it('fails the job with the error payload', async () => {
        const id = await holdOne();
        const error = payload();
        await subject.transport.postResult(id, { kind: 'error', error }, { isStream: false, stopPod: false });
        const view = await subject.endpoint.status(id);
        expect(view.status).toBe('FAILED');
        expect(JSON.parse(view.error as string)).toEqual(error);
      });

      it('ends a job the worker timed out as TIMED_OUT', async () => {
        const id = await holdOne();
        const error = payload({ error_type: 'ServerlessWorkerError', error_code: 'SW_EXECUTION_TIMEOUT', error_message: 'ran past its execution timeout' });
        await subject.transport.postResult(id, { kind: 'error', error, timedOut: true }, { isStream: false, stopPod: false });
        expect((await subject.endpoint.status(id)).status).toBe('TIMED_OUT');
      });

      it('accepts the final result of a streamed job, and a stopPod request', async () => {
        const id = await holdOne();
        await subject.transport.postChunk(id, { output: 'tok', metrics: { stream_index: 0 } });
        await subject.transport.postResult(id, { kind: 'output', output: ['tok'] }, { isStream: true, stopPod: true });
        expect(await subject.endpoint.status(id)).toMatchObject({ status: 'COMPLETED', output: ['tok'] });
      });

      it('acknowledges a result for a job that already ended, or that does not exist, and says it was not applied', async () => {
        const id = await holdOne();
        await subject.endpoint.cancel(id);
        const late = await subject.transport.postResult(id, { kind: 'output', output: 'late' }, { isStream: false, stopPod: false });
        expect(late).toEqual({ applied: false, reason: 'already_ended' });
        expect((await subject.endpoint.status(id)).status).toBe('CANCELLED');
        const unknown = await subject.transport.postResult('no-such-job', { kind: 'output', output: 'x' }, { isStream: false, stopPod: false });
        expect(unknown).toEqual({ applied: false, reason: 'not_found' });
      });

      it('refuses a result over maxResultBytes with SW_RESULT_TOO_LARGE before posting it; the job is untouched', async () => {
        const limit = subject.transport.maxResultBytes;
        expect(limit).toBe(CONFORMANCE_MAX_RESULT_BYTES);
        const id = await holdOne();
        const big = 'x'.repeat(CONFORMANCE_MAX_RESULT_BYTES);
        const failure = await subject.transport.postResult(id, { kind: 'output', output: big }, { isStream: false, stopPod: false, attempt: 1 }).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(failure).toMatchObject({ code: 'SW_RESULT_TOO_LARGE', details: { jobId: id, limitBytes: CONFORMANCE_MAX_RESULT_BYTES } });
        expect((failure as Error).message).toContain(`over the platform's limit of ${CONFORMANCE_MAX_RESULT_BYTES} bytes`);
        expect((await subject.endpoint.status(id)).status).toBe('IN_PROGRESS');
        // Just under the limit lands.
        const fits = 'x'.repeat(CONFORMANCE_MAX_RESULT_BYTES - '{"output":""}'.length);
        expect(await subject.transport.postResult(id, { kind: 'output', output: fits }, { isStream: false, stopPod: false, attempt: 1 })).toEqual({
          applied: true,
        });
      });
    });

    describe('attempts', () => {
      it("carries the attempt back: an older attempt's chunk and result are refused with SW_STALE_ATTEMPT, its progress dropped", async () => {
        const id = await holdOne({ input: { n: 1 }, policy: { executionTimeout: 5_000 } });
        subject.clock.advance(5_000); // the platform times attempt 1 out
        await subject.endpoint.retry(id);
        const jobs = await within(take().jobs, 'take of attempt 2', BOUND_MS);
        expect(jobs).toEqual([{ id, input: { n: 1 }, policy: { executionTimeout: 5_000 }, attempt: 2 }]);
        const code = (promise: Promise<unknown>) =>
          promise.then(
            () => 'resolved',
            (error: unknown) => (error as { code?: string }).code,
          );
        expect(await code(subject.transport.postChunk(id, { output: 'old', metrics: { stream_index: 0 } }, 1))).toBe('SW_STALE_ATTEMPT');
        expect(await code(subject.transport.postResult(id, { kind: 'output', output: 'old' }, { isStream: false, stopPod: false, attempt: 1 }))).toBe(
          'SW_STALE_ATTEMPT',
        );
        await subject.transport.postProgress(id, 'old progress', 1);
        expect(await subject.endpoint.status(id)).toMatchObject({ status: 'IN_PROGRESS' });
        expect((await subject.endpoint.status(id)).output).toBeUndefined();
        await subject.transport.postChunk(id, { output: 'new', metrics: { stream_index: 0 } }, 2);
        expect(await subject.transport.postResult(id, { kind: 'output', output: 'new' }, { isStream: true, stopPod: false, attempt: 2 })).toEqual({
          applied: true,
        });
        expect(await subject.endpoint.status(id)).toMatchObject({ status: 'COMPLETED', output: 'new', retries: 1 });
        expect((await subject.endpoint.readStream(id)).stream).toEqual([{ output: 'new', metrics: { stream_index: 0, attempt: 2 } }]);
      });

      it('names the attempt in a stop', async () => {
        const seen: Array<[string, StopReason, number | undefined]> = [];
        subject.transport.onStop((jobId, reason, attempt) => seen.push([jobId, reason, attempt]));
        const id = await holdOne();
        await subject.endpoint.cancel(id);
        await waitFor(() => seen.length > 0, 'the stop', BOUND_MS);
        expect(seen).toEqual([[id, 'cancelled', 1]]);
      });
    });

    describe('progress', () => {
      it("shows a running job's progress as its output", async () => {
        const id = await holdOne();
        await subject.transport.postProgress(id, { step: 1 });
        await subject.transport.postProgress(id, { step: 2 });
        await waitFor(async () => ((await subject.endpoint.status(id)).output as { step?: number } | undefined)?.step === 2, 'progress step 2', BOUND_MS);
        expect((await subject.endpoint.status(id)).status).toBe('IN_PROGRESS');
      });
    });

    describe('stop', () => {
      it('delivers a cancel of a held job as (jobId, "cancelled")', async () => {
        const seen = stops();
        const id = await holdOne();
        await subject.endpoint.cancel(id);
        await waitFor(() => seen.length > 0, 'the stop request', BOUND_MS);
        expect(seen).toEqual([[id, 'cancelled']]);
      });

      it('delivers the platform\'s execution timeout as (jobId, "timeout")', async () => {
        const seen = stops();
        const id = await holdOne({ input: {}, policy: { executionTimeout: 5_000 } });
        subject.clock.advance(5_000);
        await waitFor(() => seen.length > 0, 'the stop request', BOUND_MS);
        expect(seen).toEqual([[id, 'timeout']]);
        expect((await subject.endpoint.status(id)).status).toBe('TIMED_OUT');
      });

      it('delivers a ttl expiry of a held job as (jobId, "expired")', async () => {
        const seen = stops();
        const id = await holdOne({ input: {}, policy: { ttl: 10_000 } });
        subject.clock.advance(10_000);
        await waitFor(() => seen.length > 0, 'the stop request', BOUND_MS);
        expect(seen).toEqual([[id, 'expired']]);
      });

      it('stops delivering to a listener once it unsubscribed', async () => {
        const kept: string[] = [];
        const dropped: string[] = [];
        subject.transport.onStop((jobId) => kept.push(jobId));
        const off = subject.transport.onStop((jobId) => dropped.push(jobId));
        off();
        const id = await holdOne();
        await subject.endpoint.cancel(id);
        await waitFor(() => kept.length > 0, 'the stop request', BOUND_MS);
        expect(dropped).toEqual([]);
      });

      it("delivers stops only for this worker's jobs", async () => {
        const seen = stops();
        const other = await submit();
        await subject.endpoint.tryTake('some-other-worker', 1);
        const id = await holdOne();
        await subject.endpoint.cancel(other);
        await subject.endpoint.cancel(id);
        await waitFor(() => seen.length > 0, 'the stop request', BOUND_MS);
        await sleep(100);
        expect(seen).toEqual([[id, 'cancelled']]);
      });
    });

    describe('jobs in progress', () => {
      it('makes the worker known to the harness as running, with its jobs when it reports them', async () => {
        const id = await holdOne();
        expect(await subject.endpoint.workers.get(subject.transport.workerId)).toBeDefined();
        expect((await subject.endpoint.health()).workers.running).toBe(1);
        if (subject.reportedJobs) {
          const reported = subject.reportedJobs;
          await waitFor(() => reported()?.includes(id), 'the job reported in progress', BOUND_MS);
          subject.transport.setJobsInProgress([]);
          await waitFor(() => reported()?.length === 0, 'no job reported in progress', BOUND_MS);
        }
      });
    });
  });
}
