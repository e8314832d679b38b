/**
 * @module bench/lib/runner
 * What a benchmark is, and how it is run: each case is set up once, measured once to
 * warm up (JIT, connections), then measured several times within a time budget; each
 * metric's median over the runs is reported with its spread (min-max) and, where the
 * issue sets one, the target and whether the median meets it.
 */
import { median, spread } from './stats.js';

export interface Target {
  readonly op: '>=' | '<=';
  readonly value: number;
}

export interface MetricSpec {
  readonly unit: string;
  readonly target?: Target;
  /** Decimals shown; default chosen from the value's size. */
  readonly digits?: number;
}

/** One run's figures: metric name -> value. */
export type Measurement = Readonly<Record<string, number>>;

export interface RunContext {
  /** 0 for the warm-up run, then 1, 2, ... */
  readonly index: number;
  readonly warmup: boolean;
  readonly quick: boolean;
}

export interface BenchCase {
  /** `c=64`, `1 KiB chunks, platform`, ... */
  readonly name: string;
  /** The metrics `measure` answers, in table order. */
  readonly metrics: Readonly<Record<string, MetricSpec>>;
  /** Runs to measure; default the bench's --runs. */
  readonly runs?: number;
  /** Measure once before the counted runs and drop it; default true. */
  readonly warmup?: boolean;
  /** Time budget of the case, ms (runs stop once it is spent); default CASE_BUDGET_MS. */
  readonly budgetMs?: number;
  setup?(): Promise<void>;
  measure(context: RunContext): Promise<Measurement>;
  teardown?(): Promise<void>;
}

export interface BenchOptions {
  readonly quick: boolean;
  /** Counted runs per case (cases may choose fewer). */
  readonly runs: number;
  /** Run only the cases whose name holds this text. */
  readonly caseFilter?: string;
}

export interface Benchmark {
  /** Name used on the command line: `npm run bench -- dispatch`. */
  readonly name: string;
  readonly title: string;
  cases(options: BenchOptions): BenchCase[];
}

export interface ResultRow {
  readonly bench: string;
  readonly case: string;
  readonly metric: string;
  readonly unit: string;
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: number;
  readonly target?: Target;
  readonly met?: boolean;
}

/** Stop adding runs to a case once this much time has gone into it, ms. */
const CASE_BUDGET_MS = { full: 150_000, quick: 40_000 } as const;

function meets(value: number, target: Target): boolean {
  return target.op === '>=' ? value >= target.value : value <= target.value;
}

/** Run every case of `bench`; a failing case is reported and the others still run. */
export async function runBenchmark(bench: Benchmark, options: BenchOptions, log: (line: string) => void): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  const filter = options.caseFilter;
  for (const c of bench.cases(options).filter((c) => filter === undefined || c.name.includes(filter))) {
    const budget = c.budgetMs ?? (options.quick ? CASE_BUDGET_MS.quick : CASE_BUDGET_MS.full);
    const startedAt = Date.now();
    const runs: Measurement[] = [];
    const wanted = c.runs ?? options.runs;
    try {
      await c.setup?.();
      if (c.warmup ?? true) await c.measure({ index: 0, warmup: true, quick: options.quick });
      for (let i = 1; i <= wanted; i++) {
        runs.push(await c.measure({ index: i, warmup: false, quick: options.quick }));
        log(`  ${bench.name} / ${c.name}: run ${i}/${wanted} ${summarize(runs[runs.length - 1] as Measurement)}`);
        if (Date.now() - startedAt > budget && i < wanted) {
          log(`  ${bench.name} / ${c.name}: time budget of ${budget / 1000} s spent after ${i} runs`);
          break;
        }
      }
    } catch (error) {
      log(`  ${bench.name} / ${c.name}: FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    } finally {
      await c.teardown?.().catch((error: unknown) => log(`  ${bench.name} / ${c.name}: teardown failed: ${String(error)}`));
    }
    for (const [metric, spec] of Object.entries(c.metrics)) {
      const values = runs.map((r) => r[metric]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
      if (values.length === 0) continue;
      const { min, max } = spread(values);
      const m = median(values);
      rows.push({
        bench: bench.name,
        case: c.name,
        metric,
        unit: spec.unit,
        median: m,
        min,
        max,
        runs: values.length,
        ...(spec.target ? { target: spec.target, met: meets(m, spec.target) } : {}),
      });
    }
  }
  return rows;
}

function summarize(m: Measurement): string {
  return Object.entries(m)
    .map(([k, v]) => `${k}=${formatNumber(v)}`)
    .join(' ');
}

/** A number for a table: integers with thin grouping, small values with 2-3 decimals. */
export function formatNumber(value: number, digits?: number): string {
  if (!Number.isFinite(value)) return String(value);
  const d = digits ?? (Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : Math.abs(value) >= 1 ? 2 : 3);
  return value.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

/** The rows as a Markdown table (readable in a terminal too). */
export function formatTable(rows: readonly ResultRow[]): string {
  const header = ['benchmark', 'case', 'metric', 'median', 'spread (min-max)', 'runs', 'target', ''];
  const lines = rows.map((r) => [
    r.bench,
    r.case,
    r.metric,
    `${formatNumber(r.median)} ${r.unit}`,
    r.runs > 1 ? `${formatNumber(r.min)}-${formatNumber(r.max)}` : '',
    String(r.runs),
    r.target ? `${r.target.op} ${formatNumber(r.target.value)}` : '',
    r.met === undefined ? '' : r.met ? 'ok' : 'MISSED',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const row = (cells: readonly string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  return [row(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(row)].join('\n');
}
