/**
 * @module bench/postgres-restarts
 * Issue 49 item 1's soak: `npx tsx bench/postgres-restarts.ts [--restarts 100] [--pool 4]`.
 * A `serverless-worker harness` process on an embedded PostgreSQL server (its own), under
 * the restart test's load (test/reliability/support/restart-load.ts: 4 submitters, 4 HTTP
 * workers, at most 100 jobs unfinished); PostgreSQL is stopped and started `--restarts`
 * times, each once a job finished since the last. Prints: restarts survived, how long the
 * harness took to answer /health 200 after each start (median, worst), jobs accepted and
 * finished, answers by route and status, and the accepted jobs not COMPLETED at the end
 * (lost or stuck). Exits 1 when the harness died or a job was not COMPLETED. 127.0.0.1 only.
 */
import { parseArgs } from 'node:util';
import { ChildList } from '../test/child-process.js';
import { call, startHarnessProcess, waitFor } from '../test/kit/index.js';
import { startEmbeddedServer } from '../test/postgres/embedded-server.js';
import { startRestartLoad } from '../test/reliability/support/restart-load.js';
import { loadAverage, machineInfo } from './lib/machine.js';

function count(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a whole number of at least 1, instead got ${JSON.stringify(text)}`);
  return value;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { restarts: { type: 'string' }, pool: { type: 'string' } } });
  const restarts = count('restarts', values.restarts, 100);
  const pool = count('pool', values.pool, 4);
  console.log(`machine: ${JSON.stringify(machineInfo())}; load before ${loadAverage()}`);
  const children = new ChildList();
  const server = await startEmbeddedServer();
  const started = performance.now();
  let survived = 0;
  let died: string | undefined;
  const backMs: number[] = [];
  try {
    const harness = await startHarnessProcess(children, ['--store', server.url, '--no-rate-limit', '--pg-pool-size', String(pool)], { timeoutMs: 3_600_000 });
    const alive = (): boolean => harness.child.exitCode === null && harness.child.signalCode === null;
    const load = startRestartLoad({ url: harness.url, alive, submitters: 4, workers: 4, backlog: 100 });
    for (let restart = 1; restart <= restarts && alive(); restart++) {
      const before = load.finished.size;
      await waitFor(() => !alive() || load.finished.size > before, `a job finished before restart ${restart}`, 120_000, 20);
      await server.pause();
      await server.resume();
      const resumed = performance.now();
      await waitFor(
        async () => !alive() || (await call('GET', `${harness.url}/v2/ep/health`).catch(() => undefined))?.status === 200,
        `/health after restart ${restart}`,
        120_000,
        20,
      );
      if (!alive()) break;
      backMs.push(Math.round(performance.now() - resumed));
      survived = restart;
      if (restart % 10 === 0) console.log(`restart ${restart}: alive, ${load.finished.size} jobs finished`);
    }
    if (!alive()) died = harness.stderr().slice(-2000);
    const unfinished = await load.finish(300_000);
    console.log(
      JSON.stringify(
        {
          restarts,
          survived,
          seconds: Math.round((performance.now() - started) / 1000),
          healthBackMs: { median: median(backMs), worst: Math.max(0, ...backMs) },
          accepted: load.accepted.size,
          finished: load.finished.size,
          notCompleted: unfinished.length,
          answers: load.answers,
          loadAfter: loadAverage(),
        },
        null,
        2,
      ),
    );
    if (died !== undefined) console.log(`the harness died:\n${died}`);
    return died === undefined && survived === restarts && unfinished.length === 0 ? 0 : 1;
  } finally {
    await children.killAll();
    await server.stop();
  }
}

process.exitCode = await main();
