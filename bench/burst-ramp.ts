/**
 * @module bench/burst-ramp
 * How fast a freshly started local API gets to its full rate (issue 46, the burst figures):
 * each side's server is started, then sent bursts of `--burst` `/runsync` back to back from
 * 8 keep-alive clients, with no pause, `--bursts` times; for each burst it prints the rate
 * and the CPU a request of each process of the side (ours: the `--serve-api` process and its
 * worker child; runpod-python: its one process), from /proc.
 *
 *   npx tsx bench/burst-ramp.ts [--bursts 14] [--burst 1900] [--rounds 2] [--side ours|runpod-python|both]
 *
 * Ours is the compiled bench worker's `--serve-api --no-rate-limit` as `npm run bench --
 * runpod-python` starts it (concurrency 8), run by this process's node (`PATH=<node 24>/bin:$PATH`
 * runs both on that one), with BENCH_SERVE_API_NODE_ARGS (space-separated) as node flags before the
 * script (its worker child inherits them); runpod-python needs BENCH_RUNPOD_PYTHON as for that bench. Sides
 * alternate round by round. A JIT's server climbs while V8 tiers its functions up (a burst whose
 * CPU a request is far above the later ones' is such a wave); CPython's does not.
 */
import type { ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { stopChild } from './lib/child.js';
import { preciseNow, QueueClient, runOneJob } from './lib/http-client.js';
import { loadAverage, machineInfo } from './lib/machine.js';
import { processTree, readProc } from './lib/proc.js';
import { freePort, locateRunpodPython, spawnRunpodServeApi, stopRunpod } from './lib/runpod-python.js';
import { firstRunsync, spawnServeApi } from './lib/serve-api-server.js';

const CLIENTS = 8;
type Side = 'ours' | 'runpod-python';

const { values } = parseArgs({
  options: {
    bursts: { type: 'string', default: '14' },
    burst: { type: 'string', default: '1900' },
    rounds: { type: 'string', default: '2' },
    side: { type: 'string', default: 'both' },
  },
});
const BURSTS = Number(values.bursts);
const BURST = Number(values.burst);
const ROUNDS = Number(values.rounds);
const SIDES: readonly Side[] = values.side === 'both' ? ['ours', 'runpod-python'] : [values.side as Side];
if (!SIDES.every((side) => side === 'ours' || side === 'runpod-python')) throw new Error(`--side must be ours, runpod-python or both, not ${values.side}`);

async function start(side: Side): Promise<{ server: ChildProcess; client: QueueClient }> {
  const port = await freePort();
  const server =
    side === 'ours'
      ? await spawnServeApi(
          port,
          CLIENTS,
          (process.env.BENCH_SERVE_API_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== ''),
        )
      : spawnRunpodServeApi(locateRunpodPython(), port);
  const client = new QueueClient(`http://127.0.0.1:${port}`, '', CLIENTS);
  await firstRunsync(server, client, side);
  return { server, client };
}

/** One burst from the clients: its rate, and the CPU µs a request of each of `pids`. */
async function burst(client: QueueClient, pids: readonly number[]): Promise<string> {
  const before = pids.map((pid) => readProc(pid)?.cpuMs ?? Number.NaN);
  let started = 0;
  const began = preciseNow();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (started < BURST) {
        started++;
        await runOneJob(client, 'runsync');
      }
    }),
  );
  const rate = (BURST / (preciseNow() - began)) * 1000;
  const cpu = pids.map((pid, index) => ((((readProc(pid)?.cpuMs ?? Number.NaN) - (before[index] ?? 0)) / BURST) * 1000).toFixed(0));
  return `${rate.toFixed(0)} (${cpu.join('/')})`;
}

const machine = machineInfo();
console.log(
  `${BURSTS} bursts of ${BURST} /runsync back to back from ${CLIENTS} clients; node ${process.version}; ${machine.cpuModel} x${machine.nproc}, ${machine.date}, load ${loadAverage()}`,
);
console.log('each burst: req/s (CPU µs a request of each process: ours the --serve-api process / its worker child)');
for (let round = 1; round <= ROUNDS; round++) {
  for (const side of round % 2 === 1 ? SIDES : [...SIDES].reverse()) {
    const { server, client } = await start(side);
    try {
      const pids = processTree(server.pid ?? 0).slice(0, 2);
      const rates: string[] = [];
      for (let index = 0; index < BURSTS; index++) rates.push(await burst(client, pids));
      console.log(`round ${round} ${side}: ${rates.join(' ')}`);
    } finally {
      await client.close();
      await (side === 'ours' ? stopChild(server, 15_000) : stopRunpod(server, 15_000));
    }
  }
}
