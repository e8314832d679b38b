/**
 * The PostgreSQL store's time rules in short transactions (issue 33, item 1): 20 000 jobs
 * whose ttl passed are deleted by set-based statements of at most SWEEP_BATCH rows, each
 * its own transaction, and the execution timeouts due at the same time are applied first,
 * in batches of their own. Measured from PostgreSQL's side, not by the test's clock: a
 * sampler reads pg_stat_activity (`xact_start` of every other session of the database)
 * throughout the sweep and keeps the oldest open transaction it saw (of client sessions:
 * autovacuum's workers, which migration 0004 sends early, are not the store's; nor is the LISTEN
 * session, whose LISTEN statement a loaded machine saw open for 4 s). Meanwhile a harness
 * server on the same database answers /health.
 */
import postgres from 'postgres';
import { afterEach, expect, it } from 'vitest';
import { parseJobRequest } from '../../../src/job/index.js';
import { createHarnessServer } from '../../../packages/platform/src/harness/server-api.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { SWEEP_BATCH, TIMEOUT_BATCH } from '../../../packages/platform/src/harness/store/postgres/due-rules.js';
import { call } from '../../kit/index.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';

const EXPIRING = 20_000;
const RUNNING = 2 * TIMEOUT_BATCH + 50;
/** The longest a transaction of the store may stay open during the sweep (the goal). */
const MAX_TRANSACTION_MS = 2_000;

let database: TestDatabase | undefined;
afterEach(async () => {
  await database?.drop();
  database = undefined;
});

it(`expires ${EXPIRING} jobs in transactions of at most ${SWEEP_BATCH} rows, timeouts first and apart, while /health answers`, async () => {
  database = await createTestDatabase();
  const store = await PostgresJobStore.open(await database.connect(4));
  const server = await createHarnessServer({ store: database.url, port: 0, rateLimits: false });
  const sampler = postgres(database.url, { max: 1, onnotice: () => undefined });
  try {
    // Days ahead of the real clock: the server's own scheduler (real time) finds nothing due; the sweep is this store's.
    const base = Date.now() + 3 * 86_400_000;
    // Running jobs whose execution timeout will be due, ttl not: TIMED_OUT by the timeout batches.
    for (let n = 0; n < RUNNING; n += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, RUNNING - n) }, () =>
          store.submit('ep', parseJobRequest({ input: {}, policy: { executionTimeout: 5_000, ttl: 7 * 86_400_000 } }), {}, base),
        ),
      );
    }
    expect(await store.take('ep', 'w1', RUNNING, base)).toHaveLength(RUNNING);
    for (let n = 0; n < EXPIRING; n += 1_000) {
      await Promise.all(
        Array.from({ length: 1_000 }, (_, i) => store.submit('ep', parseJobRequest({ input: { n: n + i }, policy: { ttl: 10_000 } }), {}, base)),
      );
    }
    // The sampler: the oldest transaction open in the database (not its own), as PostgreSQL sees it.
    let sweeping = true;
    let oldestMs = 0;
    let oldestQuery = '';
    let busySamples = 0;
    const sampling = (async () => {
      while (sweeping) {
        const [row] = await sampler<{ ms: number | null; open: number; query: string | null }[]>`
          SELECT max(extract(epoch FROM clock_timestamp() - xact_start) * 1000)::float8 AS ms, count(*)::int AS open,
            (array_agg(left(query, 80) ORDER BY xact_start))[1] AS query
          FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
            AND backend_type = 'client backend' AND query NOT ILIKE 'listen %'`;
        if (row && row.open > 0) busySamples++;
        if ((row?.ms ?? 0) > oldestMs) {
          oldestMs = row?.ms ?? 0;
          oldestQuery = row?.query ?? '';
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    let healthAnswers = 0;
    // The slowest answer is printed beside the figures, not asserted (a shared machine's timing).
    let healthSlowestMs = 0;
    const health = (async () => {
      while (sweeping) {
        const asked = performance.now();
        const answer = await call('GET', `${server.url}/v2/ep/health`);
        healthSlowestMs = Math.max(healthSlowestMs, performance.now() - asked);
        expect(answer.status).toBe(200);
        healthAnswers++;
      }
    })();
    const outcome = await store.applyDue(base + 60_000);
    sweeping = false;
    await Promise.all([sampling, health]);

    expect(outcome.deleted).toHaveLength(EXPIRING);
    expect(outcome.ended).toHaveLength(RUNNING);
    expect(outcome.ended.every((job) => job.status === 'TIMED_OUT')).toBe(true);
    expect(outcome.stops.filter((stop) => stop.reason === 'timeout')).toHaveLength(RUNNING);
    expect((await store.health('ep')).jobs).toMatchObject({ failed: RUNNING, inQueue: 0, inProgress: 0 });
    // The sampler saw the sweep's transactions, none of them open longer than the bound.
    expect(busySamples).toBeGreaterThan(0);
    expect(oldestMs, `the oldest transaction: ${oldestQuery}`).toBeLessThan(MAX_TRANSACTION_MS);
    expect(healthAnswers).toBeGreaterThan(1);
    console.log(
      `sweep of ${EXPIRING} expired + ${RUNNING} timed out: oldest transaction seen ${oldestMs.toFixed(0)} ms (${oldestQuery.replace(/\s+/g, ' ')}) over ${busySamples} busy samples; /health answered ${healthAnswers} times, the slowest in ${healthSlowestMs.toFixed(0)} ms`,
    );
  } finally {
    await sampler.end();
    await server.close();
    await store.close();
  }
}, 180_000);
