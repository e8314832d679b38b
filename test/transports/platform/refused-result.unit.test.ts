/**
 * A result the platform would refuse, or refuses (issue 13): the worker runtime with
 * the platform transport against a scripted server (bench-style minimal platform) on
 * 127.0.0.1. Too large: never posted, an error in its place. 413 or 400: a small error
 * posted in its place. Whatever happens, the run's end says what the platform accepted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Handler, WorkerRuntime } from '../../../src/worker/index.js';
import { within } from '../../kit/index.js';
import { platformTransportAt, runOneJob, startOneJobPlatform } from '../../kit/platform-worker.js';
import { captureLogs } from './log-capture.js';
import { json, type ScriptedAnswer, type ScriptedServer, type SeenRequest } from './scripted-server.js';

let server: ScriptedServer | undefined;
let runtime: WorkerRuntime | undefined;

afterEach(async () => {
  await runtime?.stop();
  runtime = undefined;
  await server?.close();
  server = undefined;
});

/** One job `j1` handed out once; job-done answered by `done`. Resolves with the run's outcome and the job-done posts. */
async function runOnce(
  handler: Handler<unknown>,
  done: (request: SeenRequest) => ScriptedAnswer,
  settings: { maxResultBytes?: number } = {},
  serve: Record<string, unknown> = {},
) {
  server = await startOneJobPlatform({ job: { id: 'j1', input: { n: 1 }, attempt: 1 }, done, stream: () => json({ acknowledged: true }) });
  const logs = captureLogs();
  const transport = platformTransportAt(server.origin, { logger: logs.logger, retryMinDelayMs: 5, retryMaxDelayMs: 20, ...settings });
  const run = runOneJob(handler, transport, logs.logger, serve);
  runtime = run.runtime;
  const result = await within(run.outcome, 'the run to end', 20_000);
  const posts = (server as ScriptedServer)
    .to('/job-done/')
    .map((request) => ({ query: request.query, body: JSON.parse(request.body) as Record<string, unknown> }));
  const chunks = (server as ScriptedServer).to('/job-stream/').map((request) => JSON.parse(request.body) as { output: unknown });
  return { outcome: result, posts, chunks, logs };
}

const errorOf = (body: Record<string, unknown>): Record<string, unknown> => JSON.parse(body.error as string) as Record<string, unknown>;

describe('a result the platform would refuse', () => {
  it('over maxResultBytes: never posted; the job fails with SW_RESULT_TOO_LARGE, the size and the limit', async () => {
    const { outcome, posts } = await runOnce(
      async () => 'x'.repeat(5_000),
      () => json({ acknowledged: true, applied: true }),
      { maxResultBytes: 2_048 },
    );
    expect(posts).toHaveLength(1);
    expect(posts[0]?.query.get('attempt')).toBe('1');
    const error = errorOf(posts[0]?.body ?? {});
    expect(error).toMatchObject({ error_code: 'SW_RESULT_TOO_LARGE' });
    expect(error.error_message).toContain("is 5013 bytes as JSON, over the platform's limit of 2048 bytes");
    expect(error.error_message).toContain('s3Config');
    expect(outcome.end).toBe('failed');
  });

  it('under the limit raw, over it once JSON escapes it: the serialized size counts', async () => {
    // 1 500 quote characters are 3 000 bytes as JSON (each one \").
    const { outcome, posts } = await runOnce(
      async () => '"'.repeat(1_500),
      () => json({ acknowledged: true, applied: true }),
      { maxResultBytes: 2_048 },
    );
    expect(posts).toHaveLength(1);
    const error = errorOf(posts[0]?.body ?? {});
    expect(error).toMatchObject({ error_code: 'SW_RESULT_TOO_LARGE' });
    expect(error.error_message).toContain('is 3013 bytes as JSON');
    expect(outcome.end).toBe('failed');
  });

  it('a stream aggregated past the limit: the chunks were posted, and the error says to turn aggregateStream off, not to stream', async () => {
    const { outcome, posts, chunks } = await runOnce(
      async function* () {
        for (let i = 0; i < 3; i++) yield String(i).repeat(1_000);
      },
      () => json({ acknowledged: true, applied: true }),
      { maxResultBytes: 2_048 },
      { aggregateStream: true, coalesceStreamChunks: false },
    );
    expect(chunks.map((chunk) => chunk.output)).toEqual(['0', '1', '2'].map((digit) => digit.repeat(1_000)));
    expect(posts).toHaveLength(1);
    expect(posts[0]?.query.get('isStream')).toBe('true');
    const error = errorOf(posts[0]?.body ?? {});
    expect(error).toMatchObject({ error_code: 'SW_RESULT_TOO_LARGE' });
    expect(error.error_message).toContain('turn aggregateStream off');
    expect(error.error_message).not.toContain('yield it in parts');
    expect(outcome.end).toBe('failed');
  });

  it.each([413, 400])('refused with %i: a small error is posted in its place, and the job ends failed, not completed', async (status) => {
    const { outcome, posts, logs } = await runOnce(
      async () => ({ big: 'y'.repeat(1_000) }),
      (request) =>
        request.body.includes('"output"')
          ? json({ error: { code: 'SW_PAYLOAD_TOO_LARGE', message: 'too large' } }, status)
          : json({ acknowledged: true, applied: true }),
    );
    // One attempt of the refused post (a 4xx is not retried), then the error.
    expect(posts).toHaveLength(2);
    expect(posts[0]?.body).toHaveProperty('output');
    const error = errorOf(posts[1]?.body ?? {});
    expect(error).toMatchObject({ error_code: 'SW_RESULT_REFUSED' });
    expect(error.error_message).toContain(`with HTTP ${status}`);
    expect(outcome.end).toBe('failed');
    expect(outcome.result).toMatchObject({ kind: 'error', error: { error_code: 'SW_RESULT_REFUSED' } });
    expect(logs.find('posting an error in its place', 40)).toHaveLength(1);
  });

  it('refused again (the error too): the end says refused, never completed', async () => {
    const { outcome, posts, logs } = await runOnce(
      async () => 'fine',
      () => json({ error: { message: 'no' } }, 400),
    );
    expect(posts).toHaveLength(2);
    expect(outcome.end).toBe('refused');
    expect(logs.find('the platform refused the result', 50)).toHaveLength(1);
  });

  it('acknowledged but not applied (the job had already ended another way): the end says refused', async () => {
    const { outcome, posts } = await runOnce(
      async () => 'late',
      () => json({ acknowledged: true, applied: false, reason: 'already_ended', status: 'TIMED_OUT' }),
    );
    expect(posts).toHaveLength(1);
    expect(outcome.end).toBe('refused');
  });

  it('a 409 SW_STALE_ATTEMPT: the end says stale_attempt, logged at debug only', async () => {
    const { outcome, posts, logs } = await runOnce(
      async () => 'old',
      () => json({ error: { code: 'SW_STALE_ATTEMPT', message: 'attempt 1 is not current' } }, 409),
    );
    expect(posts).toHaveLength(1);
    expect(outcome.end).toBe('stale_attempt');
    expect(logs.lines.filter((line) => line.level >= 40 && line.msg.includes('stale'))).toEqual([]);
    expect(logs.find('stale attempt refused').length).toBeGreaterThan(0);
  });
});
