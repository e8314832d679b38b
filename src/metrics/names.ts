/**
 * @module metrics/names
 * Every metric of serverless-worker, in one table: name, help, labels, buckets.
 * Prometheus conventions: base units (seconds, bytes, ratios 0-1, celsius, watts) in
 * the name, `_total` on counters, one `serverless_worker_` prefix. Renaming a metric
 * breaks dashboards: add a new one instead.
 */

/** Job durations run from milliseconds (echo) to hours (training); buckets in seconds. */
const JOB_DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 14400];
/** Queue delay: near zero on a warm endpoint, minutes on a cold start. */
const QUEUE_DELAY_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900];

const GPU_LABELS = ['index', 'uuid', 'name'] as const;
/** A launched worker's cold start: a node worker in a second, a model load in minutes. */
const COLD_START_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600];

export const METRICS = {
  jobsTotal: {
    type: 'counter',
    name: 'serverless_worker_jobs_total',
    help: 'Jobs that reached a final status (COMPLETED, FAILED, TIMED_OUT, CANCELLED).',
    labels: ['status'],
  },
  jobDurationSeconds: {
    type: 'histogram',
    name: 'serverless_worker_job_duration_seconds',
    help: 'Time from a job starting to run to its final status, in seconds, by final status.',
    labels: ['status'],
    buckets: JOB_DURATION_BUCKETS,
  },
  jobQueueDelaySeconds: {
    type: 'histogram',
    name: 'serverless_worker_job_queue_delay_seconds',
    help: 'Time a job waited in the queue before a worker started it, in seconds.',
    labels: [],
    buckets: QUEUE_DELAY_BUCKETS,
  },
  jobsInProgress: {
    type: 'gauge',
    name: 'serverless_worker_jobs_in_progress',
    help: 'Jobs running now.',
    labels: [],
  },
  streamChunksTotal: {
    type: 'counter',
    name: 'serverless_worker_stream_chunks_total',
    help: 'Stream chunks posted by streaming handlers.',
    labels: [],
  },
  streamBytesTotal: {
    type: 'counter',
    name: 'serverless_worker_stream_bytes_total',
    help: 'Bytes of JSON in posted stream chunks.',
    labels: [],
  },
  resultPostRetriesTotal: {
    type: 'counter',
    name: 'serverless_worker_result_post_retries_total',
    help: 'Result posts tried again after a failed attempt.',
    labels: [],
  },
  resultPostGiveUpsTotal: {
    type: 'counter',
    name: 'serverless_worker_result_post_give_ups_total',
    help: 'Results that could not be posted before their deadline passed.',
    labels: [],
  },
  heartbeatFailuresTotal: {
    type: 'counter',
    name: 'serverless_worker_heartbeat_failures_total',
    help: 'Heartbeat pings that failed (network error or non-2xx answer).',
    labels: [],
  },
  webhookDeliveriesTotal: {
    type: 'counter',
    name: 'serverless_worker_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome (success: a 2xx answer; failure: anything else).',
    labels: ['outcome'],
  },
  webhookGiveUpsTotal: {
    type: 'counter',
    name: 'serverless_worker_webhook_give_ups_total',
    help: 'Webhooks abandoned after their last retry failed.',
    labels: [],
  },
  gpuUtilizationRatio: {
    type: 'gauge',
    name: 'serverless_worker_gpu_utilization_ratio',
    help: 'Share of time a kernel ran on the GPU, 0 to 1 (nvidia-smi utilization.gpu, rocm-smi GPU use); absent where not reported (MIG).',
    labels: GPU_LABELS,
  },
  gpuMemoryActivityRatio: {
    type: 'gauge',
    name: 'serverless_worker_gpu_memory_activity_ratio',
    help: 'Share of time device memory was read or written, 0 to 1 (nvidia-smi utilization.memory, rocm-smi memory read/write activity).',
    labels: GPU_LABELS,
  },
  gpuMemoryUsedBytes: {
    type: 'gauge',
    name: 'serverless_worker_gpu_memory_used_bytes',
    help: 'GPU memory in use, in bytes.',
    labels: GPU_LABELS,
  },
  gpuMemoryTotalBytes: {
    type: 'gauge',
    name: 'serverless_worker_gpu_memory_total_bytes',
    help: 'GPU memory in all, in bytes.',
    labels: GPU_LABELS,
  },
  gpuTemperatureCelsius: {
    type: 'gauge',
    name: 'serverless_worker_gpu_temperature_celsius',
    help: 'GPU temperature in degrees Celsius (AMD: edge sensor, junction where edge is not reported).',
    labels: GPU_LABELS,
  },
  gpuPowerWatts: {
    type: 'gauge',
    name: 'serverless_worker_gpu_power_watts',
    help: 'GPU power draw in watts.',
    labels: GPU_LABELS,
  },
  gpuPowerLimitWatts: {
    type: 'gauge',
    name: 'serverless_worker_gpu_power_limit_watts',
    help: 'GPU power limit in watts.',
    labels: GPU_LABELS,
  },
  gpuReadingsAvailable: {
    type: 'gauge',
    name: 'serverless_worker_gpu_readings_available',
    help: '1 when the last GPU read gave readings, 0 when it gave none (no tool, tool failed or hung).',
    labels: [],
  },
  gpuReadFailuresTotal: {
    type: 'counter',
    name: 'serverless_worker_gpu_read_failures_total',
    help: 'GPU reads that gave no readings, by reason (not-installed, failed, timed-out, unparseable, no-devices, none-visible, cancelled).',
    labels: ['reason'],
  },
  initDurationSeconds: {
    type: 'gauge',
    name: 'serverless_worker_init_duration_seconds',
    help: "How long the start-up phase (serve's init) took, in seconds, by outcome (ok, failed, timed_out, aborted).",
    labels: ['outcome'],
  },
  httpRequestsTotal: {
    type: 'counter',
    name: 'serverless_worker_http_requests_total',
    help: "Requests a load-balancing worker's app answered, by HTTP status code (refused ones too: 503 while initializing or draining).",
    labels: ['code'],
  },
  httpRequestsInFlight: {
    type: 'gauge',
    name: 'serverless_worker_http_requests_in_flight',
    help: "Requests a load-balancing worker's app is handling now.",
    labels: [],
  },
  harnessScaleUpsTotal: {
    type: 'counter',
    name: 'serverless_worker_harness_scale_ups_total',
    help: 'Worker processes the harness launcher started, by endpoint.',
    labels: ['endpoint'],
  },
  harnessScaleDownsTotal: {
    type: 'counter',
    name: 'serverless_worker_harness_scale_downs_total',
    help: 'Worker processes the harness launcher stopped, by endpoint and reason (idle, release, endpoint-gone, shutdown).',
    labels: ['endpoint', 'reason'],
  },
  harnessWorkerCrashesTotal: {
    type: 'counter',
    name: 'serverless_worker_harness_worker_crashes_total',
    help: 'Launched worker processes that exited without being told to, by endpoint and phase (startup, running).',
    labels: ['endpoint', 'phase'],
  },
  harnessWorkerColdStartSeconds: {
    type: 'histogram',
    name: 'serverless_worker_harness_worker_cold_start_seconds',
    help: 'Time from spawning a launched worker to its first job request (heartbeats sent while init runs do not count), in seconds.',
    labels: ['endpoint'],
    buckets: COLD_START_BUCKETS,
  },
  harnessJobWaitSeconds: {
    type: 'histogram',
    name: 'serverless_worker_harness_job_wait_seconds',
    help: 'Time a job waited in the queue before a launched worker took it (counted at the take, once per attempt), in seconds.',
    labels: ['endpoint'],
    buckets: QUEUE_DELAY_BUCKETS,
  },
  harnessWorkers: {
    type: 'gauge',
    name: 'serverless_worker_harness_workers',
    help: 'Launched workers by endpoint and state (initializing, idle, running, stopping, throttled).',
    labels: ['endpoint', 'state'],
  },
  harnessBodyReadsActive: {
    type: 'gauge',
    name: 'serverless_worker_harness_body_reads_active',
    help: 'Large request bodies the harness is reading now (one read slot each).',
    labels: [],
  },
  harnessBodyReadsWaiting: {
    type: 'gauge',
    name: 'serverless_worker_harness_body_reads_waiting',
    help: 'Large request bodies waiting, unread, for a read slot.',
    labels: [],
  },
  harnessBodyReadStallsTotal: {
    type: 'counter',
    name: 'serverless_worker_harness_body_read_stalls_total',
    help: 'Read slots given up because their socket brought no bytes for a while as other bodies waited.',
    labels: [],
  },
} as const;

export type MetricKey = keyof typeof METRICS;
