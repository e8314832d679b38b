/**
 * A result finds its job's row by the place the take left it at (its ctid:
 * result-writes.ts), and never writes another row: a row changed within the attempt has
 * moved (a progress post, a heartbeat that lists it, a stream's chunk), and its result
 * is written by key in one more statement, with what those changes wrote kept; a place
 * that now holds another job's row (VACUUM FULL moves rows) writes nothing there.
 * Written by place, the statement answers only the rows' keys and the ended job is built from
 * the job as the claim left it and the change (result-writes.ts `endedFromClaim`): it must be
 * the one a read of the row answers (the output as posted, a JSON null one too), whatever the
 * result and the job's past; a job whose request is past the kept budget, or whose row moved
 * since the take, is read back as before.
 */
import { afterEach, expect, it } from 'vitest';
import { openHarnessDatabase } from '../../../packages/platform/src/harness/harness-database.js';
import type { PostgresDatabase } from '../../../packages/platform/src/harness/postgres/database.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { ResultWrites } from '../../../packages/platform/src/harness/store/postgres/result-writes.js';
import { completeChange } from '../../../src/harness/store/job-rules.js';
import type { JobResult } from '../../../src/job/index.js';
import type { StoredJob } from '../../../src/harness/store/job-store.js';
import { startStatementCounter, type StatementCounter } from '../../postgres/statement-counter.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';

/** No 'beat' while a test runs (a beat is a statement the counter would see). */
const QUIET_PEERS = { peerTimes: { beatMs: 3_600_000, silentMs: 7_200_000 } };

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

it('writes a result by place in one statement, and one changed within its attempt by key in one more, keeping what the change wrote', async () => {
  database = await createTestDatabase();
  counter = await startStatementCounter(database.url);
  handle = await openHarnessDatabase(counter.url, { poolSize: 1 });
  store = await PostgresJobStore.open(handle, QUIET_PEERS);
  const open = store;
  const ids: string[] = [];
  for (let n = 0; n < 4; n++) ids.push((await open.submit('ep', { input: { n } }, {}, 1_000)).id);
  expect((await open.take('ep', 'w1', 4, 1_100)).map((job) => job.id).sort()).toEqual([...ids].sort());
  const [untouched, progressed, reported, streamed] = ids as [string, string, string, string];
  await open.progress('ep', progressed, 'w1', { step: 1 }, 1);
  await open.touchWorker('ep', 'w1', { reportedJobIds: [reported], heartbeats: true }, 1_200);
  await open.pushChunk('ep', streamed, 'w1', { output: 'a' }, 1);

  const statementsOf = async (id: string): Promise<number> => {
    const before = counter?.count() ?? 0;
    const done = await open.complete('ep', id, 'w1', { kind: 'output', output: { id } }, 1, 1_300);
    expect(done.ack).toEqual({ applied: true, status: 'COMPLETED' });
    expect(done.ended.map((job) => [job.id, job.status, job.output])).toEqual([[id, 'COMPLETED', { id }]]);
    return (counter?.count() ?? 0) - before;
  };
  expect(await statementsOf(untouched)).toBe(1);
  // Moved since the take: the write by place matches nothing, the same change goes by key (no read).
  expect(await statementsOf(progressed)).toBe(2);
  expect(await statementsOf(reported)).toBe(2);
  expect(await statementsOf(streamed)).toBe(2);

  const ended = await Promise.all(ids.map((id) => open.get('ep', id)));
  expect(ended.map((job) => [job?.status, job?.output, job?.endedAt])).toEqual(ids.map((id) => ['COMPLETED', { id }, 1_300]));
  expect(ended[3]?.chunkCount).toBe(1);
  expect((await open.health('ep')).jobs.completed).toBe(4);
});

it("writes nothing at a place that holds another job's row, and the right job by key", async () => {
  database = await createTestDatabase();
  handle = await openHarnessDatabase(database.url, { poolSize: 2 });
  store = await PostgresJobStore.open(handle);
  const [first, second] = [await store.submit('ep', { input: { n: 1 } }, {}, 1_000), await store.submit('ep', { input: { n: 2 } }, {}, 1_000)];
  await store.take('ep', 'w1', 2, 1_100);
  const place = async (id: string): Promise<string> => {
    const [row] = await (handle as PostgresDatabase).sql<{ ctid: string }[]>`SELECT ctid::text AS ctid FROM sw_jobs WHERE id = ${id}`;
    return row?.ctid as string;
  };
  const facts = async (id: string): Promise<StoredJob> => (await store?.get('ep', id)) as StoredJob;
  const [factsA, factsB] = [await facts(first.id), await facts(second.id)];
  const writes = new ResultWrites(handle.sql);
  const change = completeChange(factsA, 'w1', { kind: 'output', output: 'a' }, 1_200);
  // The first job's result at the second job's place: no row written, "changed since".
  expect(await writes.write(factsA, change, await place(second.id))).toBeUndefined();
  expect([(await facts(second.id)).status, (await facts(first.id)).status]).toEqual(['IN_PROGRESS', 'IN_PROGRESS']);
  // By its own place, and by key: written.
  const written = await writes.write(factsA, change, await place(first.id));
  expect([written?.id, written?.status, written?.output]).toEqual([first.id, 'COMPLETED', 'a']);
  const byKey = await writes.write(factsB, completeChange(factsB, 'w1', { kind: 'output', output: 'b' }, 1_200));
  expect([byKey?.id, byKey?.status, byKey?.output]).toEqual([second.id, 'COMPLETED', 'b']);
  expect((await store.health('ep')).jobs.completed).toBe(2);
});

it('writes the right jobs after VACUUM FULL moved every row since the take', async () => {
  database = await createTestDatabase();
  handle = await openHarnessDatabase(database.url, { poolSize: 2 });
  store = await PostgresJobStore.open(handle);
  const open = store;
  // Jobs taken (new row versions past the old ones), then the old versions compacted away: the places the
  // takes answered now hold other rows or none.
  const ids: string[] = [];
  for (let n = 0; n < 30; n++) ids.push((await open.submit('ep', { input: { n } }, {}, 1_000)).id);
  const taken = await open.take('ep', 'w1', 10, 1_100);
  expect(taken).toHaveLength(10);
  await handle.sql`VACUUM FULL sw_jobs`;
  const done = await Promise.all(taken.map((job) => open.complete('ep', job.id, 'w1', { kind: 'output', output: job.id }, job.attempt, 1_200)));
  expect(done.map((one) => one.ack)).toEqual(taken.map(() => ({ applied: true, status: 'COMPLETED' })));
  const jobs = await Promise.all(ids.map((id) => open.get('ep', id)));
  const takenIds = new Set(taken.map((job) => job.id));
  for (const job of jobs) {
    if (takenIds.has(job?.id as string)) expect([job?.status, job?.output]).toEqual(['COMPLETED', job?.id]);
    else expect([job?.status, job?.output]).toEqual(['IN_QUEUE', undefined]);
  }
  const health = await open.health('ep');
  expect([health.jobs.completed, health.jobs.inQueue]).toEqual([10, 20]);
});

async function open(): Promise<PostgresJobStore> {
  database = await createTestDatabase();
  counter = await startStatementCounter(database.url);
  handle = await openHarnessDatabase(counter.url, { poolSize: 2 });
  store = await PostgresJobStore.open(handle, QUIET_PEERS);
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

it('forgets a taken job that ended or went back to the queue another way: its late result is judged on one read', async () => {
  const open_ = await open();
  const [cancelled, lost] = [await open_.submit('ep', { input: { n: 1 } }, {}, 1_000), await open_.submit('ep', { input: { n: 2 } }, {}, 1_000)];
  expect(await open_.take('ep', 'w1', 2, 1_100)).toHaveLength(2);
  await open_.cancel('ep', cancelled.id, 1_200);
  await open_.requeueJob('ep', lost.id, 'w1', { maxRequeues: 3 }, 1_200);
  for (const [id, reason] of [
    [cancelled.id, 'already_ended'],
    [lost.id, 'stale_attempt'],
  ] as const) {
    const before = counter?.count() ?? 0;
    const done = await open_.complete('ep', id, 'w1', { kind: 'output', output: 'late' }, 1, 1_300);
    expect(done.ack).toMatchObject({ applied: false, reason });
    // Kept as taken, the result would first be written by place and by key (two statements that match nothing).
    const ran = (counter?.count() ?? 0) - before;
    expect(
      counter
        ?.texts()
        .slice(-ran)
        .map((text) => text.replace(/\s+/g, ' ').slice(0, 80)),
    ).toHaveLength(1);
  }
});
