/**
 * @module bench/runsync-minute
 * The local API under `/runsync` load for a minute or more (issue 46 item 3): the spec keeps a
 * `/runsync` result a minute, so at 10 000 requests a second the store holds 600 000 finished
 * jobs, where the runpod-python bench's 5 s case sees a twelfth of that. One server is started
 * and driven by 8 keep-alive clients, no pause, `--rounds` rounds of `--round-seconds` each;
 * each round prints its rate, the CPU µs a request of the `--serve-api` process and of its
 * worker child, and the `--serve-api` process's RSS at its end (from /proc).
 *
 *   npx tsx bench/runsync-minute.ts [--rounds 12] [--round-seconds 5] [--runs 1]
 *
 * Ours is the compiled bench worker's `--serve-api --no-rate-limit` as `npm run bench --
 * runpod-python` starts it (concurrency 8); `BENCH_SERVE_API_SCRIPT=<a copy of an earlier
 * compiled tree>` runs that one instead, for a before and after.
 */
import type { ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { stopChild } from './lib/child.js';
import { preciseNow, QueueClient, runOneJob } from './lib/http-client.js';
import { loadAverage, machineInfo } from './lib/machine.js';
import { processTree, readProc } from './lib/proc.js';
import { freePort } from './lib/runpod-python.js';
import { firstRunsync, spawnServeApi } from './lib/serve-api-server.js';

const CLIENTS = 8;
const MIB = 1024 * 1024;

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '12' },
    'round-seconds': { type: 'string', default: '5' },
    runs: { type: 'string', default: '1' },
  },
});
const ROUNDS = Number(values.rounds);
const ROUND_MS = Number(values['round-seconds']) * 1000;
const RUNS = Number(values.runs);
for (const [name, value] of [
  ['--rounds', ROUNDS],
  ['--round-seconds', ROUND_MS],
  ['--runs', RUNS],
] as const) {
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
}

/** One round: `/runsync` from the clients for ROUND_MS; its rate, the CPU µs a request of each of `pids`, the first one's RSS. */
async function round(client: QueueClient, pids: readonly number[]): Promise<string> {
  const before = pids.map((pid) => readProc(pid)?.cpuMs ?? Number.NaN);
  const until = preciseNow() + ROUND_MS;
  let done = 0;
  const began = preciseNow();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (preciseNow() < until) {
        await runOneJob(client, 'runsync');
        done++;
      }
    }),
  );
  const rate = (done / (preciseNow() - began)) * 1000;
  const cpu = pids.map((pid, index) => ((((readProc(pid)?.cpuMs ?? Number.NaN) - (before[index] ?? 0)) / done) * 1000).toFixed(0));
  const rss = (readProc(pids[0] ?? 0)?.rssBytes ?? Number.NaN) / MIB;
  return `${rate.toFixed(0)} (${cpu.join('/')}) ${rss.toFixed(0)} MiB`;
}

const machine = machineInfo();
console.log(
  `${ROUNDS} rounds of ${ROUND_MS / 1000} s of /runsync from ${CLIENTS} clients, no pause; node ${process.version}; ${machine.cpuModel} x${machine.nproc}, ${machine.date}, load ${loadAverage()}`,
);
console.log('each round: req/s (CPU µs a request: the --serve-api process / its worker child) the --serve-api process RSS at its end');
for (let run = 1; run <= RUNS; run++) {
  const port = await freePort();
  const server: ChildProcess = await spawnServeApi(port, CLIENTS);
  const client = new QueueClient(`http://127.0.0.1:${port}`, '', CLIENTS);
  try {
    await firstRunsync(server, client, 'ours');
    const pids = processTree(server.pid ?? 0).slice(0, 2);
    const rounds: string[] = [];
    for (let index = 0; index < ROUNDS; index++) rounds.push(await round(client, pids));
    console.log(`run ${run}:\n  ${rounds.join('\n  ')}`);
  } finally {
    await client.close();
    await stopChild(server, 15_000);
  }
}
