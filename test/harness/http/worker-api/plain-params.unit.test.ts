/**
 * The worker API's path and query read without zod (worker-api/plain-params.ts) answer
 * what the schemas answer (bodies.ts), and every value they do not take plainly is parsed
 * by the schema: the same value, or the same refusal (400 SW_INVALID_REQUEST, zod's message).
 */
import { describe, expect, it } from 'vitest';
import type * as z from 'zod';
import { AttemptQuerySchema, JobParamsSchema, TakeOnDoneQuerySchema, WorkerParamsSchema } from '../../../../packages/platform/src/harness/worker-api/bodies.js';
import { attemptQuery, jobParams, takeQuery, workerParams } from '../../../../packages/platform/src/harness/worker-api/plain-params.js';
import { parseOrThrow, ServerlessWorkerError } from '../../../../src/job/index.js';

/** What `read` answers for `value`: the value, or the refusal's code and message. */
function outcome(read: () => unknown): unknown {
  try {
    return { value: read() };
  } catch (error) {
    if (!(error instanceof ServerlessWorkerError)) throw error;
    return { code: error.code, message: error.message };
  }
}

/** What the schema answers (parseOrThrow, as the routes called it): `pick` of its value, or the refusal's code and message. */
function schemaOutcome<S extends z.ZodType>(schema: S, value: unknown, what: string, pick: (parsed: z.infer<S>) => unknown): unknown {
  return outcome(() => pick(parseOrThrow(schema, value, 'SW_INVALID_REQUEST', what)));
}

const ids = ['a', 'w1', 'x'.repeat(256), 'ü-id', 'has space'];
const badIds: unknown[] = ['', 'x'.repeat(257), undefined, 5, null, ['a']];

describe('the worker API path and query without zod', () => {
  it('path parameters: ids of 1 to 256 characters as the schemas answer them; any other value refused as they refuse it', () => {
    for (const id of [...ids, ...badIds]) {
      const params = { endpointId: 'ep', workerId: id, jobId: 'job-1' };
      expect(
        outcome(() => jobParams(params)),
        String(id),
      ).toEqual(schemaOutcome(JobParamsSchema, params, 'path', (parsed) => parsed));
      expect(
        outcome(() => workerParams(params)),
        String(id),
      ).toEqual(schemaOutcome(WorkerParamsSchema, params, 'path', (parsed) => parsed));
      const job = { endpointId: 'ep', workerId: 'w1', jobId: id };
      expect(
        outcome(() => jobParams(job)),
        String(id),
      ).toEqual(schemaOutcome(JobParamsSchema, job, 'path', (parsed) => parsed));
    }
    for (const params of [undefined, null, 'text', []]) {
      expect(outcome(() => workerParams(params))).toEqual(schemaOutcome(WorkerParamsSchema, params, 'path', (parsed) => parsed));
    }
  });

  const texts: unknown[] = [
    undefined,
    '1',
    '8',
    '10000',
    '10001',
    '99999',
    '0',
    '-1',
    '01',
    '1.5',
    '1e3',
    '0x10',
    ' 5',
    '',
    'abc',
    ['1', '2'],
    '123456789',
    '1234567890',
  ];

  it('`take`: a plain 1 to 10000 read as the schema reads it; everything else as the schema answers it', () => {
    for (const take of texts) {
      const query = take === undefined ? {} : { take, job_in_progress: '1' };
      expect(
        outcome(() => takeQuery(query)),
        JSON.stringify(take),
      ).toEqual(schemaOutcome(TakeOnDoneQuerySchema, query, 'job-done query', (parsed) => parsed.take));
    }
    expect(outcome(() => takeQuery(undefined))).toEqual(schemaOutcome(TakeOnDoneQuerySchema, undefined, 'job-done query', (parsed) => parsed.take));
  });

  it('`attempt`: a plain whole number from 1 read as the schema reads it; everything else as the schema answers it', () => {
    for (const attempt of texts) {
      const query = attempt === undefined ? { take: '1' } : { attempt, isStream: 'false' };
      expect(
        outcome(() => attemptQuery(query, 'job-done')),
        JSON.stringify(attempt),
      ).toEqual(schemaOutcome(AttemptQuerySchema, query, 'job-done query', (parsed) => parsed.attempt));
    }
    expect(outcome(() => attemptQuery(null, 'stream chunk'))).toEqual(
      schemaOutcome(AttemptQuerySchema, null, 'stream chunk query', (parsed) => parsed.attempt),
    );
  });
});
