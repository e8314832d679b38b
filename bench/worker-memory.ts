/**
 * @module bench/worker-memory
 * Issue 46 item 5: the SDK worker's memory after a burst, against the fake platform
 * (lib/fake-platform.ts: no harness in the figure): `npx tsx bench/worker-memory.ts
 * [--jobs 20000] [--concurrency 256] [--rounds N] [--later 10000,70000]
 * [--variant name[=script[;node flags[;VAR=value ...]]]]...` (the variables set for the
 * worker, e.g. BENCH_IDLE_COMPACTION_MS=10000).
 *
 * Each variant is the compiled bench worker (bench/children/platform-worker.ts, or the
 * `script` given: a compiled copy of an earlier build, for a before/after in one run).
 * Per round, the variants in turn (the order alternating from round to round): started
 * fresh, one job, then RSS, PSS and anonymous memory from /proc/<pid>/smaps_rollup; then
 * `jobs` no-op jobs at `concurrency`, and the same read right after them and at each of
 * --later (ms after the burst's end). Nothing else runs in the worker: no probe, no
 * --expose-gc, no report, so what is read is what the worker keeps by itself.
 */
import { parseArgs } from 'node:util';
import { spawnNode, stopChild } from './lib/child.js';
import { startFakePlatform } from './lib/fake-platform.js';
import { loadAverage } from './lib/machine.js';
import { smapsRollup } from './lib/proc.js';
import { workerVariants, type WorkerVariant } from './lib/worker-variants.js';

const MB = 1024 * 1024;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '256' },
    rounds: { type: 'string', default: '1' },
    later: { type: 'string', default: '10000,70000' },
    variant: { type: 'string', multiple: true },
  },
});

/** RSS, PSS and anonymous memory of `pid`, MiB (smaps_rollup). */
function memory(pid: number): string {
  const fields = smapsRollup(pid) ?? {};
  const mib = (bytes: number | undefined): string => ((bytes ?? Number.NaN) / MB).toFixed(1);
  return `RSS ${mib(fields.Rss)} PSS ${mib(fields.Pss)} anon ${mib(fields.Anonymous)}`;
}

async function runVariant(variant: WorkerVariant, jobs: number, concurrency: number, laterMs: readonly number[]): Promise<void> {
  const platform = await startFakePlatform();
  const child = spawnNode(variant.script, {
    env: { ...platform.env, RUNPOD_POD_ID: 'bench-worker', BENCH_CONCURRENCY: String(concurrency), LOG_LEVEL: 'info', ...variant.env },
    nodeArgs: variant.nodeArgs,
  });
  const pid = child.pid ?? 0;
  const say = (label: string): void => void process.stdout.write(`${variant.name} ${label}: ${memory(pid)} MiB (load ${loadAverage()})\n`);
  try {
    await platform.run(1, {});
    say('after one job');
    const started = performance.now();
    await platform.run(jobs, {});
    const ended = performance.now();
    say(`right after ${jobs} jobs (${((ended - started) / 1000).toFixed(1)} s)`);
    for (const at of laterMs) {
      await sleep(Math.max(0, ended + at - performance.now()));
      say(`${at / 1000} s after`);
    }
  } finally {
    await stopChild(child);
    await platform.close();
  }
}

const all = await workerVariants(values.variant);
const laterMs = values.later
  .split(',')
  .filter((text) => text !== '')
  .map(Number);
for (let round = 0; round < Number(values.rounds); round++) {
  const order = round % 2 === 0 ? all : [...all].reverse();
  for (const variant of order) await runVariant(variant, Number(values.jobs), Number(values.concurrency), laterMs);
}
