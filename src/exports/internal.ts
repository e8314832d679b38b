/**
 * @module exports/internal
 * `serverless-worker/internal`: the seam between the SDK and serverless-worker-platform.
 * @internal Not a public API. Every name the platform package uses of the SDK is exported
 * here and nowhere else, so that the seam is one list that a reviewer reads and a test
 * (test/architecture/platform-seam.unit.test.ts) holds; the platform imports nothing else
 * of the SDK. It is versioned with the SDK: the platform pins the SDK's exact version and
 * the SDK refuses a platform of another version (local/platform-package.ts), so a name may
 * change in any release. Worker code uses `serverless-worker`, `/testing`, `/runtime` or
 * `/harness`, which semver covers.
 */
// First: a clear error when zod 4 is not what is installed.
import '../zod-version.js';
export { type Clock, repeatEvery, sleep, systemClock, type TimerHandle, withinTime } from '../clock/index.js';
export { createGpuSampler, readGpus, type ReadGpusOptions } from '../gpu/index.js';
export type { GpuReading, GpuReadResult } from '../gpu/reading.js';
export { createWindowAccumulator, type GpuWindowAccumulator, type GpuWindowSummary } from '../gpu/window-summary.js';
export { DEFAULT_MAX_QUEUED_BYTES, Harness, type HarnessOptions } from '../harness/core/harness.js';
export { HeldList } from '../collections/held-list.js';
export { HeldMap } from '../collections/held-map.js';
export type { StopSignal } from '../harness/core/stop-signal.js';
export type { EndpointJobs } from '../harness/core/endpoint-jobs.js';
export { MAX_CHUNKS_AHEAD, MAX_HELD_CHUNKS } from '../harness/core/chunk-order.js';
export { STREAM_BATCH_HEADER, STREAM_ORDER_HEADER, STREAM_ORDER_VALUE } from '../job/stream-order.js';
export { TAKE_ON_DONE_HEADER, TAKE_ON_DONE_VALUE } from '../job/take-on-done.js';
export { DEFAULT_MAX_REQUEUES, staleAttemptError, stampAttempt } from '../harness/store/attempts.js';
export { hasHistoryFilter, matchesHistory, orderFigure, ranOn } from '../harness/store/history-filter.js';
export { newJobId } from '../harness/store/job-id.js';
export { toDelivery, toJobView } from '../harness/store/job-record.js';
export {
  cancelChange,
  type ChangedField,
  changeEvents,
  completeChange,
  expiryStop,
  giveBackChange,
  type JobChange,
  type JobFacts,
  queuedJob,
  requeueChange,
  retryChange,
  stopOrderOf,
  timeoutChange,
} from '../harness/store/job-rules.js';
export type {
  ChangeOutcome,
  DueOutcome,
  EndpointSettings,
  GoneWorker,
  HealthCounts,
  JobStore,
  ListPage,
  ListQuery,
  PostAck,
  RequeueRules,
  ResultAck,
  StateCounts,
  StopOrder,
  StoredJob,
  StoredWorker,
  StoreEvent,
  StreamRead,
  SubmitOptions,
  TouchWorker,
} from '../harness/store/job-store.js';
export { MemoryJobStore } from '../harness/store/memory-job-store.js';
export { ownedRequest } from '../harness/store/memory-records.js';
export { jobsDeletedSoFar, onRequestBytesReleased } from '../harness/store/released-bytes.js';
export { refusedChunk, refusedProgress, refusedResult } from '../harness/store/post-rules.js';
export {
  type ErrorCodeEntry,
  isKnownErrorCode,
  registerErrorCodes,
  type RegisteredErrorCodes,
  type ErrorCode,
  EXECUTION_TIMEOUT_MS,
  formatIssues,
  inputValue,
  isServerlessWorkerError,
  isTerminal,
  type Job,
  JOB_STATUSES,
  type JobErrorPayload,
  type JobRequest,
  JobRequestSchema,
  type JobResult,
  type JobStatus,
  type JobView,
  jsonShape,
  MAX_BODY_BYTES,
  MAX_CHUNK_BYTES,
  MAX_JSON_DEPTH,
  MAX_JSON_KEYS,
  parseJobRequest,
  parseOnceOrThrow,
  parseOrThrow,
  previewValue,
  RawJson,
  requestFromText,
  requestJsonText,
  runKey,
  RUNSYNC_WAIT_MS,
  ServerlessWorkerError,
  type StopReason,
  type StreamChunk,
  summarizeIssues,
  TTL_MS,
} from '../job/index.js';
export { resolveTestInput, TEST_INPUT_FILE } from '../job/test-input.js';
export { LoadBalancingOptionsSchema } from '../load-balancing/lb-options.js';
export { compactWhenIdle } from '../local/idle-compaction.js';
export { collectForMemory, collector as exposedCollector, type Collector } from '../metrics/garbage-collector.js';
export type { PlatformCli, PlatformServeApi } from '../local/platform-contract.js';
export { createLogger, jsonLineFormatter, PRETTY_LOGS_PACKAGE } from '../log/index.js';
export { urlForLog } from '../log/url-for-log.js';
export { loadPromClient } from '../metrics/create-metrics.js';
export { createMetrics, loadMetrics, type Metrics } from '../metrics/index.js';
export { trackFreshConnections } from '../net/fresh-connections.js';
export { AllowListSchema, defaultPort, TargetPolicy, targetRefusal, TargetRefusedError } from '../net/target-policy.js';
export { S3_CLIENT_PACKAGES } from '../s3/index.js';
export { HARNESS_GONE_AFTER_ENV, HARNESS_PID_ENV } from '../settings/launched-worker.js';
export { optionsTable } from '../settings/option-table.js';
export { code, envTable, settingsTable } from '../settings/reference-table.js';
export { commaListSetting, type Setting, SettingArgumentError, settingsSchema, switchSetting, textSetting, wholeNumberSetting } from '../settings/setting.js';
export { API_KEY_ENV, WORKER_ENV } from '../settings/worker-env.js';
export { PlatformTransportSettingsSchema } from '../transports/platform/options.js';
export {
  type ChildMessage,
  MessageBatcher,
  readChildBatch,
  SUPERVISED_CHANNEL_ENV,
  SUPERVISED_CHANNEL_IPC,
  type SupervisorMessage,
} from '../transports/supervised/channel-protocol.js';
export { SDK_SOURCE_ROOT } from '../transports/watchdog/thread-file.js';
export { RUNTIME_VERSION } from '../version.js';
export { type Handler, onShutdownSignals, reportedHostname, validateInput, type WorkerArgs, type WorkerConfig } from '../worker/index.js';
export { ServeOptionsSchema } from '../worker/options.js';
export { DEFAULT_SERVE_HOST, DEFAULT_SERVE_PORT, WORKER_FLAG_SETTINGS, type WorkerFlag, workerFlagText } from '../worker/worker-flags.js';
