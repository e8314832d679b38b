/**
 * @module job/error-codes
 * Every error code of serverless-worker in one table. Users match on `code`, never
 * on message text. Each entry carries the HTTP status the harness answers with and a
 * one-line fix that docs/reference/error-codes.md's table is made from (npm run docs:settings).
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
    meaning: 'A job request body does not match the job request schema (spec 4.3).',
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
  SW_BUILD_FAILED: {
    status: 500,
    meaning:
      '`serverless-worker build` could not bundle the worker: the entry file is missing, or esbuild reported errors (a syntax error, an import it cannot resolve).',
    fix: 'The message names the file and line esbuild stopped at; run `npm install` when it names a package, and pass the file that calls serve() as the entry.',
  },
  SW_PLATFORM_MISSING: {
    status: 500,
    meaning:
      'A command or mode needs the local platform package (serverless-worker-platform: the harness server, --serve-api, build, the management CLI), which is not installed beside the SDK.',
    fix: "Install it as a dev dependency, at the SDK's version: npm install --save-dev serverless-worker-platform@<the SDK's version>. A worker image needs only the SDK.",
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
  SW_UNAUTHORIZED: {
    status: 401,
    meaning: 'The request has no API key, or the wrong one.',
    fix: 'Send Authorization: Bearer <key> with the key the harness was started with.',
  },
  SW_INVALID_REQUEST: {
    status: 400,
    meaning: 'A query parameter, path parameter or body is malformed (bad JSON, a value out of range).',
    fix: 'The message names the parameter and the allowed values.',
  },
  SW_PAYLOAD_TOO_LARGE: {
    status: 413,
    meaning: 'The request body is larger than the route allows (/run 10 MB, /runsync 20 MB).',
    fix: 'Send large inputs through s3Config or a URL instead of inline.',
  },
  SW_INPUT_TOO_DEEP: {
    status: 400,
    meaning: 'A job request body nests arrays and objects deeper than the harness accepts (1000 levels, MAX_JSON_DEPTH); refused before it was parsed.',
    fix: 'Flatten the input, or send the deep part as a JSON string; the message gives the limit and the depth found.',
  },
  SW_INPUT_TOO_MANY_KEYS: {
    status: 400,
    meaning: 'A job request body holds more object keys than the harness accepts (1 000 000, MAX_JSON_KEYS); refused before it was parsed.',
    fix: 'Send fewer keys (an array of values instead of an object of many keys), or upload the data and send its URL.',
  },
  SW_QUEUE_FULL: {
    status: 503,
    meaning: "The harness's queued job requests already hold --max-queued-bytes of request bodies; the job was not accepted.",
    fix: 'Retry after the Retry-After seconds (workers take jobs meanwhile), start more workers, or raise --max-queued-bytes (maxQueuedBytes) where the heap allows it.',
  },
  SW_RATE_LIMITED: {
    status: 429,
    meaning: 'The rate limit of this endpoint and operation was exceeded (requests per 10 s, or concurrent requests).',
    fix: 'Retry after the Retry-After header with exponential backoff.',
  },
  SW_ROUTE_NOT_FOUND: {
    status: 404,
    meaning: 'No route matches this path.',
    fix: 'Check the path against the routes in docs/guides/local-api.md (queue API under /v2/{endpoint_id}, management API under /v1).',
  },
  SW_DASHBOARD_UNAVAILABLE: {
    status: 503,
    meaning:
      "The dashboard at /ui cannot find its files: a bundle was copied without the sw-dashboard/ folder that serverless-worker build writes beside it, or the package's ui/ folder is missing.",
    fix: 'Copy the whole outdir of serverless-worker build (the bundle and its sw-dashboard/ folder) or reinstall the package; the message lists the folders looked in. The queue API works without it.',
  },
  SW_DOCS_UNAVAILABLE: {
    status: 503,
    meaning:
      "/docs cannot find Swagger UI's files: a bundle was copied without the sw-dashboard/swagger/ folder that serverless-worker build writes beside it, and swagger-ui-dist is not installed.",
    fix: 'Copy the whole outdir of serverless-worker build (the bundle and its sw-dashboard/ folder), or install swagger-ui-dist; the message lists the folders looked in. /openapi.json and the queue API work without it.',
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
  SW_NO_WORKER_AVAILABLE: {
    status: 400,
    meaning:
      'A load-balancing endpoint got a request while no healthy worker had room (none registered, all initializing or unhealthy, or all at their concurrency), as the platform answers 400; or `GET .../openai/v1/models` was called on an endpoint no worker serves (none running, idle or starting, none launched by the harness), answered at once instead of waiting.',
    fix: 'Retry later with backoff; start more workers, or check /v2/{endpoint_id}/health for their states.',
  },
  SW_LB_REQUEST_TIMEOUT: {
    status: 524,
    meaning: "A request to a load-balancing endpoint ran past the request time limit (default 330 000 ms, like the platform's about 5.5 minutes).",
    fix: 'Answer sooner (stream the answer), or raise the limit (--lb-request-timeout-ms, loadBalancing.requestTimeoutMs) locally; on the platform use a queue endpoint for long work.',
  },
  SW_WORKER_UNREACHABLE: {
    status: 502,
    meaning:
      'A load-balancing worker chosen for a request could not be reached or dropped the connection before answering; when no connection could be made at all (ECONNREFUSED, ETIMEDOUT, ...) it is taken out of the pool until its /ping answers 200 again, a dropped request leaves it to its /ping.',
    fix: "Look at that worker's logs (did it crash?); the request was not retried on another worker, as on the platform: send it again.",
  },
  // ---- management API ----
  SW_INVALID_TEMPLATE: {
    status: 400,
    meaning: 'A template create or update input (or a template file) does not match the template schema (spec 2.2, 2.3).',
    fix: 'The message names each bad field, what it allows and what it got; `serverless-worker template validate <file>` checks a file offline.',
  },
  SW_FIELD_NOT_UPDATABLE: {
    status: 400,
    meaning: 'An update named a field that cannot change after creation: category or isServerless of a template, dataCenterId of a network volume.',
    fix: 'Leave the field out of the update; to change it, create a new template (or volume) and point the endpoint at it.',
  },
  SW_TEMPLATE_NAME_TAKEN: {
    status: 400,
    meaning: 'Another template already has this name; template names are unique.',
    fix: 'Pick another name, or update the existing template (`serverless-worker template push` does this by name).',
  },
  SW_TEMPLATE_NOT_FOUND: {
    status: 404,
    meaning: 'No template with this id exists.',
    fix: 'List templates with GET /v1/templates and use an id from there.',
  },
  SW_TEMPLATE_IN_USE: {
    status: 409,
    meaning: 'A template that endpoints still use cannot be deleted.',
    fix: 'Delete those endpoints (their ids are in the error details) or point them at another template first.',
  },
  SW_INVALID_NETWORK_VOLUME: {
    status: 400,
    meaning: 'A network volume create or update input does not match the schema (spec 2.4: size 0 to 4000 GB).',
    fix: 'Send dataCenterId, name and an integer size from 0 to 4000 on create; only name and size on update.',
  },
  SW_NETWORK_VOLUME_SIZE_NOT_GREATER: {
    status: 400,
    meaning: 'A network volume can only grow: the new size must be greater than the current one.',
    fix: 'Send a size above the current size (see GET /v1/networkvolumes/{id}); to shrink, create a smaller volume and copy the data.',
  },
  SW_NETWORK_VOLUME_NOT_FOUND: {
    status: 404,
    meaning: 'No network volume with this id exists.',
    fix: 'List volumes with GET /v1/networkvolumes and use an id from there.',
  },
  SW_NETWORK_VOLUME_IN_USE: {
    status: 409,
    meaning: 'A network volume that endpoints still mount cannot be deleted.',
    fix: 'Delete those endpoints (their ids are in the error details) or detach the volume from them first.',
  },
  SW_INVALID_ENDPOINT: {
    status: 400,
    meaning: 'An endpoint create or update input does not match the schema (spec 2.6) or does not fit its template.',
    fix: 'The message names the field: templateId of a Serverless template, no gpuTypeIds on a CPU endpoint (computeType CPU; the category of the template does not restrict computeType), workersMin <= workersMax, idleTimeout in seconds, scalerType QUEUE_DELAY or REQUEST_COUNT, executionTimeoutMs 5 s to 7 days.',
  },
  SW_POD_NOT_FOUND: {
    status: 404,
    meaning: 'No pod (connected worker) with this id is known to the harness.',
    fix: 'List pods with GET /v1/pods; a worker shows up there only while it is connected.',
  },
  SW_MANAGEMENT_API_ERROR: {
    status: 502,
    meaning: 'The management API answered with an error this client does not know (another server, or a newer one).',
    fix: 'Read the server message and HTTP status in the error; check --base-url points at the management API (ending in /v1).',
  },
  SW_MANAGEMENT_UNREACHABLE: {
    status: 503,
    meaning: 'The management API could not be reached, timed out, or answered with something that is not its JSON.',
    fix: 'Check --base-url (or SERVERLESS_WORKER_API_URL) and that the harness or platform is up; the message names the URL and the cause.',
  },
  // ---- queue API ----
  SW_STORE_UNAVAILABLE: {
    status: 503,
    meaning:
      'The harness could not open its PostgreSQL job store (nothing answered at the address, or the server refused the login or the database), or, while running, cannot reach it now (down, restarting, refusing connections, or the connection was lost): the request is answered 503 with Retry-After and the log warns "job store unavailable" naming what is down.',
    fix: 'Retry after the Retry-After seconds. Check that PostgreSQL runs at the host and port the message names, and the user, password and database of --store (or SW_HARNESS_STORE); the password is never shown.',
  },
  SW_CLOCK_SKEW: {
    status: 503,
    meaning:
      "This machine's clock is further from PostgreSQL's than the bound (2 s): job deadlines (ttl, timeouts, retention, liveness) are shared through the database, so the harness refuses to open the store, or, after a reconnect, refuses job changes while reads still answer.",
    fix: "Sync this machine's clock (NTP) and start the harness again; the message gives the measured offset and its direction.",
  },
  SW_TARGET_REFUSED: {
    status: 403,
    meaning:
      'A URL the harness was asked to reach for a caller (a job webhook, a load-balancing worker) is the harness itself, a link-local or cloud metadata address, or an address its policy does not allow.',
    fix: 'Point it at another host; to reach a refused range on purpose, widen the policy: --webhook-allow / webhook.allow for webhooks, --lb-allow / loadBalancing.allow for load-balancing workers (CIDR ranges, addresses, loopback, link-local, metadata).',
  },
  SW_INSECURE_BIND: {
    status: 500,
    meaning: 'The harness was asked to listen on a non-loopback address without an API key: anyone on the network could submit jobs.',
    fix: 'Set an API key (--api-key or SERVERLESS_WORKER_API_KEY), bind 127.0.0.1, or pass --insecure-no-auth (allowUnauthenticatedNonLoopback) if you really mean it.',
  },
  SW_OPENAI_JOB_FAILED: {
    status: 502,
    meaning: 'The job behind an OpenAI-compatible request FAILED or was CANCELLED, so there is no OpenAI answer to give.',
    fix: "Read error.details.jobError (the worker's error payload) and fix the worker; check that it handles openai_route and openai_input.",
  },
  SW_OPENAI_JOB_TIMED_OUT: {
    status: 504,
    meaning:
      "The job behind an OpenAI-compatible request ran past its execution timeout, or did not end within the harness's OpenAI wait (then it was cancelled).",
    fix: 'Make the worker faster, make sure a worker is running for the endpoint, or raise the OpenAI wait (openaiTimeoutMs, --openai-timeout-ms).',
  },
  SW_HARNESS_CLOSING: {
    status: 503,
    meaning: 'The harness is shutting down (SIGTERM/SIGINT or close()) and answered a waiting request early.',
    fix: 'Send the request again once the harness is back; job ids from before a restart do not survive it.',
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

export type ErrorCode = keyof typeof ERROR_CODES;
