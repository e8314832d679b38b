/**
 * @module bench/runsync-ladder
 * Where the CPU of a `/runsync` goes, one layer at a time (issue 34): `npx tsx
 * bench/runsync-ladder.ts [--rounds 3] [--seconds 5]`. Each rung is a server of its own
 * (bench/children/bare-runsync-server.ts, runsync-ladder-server.ts or the bench worker,
 * compiled), driven the same way: 500 requests
 * to warm, then `--seconds` of 8 keep-alive undici connections in a closed loop, a no-op
 * handler; its CPU (every process of it) from /proc. The rungs, each the last plus one
 * layer:
 *   bare      node:http parsing the body and answering a completed view
 *   core      + the harness core and memory store, jobs taken and completed by a plain loop
 *   sdk       + the SDK's worker runtime running them (in process) instead of the loop
 *   harness   + the harness's own HTTP server (its lean /runsync) instead of bare node:http
 *   serve-api + the worker in a supervised child process (`--serve-api`, what users run)
 * The rungs alternate within each round, so a busy neighbour moves them all; the CPU a
 * request of one process moves far less than a rate on a shared machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { REPO_ROOT, stopChild, track } from './lib/child.js';
import { childScript } from './lib/compiled.js';
import { loadAverage } from './lib/machine.js';
import { readProcTree } from './lib/proc.js';
import { freePort } from './lib/runpod-python.js';
import { median, spread } from './lib/stats.js';

const RUNGS = ['bare', 'core', 'sdk', 'harness', 'serve-api'] as const;
type Rung = (typeof RUNGS)[number];
const CONNECTIONS = 8;
const WARM_REQUESTS = 500;

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '5' } }, strict: true });
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);

async function start(rung: Rung, port: number): Promise<ChildProcess> {
  const source =
    rung === 'bare'
      ? 'bench/children/bare-runsync-server.ts'
      : rung === 'serve-api'
        ? 'bench/children/platform-worker.ts'
        : 'bench/children/runsync-ladder-server.ts';
  const script = await childScript(source, 'compiled');
  const layer = rung === 'bare' ? [] : rung === 'serve-api' ? ['--serve-api', '--no-rate-limit'] : ['--layer', rung];
  const args = [...layer, '--port', String(port)];
  return track(
    spawn(process.execPath, [script, ...args], { cwd: REPO_ROOT, env: { ...process.env, BENCH_CONCURRENCY: String(CONNECTIONS) }, stdio: 'ignore' }),
  );
}

/** Requests/s and CPU µs a request of one rung, a fresh server. */
async function measure(rung: Rung): Promise<{ rate: number; cpuUs: number }> {
  const port = await freePort();
  const child = await start(rung, port);
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONNECTIONS, keepAliveTimeout: 30_000 });
  const one = async (): Promise<void> => {
    const response = await pool.request({ method: 'POST', path: '/runsync', body: '{"input":{}}', headers: { 'content-type': 'application/json' } });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`${rung}: /runsync answered ${response.statusCode}: ${text.slice(0, 200)}`);
  };
  try {
    for (let tries = 0; ; tries++) {
      try {
        await one();
        break;
      } catch (error) {
        if (tries > 300) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    for (let i = 0; i < WARM_REQUESTS; i++) await one();
    const pid = child.pid ?? 0;
    const before = readProcTree(pid);
    const began = performance.now();
    let done = 0;
    let stop = false;
    const timer = setTimeout(() => (stop = true), seconds * 1_000);
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (!stop) {
          await one();
          done++;
        }
      }),
    );
    clearTimeout(timer);
    const elapsed = performance.now() - began;
    const after = readProcTree(pid);
    if (!before || !after) throw new Error(`${rung}: /proc of the server could not be read`);
    return { rate: (done / elapsed) * 1_000, cpuUs: ((after.cpuMs - before.cpuMs) / done) * 1_000 };
  } finally {
    await pool.close();
    await stopChild(child);
  }
}

const results = new Map<Rung, { rate: number[]; cpuUs: number[] }>(RUNGS.map((rung) => [rung, { rate: [], cpuUs: [] }]));
console.log(`/runsync ladder: ${rounds} rounds of ${seconds} s a rung, ${CONNECTIONS} connections, no-op handler; load ${loadAverage()}`);
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? RUNGS : [...RUNGS].reverse();
  for (const rung of order) {
    const { rate, cpuUs } = await measure(rung);
    results.get(rung)?.rate.push(rate);
    results.get(rung)?.cpuUs.push(cpuUs);
    console.log(
      `  round ${round + 1} ${rung.padEnd(9)} ${rate.toFixed(0).padStart(6)} req/s ${cpuUs.toFixed(0).padStart(5)} µs CPU a request (load ${loadAverage()})`,
    );
  }
}
let previous: number | undefined;
console.log('rung       req/s (min-max)            CPU µs a request (min-max)   added by the rung');
for (const rung of RUNGS) {
  const { rate, cpuUs } = results.get(rung) ?? { rate: [], cpuUs: [] };
  const cpu = median(cpuUs);
  const rates = spread(rate);
  const cpus = spread(cpuUs);
  console.log(
    `${rung.padEnd(10)} ${median(rate).toFixed(0).padStart(6)} (${rates.min.toFixed(0)}-${rates.max.toFixed(0)})`.padEnd(38) +
      `${cpu.toFixed(0).padStart(5)} (${cpus.min.toFixed(0)}-${cpus.max.toFixed(0)})`.padEnd(29) +
      (previous === undefined ? '' : `${cpu - previous >= 0 ? '+' : ''}${(cpu - previous).toFixed(0)} µs`),
  );
  previous = cpu;
}
console.log(`load ${loadAverage()}`);
