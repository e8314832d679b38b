/**
 * @module test/architecture/import-rules
 * The layout's rule as data (docs/architecture.md explains it): which folder of src/ may
 * import which. A unit is a folder directly under src/ (its subfolders belong to it),
 * except src/harness, whose subfolders are units each and whose own files are the
 * composition root (`harness`). src/version.ts and src/zod-version.ts (and the platform's platform-version.ts) are `version`; the
 * other files directly under src/ are the package's entry points (`entry`).
 */

/** The utilities at the bottom: every layer may use them. */
const BASE = ['version', 'collections', 'clock', 'settings', 'job', 'log', 'net', 'gpu', 'metrics'] as const;

/** The harness's lower layers, which every harness feature may use. */
const HARNESS_BELOW_FEATURES = ['harness/postgres', 'harness/store', 'harness/core', 'harness/http'] as const;

/** Every harness feature, in an order where each may use only those before it (see ALLOWED). */
const HARNESS_FEATURES = [
  'harness/management',
  'harness/load-balancing',
  'harness/webhooks',
  'harness/worker-api',
  'harness/launcher',
  'harness/queue-api',
  'harness/openai',
  'harness/dashboard',
  'harness/openapi',
] as const;

/** The whole harness: its layers, its features and the composition root, for the layers above it. */
const HARNESS = [...HARNESS_BELOW_FEATURES, ...HARNESS_FEATURES, 'harness'] as const;

/** Each unit and the units it may import (its own files aside). Nothing may import a unit above it. */
export const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  // Utilities.
  version: [],
  collections: [],
  clock: ['version', 'job'],
  settings: ['version', 'job'],
  job: ['version'],
  log: ['version', 'job'],
  net: ['version', 'job'],
  gpu: ['version', 'job', 'clock'],
  metrics: ['version', 'job', 'clock', 'net', 'gpu'],
  s3: [...BASE],
  scaffold: [...BASE],
  // The worker's side: how a worker talks to the platform, the runtime, a load-balancing worker.
  transports: [...BASE],
  worker: [...BASE, 'transports'],
  'load-balancing': [...BASE, 'transports', 'worker'],
  // The harness (the platform's side), bottom up: the PostgreSQL handle and migrations, the store, the core over it, shared HTTP plumbing.
  'harness/postgres': [...BASE],
  'harness/store': [...BASE, 'harness/postgres'],
  'harness/core': [...BASE, 'harness/postgres', 'harness/store'],
  'harness/http': [...BASE, 'harness/postgres', 'harness/store', 'harness/core'],
  // Features, each owning its routes; a feature may build on the ones listed before it.
  'harness/management': [...BASE, ...HARNESS_BELOW_FEATURES],
  'harness/load-balancing': [...BASE, ...HARNESS_BELOW_FEATURES],
  'harness/webhooks': [...BASE, ...HARNESS_BELOW_FEATURES],
  'harness/worker-api': [...BASE, ...HARNESS_BELOW_FEATURES],
  'harness/launcher': [...BASE, ...HARNESS_BELOW_FEATURES, 'harness/management', 'harness/worker-api'],
  // /health counts the launcher's workers (its LaunchedWorkersView).
  'harness/queue-api': [...BASE, ...HARNESS_BELOW_FEATURES, 'harness/load-balancing', 'harness/launcher'],
  'harness/openai': [...BASE, ...HARNESS_BELOW_FEATURES, 'harness/queue-api'],
  'harness/dashboard': [
    ...BASE,
    ...HARNESS_BELOW_FEATURES,
    'harness/management',
    'harness/load-balancing',
    'harness/webhooks',
    'harness/worker-api',
    'harness/queue-api',
    'harness/launcher',
  ],
  // The document is generated from the route tables of the queue API and the management API.
  'harness/openapi': [...BASE, ...HARNESS_BELOW_FEATURES, 'harness/management', 'harness/queue-api', 'harness/dashboard'],
  // The composition root: wires every harness part into a server.
  harness: [...BASE, ...HARNESS_BELOW_FEATURES, ...HARNESS_FEATURES],
  // Above both sides: a worker and a harness in one process, the bundler, the CLI, the entry points.
  local: [...BASE, 'transports', 'worker', 'load-balancing', ...HARNESS],
  testing: [...BASE, 'transports', 'worker', 'local', ...HARNESS],
  // transports: the SDK's watchdog thread, an entry point of every bundle; s3: its optional peers, external where missing.
  build: [...BASE, 's3', 'transports', 'harness/postgres', 'harness/dashboard', 'harness/openapi'],
  cli: [...BASE, 'scaffold', 'build', 'transports', 'worker', 'load-balancing', 'local', ...HARNESS, 'entry'],
  exports: [...BASE, 's3', 'transports', 'worker', 'load-balancing', 'local', ...HARNESS, 'entry'],
  entry: [...BASE, 's3', 'transports', 'worker', 'load-balancing', 'local', ...HARNESS],
};

/**
 * Imports that break the rule today, each with what removes it. The test fails when one
 * of them no longer occurs (delete its line then), and ignores them in the cycle check.
 */
export const KNOWN_EXCEPTIONS: ReadonlyArray<{ readonly from: string; readonly to: string; readonly until: string }> = [];

/** The unit of a repository path under src/ (a '.js' specifier names its '.ts' source). */
export function unitOf(path: string): string | undefined {
  const parts = path.replace(/\.js$/, '.ts').split('/');
  if (parts[0] !== 'src' || parts.length < 2) return undefined;
  if (parts.length === 2) return ['version.ts', 'zod-version.ts', 'platform-version.ts'].includes(parts[1] ?? '') ? 'version' : 'entry';
  if (parts[1] === 'harness') return parts.length === 3 ? 'harness' : `harness/${parts[2]}`;
  return parts[1];
}
