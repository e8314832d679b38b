/**
 * Draining a backlog on the PostgreSQL store (issue 33, item 2), counted on the wire
 * (test/postgres/statement-counter.ts), not timed: one worker of concurrency 16 (16
 * takers of one worker id, each taking one job, completing it and taking the next)
 * through the harness's facade. Takes made together go in one claim statement; the
 * endpoint's row is not written again once known; the worker's presence is written at
 * most once a second (its row's xmin: the transaction that last wrote it).
 */
import { afterEach, expect, it } from 'vitest';
import { Harness, ManualClock } from '../../../src/harness/index.js';
import { openHarnessDatabase } from '../../../packages/platform/src/harness/harness-database.js';
import type { PostgresDatabase } from '../../../packages/platform/src/harness/postgres/database.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { startStatementCounter, type StatementCounter } from '../../postgres/statement-counter.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';

const JOBS = 320;
const CONCURRENCY = 16;

let database: TestDatabase | undefined;
let counter: StatementCounter | undefined;
let handle: PostgresDatabase | undefined;
afterEach(async () => {
  await handle?.close();
  await counter?.close();
  await database?.drop();
});

it(`drains ${JOBS} queued jobs with ${CONCURRENCY} takers of one worker in under 0.6 statements a job, the worker's presence written once a second`, async () => {
  database = await createTestDatabase();
  counter = await startStatementCounter(database.url);
  handle = await openHarnessDatabase(counter.url, { poolSize: 4 });
  const store = await PostgresJobStore.open(handle);
  const clock = new ManualClock();
  const harness = new Harness({ clock, store });
  const endpoint = harness.endpoint('ep');
  const { sql } = handle;
  const presence = async (): Promise<string | undefined> => (await sql<{ xmin: string }[]>`SELECT xmin::text FROM sw_workers WHERE id = 'w1'`)[0]?.xmin;
  try {
    for (let n = 0; n < JOBS; n += 100) await Promise.all(Array.from({ length: Math.min(100, JOBS - n) }, (_, i) => endpoint.submit({ input: { n: n + i } })));
    // The worker's first take writes its presence.
    const [first] = await endpoint.take('w1', 1);
    await endpoint.complete(first?.id ?? '', 'w1', { kind: 'output', output: 0 }, first?.attempt);
    const written = await presence();
    expect(written).toBeDefined();
    const before = counter.count() - counter.notifications();
    let done = 1;
    let takes = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (done < JOBS) {
          takes++;
          const [job] = await endpoint.take('w1', 1, AbortSignal.timeout(5_000));
          if (!job) continue;
          await endpoint.complete(job.id, 'w1', { kind: 'output', output: job.input }, job.attempt);
          done++;
        }
      }),
    );
    const statements = counter.count() - counter.notifications() - before;
    const perJob = statements / (JOBS - 1);
    console.log(
      `drain: ${JOBS - 1} jobs, ${takes} takes, ${statements} statements (${perJob.toFixed(2)} a job, notifications apart: ${counter.notifications()})`,
    );
    expect((await store.health('ep')).jobs).toMatchObject({ completed: JOBS, inQueue: 0, inProgress: 0 });
    // 1.21 a job before (one take statement a job; results were joined already): takes made together now share theirs too.
    expect(perJob).toBeLessThan(0.6);
    // The clock did not move: the presence row was not written again.
    expect(await presence()).toBe(written);
    // A second later, the next take writes it (lastSeenAt moves).
    clock.advance(1_000);
    await endpoint.tryTake('w1', 1);
    expect(await presence()).not.toBe(written);
    expect((await store.getWorker('ep', 'w1'))?.lastSeenAt).toBe(clock.now());
  } finally {
    await harness.close();
    await store.close();
  }
}, 120_000);
