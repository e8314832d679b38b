/**
 * @module bench/burst-after-idle
 * Where a burst of `/runsync` after an idle spell costs more than the same burst at once
 * (issue 46's "burst after idle"), process by process: `--serve-api` of the compiled bench
 * worker (as `npm run bench -- runpod-python` starts it), warmed, then rounds of: `--idle`
 * ms of nothing, a burst of `--burst` /runsync from 8 keep-alive clients (cold), the same
 * burst again at once (warm). For each burst it prints the rate and, for the `--serve-api`
 * process, its worker child and this (client) process, the CPU spent and the minor page
 * faults taken, from /proc: figures a busy shared machine moves far less than the rates.
 *
 *   npx tsx bench/burst-after-idle.ts [--rounds 3] [--idle 11000] [--burst 1900] [--warm 4000]
 *
 * BENCH_SERVE_API_SCRIPT=<compiled worker.js>: another tree's server (a before/after pair);
 * BENCH_SERVE_API_NODE_ARGS: node flags for the `--serve-api` process (its worker child gets
 * them too). Each round also prints `marks`: the bursts' start and end on the monotonic clock
 * in µs, the clock of V8's `--cpu-prof` profiles, to split a profile into cold and warm
 * windows. BENCH_VERBOSE=1: the server's stdout and stderr shown, with a `phase cold|warm|idle`
 * line at each change, so that `--trace-gc` or `--trace-opt --trace-deopt` lines can be
 * counted by phase (bench/README, issue 46: the burst after idle by process).
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { stopChild } from './lib/child.js';
import { preciseNow, QueueClient, runOneJob } from './lib/http-client.js';
import { processTree } from './lib/proc.js';
import { freePort } from './lib/runpod-python.js';
import { firstRunsync, spawnServeApi } from './lib/serve-api-server.js';

const CLIENTS = 8;
const TICK_MS = 10;

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    idle: { type: 'string', default: '11000' },
    burst: { type: 'string', default: '1900' },
    warm: { type: 'string', default: '4000' },
  },
});
const ROUNDS = Number(values.rounds);
const IDLE_MS = Number(values.idle);
const BURST = Number(values.burst);
const WARM = Number(values.warm);

/** CPU ms (user and system) and minor faults of one process (/proc/<pid>/stat, fields 10, 14 and 15). */
function stat(pid: number | 'self'): { cpuMs: number; sysMs: number; faults: number } {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { cpuMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS, sysMs: Number(fields[12]) * TICK_MS, faults: Number(fields[7]) };
  } catch {
    return { cpuMs: Number.NaN, sysMs: Number.NaN, faults: Number.NaN };
  }
}

type Reading = Record<'server' | 'child' | 'client', ReturnType<typeof stat>>;

function read(server: ChildProcess): Reading {
  const pid = server.pid ?? 0;
  const child = processTree(pid)[1];
  return { server: stat(pid), child: child === undefined ? stat(-1) : stat(child), client: stat('self') };
}

async function burst(client: QueueClient, jobs: number): Promise<number> {
  let started = 0;
  const start = preciseNow();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (started < jobs) {
        started++;
        await runOneJob(client, 'runsync');
      }
    }),
  );
  return (jobs / (preciseNow() - start)) * 1000;
}

function line(label: string, rate: number, before: Reading, after: Reading): string {
  const parts = (['server', 'child', 'client'] as const).map(
    (side) =>
      `${side} ${(after[side].cpuMs - before[side].cpuMs).toFixed(0)} ms (sys ${(after[side].sysMs - before[side].sysMs).toFixed(0)}) ${after[side].faults - before[side].faults} pf`,
  );
  return `${label} ${rate.toFixed(0)} req/s | ${parts.join(' | ')}`;
}

async function start(): Promise<{ server: ChildProcess; client: QueueClient }> {
  const port = await freePort();
  const flags = (process.env.BENCH_SERVE_API_NODE_ARGS ?? '').split(' ').filter((flag) => flag !== '');
  const stdio = process.env.BENCH_VERBOSE ? 'inherit' : 'ignore';
  const server = await spawnServeApi(port, CLIENTS, flags, ['ignore', stdio, stdio]);
  const client = new QueueClient(`http://127.0.0.1:${port}`, '', CLIENTS);
  await firstRunsync(server, client, '--serve-api');
  return { server, client };
}

const { server, client } = await start();
try {
  await burst(client, WARM);
  for (let round = 1; round <= ROUNDS; round++) {
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const idle = read(server);
    const marks = [process.hrtime.bigint() / 1000n];
    if (process.env.BENCH_VERBOSE) process.stdout.write('phase cold\n');
    const coldRate = await burst(client, BURST);
    const cold = read(server);
    marks.push(process.hrtime.bigint() / 1000n);
    if (process.env.BENCH_VERBOSE) process.stdout.write('phase warm\n');
    const warmRate = await burst(client, BURST);
    const warm = read(server);
    marks.push(process.hrtime.bigint() / 1000n);
    if (process.env.BENCH_VERBOSE) process.stdout.write('phase idle\n');
    // Monotonic µs, the clock of V8's CPU profiles (--cpu-prof): the bursts' windows in a profile.
    process.stdout.write(`marks ${marks.join(' ')}\n`);
    process.stdout.write(`round ${round}\n  ${line('cold', coldRate, idle, cold)}\n  ${line('warm', warmRate, cold, warm)}\n`);
  }
} finally {
  await client.close();
  await stopChild(server, 15_000);
}
