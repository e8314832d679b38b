/**
 * @module bench/serve-api-memory
 * Issue 34 item 3: what the memory of `--serve-api` is, per process, idle and after
 * 20 000 `/runsync`: `npx tsx bench/serve-api-memory.ts [--jobs N] [--rounds N]
 * [--variant name=script[;node flags[;VAR=value ...]]]...` (the variables set for the
 * `--serve-api` process, which its worker child inherits, e.g. MALLOC_ARENA_MAX=2).
 *
 * Each variant is the compiled bench worker (bench/children/platform-worker.ts, or the
 * `script` given: e.g. a copy of an earlier build, for a before/after in one run) run
 * as `--serve-api --no-rate-limit` (concurrency 8), preloading
 * bench/children/memory-report.ts with --expose-gc. Per round, the variants in turn
 * (alternating order): started fresh, one job, 3 s idle, then per process (the
 * `--serve-api` process and its worker child) RSS and PSS from /proc, and the process's
 * own report (SIGUSR2: heap used and total, V8's spaces, external, malloced memory,
 * before and after a full GC); then `jobs` /runsync from 8 keep-alive clients, 3 s
 * idle, and the same again. The RSS and PSS figures are read before the report's GC.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT, stopChild, track } from './lib/child.js';
import { childScript } from './lib/compiled.js';
import { QueueClient, runOneJob } from './lib/http-client.js';
import { loadAverage } from './lib/machine.js';
import { workerVariants, type WorkerVariant } from './lib/worker-variants.js';
import { processTree, readProc, smapsRollup } from './lib/proc.js';
import { freePort } from './lib/runpod-python.js';

const MB = 1024 * 1024;
const CLIENTS = 8;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '1' },
    variant: { type: 'string', multiple: true },
    idle: { type: 'string', default: '3000' },
    /** More readings after the jobs, ms after them (RSS and PSS only), e.g. 10000,30000: does it come down by itself? */
    later: { type: 'string', default: '' },
  },
});

interface ProcMemory {
  readonly rss: number;
  readonly pss: number;
  readonly anon: number;
  readonly sharedClean: number;
}

function procMemory(pid: number): ProcMemory {
  const fields = smapsRollup(pid) ?? {};
  return { rss: fields.Rss ?? NaN, pss: fields.Pss ?? NaN, anon: fields.Anonymous ?? NaN, sharedClean: fields.Shared_Clean ?? NaN };
}

interface Reading {
  readonly usage: NodeJS.MemoryUsage;
  readonly spaces: Record<string, { size: number; used: number }>;
  readonly mallocedMemory: number;
}
interface Report {
  readonly pid: number;
  readonly before: Reading;
  readonly after: Reading;
}

async function report(dir: string, pid: number): Promise<Report | undefined> {
  const seen = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    await sleep(100);
    const fresh = readdirSync(dir).find((name) => !seen.has(name) && name.startsWith(`${pid}-`) && name.endsWith('.json'));
    if (fresh !== undefined) {
      return JSON.parse(readFileSync(join(dir, fresh), 'utf8')) as Report;
    }
  }
  return undefined;
}

const mib = (bytes: number): string => (bytes / MB).toFixed(1);

async function phase(label: string, variant: WorkerVariant, server: ChildProcess, dir: string): Promise<void> {
  const pids = processTree(server.pid ?? 0);
  const memories = pids.map((pid) => ({ pid, memory: procMemory(pid) }));
  const total = memories.reduce((sum, { memory }) => ({ rss: sum.rss + memory.rss, pss: sum.pss + memory.pss }), { rss: 0, pss: 0 });
  process.stdout.write(`${variant.name} ${label}: RSS ${mib(total.rss)} MiB, PSS ${mib(total.pss)} MiB (load ${loadAverage()})\n`);
  for (const [index, { pid, memory }] of memories.entries()) {
    const rep = await report(dir, pid);
    const role = index === 0 ? 'serve-api' : 'child    ';
    let line = `  ${role} RSS ${mib(memory.rss)} PSS ${mib(memory.pss)} anon ${mib(memory.anon)} shared-clean ${mib(memory.sharedClean)}`;
    if (rep) {
      const b = rep.before;
      const a = rep.after;
      const spaces = (reading: Reading): string =>
        Object.entries(reading.spaces)
          .filter(([, space]) => space.size > 256 * 1024)
          .map(([name, space]) => `${name.replace('_space', '')} ${mib(space.used)}/${mib(space.size)}`)
          .join(', ');
      line +=
        `\n    heap used/total ${mib(b.usage.heapUsed)}/${mib(b.usage.heapTotal)} -> after GC ${mib(a.usage.heapUsed)}/${mib(a.usage.heapTotal)}` +
        `, external ${mib(b.usage.external)} (buffers ${mib(b.usage.arrayBuffers)}), malloced ${mib(b.mallocedMemory)}, RSS after GC ${mib(a.usage.rss)}` +
        `\n    spaces (used/size): ${spaces(b)}\n    after GC: ${spaces(a)}`;
    }
    process.stdout.write(`${line}\n`);
  }
}

/** RSS of each process at `idleMs` and at each of --later (ms after the same start). */
async function laterReadings(label: string, variant: WorkerVariant, server: ChildProcess, idleMs: number): Promise<void> {
  let at = 0;
  for (const reading of [
    idleMs,
    ...values.later
      .split(',')
      .filter((text) => text !== '')
      .map(Number),
  ]) {
    await sleep(reading - at);
    at = reading;
    const rss = processTree(server.pid ?? 0).map((pid) => procMemory(pid).rss);
    const total = rss.reduce((sum, value) => sum + value, 0);
    process.stdout.write(`${variant.name} ${label}, ${reading} ms: RSS ${mib(total)} MiB (${rss.map(mib).join(' + ')}) (load ${loadAverage()})\n`);
  }
}

async function runVariant(variant: WorkerVariant, jobs: number, idleMs: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sw-memory-'));
  const port = await freePort();
  const preload = await childScript('bench/children/memory-report.ts', 'compiled');
  const server = track(
    spawn(
      process.execPath,
      ['--expose-gc', '--import', preload, ...variant.nodeArgs, variant.script, '--serve-api', '--port', String(port), '--no-rate-limit'],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, ...variant.env, BENCH_CONCURRENCY: String(CLIENTS), BENCH_MEMORY_REPORT_DIR: dir },
        stdio: ['ignore', 'ignore', process.env.BENCH_VERBOSE ? 'inherit' : 'ignore'],
      },
    ),
  );
  const client = new QueueClient(`http://127.0.0.1:${port}`, '', CLIENTS);
  try {
    for (const deadline = Date.now() + 120_000; ;) {
      try {
        await runOneJob(client, 'runsync');
        break;
      } catch (error) {
        if (Date.now() > deadline || server.exitCode !== null) throw error;
        await sleep(200);
      }
    }
    await laterReadings('idle', variant, server, idleMs);
    await phase('idle', variant, server, dir);
    let started = 0;
    const cpuBefore = processTree(server.pid ?? 0).map((pid) => readProc(pid)?.cpuMs ?? NaN);
    const start = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (started < jobs) {
          started++;
          await runOneJob(client, 'runsync');
        }
      }),
    );
    const cpu = processTree(server.pid ?? 0).map((pid, index) => (((readProc(pid)?.cpuMs ?? NaN) - (cpuBefore[index] ?? NaN)) / jobs) * 1000);
    process.stdout.write(
      `${variant.name}: ${jobs} /runsync in ${((performance.now() - start) / 1000).toFixed(1)} s, CPU per job ${cpu.map((us) => us.toFixed(0)).join(' + ')} µs (load ${loadAverage()})\n`,
    );
    await laterReadings(`after ${jobs} jobs`, variant, server, idleMs);
    await phase(`after ${jobs} jobs`, variant, server, dir);
  } finally {
    await client.close();
    await stopChild(server, 15_000);
    if (process.env.BENCH_HEAP_SNAPSHOT === '1') process.stdout.write(`reports and snapshots kept in ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

const all = await workerVariants(values.variant);
for (let round = 0; round < Number(values.rounds); round++) {
  const order = round % 2 === 0 ? all : [...all].reverse();
  for (const variant of order) await runVariant(variant, Number(values.jobs), Number(values.idle));
}
