/**
 * A harness process on PostgreSQL lives through PostgreSQL restarts under load (issue 49
 * item 1). postgres.js 3.4.9 threw `TypeError: Cannot read properties of null (reading
 * 'write')` from a timer when a statement was written to a connection that had just closed
 * (the ROLLBACK its `sql.begin` sends after a failed transaction), which killed the
 * process on most restarts under load. A private embedded PostgreSQL (stopped and started
 * on the same port and data), a real harness child process, clients submitting and
 * workers taking and finishing jobs over HTTP all along: after each restart the process is alive and answers again, and at
 * the end every submission it accepted ran to COMPLETED.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ChildList } from '../child-process.js';
import { call, startHarnessProcess, waitFor } from '../kit/index.js';
import { startEmbeddedServer, type EmbeddedServer } from '../postgres/embedded-server.js';
import { printFigures } from './support/figures.js';

const RESTARTS = 20;
/** Clients submitting at once, each one request after the other. */
const SUBMITTERS = 4;
/** Workers taking and finishing jobs over HTTP at once. */
const WORKERS = 4;
/** Jobs accepted and not yet finished at most: the load stays bounded. */
const BACKLOG = 100;

const children = new ChildList();
let postgresServer: EmbeddedServer | undefined;

afterAll(async () => {
  await children.killAll();
  await postgresServer?.stop();
}, 60_000);

describe('PostgreSQL restarted under a harness under load', () => {
  it(`the harness process lives through ${RESTARTS} restarts and every job it accepted completes`, { timeout: 600_000 }, async () => {
    postgresServer = await startEmbeddedServer();
    const harness = await startHarnessProcess(children, ['--store', postgresServer.url, '--no-rate-limit', '--pg-pool-size', '4'], { timeoutMs: 590_000 });
    const alive = (): boolean => harness.child.exitCode === null && harness.child.signalCode === null;

    const accepted = new Set<string>();
    const finished = new Set<string>();
    const answers: Record<string, number> = {};
    const tally = (what: string): void => void (answers[what] = (answers[what] ?? 0) + 1);
    let loading = true;
    const running = (): boolean => loading && alive();
    // Submitters: /run as fast as answered, at most BACKLOG jobs not yet finished.
    const submitter = async (): Promise<void> => {
      while (running()) {
        if (accepted.size - finished.size >= BACKLOG) {
          await waitFor(() => !running() || accepted.size - finished.size < BACKLOG, 'room in the backlog', 120_000, 5);
          continue;
        }
        const answer = await call('POST', `${harness.url}/v2/ep/run`, { body: { input: { n: accepted.size } } }).catch(() => undefined);
        tally(`run ${answer?.status ?? 'no answer'}`);
        if (answer?.status === 200) accepted.add((answer.json as { id: string }).id);
      }
    };
    // Workers over HTTP (the worker API's transactions: a take, a result): each result is
    // posted until it is acknowledged, as a worker does.
    const worker = async (name: string): Promise<void> => {
      while (running()) {
        const taken = await call('GET', `${harness.url}/v2/ep/job-take/${name}`).catch(() => undefined);
        tally(`take ${taken?.status ?? 'no answer'}`);
        if (taken?.status !== 200) continue;
        const { id } = taken.json as { id: string };
        await waitFor(
          async () => {
            if (!alive()) return true;
            const done = await call('POST', `${harness.url}/v2/ep/job-done/${name}/${id}`, { body: { output: { ok: true } } }).catch(() => undefined);
            tally(`done ${done?.status ?? 'no answer'}`);
            return done?.status === 200;
          },
          `job-done of ${id} acknowledged`,
          120_000,
          5,
        );
        finished.add(id);
      }
    };
    const load = [...Array.from({ length: SUBMITTERS }, () => submitter()), ...Array.from({ length: WORKERS }, (_, i) => worker(`restart-worker-${i}`))];

    for (let restart = 1; restart <= RESTARTS; restart++) {
      const before = finished.size;
      await waitFor(() => finished.size > before, `a job finished before restart ${restart}`, 60_000, 20).catch((error: unknown) => {
        throw new Error(`${String(error)}; answers so far ${JSON.stringify(answers)}; the harness's last lines: ${harness.stderr().slice(-4000)}`);
      });
      await postgresServer.pause();
      await postgresServer.resume();
      await waitFor(
        async () => {
          if (!alive()) throw new Error(`the harness died on PostgreSQL restart ${restart}: ${harness.stderr().slice(-3000)}`);
          return (await call('GET', `${harness.url}/v2/ep/health`).catch(() => undefined))?.status === 200;
        },
        `the harness answers /health after restart ${restart}`,
        60_000,
        50,
      );
    }
    loading = false;
    await Promise.all(load);
    expect(alive(), harness.stderr().slice(-3000)).toBe(true);
    // Only answers of success or of the outage (503): nothing else was told to the clients.
    const others = Object.keys(answers).filter((what) => !/ (200|204|503)$/.test(what));
    expect(others, JSON.stringify(answers)).toEqual([]);

    // Every job the harness accepted is there and ends COMPLETED (the rest are taken now).
    const unfinished = new Set([...accepted].filter((id) => !finished.has(id)));
    const drain = Array.from({ length: WORKERS }, async (_, i) => {
      while (unfinished.size > 0) {
        const taken = await call('GET', `${harness.url}/v2/ep/job-take/drain-${i}`);
        if (taken.status !== 200) continue;
        const { id } = taken.json as { id: string };
        expect((await call('POST', `${harness.url}/v2/ep/job-done/drain-${i}/${id}`, { body: { output: { ok: true } } })).status).toBe(200);
        unfinished.delete(id);
      }
    });
    await waitFor(
      async () => {
        for (const id of [...unfinished]) {
          const status = ((await call('GET', `${harness.url}/v2/ep/status/${id}`)).json as { status?: string }).status;
          if (status === 'COMPLETED') unfinished.delete(id);
        }
        return unfinished.size === 0;
      },
      'every accepted job completes',
      120_000,
      200,
    );
    await Promise.all(drain);
    printFigures('PostgreSQL restarted under load', { restarts: RESTARTS, accepted: accepted.size, ...answers });
  });
});
