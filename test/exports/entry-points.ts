/**
 * @module test/exports/entry-points
 * The package's entry points and the names each one exports, as README.md's "Public
 * API" documents them: the index is what a worker author imports; the harness and the
 * runtime are for tools built on the runtime. Value names are what the module object
 * holds at run time; type names exist only for TypeScript.
 */

export interface EntryPoint {
  /** The name an author imports (`serverless-worker/harness`). */
  readonly specifier: string;
  /** The subpath key of package.json's `exports`. */
  readonly subpath: string;
  /** The source file, relative to the package's src/ and without `.ts` (its tsconfig.build.json writes dist/<source>.js). */
  readonly source: string;
  /** The package's folder in the repository: '' for the SDK (the root), 'packages/platform' for the platform. */
  readonly packageDir: string;
  readonly values: readonly string[];
  readonly types: readonly string[];
}

export const ENTRY_POINTS: readonly EntryPoint[] = [
  {
    specifier: 'serverless-worker',
    subpath: '.',
    source: 'index',
    packageDir: '',
    values: [
      'serve',
      'withMetrics',
      'waitForUrl',
      'serveLoadBalancing',
      'startLoadBalancingWorker',
      'splitYield',
      'joinChunks',
      'lastAttemptChunks',
      'uploadFile',
      'uploadBuffer',
      'uploadStream',
      'ERROR_CODES',
      'ServerlessWorkerError',
      'isServerlessWorkerError',
      'RUNTIME_VERSION',
    ],
    types: [
      'Handler',
      'HandlerJob',
      'JobContext',
      'ServeOptions',
      'ConcurrencyFunction',
      'ConcurrencyState',
      'InitContext',
      'InitFunction',
      'WaitForUrlOptions',
      'WaitForUrlResult',
      'HttpApp',
      'LoadBalancingOptions',
      'LoadBalancingWorker',
      'S3UploadOptions',
      'S3UploadResult',
      'ErrorCode',
      'Job',
      'JobRequest',
      'JobResult',
      'JobStatus',
      'JobView',
      'StreamChunk',
    ],
  },
  {
    specifier: 'serverless-worker/testing',
    subpath: './testing',
    source: 'testing/index',
    packageDir: '',
    values: ['runJob', 'streamJob', 'ManualClock', 'joinChunks', 'jobError'],
    types: [
      'RunJobSettings',
      'RunJobSettingsOf',
      'TestJobResult',
      'TestJobStream',
      'TestJobRequest',
      'RequestFor',
      'RequestInputOf',
      'OutputOf',
      'YieldOf',
      'JobErrorInfo',
      'Clock',
    ],
  },
  {
    specifier: 'serverless-worker/harness',
    subpath: './harness',
    source: 'exports/harness',
    packageDir: '',
    values: [
      'Harness',
      'EndpointJobs',
      'MemoryJobStore',
      'ManualClock',
      'systemClock',
      'startLocalWorker',
      'runDryRun',
      'parseJobRequest',
      'JobRequestSchema',
      'JOB_STATUSES',
      'TRANSITIONS',
    ],
    types: ['Clock', 'JobStore'],
  },
  {
    specifier: 'serverless-worker/runtime',
    subpath: './runtime',
    source: 'exports/runtime',
    packageDir: '',
    values: [
      'WorkerRuntime',
      'LIFECYCLE_STATES',
      'LIFECYCLE_MOVES',
      'resolveOptions',
      'InProcessTransport',
      'PlatformTransport',
      'createPlatformTransport',
      'parsePlatformEnv',
      'createMetrics',
      'loadMetrics',
      'readGpus',
      'createGpuSampler',
      'checkGpuPresence',
      'createLogger',
      'loadPrettyLogs',
    ],
    types: ['WorkerExit', 'LifecycleState', 'WorkerConfig', 'Transport', 'StopReason', 'Metrics'],
  },
  {
    specifier: 'serverless-worker-platform',
    subpath: '.',
    source: 'index',
    packageDir: 'packages/platform',
    values: [
      'createHarnessServer',
      'workerEnvFor',
      'formatWorkerEnv',
      'ManagementClient',
      'managementClientFromEnv',
      'TEMPLATE_ROUTES',
      'NETWORK_VOLUME_ROUTES',
      'ENDPOINT_ROUTES',
      'POD_ROUTES',
      'PLATFORM_VERSION',
      'PLATFORM_ERROR_CODES',
    ],
    types: ['CreateHarnessServerOptions', 'HarnessServer', 'HarnessServerOptions', 'WorkerEnv', 'WorkerEnvOptions', 'PlatformErrorCode'],
  },
];

/** A short Node ESM script that imports each specifier and prints `{ specifier: sorted export keys }` as JSON. */
export function exportKeysScript(specifiers: readonly string[]): string {
  return [
    'const keys = {};',
    `for (const specifier of ${JSON.stringify(specifiers)}) keys[specifier] = Object.keys(await import(specifier)).sort();`,
    'process.stdout.write(JSON.stringify(keys));',
  ].join(' ');
}
