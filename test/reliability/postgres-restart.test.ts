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
import { startRestartLoad } from './support/restart-load.js';
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
    // A 10 s silence window (2 s pings, 5 missed) instead of the default 30 s: the load's
    // workers never ping, so a job whose take answer a restart cut is requeued only once
    // they fall silent, when the load stops (finish() then waited the whole window: 30 of
    // the test's 65 s). Every restart still gives each worker a whole window again
    // (worker-liveness.ts), and a load worker calls again as soon as it is answered: the
    // submitters keep jobs queued, so its takes are not left waiting in a long poll.
    const liveness = ['--ping-interval-ms', '2000', '--missed-pings', '5'];
    const harness = await startHarnessProcess(children, ['--store', postgresServer.url, '--no-rate-limit', '--pg-pool-size', '4', ...liveness], {
      timeoutMs: 590_000,
    });
    const alive = (): boolean => harness.child.exitCode === null && harness.child.signalCode === null;

    const load = startRestartLoad({ url: harness.url, alive, submitters: SUBMITTERS, workers: WORKERS, backlog: BACKLOG });
    const { accepted, finished, answers } = load;
    const began = performance.now();

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
    const restartsMs = Math.round(performance.now() - began);
    const unfinished = await load.finish(120_000);
    const finishMs = Math.round(performance.now() - began) - restartsMs;
    expect(alive(), harness.stderr().slice(-3000)).toBe(true);
    // Only answers of success or of the outage (503): nothing else was told to the clients.
    const others = Object.keys(answers).filter((what) => !/ (200|204|503)$/.test(what));
    const internalErrors = harness
      .stderr()
      .split('\n')
      .filter((line) => line.includes('internal error'))
      .slice(-5)
      .join('\n');
    expect(others, `${JSON.stringify(answers)}; those answers: ${load.unexpected.join('\n')}; the harness's internal errors: ${internalErrors}`).toEqual([]);
    // Every job the harness accepted is there and ended COMPLETED.
    expect(unfinished).toEqual([]);
    printFigures('PostgreSQL restarted under load', { restarts: RESTARTS, restartsMs, finishMs, accepted: accepted.size, ...answers });
  });
});
