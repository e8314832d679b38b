/**
 * @module job/platform-error-codes
 * The error codes the platform package raises and the SDK does not: its HTTP boundary,
 * management API, load balancing, job store and commands. They are the platform's own, so
 * that a new one needs no SDK release; on load this module adds them to the SDK's registry
 * (registerErrorCodes: their HTTP status, and the type ErrorCode through the augmentation
 * below), and docs/reference/error-codes.md's one table lists both tables together
 * (scripts/reference-pages.ts). The platform's entry points and its HTTP error handler
 * import it, so that the codes are known before any request is answered.
 */
import { type ErrorCodeEntry, registerErrorCodes } from 'serverless-worker/internal';

export const PLATFORM_ERROR_CODES = {
  SW_WORKER_START_FAILED: {
    status: 500,
    meaning:
      "No worker of the job's endpoint could start for the launcher's `startFailureTimeoutMs` (default 3 min): the backend cannot start one (a Docker image missing from the engine), or every worker exited during start-up (a command that fails, an image whose entrypoint exits), so the job failed instead of waiting IN_QUEUE until its ttl. The message gives the launcher's reason.",
    fix: "Fix what the reason names (build or pull the image, fix the `--image` command, read the endpoint's worker logs at /v2/<endpoint>/logs), then /retry the job; `startFailureTimeoutMs` in the launcher config (or `--start-failure-timeout-ms`) sets how long jobs wait first.",
  },
  SW_BUILD_FAILED: {
    status: 500,
    meaning:
      '`serverless-worker build` could not bundle the worker: the entry file is missing, or esbuild reported errors (a syntax error, an import it cannot resolve).',
    fix: 'The message names the file and line esbuild stopped at; run `npm install` when it names a package, and pass the file that calls serve() as the entry.',
  },
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
  SW_STREAM_INDEX_AHEAD: {
    status: 400,
    meaning:
      "A worker's job-stream post carried a `metrics.stream_index` more than 64 past the next chunk the job expects, or came while the job already held 64 chunks waiting for an earlier one: the harness stores a job's chunks in index order and holds a chunk that came early only that far. The details name the index, the expected one and the limits.",
    fix: 'A worker keeps at most its chunk window (`chunkWindow`, at most 64) of posts in flight and numbers its chunks from 0 each attempt; a worker of another kind must post its chunks in order, or leave `stream_index` out.',
  },
  SW_INVALID_STREAM_BATCH: {
    status: 400,
    meaning:
      "A worker's job-stream post was a JSON array (several chunks in one post, which the harness advertises on job-take answers as `x-sw-stream-batch: 64`) but not as that form is designed: empty or over 64 items, an item that is not an object of `output` and `metrics` alone, a `metrics.stream_index` that is missing, not a whole number or not one more than the item before it, or an output over 1 MiB. Nothing of the post was stored. The details name the item (from 0) and what was wrong.",
    fix: 'Send each item as `{"output": ..., "metrics": {"stream_index": N, ...}}` with consecutive indexes, at most 64 items and 1 MiB of output each, or post the chunks one at a time (`{"output": ...}`).',
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
  SW_RATE_LIMITED: {
    status: 429,
    meaning: 'The rate limit of this endpoint and operation was exceeded (requests per 10 s, or concurrent requests).',
    fix: 'Retry after the Retry-After header with exponential backoff.',
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
  SW_INVALID_TEMPLATE: {
    status: 400,
    meaning:
      'A template create or update input (or a template file) does not match the template schema (the fields the platform takes to create and update a template).',
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
    meaning: 'A network volume create or update input does not match the schema (the fields of a network volume on the platform: size 0 to 4000 GB).',
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
    meaning: 'An endpoint create or update input does not match the schema (the fields of an endpoint on the platform) or does not fit its template.',
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
} as const satisfies Record<string, ErrorCodeEntry>;

/** A code of the platform's table. */
export type PlatformErrorCode = keyof typeof PLATFORM_ERROR_CODES;

declare module 'serverless-worker/internal' {
  // The platform's codes join the SDK's ErrorCode (the SDK's RegisteredErrorCodes is there for this).
  // oxlint-disable-next-line typescript/no-empty-object-type -- a merge: its members are the supertype's
  interface RegisteredErrorCodes extends Record<PlatformErrorCode, true> {}
}

registerErrorCodes(PLATFORM_ERROR_CODES);
