/**
 * The seam between the two packages (src/exports/internal.ts, `serverless-worker/internal`):
 * every name the platform may use of the SDK, listed here so that a change of the seam is a
 * change of this file too, seen in review and named in the changelog. The platform imports
 * nothing else of the SDK (import-rules.unit.test.ts), and the seam exports nothing the
 * platform does not use. Read from the files' text with TypeScript's parser.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../child-process.js';

/** The values the platform uses of the SDK. */
const SEAM_VALUES = [
  'API_KEY_ENV',
  'AllowListSchema',
  'DEFAULT_MAX_QUEUED_BYTES',
  'DEFAULT_MAX_REQUEUES',
  'DEFAULT_SERVE_HOST',
  'DEFAULT_SERVE_PORT',
  'EXECUTION_TIMEOUT_MS',
  'HARNESS_GONE_AFTER_ENV',
  'HARNESS_PID_ENV',
  'Harness',
  'HeldList',
  'HeldMap',
  'JOB_STATUSES',
  'JobRequestSchema',
  'LoadBalancingOptionsSchema',
  'MAX_BODY_BYTES',
  'MAX_CHUNK_BYTES',
  'MAX_CHUNKS_AHEAD',
  'MAX_HELD_CHUNKS',
  'MAX_JSON_DEPTH',
  'MAX_JSON_KEYS',
  'MemoryJobStore',
  'MessageBatcher',
  'PlatformTransportSettingsSchema',
  'PRETTY_LOGS_PACKAGE',
  'RUNSYNC_WAIT_MS',
  'RUNTIME_VERSION',
  'RawJson',
  'S3_CLIENT_PACKAGES',
  'SDK_SOURCE_ROOT',
  'STREAM_BATCH_HEADER',
  'STREAM_ORDER_HEADER',
  'STREAM_ORDER_VALUE',
  'SUPERVISED_CHANNEL_ENV',
  'SUPERVISED_CHANNEL_IPC',
  'ServeOptionsSchema',
  'ServerlessWorkerError',
  'SettingArgumentError',
  'TAKE_ON_DONE_HEADER',
  'TAKE_ON_DONE_VALUE',
  'TEST_INPUT_FILE',
  'TTL_MS',
  'TargetPolicy',
  'TargetRefusedError',
  'WORKER_ENV',
  'WORKER_FLAG_SETTINGS',
  'cancelChange',
  'changeEvents',
  'code',
  'collectForMemory',
  'commaListSetting',
  'compactWhenIdle',
  'exposedCollector',
  'completeChange',
  'createGpuSampler',
  'createLogger',
  'createMetrics',
  'createWindowAccumulator',
  'defaultPort',
  'envTable',
  'expiryStop',
  'formatIssues',
  'giveBackChange',
  'hasHistoryFilter',
  'inputValue',
  'isKnownErrorCode',
  'isServerlessWorkerError',
  'isTerminal',
  'jsonLineFormatter',
  'jobsDeletedSoFar',
  'jsonShape',
  'loadMetrics',
  'loadPromClient',
  'matchesHistory',
  'newJobId',
  'onShutdownSignals',
  'optionsTable',
  'orderFigure',
  'ownedRequest',
  'onRequestBytesReleased',
  'parseJobRequest',
  'parseOnceOrThrow',
  'parseOrThrow',
  'previewValue',
  'queuedJob',
  'ranOn',
  'readChildBatch',
  'readGpus',
  'refusedChunk',
  'registerErrorCodes',
  'refusedProgress',
  'refusedResult',
  'repeatEvery',
  'reportedHostname',
  'requestFromText',
  'requestJsonText',
  'requeueChange',
  'resolveTestInput',
  'retryChange',
  'runKey',
  'settingsSchema',
  'settingsTable',
  'sleep',
  'staleAttemptError',
  'stampAttempt',
  'stopOrderOf',
  'summarizeIssues',
  'switchSetting',
  'systemClock',
  'targetRefusal',
  'textSetting',
  'timeoutChange',
  'toDelivery',
  'toJobView',
  'trackFreshConnections',
  'urlForLog',
  'validateInput',
  'wholeNumberSetting',
  'withinTime',
  'workerFlagText',
];

/** The types the platform uses of the SDK. */
const SEAM_TYPES = [
  'ChangeOutcome',
  'ChangedField',
  'ChildMessage',
  'Clock',
  'Collector',
  'DueOutcome',
  'EndpointJobs',
  'EndpointSettings',
  'ErrorCode',
  'ErrorCodeEntry',
  'GoneWorker',
  'GpuReadResult',
  'GpuReading',
  'GpuWindowAccumulator',
  'GpuWindowSummary',
  'Handler',
  'HarnessOptions',
  'HealthCounts',
  'Job',
  'JobChange',
  'JobErrorPayload',
  'JobFacts',
  'JobRequest',
  'JobResult',
  'JobStatus',
  'JobStore',
  'JobView',
  'ListPage',
  'ListQuery',
  'Metrics',
  'PlatformCli',
  'PlatformServeApi',
  'PostAck',
  'ReadGpusOptions',
  'RegisteredErrorCodes',
  'RequeueRules',
  'ResultAck',
  'Setting',
  'StateCounts',
  'StopOrder',
  'StopReason',
  'StopSignal',
  'StoreEvent',
  'StoredJob',
  'StoredWorker',
  'StreamChunk',
  'StreamRead',
  'SubmitOptions',
  'SupervisorMessage',
  'TimerHandle',
  'TouchWorker',
  'WorkerArgs',
  'WorkerConfig',
  'WorkerFlag',
];

const SEAM = 'serverless-worker/internal';

function parse(path: string): ts.SourceFile {
  return ts.createSourceFile(path, readFileSync(join(REPO_ROOT, path), 'utf8'), ts.ScriptTarget.ES2022);
}

function platformFiles(dir = 'packages/platform/src'): string[] {
  return readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) return platformFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The seam's exports, values and types apart. */
function seamExports(): { values: string[]; types: string[] } {
  const values: string[] = [];
  const types: string[] = [];
  for (const statement of parse('src/exports/internal.ts').statements) {
    if (!ts.isExportDeclaration(statement) || !statement.exportClause || !ts.isNamedExports(statement.exportClause)) continue;
    for (const element of statement.exportClause.elements) (statement.isTypeOnly || element.isTypeOnly ? types : values).push(element.name.text);
  }
  return { values: values.sort(), types: types.sort() };
}

/** Every name a platform file imports from the seam, or merges into (an interface of `declare module` on it). */
function namesThePlatformImports(): Set<string> {
  const names = new Set<string>();
  for (const path of platformFiles()) {
    for (const statement of parse(path).statements) {
      if (
        ts.isModuleDeclaration(statement) &&
        ts.isStringLiteral(statement.name) &&
        statement.name.text === SEAM &&
        statement.body &&
        ts.isModuleBlock(statement.body)
      ) {
        for (const merged of statement.body.statements) if (ts.isInterfaceDeclaration(merged)) names.add(merged.name.text);
      }
      if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier) || statement.moduleSpecifier.text !== SEAM) continue;
      const bindings = statement.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) names.add((element.propertyName ?? element.name).text);
    }
  }
  return names;
}

describe('the seam between the SDK and the platform (serverless-worker/internal)', () => {
  it('exports exactly the names listed here', () => {
    const { values, types } = seamExports();
    expect(values, 'a name added to or taken from src/exports/internal.ts: list it here too').toEqual([...SEAM_VALUES].sort());
    expect(types, 'a type added to or taken from src/exports/internal.ts: list it here too').toEqual([...SEAM_TYPES].sort());
  });

  it('exports nothing the platform does not import', () => {
    const used = namesThePlatformImports();
    const { values, types } = seamExports();
    expect(
      [...values, ...types].filter((name) => !used.has(name)),
      'no longer used by the platform: take it out of the seam',
    ).toEqual([]);
  });
});
