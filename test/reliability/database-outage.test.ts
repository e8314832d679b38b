/**
 * A PostgreSQL outage (issue 32 item 7): while the store's server is stopped, every
 * request that needs it is answered 503 SW_STORE_UNAVAILABLE with Retry-After (it used
 * to be 500 SW_INTERNAL), and the log warns "job store unavailable" naming what is down.
 * When the server is back, the log says so once ("job store back", how long it was down,
 * how many requests were refused), the same harness takes and finishes jobs again, and the job
 * queued before the outage is still there. A private embedded PostgreSQL (the suite's own
 * is shared by other files), stopped and started on the same port and data folder.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarnessDatabase } from '../../packages/platform/src/harness/harness-database.js';
import type { PostgresDatabase } from '../../packages/platform/src/harness/postgres/database.js';
import { PostgresJobStore } from '../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { call, errorCode, eventually, startTestServer, type TestServer } from '../kit/index.js';
import { startEmbeddedServer, type EmbeddedServer } from '../postgres/embedded-server.js';
import { printFigures } from './support/figures.js';

let postgresServer: EmbeddedServer | undefined;
let database: PostgresDatabase | undefined;
let server: TestServer | undefined;
const logLines: Array<{ level: number; msg: string; downMs?: number; refused?: number }> = [];

beforeAll(async () => {
  postgresServer = await startEmbeddedServer();
  database = await openHarnessDatabase(postgresServer.url, { poolSize: 3 });
  const store = await PostgresJobStore.open(database);
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as (typeof logLines)[number]);
      callback();
    },
  });
  server = await startTestServer({ logger: pino({ level: 'info' }, sink) }, { store });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await database?.close();
  await postgresServer?.stop();
}, 60_000);

describe('PostgreSQL stopped under a running harness', () => {
  it(
    'answers 503 SW_STORE_UNAVAILABLE with Retry-After while it is down, logs what is down, logs once that it is back, and works again',
    { timeout: 120_000 },
    async () => {
      if (!server || !postgresServer) throw new Error('not started');
      const url = server.endpointUrl();
      const before = await call('POST', `${url}/run`, { body: '{"input":{"n":1}}' });
      expect(before.status).toBe(200);
      const { id } = before.json as { id: string };

      await postgresServer.pause();
      const requests = [
        ['POST', `${url}/run`, '{"input":{"n":2}}'],
        ['POST', `${url}/runsync?wait=1000`, '{"input":{"n":3}}'],
        ['GET', `${url}/status/${id}`, undefined],
        ['POST', `${url}/cancel/${id}`, undefined],
        ['GET', `${url}/health`, undefined],
        ['GET', `${url}/job-take/outage-worker`, undefined],
      ] as const;
      const tally: Record<string, number> = {};
      for (const [method, target, body] of requests) {
        const answer = await call(method, target, body !== undefined ? { body } : {});
        const key = `${answer.status} ${errorCode(answer) ?? ''} retry-after=${answer.headers.get('retry-after') ?? '-'}`;
        tally[key] = (tally[key] ?? 0) + 1;
      }
      expect(tally).toEqual({ '503 SW_STORE_UNAVAILABLE retry-after=5': requests.length });
      const warning = logLines.find((line) => line.msg.startsWith('job store unavailable: PostgreSQL'));
      expect(warning, JSON.stringify(logLines.map((line) => line.msg))).toBeDefined();
      expect(logLines.filter((line) => line.msg === 'internal error')).toEqual([]);
      const backLines = () => logLines.filter((line) => line.msg.startsWith('job store back: PostgreSQL answers again after about '));
      expect(backLines()).toEqual([]);

      await postgresServer.resume();
      // The pool reconnects on its own: the job queued before the outage is still queued, and runs.
      let status: unknown;
      await eventually(
        async () => {
          const answer = await call('GET', `${url}/status/${id}`);
          expect(answer.status).toBe(200);
          status = answer.json;
        },
        30_000,
        200,
      );
      expect(status).toMatchObject({ status: 'IN_QUEUE' });
      const taken = await call('GET', `${url}/job-take/outage-worker`);
      expect(taken.status).toBe(200);
      expect((taken.json as { id: string }).id).toBe(id);
      expect((await call('POST', `${url}/job-done/outage-worker/${id}`, { body: '{"output":{"ok":true}}' })).status).toBe(200);
      expect(((await call('GET', `${url}/status/${id}`)).json as { status: string }).status).toBe('COMPLETED');
      // The store's return was logged once (probed every second from the first refused request), with the requests refused meanwhile.
      await eventually(() => expect(backLines()).toHaveLength(1), 30_000, 100);
      const back = backLines()[0];
      // The six above, and any status read refused while the pool reconnected.
      expect(back?.refused).toBeGreaterThanOrEqual(requests.length);
      expect(back?.downMs).toBeGreaterThan(0);
      expect(back?.msg).toContain(`${back?.refused} request(s) were answered 503 SW_STORE_UNAVAILABLE meanwhile`);
      printFigures('PostgreSQL stopped and started', { refused: back?.refused ?? 0, backLoggedAfterMs: back?.downMs ?? 0, backLines: backLines().length });
    },
  );
});
