/**
 * @module test/reliability/handler-pathologies.test
 * Handlers that misbehave, in a real worker process (serve() in platform mode) against
 * the harness server on 127.0.0.1: throws, rejects with a non-Error, yields 5 MB in one
 * value, returns 5 MB, returns a BigInt or a cycle, calls progress after it finished,
 * logs a flood. Each job ends in the right state and the same worker serves the next
 * job. A handler that hangs ignoring its signal makes the worker exit (code 1); a new
 * worker process takes over.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { JobStatus, JobView } from '../../src/job/index.js';
import { MAX_CHUNK_BYTES } from '../../src/job/index.js';
import { joinChunks } from '../../src/worker/index.js';
import { waitFor, within } from '../kit/index.js';
import { printFigures, since } from './support/figures.js';
import { TestClient } from './support/http.js';
import { fiveMegabytes } from './support/payloads.js';
import { QueueCaller, errorOf } from './support/queue.js';
import { startReliabilityServer, type ReliabilityServer } from './support/reliability-server.js';
import { killWorkers, startWorkerProcess, type WorkerProcess } from './support/worker-process.js';

const ENDPOINT = 'pathologies';
const PING_MS = 200;
/** Every job but the hanging one carries its own execution timeout, so the worker's short default applies to that one only. */
const POLICY = { executionTimeout: 60_000 };
const FLOOD_LINES = 20_000;

const client = new TestClient();
let running: ReliabilityServer | undefined;
afterEach(async () => {
  await killWorkers();
  await running?.close();
  running = undefined;
});
afterAll(() => client.close());

const count = (text: string, needle: string): number => text.split(needle).length - 1;

describe('handler pathologies in a worker process', () => {
  it(
    'each job ends in the right state and the worker keeps serving; a handler ignoring its signal makes the worker exit, and another takes over',
    { timeout: 180_000 },
    async () => {
      const startedAt = performance.now();
      const server = await startReliabilityServer({ workerApi: { longPollMs: 2_000, liveness: { pingIntervalMs: PING_MS, missedPings: 5 } } });
      running = server;
      const queue = new QueueCaller(client, `${server.origin}/v2/${ENDPOINT}`);
      const env = { ...server.envFor(ENDPOINT, PING_MS), LOG_LEVEL: 'info', DEFAULT_EXECUTION_TIMEOUT_MS: '1500', TIMEOUT_GRACE_MS: '500' };
      const worker = startWorkerProcess('pathological', env);
      const ended: Record<string, JobStatus> = {};

      async function job(
        mode: string,
        extra: Record<string, unknown> = {},
        policy: Record<string, number> | null = POLICY,
      ): Promise<{ id: string; view: JobView }> {
        const id = await queue.run({ input: { mode, ...extra }, ...(policy !== null ? { policy } : {}) });
        const view = await queue.ended(id, 60_000).catch(async (error: unknown) => {
          throw new Error(
            `${String(error)}; job ${JSON.stringify((await server.harness.endpoint(ENDPOINT).find(id))?.status)}; worker stderr: ${worker.stderr().slice(-2_000)}`,
          );
        });
        ended[mode] = view.status;
        return { id, view };
      }

      /** The same worker process answers an ordinary job right after. */
      async function stillServing(after: string, by: WorkerProcess = worker): Promise<void> {
        const { view } = await job('echo', { tag: `after-${after}` });
        expect(view, `an echo job after ${after}`).toMatchObject({ status: 'COMPLETED', output: { workerId: by.workerId, tag: `after-${after}` } });
      }

      await stillServing('start');

      const thrown = await job('throw');
      expect(thrown.view.status).toBe('FAILED');
      expect(errorOf(thrown.view)).toMatchObject({
        error_type: 'Error',
        error_message: 'boom from the handler',
        error_code: 'SW_HANDLER_ERROR',
        worker_id: worker.workerId,
      });
      expect(String(errorOf(thrown.view).error_traceback)).toContain('boom from the handler');
      await stillServing('throw');

      const rejected = await job('reject-non-error');
      expect(rejected.view.status).toBe('FAILED');
      expect(errorOf(rejected.view)).toMatchObject({ error_code: 'SW_HANDLER_ERROR', error_type: 'object' });
      expect(String(errorOf(rejected.view).error_message)).toContain('not an Error object');
      await stillServing('reject-non-error');

      const big = fiveMegabytes();
      const yielded = await job('yield-5mb');
      expect(yielded.view.status).toBe('COMPLETED');
      const { chunks } = await queue.stream(yielded.id);
      expect(chunks.length).toBeGreaterThanOrEqual(5);
      for (const chunk of chunks) expect(Buffer.byteLength(JSON.stringify(chunk.output))).toBeLessThanOrEqual(MAX_CHUNK_BYTES);
      expect(chunks.map((chunk) => chunk.metrics?.stream_index)).toEqual([...Array(chunks.length).keys()]);
      expect(joinChunks(chunks)).toEqual([big]);
      expect(yielded.view.output).toEqual([big]);
      await stillServing('yield-5mb');

      const returned = await job('return-5mb');
      expect(returned.view.status).toBe('COMPLETED');
      expect((returned.view.output as { big: string }).big === big).toBe(true);
      await stillServing('return-5mb');

      for (const mode of ['bigint', 'cycle']) {
        const { view } = await job(mode);
        expect(view.status, mode).toBe('FAILED');
        expect(errorOf(view), mode).toMatchObject({ error_code: 'SW_OUTPUT_NOT_SERIALIZABLE' });
        await stillServing(mode);
      }

      const late = await job('late-progress');
      expect(late.view).toMatchObject({ status: 'COMPLETED', output: { final: true } });
      await waitFor(() => worker.stderr().includes('ctx.progress() called after the job ended; ignored'), 'the late progress to be refused', 10_000);
      expect((await server.harness.endpoint(ENDPOINT).status(late.id)).output).toEqual({ final: true });
      await stillServing('late-progress');

      const flood = await job('log-flood', { lines: FLOOD_LINES });
      expect(flood.view).toMatchObject({ status: 'COMPLETED', output: { logged: FLOOD_LINES } });
      await waitFor(() => count(worker.stderr(), '"msg":"flood"') === FLOOD_LINES, 'every flood line on stderr', 30_000, 50);
      await stillServing('log-flood');
      expect(server.seen.gone).toEqual([]);

      // Hangs and ignores its signal: timed out by the worker, which then exits to be replaced.
      const hangAt = performance.now();
      const hung = await job('hang-ignore', {}, null);
      expect(hung.view.status).toBe('TIMED_OUT');
      expect(errorOf(hung.view)).toMatchObject({ error_code: 'SW_EXECUTION_TIMEOUT' });
      expect(String(errorOf(hung.view).error_message)).toContain('ignored its abort signal');
      const exit = await within(worker.exited, 'the worker to exit after an unresponsive handler', 30_000);
      const exitAfterMs = since(hangAt);
      expect(exit.code).toBe(1);
      const replacement = startWorkerProcess('replacement', env);
      await stillServing('hang-ignore', replacement);

      printFigures('handler-pathologies', {
        outcomes: Object.entries(ended)
          .map(([mode, status]) => `${mode}:${status}`)
          .join(','),
        chunksFor5MB: chunks.length,
        floodLines: FLOOD_LINES,
        stderrMiB: Math.round(worker.stderr().length / 104_857.6) / 10,
        hangExitCode: exit.code ?? -1,
        hangExitAfterMs: exitAfterMs,
        durationMs: since(startedAt),
      });
    },
  );
});
