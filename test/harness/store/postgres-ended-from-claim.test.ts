/**
 * A result written by its row's place answers the ended job built from the job as the claim
 * left it and the change (result-writes.ts `endedFromClaim`): the statement answers only which
 * rows it wrote. That job must be the one a read of the row answers (the output as posted, a
 * JSON null one too), whatever the result and the job's past; a job whose request is past the
 * kept budget, or whose row moved since the take, is read back as before.
 */
import { afterEach, expect, it } from 'vitest';
import { openHarnessDatabase } from '../../../packages/platform/src/harness/harness-database.js';
import type { PostgresDatabase } from '../../../packages/platform/src/harness/postgres/database.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import type { JobResult } from '../../../src/job/index.js';
import type { StoredJob } from '../../../src/harness/store/store-types.js';
import { startStatementCounter, type StatementCounter } from '../../postgres/statement-counter.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';

let database: TestDatabase | undefined;
let counter: StatementCounter | undefined;
let store: PostgresJobStore | undefined;
let handle: PostgresDatabase | undefined;
afterEach(async () => {
  await store?.close();
  await handle?.close();
  await counter?.close();
  await database?.drop();
});

async function open(): Promise<PostgresJobStore> {
  database = await createTestDatabase();
  counter = await startStatementCounter(database.url);
  handle = await openHarnessDatabase(counter.url, { poolSize: 2 });
  store = await PostgresJobStore.open(handle);
  return store;
}

/** The last result statement sent: whether it answered the written rows' keys only (the ended jobs built here) or every column. */
function lastResultAnswers(): 'keys' | 'rows' {
  const text = [...(counter?.texts() ?? [])].reverse().find((statement) => statement.includes('UPDATE sw_jobs j SET') && statement.includes('counted AS'));
  if (text === undefined) throw new Error('no result statement was sent');
  if (/SELECT done\.endpoint_id, done\.id FROM done\s*$/.test(text)) return 'keys';
  if (/SELECT done\.\* FROM done\s*$/.test(text)) return 'rows';
  throw new Error(`a result statement of an unknown shape: ${text.slice(-80)}`);
}

/** The job as its row reads back, with the output as posted (a JSON null output is NULL in the row). */
async function readBack(id: string, result: JobResult): Promise<StoredJob> {
  const job = (await store?.get('ep', id)) as StoredJob;
  return result.kind === 'output' ? { ...job, output: result.output } : job;
}

const ERROR = { error_type: 'ValueError', error_message: 'boom', error_traceback: 'Traceback ...', hostname: 'h', worker_id: 'w1', runtime_version: '1' };

it.each<[string, JobResult, { readonly sync?: boolean }]>([
  ['an output object, a request with a webhook and a policy', { kind: 'output', output: { text: 'ok', n: [1, 2] } }, {}],
  ['a JSON null output', { kind: 'output', output: null }, {}],
  ['a string output of a /runsync job', { kind: 'output', output: 'done' }, { sync: true }],
  ['an error', { kind: 'error', error: ERROR }, {}],
  ['a timeout the worker reported', { kind: 'error', error: ERROR, timedOut: true }, {}],
])('%s: the ended job built from the claim is the job read back', async (_, result, options) => {
  const open_ = await open();
  const request = { input: { prompt: 'hi' }, webhook: 'http://127.0.0.1:9/hook', policy: { executionTimeout: 90_000, ttl: 600_000 } };
  const { id } = await open_.submit('ep', request, options, 1_000);
  expect((await open_.take('ep', 'w1', 1, 1_100)).map((job) => job.id)).toEqual([id]);
  const done = await open_.complete('ep', id, 'w1', result, 1, 1_300);
  expect(done.ack.applied).toBe(true);
  expect(lastResultAnswers()).toBe('keys');
  expect(done.ended).toHaveLength(1);
  expect(done.ended[0]).toStrictEqual(await readBack(id, result));
});

it('builds a second attempt (a retry after a failure) from its claim as well', async () => {
  const open_ = await open();
  const { id } = await open_.submit('ep', { input: { n: 1 } }, {}, 1_000);
  await open_.take('ep', 'w1', 1, 1_100);
  await open_.complete('ep', id, 'w1', { kind: 'error', error: ERROR }, 1, 1_200);
  await open_.retry('ep', id, 1_300);
  await open_.take('ep', 'w2', 1, 1_400);
  const result: JobResult = { kind: 'output', output: { second: true } };
  const done = await open_.complete('ep', id, 'w2', result, 2, 1_500);
  expect(lastResultAnswers()).toBe('keys');
  expect(done.ended[0]).toMatchObject({ attempt: 2, retries: 1, status: 'COMPLETED', resultFrom: { workerId: 'w2', attempt: 2 } });
  expect(done.ended[0]).not.toHaveProperty('error');
  expect(done.ended[0]).toStrictEqual(await readBack(id, result));
});

it('reads back the row of a job whose request is past the budget kept for claimed jobs, and of one changed since its take', async () => {
  const open_ = await open();
  // 9 MiB of input: more than the 8 MiB of request text the store keeps for the jobs it handed out.
  const big = await open_.submit('ep', { input: { blob: 'x'.repeat(9 << 20) } }, {}, 1_000);
  const small = await open_.submit('ep', { input: { n: 2 } }, {}, 1_000);
  expect(await open_.take('ep', 'w1', 2, 1_100)).toHaveLength(2);
  const result: JobResult = { kind: 'output', output: { ok: true } };
  const bigDone = await open_.complete('ep', big.id, 'w1', result, 1, 1_200);
  expect(lastResultAnswers()).toBe('rows');
  expect(bigDone.ended[0]).toStrictEqual(await readBack(big.id, result));
  // A progress post moves the row: the write by place matches nothing, the write by key reads the row back.
  await open_.progress('ep', small.id, 'w1', { step: 1 }, 1);
  const smallDone = await open_.complete('ep', small.id, 'w1', result, 1, 1_300);
  expect(lastResultAnswers()).toBe('rows');
  expect(smallDone.ended[0]).toStrictEqual(await readBack(small.id, result));
});
