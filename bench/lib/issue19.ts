/**
 * @module bench/lib/issue19
 * The figures of issue 19 against their targets, each read from the rows of this run
 * and, where the target is relative, divided by the floor measured in the same run
 * (bare `node` for cold start; the previous default for streaming; the bare HTTP
 * ceiling for jobs/s). A figure whose rows this run did not measure is left out. The
 * Python SDK the issue compares with is not here (PyPI is not reachable from this
 * machine): its figures are quoted in bench/README.md as context only.
 */
import { formatNumber, type ResultRow } from './runner.js';

interface Ref {
  readonly bench: string;
  /** Case name, or a prefix of it ending in `*`. */
  readonly case: string;
  readonly metric: string;
}

interface Figure {
  readonly figure: string;
  readonly value: Ref;
  /** Divide by this row of the same run (a ratio); none: the value itself. */
  readonly floor?: Ref;
  readonly op: '<=' | '>=';
  /** None: a figure shown for the record (its target is a ratio to the Python SDK, which is not here). */
  readonly target?: number;
  readonly unit: string;
}

const COLD_FLOOR: Ref = { bench: 'cold-start', case: 'node floor', metric: 'to first job-take' };

const FIGURES: readonly Figure[] = [
  {
    figure: 'spawn to first job-take, image command / bare node',
    value: { bench: 'cold-start', case: 'image command', metric: 'to first job-take' },
    floor: COLD_FLOOR,
    op: '<=',
    target: 1.5,
    unit: 'x',
  },
  {
    figure: 'spawn to first job-take, image command (split bundle) / bare node',
    value: { bench: 'cold-start', case: 'image command, split', metric: 'to first job-take' },
    floor: COLD_FLOOR,
    op: '<=',
    target: 1.5,
    unit: 'x',
  },
  {
    figure: 'spawn to first job-take, bundle without source maps / bare node',
    value: { bench: 'cold-start', case: 'bundle', metric: 'to first job-take' },
    floor: COLD_FLOOR,
    op: '<=',
    target: 1.5,
    unit: 'x',
  },
  {
    figure: 'spawn to first job-take, compiled / bare node',
    value: { bench: 'cold-start', case: 'compiled', metric: 'to first job-take' },
    floor: COLD_FLOOR,
    op: '<=',
    target: 1.5,
    unit: 'x',
  },
  {
    figure: 'worker RSS idle (compiled)',
    value: { bench: 'worker-cost', case: 'memory, concurrency 64', metric: 'RSS idle' },
    op: '<=',
    target: 55,
    unit: 'MiB',
  },
  {
    figure: 'worker RSS idle (image command)',
    value: { bench: 'worker-cost', case: 'memory, concurrency 64, image command', metric: 'RSS idle' },
    op: '<=',
    target: 55,
    unit: 'MiB',
  },
  {
    figure: 'worker RSS idle (image command, split bundle, capped young generation: what the images run)',
    value: { bench: 'worker-cost', case: 'memory, concurrency 64, image command, split, --max-semi-space-size=2', metric: 'RSS idle' },
    op: '<=',
    target: 55,
    unit: 'MiB',
  },
  {
    figure: 'worker RSS after 20 000 jobs minus idle (what the images run)',
    value: { bench: 'worker-cost', case: 'memory, concurrency 64, image command, split, --max-semi-space-size=2', metric: 'RSS warm minus idle' },
    op: '<=',
    target: 25,
    unit: 'MiB',
  },
  {
    figure: 'worker RSS after 20 000 jobs minus idle (compiled)',
    value: { bench: 'worker-cost', case: 'memory, concurrency 64', metric: 'RSS warm minus idle' },
    op: '<=',
    target: 25,
    unit: 'MiB',
  },
  {
    figure: 'worker RSS after 20 000 jobs minus idle (image command)',
    value: { bench: 'worker-cost', case: 'memory, concurrency 64, image command', metric: 'RSS warm minus idle' },
    op: '<=',
    target: 25,
    unit: 'MiB',
  },
  {
    figure: 'worker CPU per no-op job, concurrency 64 (fake platform)',
    value: { bench: 'worker-cost', case: 'noop, concurrency 64', metric: 'worker CPU/job' },
    op: '<=',
    target: 100,
    unit: 'µs',
  },
  {
    figure: 'worker CPU per no-op job, concurrency 256 (fake platform)',
    value: { bench: 'worker-cost', case: 'noop, concurrency 256', metric: 'worker CPU/job' },
    op: '<=',
    target: 100,
    unit: 'µs',
  },
  {
    figure: 'no-op jobs/s at concurrency 1 (fake platform)',
    value: { bench: 'worker-cost', case: 'noop, concurrency 1', metric: 'jobs/s' },
    op: '>=',
    target: 1_000,
    unit: 'jobs/s',
  },
  {
    figure: 'no-op jobs/s at concurrency 1 (through the harness)',
    value: { bench: 'dispatch', case: 'concurrency 1', metric: 'jobs/s' },
    op: '>=',
    target: 1_000,
    unit: 'jobs/s',
  },
  {
    figure: '1 KiB chunks/s, platform, default options / one chunk per yield',
    value: { bench: 'streaming', case: '1 KiB x 1 000, platform', metric: 'yields/s' },
    floor: { bench: 'streaming', case: '1 KiB x 1 000, platform, one chunk per yield', metric: 'yields/s' },
    op: '>=',
    target: 3,
    unit: 'x',
  },
  {
    figure: '--serve-api /runsync server CPU per job (8 clients)',
    value: { bench: 'local-api', case: 'runsync, 8 clients', metric: 'server CPU/req' },
    op: '<=',
    target: 100,
    unit: 'µs',
  },
  {
    figure: '--serve-api /runsync req/s / bare node:http floor',
    value: { bench: 'local-api', case: 'runsync, 8 clients', metric: 'requests/s' },
    floor: { bench: 'local-api', case: 'floor: node:http, 8 clients', metric: 'requests/s' },
    op: '>=',
    unit: 'x',
  },
  {
    figure: '--serve-api /run+/status pairs/s / bare node:http floor',
    value: { bench: 'local-api', case: 'run+status, 8 clients', metric: 'pairs/s' },
    floor: { bench: 'local-api', case: 'floor: node:http, 8 clients', metric: 'requests/s' },
    op: '>=',
    unit: 'x',
  },
  {
    figure: '--serve-api /runsync server CPU / bare node:http floor',
    value: { bench: 'local-api', case: 'runsync, 8 clients', metric: 'server CPU/req' },
    floor: { bench: 'local-api', case: 'floor: node:http, 8 clients', metric: 'server CPU/req' },
    op: '<=',
    unit: 'x',
  },
  {
    figure: '--serve-api server RSS after the runs',
    value: { bench: 'local-api', case: 'runsync, 8 clients', metric: 'server RSS after' },
    op: '<=',
    target: 60,
    unit: 'MiB',
  },
];

function find(rows: readonly ResultRow[], ref: Ref): ResultRow | undefined {
  const prefix = ref.case.endsWith('*') ? ref.case.slice(0, -1) : undefined;
  return rows.find(
    (row) => row.bench === ref.bench && row.metric === ref.metric && (prefix !== undefined ? row.case.startsWith(prefix) : row.case === ref.case),
  );
}

/** The issue 19 table for this run's rows, as Markdown; empty when none of its figures was measured. */
export function issue19Table(rows: readonly ResultRow[]): string {
  const lines: string[] = [];
  for (const figure of FIGURES) {
    const value = find(rows, figure.value);
    const floor = figure.floor ? find(rows, figure.floor) : undefined;
    if (!value || (figure.floor && !floor)) continue;
    const result = floor ? value.median / floor.median : value.median;
    const from = floor ? `${formatNumber(value.median)} / ${formatNumber(floor.median)} ${value.unit}` : '';
    const { target } = figure;
    if (target === undefined) {
      lines.push(`| ${figure.figure} | ${formatNumber(result)} ${figure.unit} | ${from} | (none here) | |`);
      continue;
    }
    const met = figure.op === '<=' ? result <= target : result >= target;
    lines.push(
      `| ${figure.figure} | ${formatNumber(result)} ${figure.unit} | ${from} | ${figure.op} ${formatNumber(target)} ${figure.unit} | ${met ? 'ok' : 'MISSED'} |`,
    );
  }
  if (lines.length === 0) return '';
  return ['Issue 19 targets (ratios to floors of this run):', '', '| figure | result | from (medians) | target | |', '|---|---|---|---|---|', ...lines].join(
    '\n',
  );
}
