/**
 * @module bench/run
 * `npm run bench [-- <name>...] [--quick] [--runs N] [--case TEXT] [--json FILE]`: runs the
 * benchmarks (all, or those whose name starts with one of the names given), prints a
 * table of medians over several runs with their spread, the targets of issue 7, and
 * the machine and its load average. `--case` keeps only the cases whose name holds
 * TEXT (e.g. `--case platform`). `--quick` runs smaller batches, fewer runs and
 * shorter time budgets (a smoke test of the benchmarks, not figures to record).
 * Every benchmark talks to 127.0.0.1 only, is bounded in count and time, and stops by
 * itself. `npm run bench -- soak [--minutes N] ...` runs issue 32's soak instead
 * (bench/soak.ts: its own flags, counts rather than a table, exit 1 when a job was lost,
 * run twice or stuck).
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ceilingBenchmark } from './ceiling.bench.js';
import { coldStartBenchmark } from './cold-start.bench.js';
import { dashboardBenchmark } from './dashboard.bench.js';
import { dispatchBenchmark } from './dispatch.bench.js';
import { endToEndBenchmark } from './end-to-end.bench.js';
import { idleBenchmark } from './idle.bench.js';
import { importsBenchmark } from './imports.bench.js';
import { localApiBenchmark } from './local-api.bench.js';
import { loadAverage, machineInfo } from './lib/machine.js';
import { issue19Table } from './lib/issue19.js';
import { formatTable, runBenchmark, type Benchmark, type ResultRow } from './lib/runner.js';
import { memoryBenchmark } from './memory.bench.js';
import { queuePeersBenchmark } from './queue-peers.bench.js';
import { runpodPythonBenchmark } from './runpod-python.bench.js';
import { streamingBenchmark } from './streaming.bench.js';
import { serveApiCostBenchmark } from './serve-api-cost.bench.js';
import { workerCostBenchmark } from './worker-cost.bench.js';

const BENCHMARKS: readonly Benchmark[] = [
  dispatchBenchmark,
  workerCostBenchmark,
  endToEndBenchmark,
  localApiBenchmark,
  streamingBenchmark,
  memoryBenchmark,
  coldStartBenchmark,
  importsBenchmark,
  ceilingBenchmark,
  dashboardBenchmark,
  queuePeersBenchmark,
  serveApiCostBenchmark,
  idleBenchmark,
  runpodPythonBenchmark,
];

if (process.argv[2] === 'soak') {
  const { runSoak } = await import('./soak.js');
  process.exit(await runSoak(process.argv.slice(3)));
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    quick: { type: 'boolean', default: false },
    runs: { type: 'string' },
    case: { type: 'string' },
    json: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  process.stdout.write(
    [
      'usage: npm run bench -- [name...] [--quick] [--runs N] [--case TEXT] [--json FILE]',
      '',
      ...BENCHMARKS.map((b) => `  ${b.name.padEnd(11)} ${b.title}`),
      '',
      'usage: npm run bench -- soak [--minutes 10] [--rate 3] [--fault-every-s 15] [--drain-s 180] [--ping-interval-ms 10000] [--seed N]',
      '  mixed faults on two harnesses sharing PostgreSQL (bench/soak.ts)',
      '',
    ].join('\n'),
  );
  process.exit(0);
}

const quick = values.quick ?? false;
const runs = values.runs !== undefined ? Number(values.runs) : quick ? 2 : 5;
if (!Number.isInteger(runs) || runs < 1) {
  process.stderr.write(`--runs must be a whole number of at least 1, instead got ${values.runs}\n`);
  process.exit(2);
}
const selected = positionals.length === 0 ? BENCHMARKS : BENCHMARKS.filter((b) => positionals.some((p) => b.name.startsWith(p)));
if (selected.length === 0) {
  process.stderr.write(`no benchmark named ${positionals.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}\n`);
  process.exit(2);
}

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const machine = machineInfo();
log(`bench: ${selected.map((b) => b.name).join(', ')}; ${runs} runs per case${quick ? ' (quick)' : ''}; load average ${machine.loadavg}`);
const rows: ResultRow[] = [];
for (const bench of selected) {
  log(`${bench.name}: ${bench.title}`);
  const result = await runBenchmark(bench, { quick, runs, ...(values.case !== undefined ? { caseFilter: values.case } : {}) }, log);
  rows.push(...result);
  log(formatTable(result));
}
const loadAfter = loadAverage();

process.stdout.write(
  [
    '',
    `date ${machine.date}; node ${machine.node}; ${machine.nproc} CPUs (${machine.cpuModel}); memory ${machine.memTotalGiB} GiB (${machine.memFreeGiB} GiB free at start)`,
    `load average (1/5/15 min) ${machine.loadavg} at start, ${loadAfter} at end; ${runs} runs per case${quick ? ', quick mode' : ''}`,
    '',
    formatTable(rows),
    '',
    issue19Table(rows),
    '',
  ].join('\n'),
);
if (values.json) writeFileSync(values.json, `${JSON.stringify({ machine, loadAfter, quick, runs, rows }, null, 2)}\n`);
process.exit(0);
