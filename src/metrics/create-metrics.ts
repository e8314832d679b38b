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

type PromClient = typeof import('prom-client');

/**
 * The classes createMetrics() builds with, each loaded from its own module of prom-client
 * (prom-client 15 has no `exports` map, so its files are reachable by path). Its index
 * also loads the Pushgateway (node:http, node:https), the cluster aggregator, the Summary's
 * t-digest and its default metrics, which require @opentelemetry/api (103 module files):
 * about 80 ms of CPU against under 10 for these four (Node 20, 2-core machine). The
 * default metrics load only where asked for (`defaultMetrics`), for a harness at its first
 * /metrics read.
 */
interface PromClientParts {
  readonly Registry: PromClient['Registry'];
  readonly Counter: PromClient['Counter'];
  readonly Gauge: PromClient['Gauge'];
  readonly Histogram: PromClient['Histogram'];
}

// Loaded on first use: a worker on the platform without a metrics port never counts,
// and prom-client is a noticeable share of a worker's start-up time.
let parts: PromClientParts | undefined;
let collectDefaults: PromClient['collectDefaultMetrics'] | undefined;

/**
 * Load prom-client's classes (once) with `import()`, which a bundler follows: esbuild puts
 * these modules in the bundle, still evaluated only here. Every place in the package that
 * creates metrics calls loadMetrics() (this, then createMetrics()). `.default` is the
 * CommonJS module's `module.exports`, unbundled and bundled alike (build/commonjs-dynamic-import.ts).
 */
export async function loadPromClient(): Promise<void> {
  if (parts) return;
  // prom-client declares types for its index only: each module's export is typed where it is read.
  const [registry, counter, gauge, histogram] = await Promise.all([
    // @ts-expect-error -- no declaration file for prom-client's modules (above)
    import('prom-client/lib/registry.js'),
    // @ts-expect-error -- no declaration file for prom-client's modules (above)
    import('prom-client/lib/counter.js'),
    // @ts-expect-error -- no declaration file for prom-client's modules (above)
    import('prom-client/lib/gauge.js'),
    // @ts-expect-error -- no declaration file for prom-client's modules (above)
    import('prom-client/lib/histogram.js'),
  ]);
  parts ??= {
    Registry: defaultOf<PromClient['Registry']>(registry),
    Counter: defaultOf<PromClient['Counter']>(counter),
    Gauge: defaultOf<PromClient['Gauge']>(gauge),
    Histogram: defaultOf<PromClient['Histogram']>(histogram),
  };
}

/** A CommonJS module's `module.exports`, as `import()` gives it: its `default`. */
function defaultOf<T>(module: unknown): T {
  return (module as { default: T }).default;
}

/** prom-client's default metrics' collector (once), with `import()` as loadPromClient(). */
async function loadDefaultMetrics(): Promise<PromClient['collectDefaultMetrics']> {
  // @ts-expect-error -- no declaration file for prom-client's modules (loadPromClient)
  collectDefaults ??= defaultOf<PromClient['collectDefaultMetrics']>(await import('prom-client/lib/defaultMetrics.js'));
  return collectDefaults;
}

/** A module of prom-client by a synchronous `require` from node_modules, which a bundle does not have. */
function requirePromClient<T>(path: string): T {
  try {
    return createRequire(import.meta.url)(`prom-client/lib/${path}`) as T;
  } catch (error) {
    throw new ServerlessWorkerError(
      'SW_INVALID_OPTIONS',
      `createMetrics() found no prom-client to require (${(error as Error).message}); in a bundle, call await loadMetrics() instead, which loads it with import()`,
    );
  }
}

/** prom-client's classes as loadPromClient() left them; without it (a direct createMetrics() call) required from node_modules. */
function promClientNow(): PromClientParts {
  parts ??= {
    Registry: requirePromClient<PromClient['Registry']>('registry'),
    Counter: requirePromClient<PromClient['Counter']>('counter'),
    Gauge: requirePromClient<PromClient['Gauge']>('gauge'),
    Histogram: requirePromClient<PromClient['Histogram']>('histogram'),
  };
  return parts;
}

/** The default metrics' collector as loaded, else required from node_modules. */
function defaultMetricsNow(): PromClient['collectDefaultMetrics'] {
  collectDefaults ??= requirePromClient<PromClient['collectDefaultMetrics']>('defaultMetrics');
  return collectDefaults;
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
  const { Counter, Gauge, Histogram, Registry } = promClientNow();
  const registry = new Registry();
  if (options.defaultLabels) registry.setDefaultLabels(options.defaultLabels);
  const defaults = options.defaultMetrics ?? true;
  if (defaults === true) defaultMetricsNow()({ register: registry });
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
    text: async () => {
      if (!collecting && defaults === 'from-first-read') {
        collecting = true;
        // import(): a bundle holds the module; unbundled, node_modules.
        (await loadDefaultMetrics())({ register: registry });
      }
      return registry.metrics();
    },
  };
}

/** createMetrics() after loading prom-client with `import()`: the form that works in a bundle too. */
export async function loadMetrics(options: CreateMetricsOptions = {}): Promise<Metrics> {
  await loadPromClient();
  if ((options.defaultMetrics ?? true) === true) await loadDefaultMetrics();
  return createMetrics(options);
}
