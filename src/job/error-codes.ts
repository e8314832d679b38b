/**
 * @module job/error-codes
 * Every error code the SDK raises, in one table. Users match on `code`, never on message
 * text. Each entry carries the HTTP status the harness answers with and a one-line fix that
 * docs/reference/error-codes.md's table is made from (npm run docs:settings). The platform
 * package raises codes of its own, in a table of its own (its job/platform-error-codes.ts),
 * which it adds to the registry here when it loads (registerErrorCodes), so that a new
 * platform error needs no SDK release; the reference page lists both tables together.
 */

export interface ErrorCodeEntry {
  /** HTTP status when the error crosses the harness's HTTP boundary. */
  readonly status: number;
  /** What went wrong, in general terms. */
  readonly meaning: string;
  /** What the user should do about it. */
  readonly fix: string;
}

export const ERROR_CODES = {
  // ---- job requests and job lifecycle ----
  SW_INVALID_JOB_REQUEST: {
    status: 400,
    meaning: 'A job request body does not match the job request schema (`{"input": {...}}` with optional policy, webhook, s3Config).',
    fix: 'Send {"input": {...}} with optional webhook (URL), policy {executionTimeout, lowPriority, ttl} and s3Config; the message names the field and the allowed range.',
  },
  SW_ILLEGAL_TRANSITION: {
    status: 409,
    meaning: 'A job was asked to move between two states that the lifecycle table does not connect.',
    fix: 'Check the job status first; for example only FAILED or TIMED_OUT jobs can be retried, and only IN_QUEUE or IN_PROGRESS jobs can be cancelled.',
  },
  SW_JOB_NOT_FOUND: {
    status: 404,
    meaning: 'No job with this id exists: it never did, its ttl expired, or its retention elapsed.',
    fix: 'Check the id; raise policy.ttl at submission or read results sooner (30 min after /run, 1 min after /runsync).',
  },
  SW_ENDPOINT_NOT_FOUND: {
    status: 404,
    meaning: 'No endpoint with this id exists in the harness.',
    fix: 'Use the endpoint id the harness printed at start, or create one through the management API.',
  },
  SW_RETRY_NOT_ALLOWED: {
    status: 409,
    meaning: 'Retry was asked for a job that is not FAILED or TIMED_OUT.',
    fix: 'Only failed or timed-out jobs can be retried; poll /status until the job has ended.',
  },
  SW_CANCEL_NOT_ALLOWED: {
    status: 409,
    meaning: 'Cancel was asked for a job that has already ended.',
    fix: 'Only IN_QUEUE or IN_PROGRESS jobs can be cancelled; the job already has its final status.',
  },
  SW_REQUEUE_LIMIT: {
    status: 500,
    meaning:
      'The job was lost more often than the harness requeues a job (its worker died or went silent, or the job-take answer never reached it); it ended FAILED.',
    fix: 'Read the worker logs: a handler that crashes or hangs its worker on this input must be fixed. Raise maxRequeues (--max-requeues) if workers die for other reasons; /retry runs the job again.',
  },
  SW_STALE_ATTEMPT: {
    status: 409,
    meaning:
      'A worker posted progress, a stream chunk or a result for an attempt of the job that is no longer the current one (the job was cancelled, timed out or lost, then run again).',
    fix: 'Nothing to fix: the current attempt decides the outcome. The worker logs the refusal at debug and drops the post.',
  },
  // ---- handler outcomes (carried in a failed job's error) ----
  SW_HANDLER_ERROR: {
    status: 500,
    meaning: 'The handler threw or rejected; the job is FAILED with the thrown error.',
    fix: 'Read error_type, error_message and error_traceback in the job output and fix the handler.',
  },
  SW_INPUT_VALIDATION: {
    status: 400,
    meaning: "The job's input failed the zod schema given to serve(); the handler did not run.",
    fix: 'Send input that matches the schema; the error lists every zod issue with its path.',
  },
  SW_OUTPUT_NOT_SERIALIZABLE: {
    status: 500,
    meaning: 'The handler returned or yielded a value that cannot be turned into JSON (a BigInt, a cycle).',
    fix: 'Return plain JSON values: convert BigInt to string, break cycles.',
  },
  SW_OUTPUT_TOO_DEEP: {
    status: 500,
    meaning:
      'The handler returned, yielded or reported as progress a value nested deeper than 1000 levels of arrays and objects (MAX_JSON_DEPTH); the job is FAILED and the message names the path.',
    fix: 'Flatten the value, or send the deep part as a JSON string.',
  },
  SW_EXECUTION_TIMEOUT: {
    status: 408,
    meaning: "The job ran past its execution timeout (policy.executionTimeout, else the worker's default); it is TIMED_OUT.",
    fix: 'Raise policy.executionTimeout (5 s to 7 days) or make the handler faster; honour ctx.signal so that work really stops.',
  },
  SW_HANDLER_EXITED: {
    status: 500,
    meaning: 'The process exited while a job ran (process.exit() in the handler, or in code it called), before the job ended.',
    fix: "Don't call process.exit() in a handler: throw to fail the job, or return. A dry run prints a FAILED record with this code and exits 1; on the platform the job is requeued like any job of a worker that died (SW_REQUEUE_LIMIT past --max-requeues).",
  },
  SW_JOB_CANCELLED: {
    status: 409,
    meaning: 'The job was cancelled while it ran; its signal aborted with this reason.',
    fix: 'Nothing to fix: a caller asked for it. Handlers should stop when ctx.signal aborts.',
  },
  SW_JOB_EXPIRED: {
    status: 410,
    meaning:
      'The job reached the end of its ttl (policy.ttl) while it ran: the platform deleted it (its status answers 404) and the signal aborted with this reason.',
    fix: 'Raise policy.ttl (10 s to 7 days; it covers queue time and execution) or make the job shorter. Handlers should stop when ctx.signal aborts.',
  },
  SW_WORKER_SHUTDOWN: {
    status: 503,
    meaning: 'The worker was shutting down (SIGTERM/SIGINT) and the job did not finish within the drain deadline.',
    fix: 'Raise the shutdown grace period (shutdownTimeoutMs) or let the platform retry the job.',
  },
  SW_RESULT_TOO_LARGE: {
    status: 413,
    meaning:
      "The job's serialized result is larger than the platform accepts for a result (20 MB on the worker API); the worker did not post it and failed the job.",
    fix: "Stream the output (yield it in parts), or upload it to the job's s3Config bucket and return the URL; for a stream aggregated into its result (aggregateStream), turn aggregateStream off. The message gives the size and the limit (maxResultBytes).",
  },
  SW_INIT_FAILED: {
    status: 503,
    meaning: "The worker's start-up function (serve's init) threw or rejected; the worker took no job, reported itself unhealthy and exited 1.",
    fix: 'Read the reason in the log line "init failed" (and in the unhealthy report); fix what init loads or waits for.',
  },
  SW_INIT_TIMEOUT: {
    status: 504,
    meaning: "The worker's start-up function (serve's init) ran past initTimeoutMs; its signal was aborted, the worker reported itself unhealthy and exited 1.",
    fix: 'Raise initTimeoutMs (default 600 000 ms) or make init faster (a smaller model, weights on a network volume); pass ctx.signal to what init awaits.',
  },
  SW_URL_NOT_READY: {
    status: 504,
    meaning: 'waitForUrl gave up: the URL did not answer with an accepted status before its timeout (or its signal aborted).',
    fix: 'The message names the URL, the attempts and the last error or status; check that the local server started (its own logs), its port, and raise timeoutMs for slow starts.',
  },
  SW_WORKER_NOT_READY: {
    status: 503,
    meaning: "A load-balancing worker's app got a request before it was ready (init still runs, or start-up failed); /ping answers 204 or 503 meanwhile.",
    fix: 'Send requests through the endpoint (the platform or the harness routes only to workers whose /ping answers 200), or wait for /ping to answer 200.',
  },
  // ---- configuration and the command line ----
  SW_INVALID_OPTIONS: {
    status: 500,
    meaning: 'An option given to serve() (or a CLI flag) has the wrong type or is out of range.',
    fix: 'The message names the option, what it expects and what it got; see docs/reference/options.md.',
  },
  SW_INVALID_ENV: {
    status: 500,
    meaning: 'An environment variable the runtime reads is malformed.',
    fix: 'The message names the variable and the expected format.',
  },
  SW_INVALID_TEST_INPUT: {
    status: 400,
    meaning: 'The dry-run test input is missing, unreadable, not JSON, or not of the shape {"input": {...}}.',
    fix: 'Pass --test-input \'{"input": {...}}\', --test-input @file.json, or put test_input.json in the working directory.',
  },
  SW_PLATFORM_MISSING: {
    status: 500,
    meaning:
      'A command or mode needs the local platform package (serverless-worker-platform: the harness server, --serve-api, build, the management CLI), which is not installed beside the SDK.',
    fix: "Install it as a dev dependency, at the SDK's version: npm install --save-dev serverless-worker-platform@<the SDK's version>. A worker image needs only the SDK.",
  },
  SW_PLATFORM_VERSION_MISMATCH: {
    status: 500,
    meaning:
      "The installed serverless-worker-platform is of another version than the SDK that loads it; the two are released together, and the platform is built against exactly its SDK's version.",
    fix: "Install both at one version: npm install --save-dev serverless-worker-platform@<the SDK's version> (the message names both versions), or upgrade both together.",
  },
  SW_S3_CLIENT_MISSING: {
    status: 500,
    meaning:
      'An S3 upload helper (uploadFile, uploadBuffer, uploadStream) was called where the AWS SDK, an optional peer dependency of the SDK, is not installed.',
    fix: "npm install @aws-sdk/client-s3 @aws-sdk/lib-storage @aws-sdk/s3-request-presigner in the worker's project (the image installs them with the rest).",
  },
  SW_INIT_TARGET_NOT_EMPTY: {
    status: 500,
    meaning: '`serverless-worker init` was pointed at a folder that already holds files the scaffold would write.',
    fix: 'Pick a new or empty folder (`serverless-worker init my-worker`), or pass --force to overwrite the listed files.',
  },
  // ---- HTTP boundary of the harness ----
  SW_QUEUE_FULL: {
    status: 503,
    meaning: "The harness's queued job requests already hold --max-queued-bytes of request bodies; the job was not accepted.",
    fix: 'Retry after the Retry-After seconds (workers take jobs meanwhile), start more workers, or raise --max-queued-bytes (maxQueuedBytes) where the heap allows it.',
  },
  SW_ROUTE_NOT_FOUND: {
    status: 404,
    meaning: 'No route matches this path.',
    fix: 'Check the path against the routes in docs/guides/local-api.md (queue API under /v2/{endpoint_id}, management API under /v1).',
  },
  SW_METHOD_NOT_ALLOWED: {
    status: 405,
    meaning: 'The path exists but not with this HTTP method.',
    fix: 'Use the method listed in docs/guides/local-api.md for this route; the Allow header names it.',
  },
  SW_INTERNAL: {
    status: 500,
    meaning: 'The harness itself is broken: an unexpected exception.',
    fix: 'Report it with the log line that carries the same request id.',
  },
  // ---- queue API ----
  SW_TARGET_REFUSED: {
    status: 403,
    meaning:
      'A URL the harness was asked to reach for a caller (a job webhook, a load-balancing worker) is the harness itself, a link-local or cloud metadata address, or an address its policy does not allow.',
    fix: 'Point it at another host; to reach a refused range on purpose, widen the policy: --webhook-allow / webhook.allow for webhooks, --lb-allow / loadBalancing.allow for load-balancing workers (CIDR ranges, addresses, loopback, link-local, metadata).',
  },
  // ---- platform transport ----
  SW_RESULT_UNDELIVERED: {
    status: 503,
    meaning:
      "A job's result (or one of its stream chunks) could not be posted to the platform before the delivery deadline, after retrying network errors, 5xx and 429 answers, or the platform refused it with another 4xx.",
    fix: 'Check that the worker reaches the RUNPOD_WEBHOOK_POST_OUTPUT / _POST_STREAM host and that RUNPOD_AI_API_KEY is right; the log line names the job, the attempts and the last answer. Raise resultDeadlineMs for long outages.',
  },
  SW_RESULT_REFUSED: {
    status: 502,
    meaning:
      "The platform refused the job's result with a 4xx that retrying cannot fix (413 too large, 400); the worker posted this error in its place, so the job ended FAILED.",
    fix: 'Read the status and answer in the message: for 413 make the result smaller (stream it or upload it to s3Config); for 400 check that the output is plain JSON.',
  },
  // ---- stream chunks ----
  SW_MALFORMED_STREAM: {
    status: 500,
    meaning: 'joinChunks got a stream whose split parts are missing, duplicated or inconsistent.',
    fix: 'Pass every chunk of the stream, in any order; chunks are never dropped by the runtime, so a gap means chunks were lost on the way.',
  },
  // ---- S3 outputs ----
  SW_S3_NOT_CONFIGURED: {
    status: 400,
    meaning: 'An S3 upload helper was called for a job whose request carries no s3Config (or an incomplete one).',
    fix: 'Send s3Config {accessId, accessSecret, bucketName, endpointUrl} with the job request, or pass s3Config to the helper; without one, return the output inline.',
  },
  SW_S3_UPLOAD_FAILED: {
    status: 502,
    meaning: 'The S3-compatible service refused or failed an upload (or a presign): bad credentials, a missing bucket, an unreachable endpoint.',
    fix: "Read the message: it names the bucket, the endpoint and the service's error code (AccessDenied, NoSuchBucket, ...); check s3Config against the service.",
  },
} as const satisfies Record<string, ErrorCodeEntry>;

/**
 * The codes of packages built on the SDK (the platform's), added by declaration merging in
 * the module that registers their table: `interface RegisteredErrorCodes extends
 * Record<TheirCode, true> {}` inside `declare module 'serverless-worker/internal'`.
 */
// oxlint-disable-next-line typescript/no-empty-object-type -- filled by declaration merging
export interface RegisteredErrorCodes {}

/** A code of the SDK's table, or of a table registered with registerErrorCodes. */
export type ErrorCode = keyof typeof ERROR_CODES | keyof RegisteredErrorCodes;

/** The tables added by registerErrorCodes (the SDK's own is ERROR_CODES). */
const registered = new Map<string, ErrorCodeEntry>();

/**
 * Add a package's own codes to the registry (their HTTP status for ServerlessWorkerError,
 * and isServerlessWorkerError's check). A code the SDK or an earlier table already has with
 * another entry is refused: codes are global, and one code means one thing.
 */
export function registerErrorCodes(table: Readonly<Record<string, ErrorCodeEntry>>): void {
  for (const [code, entry] of Object.entries(table)) {
    const known = Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as keyof typeof ERROR_CODES] : registered.get(code);
    if (known !== undefined && known !== entry)
      throw new Error(`error code ${code} is registered twice, with different entries: each code belongs to one table`);
    registered.set(code, entry);
  }
}

/** The entry of `code` in the SDK's table or a registered one; undefined for a code no table has. */
export function errorCodeEntry(code: string): ErrorCodeEntry | undefined {
  return Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as keyof typeof ERROR_CODES] : registered.get(code);
}

/** True when `code` is in the SDK's table or a registered one. */
export function isKnownErrorCode(code: string): code is ErrorCode {
  return errorCodeEntry(code) !== undefined;
}
