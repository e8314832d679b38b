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
 *   harness   + the harness's own HTTP server (its fastify routes) instead of bare node:http
 *   serve-api + the worker in a supervised child process (`--serve-api`, what users run)
 * The rungs alternate within each round, so a busy neighbour moves them all; the CPU a
 * request of one process moves far less than a rate on a shared machine.
 * `--rungs harness,serve-api` measures only those. `--baseline <folder>`: a copy of this
 * bench's compiled folder (lib/compiled.ts) made at the commit to compare with, its
 * package links pointed at the copy; the `harness` and `serve-api` rungs are then also
 * run from it (`harness, baseline`, `serve-api, baseline`), alternating with the others:
 * a before/after in one window of a loaded machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { REPO_ROOT, stopChild, track } from './lib/child.js';
import { childScript } from './lib/compiled.js';
import { loadAverage } from './lib/machine.js';
import { readProcTree } from './lib/proc.js';
import { freePort } from './lib/runpod-python.js';
import { median, spread } from './lib/stats.js';

const ALL_RUNGS = ['bare', 'core', 'sdk', 'harness', 'serve-api', 'harness, baseline', 'serve-api, baseline'] as const;
type Rung = (typeof ALL_RUNGS)[number];
const CONNECTIONS = 8;
const WARM_REQUESTS = 500;

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    rungs: { type: 'string', default: 'bare,core,sdk,harness,serve-api' },
    baseline: { type: 'string' },
  },
  strict: true,
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const chosen = values.rungs.split(',').map((name) => name.trim());
for (const name of chosen) {
  if (!(ALL_RUNGS as readonly string[]).includes(name) || name.endsWith('baseline'))
    throw new Error(`--rungs: unknown rung ${name}; expected some of bare, core, sdk, harness, serve-api`);
}
const RUNGS: readonly Rung[] = ALL_RUNGS.filter(
  (rung) => chosen.includes(rung) || (values.baseline !== undefined && rung.endsWith('baseline') && chosen.includes(rung.split(',')[0] ?? '')),
);

async function start(rung: Rung, port: number): Promise<ChildProcess> {
  const base = rung.endsWith('baseline') ? rung.split(',')[0] : rung;
  const source =
    base === 'bare'
      ? 'bench/children/bare-runsync-server.ts'
      : base === 'serve-api'
        ? 'bench/children/platform-worker.ts'
        : 'bench/children/runsync-ladder-server.ts';
  const script = rung.endsWith('baseline') ? join(values.baseline ?? '', source.replace(/\.ts$/, '.js')) : await childScript(source, 'compiled');
  const layer = base === 'bare' ? [] : base === 'serve-api' ? ['--serve-api', '--no-rate-limit'] : ['--layer', base ?? ''];
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
      `  round ${round + 1} ${rung.padEnd(19)} ${rate.toFixed(0).padStart(6)} req/s ${cpuUs.toFixed(0).padStart(5)} µs CPU a request (load ${loadAverage()})`,
    );
  }
}
let previous: number | undefined;
console.log('rung                 req/s (min-max)            CPU µs a request (min-max)   added by the rung, or this tree / baseline');
for (const rung of RUNGS) {
  const { rate, cpuUs } = results.get(rung) ?? { rate: [], cpuUs: [] };
  const cpu = median(cpuUs);
  const rates = spread(rate);
  const cpus = spread(cpuUs);
  const baseline = rung.endsWith('baseline');
  const ours = baseline ? results.get(rung.split(',')[0] as Rung) : undefined;
  const note = baseline
    ? ours
      ? `CPU ${(median(ours.cpuUs) / cpu).toFixed(2)}x, req/s ${(median(ours.rate) / median(rate)).toFixed(2)}x`
      : ''
    : previous === undefined
      ? ''
      : `${cpu - previous >= 0 ? '+' : ''}${(cpu - previous).toFixed(0)} µs`;
  console.log(
    `${rung.padEnd(20)} ${median(rate).toFixed(0).padStart(6)} (${rates.min.toFixed(0)}-${rates.max.toFixed(0)})`.padEnd(48) +
      `${cpu.toFixed(0).padStart(5)} (${cpus.min.toFixed(0)}-${cpus.max.toFixed(0)})`.padEnd(29) +
      note,
  );
  if (!baseline) previous = cpu;
}
console.log(`load ${loadAverage()}`);
