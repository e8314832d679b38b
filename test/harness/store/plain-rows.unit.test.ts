/**
 * The fast paths of the PostgreSQL store's job rows and claimed rows
 * (store/postgres/plain-rows.ts) against the zod schemas they stand in for (rows.ts
 * `JobRow` and `toStoredJob`, queue.ts `ClaimedRow` and `claimedOf`): a row in the driver's
 * plain shape gets the same record either way; a row with anything else is left to zod (the
 * fast path answers undefined), so zod's verdict and error stay the only ones.
 */
import { describe, expect, it } from 'vitest';
import { plainClaimedJob, plainStoredJob } from '../../../packages/platform/src/harness/store/postgres/plain-rows.js';
import { ClaimedRow, claimedOf, parseClaimedRow } from '../../../packages/platform/src/harness/store/postgres/queue.js';
import { JobRow, storedJobOf, toStoredJob } from '../../../packages/platform/src/harness/store/postgres/rows.js';

/** A row as postgres.js answers one of sw_jobs: bigint columns as text, integer ones as numbers, jsonb parsed. */
const BASE: Readonly<Record<string, unknown>> = {
  endpoint_id: 'ep',
  id: 'job-1',
  request: '{"input":{"prompt":"hi"},"webhook":"http://127.0.0.1:9/hook"}',
  sync: false,
  status: 'COMPLETED',
  submitted_at: '1795860602033',
  queued_at: '1795860602034',
  started_at: '1795860602040',
  ended_at: '1795860602050',
  worker_id: 'w1',
  output: { text: 'ok' },
  has_output: true,
  error: null,
  retries: 1,
  attempt: 2,
  lost: 0,
  result_from: { workerId: 'w1', attempt: 2 },
  cancelled_from: null,
  chunk_count: 3,
  unread_count: 1,
  expires_at: '1795946602033',
  execution_deadline: null,
  execution_timeout_ms: '600000',
  retention_ms: '60000',
  delete_at: '1795860662050',
  reported_at: '1795860602045',
};

function row(changes: Record<string, unknown> = {}, without: readonly string[] = []): Record<string, unknown> {
  const next: Record<string, unknown> = { ...BASE, ...changes };
  for (const key of without) delete next[key];
  return next;
}

/** Rows in the plain shape: the fast path takes each, and answers what zod answers. */
const PLAIN: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ['a completed job', row()],
  [
    'a queued job, every nullable column null',
    row({
      status: 'IN_QUEUE',
      started_at: null,
      ended_at: null,
      worker_id: null,
      output: null,
      has_output: false,
      result_from: null,
      delete_at: null,
      reported_at: null,
      execution_timeout_ms: null,
    }),
  ],
  ['a JSON null output', row({ output: null, has_output: true })],
  ['a failed job with its error', row({ status: 'FAILED', error: { error_message: 'boom', error_type: 'ValueError' }, output: null, has_output: false })],
  ['a cancelled job', row({ status: 'CANCELLED', cancelled_from: 'IN_PROGRESS' })],
  ['integer columns as text, bigint ones as numbers', row({ retries: '1', attempt: '2', submitted_at: 1795860602033, expires_at: 1795946602033 })],
  ['a result from a post with a null worker', row({ result_from: { workerId: null, attempt: 2 } })],
  ['a result from a post without a worker', row({ result_from: { attempt: 2 } })],
  ['a result_from whose worker is named but undefined', row({ result_from: { workerId: undefined, attempt: 2 } })],
  ['a result_from with a key the schema does not know (dropped)', row({ result_from: { workerId: 'w1', attempt: 2, extra: true } })],
  ['a column the schema does not read (dropped)', row({ seq: '17', queue_seq: '3' })],
  ['a running job with its deadline', row({ status: 'IN_PROGRESS', execution_deadline: '1795861202040', ended_at: null })],
];

/** Rows outside the plain shape (each wrong in one field): the fast path leaves each to zod. */
const OTHER: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ['an unknown status', row({ status: 'DONE' })],
  ['a bigint column past a safe integer', row({ submitted_at: '9007199254740993' })],
  ['a fractional integer', row({ retries: 1.5 })],
  ['a bigint column as a boolean', row({ queued_at: true })],
  ['a worker id that is a number', row({ worker_id: 5 })],
  ['an error without error_message', row({ error: { message: 'x' } })],
  ['a result_from whose attempt is text', row({ result_from: { workerId: 'w1', attempt: '2' } })],
  ['a result_from that is an array', row({ result_from: [1] })],
  ['a request without input', row({ request: '{"webhook":"http://127.0.0.1:9/"}' })],
  ['a missing column', row({}, ['has_output'])],
  ['sync as text', row({ sync: 'false' })],
];

describe('plainStoredJob', () => {
  it.each(PLAIN)("takes %s and answers the record zod's row gives", (_, raw) => {
    const fast = plainStoredJob(raw);
    expect(fast).toBeDefined();
    const judged = toStoredJob(JobRow.parse(raw));
    // What the store hands on: the records, absent fields left out alike, keys in one order.
    expect(fast).toStrictEqual(judged);
    expect(Object.keys(fast as object)).toEqual(Object.keys(judged));
    expect(storedJobOf(raw)).toStrictEqual(judged);
  });

  it.each(OTHER)('leaves %s to zod, which refuses it', (_, raw) => {
    expect(plainStoredJob(raw)).toBeUndefined();
    expect(() => JobRow.parse(raw)).toThrow();
    // storedJobOf answers zod's own error.
    expect(() => storedJobOf(raw)).toThrow(expect.objectContaining({ name: 'ZodError' }) as Error);
  });

  it('throws what zod throws for a request that is not JSON, on either path', () => {
    const raw = row({ request: '{"input":' });
    expect(() => JobRow.parse(raw)).toThrow(SyntaxError);
    expect(() => storedJobOf(raw)).toThrow(SyntaxError);
  });
});

/** A claim's row as postgres.js answers it: the job's whole row after the claim, its queue place and its row's place. */
const CLAIMED: Readonly<Record<string, unknown>> = {
  ...row({
    status: 'IN_PROGRESS',
    ended_at: null,
    output: null,
    has_output: false,
    result_from: null,
    delete_at: null,
    reported_at: null,
    chunk_count: 0,
    unread_count: 0,
  }),
  request: '{"input":{"n":1}}',
  execution_deadline: '1795861202040',
  queue_seq: '42',
  ctid: '(0,7)',
};

describe('plainClaimedJob', () => {
  it.each([
    ['a claimed job', { ...CLAIMED }],
    ['bigint columns as numbers', { ...CLAIMED, queue_seq: 42, started_at: 1795860602040 }],
    ['a column the schema does not read (dropped)', { ...CLAIMED, policy_timeout_ms: null }],
  ])('takes %s and answers what zod answers', (_, raw) => {
    const fast = plainClaimedJob(raw);
    expect(fast).toBeDefined();
    const judged = claimedOf(ClaimedRow.parse(raw));
    expect(fast).toStrictEqual(judged);
    expect(parseClaimedRow(raw)).toStrictEqual(judged);
    expect(fast?.due).toBe(1795860602040 + 600000);
  });

  it.each([
    ['an attempt as text', { ...CLAIMED, attempt: 'one' }],
    ['a missing request', { ...CLAIMED, request: undefined }],
    ['a request without input', { ...CLAIMED, request: '{}' }],
    ['a missing row place', { ...CLAIMED, ctid: undefined }],
    ['a queue place that is not a number', { ...CLAIMED, queue_seq: 'x' }],
    ['a start past a safe integer', { ...CLAIMED, started_at: '9007199254740993' }],
    ['no start (a claimed job always has one)', { ...CLAIMED, started_at: null }],
    ['no execution timeout (a claimed job always has one)', { ...CLAIMED, execution_timeout_ms: null }],
  ] as const)('leaves %s to zod, which refuses it', (_, raw) => {
    expect(plainClaimedJob(raw)).toBeUndefined();
    expect(() => parseClaimedRow(raw)).toThrow(expect.objectContaining({ name: 'ZodError' }) as Error);
  });
});
