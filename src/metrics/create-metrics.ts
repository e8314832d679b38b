/**
 * @module metrics/create-metrics
 * One prom-client Registry per call, never the global default one: several workers and
 * harnesses can live in one process (tests, the in-process transport) and each must
 * count its own jobs. The returned object names every metric as a typed property, so
 * callers increment `metrics.jobsTotal.inc({ status })` with no string lookups.
 */
import { createRequire } from 'node:module';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ServerlessWorkerError } from '../job/errors.js';
import { METRICS, type MetricKey } from './names.js';

// Loaded on first use: a worker on the platform without a metrics port never counts,
// and prom-client is a noticeable share of a worker's start-up time.
let promClient: typeof import('prom-client') | undefined;

/**
 * Load prom-client (once) with `import()`, which a bundler follows: esbuild with its
 * plain flags puts prom-client in the bundle, still evaluated only here. Every place in
 * the package that creates metrics calls loadMetrics() (this, then createMetrics()).
 */
export async function loadPromClient(): Promise<void> {
  promClient ??= await import('prom-client');
}

/**
 * prom-client as loaded by loadPromClient(); without it (a direct createMetrics() call)
 * a synchronous `require` from node_modules, which a bundle does not have.
 */
function promClientNow(): typeof import('prom-client') {
  if (promClient) return promClient;
  try {
    promClient = createRequire(import.meta.url)('prom-client') as typeof import('prom-client');
    return promClient;
  } catch (error) {
    throw new ServerlessWorkerError(
      'SW_INVALID_OPTIONS',
      `createMetrics() found no prom-client to require (${(error as Error).message}); in a bundle, call await loadMetrics() (or await loadPromClient() first) instead`,
    );
  }
}

type LabelsOf<K extends MetricKey> = (typeof METRICS)[K]['labels'][number];

type MetricFor<K extends MetricKey> = (typeof METRICS)[K]['type'] extends 'counter'
  ? Counter<LabelsOf<K>>
  : (typeof METRICS)[K]['type'] extends 'gauge'
    ? Gauge<LabelsOf<K>>
    : Histogram<LabelsOf<K>>;

/** Every metric of the table in names.ts, typed by its labels. */
export type MetricSet = { readonly [K in MetricKey]: MetricFor<K> };

export interface Metrics extends MetricSet {
  /** This instance's own registry: serve `await registry.metrics()` at /metrics. */
  readonly registry: Registry;
  /** The Content-Type for the text that `text()` returns. */
  readonly contentType: string;
  /** The exposition text of every metric in the registry. */
  text(): Promise<string>;
}

export interface CreateMetricsOptions {
  /**
   * Also collect Node's process metrics (CPU, memory, event loop, GC) into this registry;
   * default true. `'from-first-read'`: from the first `text()` call on (a harness's first
   * /metrics scrape), so that a server nobody scrapes runs no event-loop delay monitor
   * (prom-client samples the loop every 10 ms, 100 wake-ups a second: most of what an idle
   * harness cost); the loop-delay figures then cover the time since that first read.
   */
  defaultMetrics?: boolean | 'from-first-read';
  /** Labels added to every metric, e.g. `{ worker_id, endpoint_id }`; default none. */
  defaultLabels?: Record<string, string>;
}

/** A fresh registry holding every serverless-worker metric. Defaults: process metrics on, no default labels. */
export function createMetrics(options: CreateMetricsOptions = {}): Metrics {
  const { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } = promClientNow();
  const registry = new Registry();
  if (options.defaultLabels) registry.setDefaultLabels(options.defaultLabels);
  const defaults = options.defaultMetrics ?? true;
  if (defaults === true) collectDefaultMetrics({ register: registry });
  let collecting = defaults === true;
  const built: Record<string, Counter | Gauge | Histogram> = {};
  for (const [key, def] of Object.entries(METRICS)) {
    const common = { name: def.name, help: def.help, labelNames: [...def.labels], registers: [registry] };
    built[key] =
      def.type === 'counter' ? new Counter(common) : def.type === 'gauge' ? new Gauge(common) : new Histogram({ ...common, buckets: [...def.buckets] });
  }
  return {
    ...(built as unknown as MetricSet),
    registry,
    contentType: registry.contentType,
    text: () => {
      if (!collecting && defaults === 'from-first-read') {
        collecting = true;
        collectDefaultMetrics({ register: registry });
      }
      return registry.metrics();
    },
  };
}

/** createMetrics() after loading prom-client with `import()`: the form that works in a bundle too. */
export async function loadMetrics(options: CreateMetricsOptions = {}): Promise<Metrics> {
  await loadPromClient();
  return createMetrics(options);
}
