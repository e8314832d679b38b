/**
 * The PostgreSQL store's reads with many rows kept, issue 16: `npx tsx bench/store-rows.bench.ts [--rows 100000]`.
 * Fills one endpoint with `--rows` jobs (one INSERT … SELECT generate_series; a tenth
 * queued, a tenth running, the rest completed), ANALYZEs, then times each read the
 * dashboard and the queue make (median of 20 calls after 3 warm-ups).
 */
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { openHarnessDatabase } from '../packages/platform/src/harness/harness-database.js';
import { PostgresJobStore } from '../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { startEmbeddedServer } from '../test/postgres/embedded-server.js';
import { loadAverage } from './lib/machine.js';
import { median } from './lib/stats.js';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '100000' } } });
const ROWS = Number(values.rows);
const NOW = 1_700_000_000_000;

const server = await startEmbeddedServer();
try {
  const database = await openHarnessDatabase(server.url);
  const store = await PostgresJobStore.open(database);
  const sql = postgres(server.url, { max: 1, onnotice: () => undefined });
  const filled = performance.now();
  await store.createEndpoint('ep');
  await sql`
    INSERT INTO sw_jobs (endpoint_id, id, request, sync, status, submitted_at, queued_at, started_at, ended_at, worker_id, output, attempt, expires_at, retention_ms, delete_at, execution_deadline)
    SELECT 'ep', gen_random_uuid()::text, '{"input":{"n":1}}', false,
      CASE WHEN n % 10 = 0 THEN 'IN_QUEUE' WHEN n % 10 = 1 THEN 'IN_PROGRESS' ELSE 'COMPLETED' END,
      ${NOW}::bigint + n, ${NOW}::bigint + n, CASE WHEN n % 10 = 0 THEN NULL ELSE ${NOW}::bigint + n END, CASE WHEN n % 10 > 1 THEN ${NOW}::bigint + n + 5 END,
      CASE WHEN n % 10 = 1 THEN 'w' || (n % 50) END, CASE WHEN n % 10 > 1 THEN '{"ok":true}'::jsonb END, CASE WHEN n % 10 = 0 THEN 0 ELSE 1 END,
      ${NOW}::bigint + 86400000 + n, 1800000, CASE WHEN n % 10 > 1 THEN ${NOW}::bigint + 1800000 + n END, CASE WHEN n % 10 = 1 THEN ${NOW}::bigint + 600000 + n END
    FROM generate_series(1, ${ROWS}) AS n`;
  await sql`ANALYZE`;
  console.log(`${ROWS} jobs filled in ${Math.round(performance.now() - filled)} ms; load ${loadAverage()}`);
  const [some] = await sql<{ id: string }[]>`SELECT id FROM sw_jobs ORDER BY random() LIMIT 1`;
  const cases: Array<[string, () => Promise<unknown>]> = [
    ['list: newest 50', () => store.list('ep', { offset: 0, limit: 50 })],
    ['list: 50 at offset 50 000', () => store.list('ep', { offset: Math.floor(ROWS / 2), limit: 50 })],
    ['list: IN_PROGRESS, newest 50', () => store.list('ep', { states: ['IN_PROGRESS'], offset: 0, limit: 50 })],
    ['list: exact id', () => store.list('ep', { search: some?.id ?? '', offset: 0, limit: 50 })],
    ['list: id contains "abc1"', () => store.list('ep', { search: 'abc1', offset: 0, limit: 50 })],
    ['stateCounts', () => store.stateCounts('ep')],
    ['health', () => store.health('ep')],
    ['get', () => store.get('ep', some?.id ?? '')],
    ['nextDueAt', () => store.nextDueAt()],
    [
      'take 1 (and give it back)',
      async () => {
        const [job] = await store.take('ep', 'bench', 1, NOW);
        if (job) await sql`UPDATE sw_jobs SET status = 'IN_QUEUE', worker_id = NULL WHERE endpoint_id = 'ep' AND id = ${job.id}`;
      },
    ],
  ];
  for (const [name, call] of cases) {
    const times: number[] = [];
    for (let i = 0; i < 23; i++) {
      const t = performance.now();
      await call();
      if (i >= 3) times.push(performance.now() - t);
    }
    console.log(`${name.padEnd(30)} ${median(times).toFixed(2)} ms`);
  }
  await sql.end();
  await store.close();
  await database.close();
} finally {
  await server.stop();
}
