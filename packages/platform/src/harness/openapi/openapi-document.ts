/**
 * @module harness/openapi/openapi-document
 * The OpenAPI 3.1 document served at `/openapi.json`: the queue API of each endpoint
 * (run, runsync, status, status-sync, stream, cancel, retry, purge-queue, requests,
 * health), each endpoint under its name where it has one, the management API (/v1)
 * when the server has it, with the job input's JSON Schema
 * where the endpoint's worker declared one (`--serve-api` passes the worker's zod
 * inputSchema through z.toJSONSchema), and a free-form object elsewhere.
 *
 * What a refused input gets is said per endpoint, because it differs: where the
 * server checks input at submission (`--serve-api`), /run and /runsync answer 400
 * SW_INPUT_VALIDATION; elsewhere (the harness, like the platform) any JSON object is
 * accepted and a worker with a schema FAILS the job (error_code SW_INPUT_VALIDATION),
 * so /runsync answers 200 with status FAILED.
 */
import * as z from 'zod';
import { JOB_STATUSES, JobRequestSchema, RUNSYNC_WAIT_MS } from 'serverless-worker/internal';
import { MANAGEMENT_TAG, managementPaths } from './management-paths.js';

/** What the document knows about one endpoint. */
export interface OpenApiEndpoint {
  readonly id: string;
  /** Its name (an endpoint made through /v1), shown beside its id. */
  readonly name?: string | undefined;
  /** JSON Schema of `input` (draft 2020-12); default any JSON object. */
  readonly inputSchema?: Readonly<Record<string, unknown>>;
  /** True when the server refuses bad input at submission with 400 SW_INPUT_VALIDATION. */
  readonly checksInput: boolean;
  /** The example request of /run and /runsync (Swagger's "Try it out" starts from it); default Swagger's own from the schema. */
  readonly requestExample?: unknown;
}

export interface OpenApiOptions {
  readonly endpoints: readonly OpenApiEndpoint[];
  /** The endpoint whose queue API is served at the root too (`--serve-api`); default none. */
  readonly rootEndpoint?: string;
  /** Whether the routes need an API key. */
  readonly authenticated: boolean;
  /** The runtime version, as info.version. */
  readonly version: string;
  /** Whether the server has the management API under /v1 (its routes are listed); default false. */
  readonly management?: boolean;
}

type Schema = Record<string, unknown>;

/** A zod schema as JSON Schema for the document (no `$schema` key: OpenAPI 3.1 sets the dialect). */
export function toDocumentSchema(schema: z.ZodType): Schema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Schema;
  return rest;
}

const ANY_INPUT: Schema = { type: 'object', description: 'Any JSON object: this endpoint declares no input schema.' };

const JOB_STATUS: Schema = { type: 'string', enum: [...JOB_STATUSES] };

const COMPONENTS = {
  schemas: {
    JobStatus: JOB_STATUS,
    Submitted: {
      type: 'object',
      required: ['id', 'status'],
      properties: { id: { type: 'string' }, status: { $ref: '#/components/schemas/JobStatus' } },
    },
    JobRecord: {
      type: 'object',
      required: ['id', 'status'],
      properties: {
        id: { type: 'string' },
        status: { $ref: '#/components/schemas/JobStatus' },
        output: { description: "The handler's output (COMPLETED); for a streaming handler, its yields when aggregateStream is on." },
        error: {
          type: 'string',
          description:
            "FAILED: the worker's error payload as JSON text: error_type, error_message, error_code (SW_HANDLER_ERROR, SW_INPUT_VALIDATION, ...), issues, error_traceback.",
        },
        delayTime: { type: 'integer', description: 'ms from submission to the start of execution' },
        executionTime: { type: 'integer', description: 'ms of execution' },
        retries: { type: 'integer' },
      },
    },
    Stream: {
      type: 'object',
      required: ['status', 'stream'],
      properties: {
        status: { $ref: '#/components/schemas/JobStatus' },
        stream: { type: 'array', items: { type: 'object', properties: { output: {} } }, description: 'Chunks since the previous call.' },
      },
    },
    Requests: {
      type: 'object',
      required: ['requests'],
      properties: {
        requests: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'status'],
            properties: { id: { type: 'string' }, status: { $ref: '#/components/schemas/JobStatus' }, submittedAt: { type: 'string', format: 'date-time' } },
          },
        },
      },
    },
    Purged: {
      type: 'object',
      required: ['removed'],
      properties: { removed: { type: 'integer', description: 'Queued jobs removed.' }, status: { type: 'string' } },
    },
    ManagementRecord: { type: 'object', description: 'A template, network volume, endpoint or pod record, as the platform REST API answers it.' },
    Health: {
      type: 'object',
      required: ['jobs', 'workers'],
      properties: {
        jobs: { type: 'object', additionalProperties: { type: 'integer' } },
        workers: { type: 'object', additionalProperties: { type: 'integer' } },
      },
    },
    Error: {
      type: 'object',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { type: 'string', description: 'A stable SW_... code (see the README error table).' },
            message: { type: 'string' },
            details: { type: 'object' },
          },
        },
      },
    },
  },
  responses: {
    BadRequest: { description: 'Malformed request: SW_INVALID_JOB_REQUEST, SW_INVALID_REQUEST.', content: json('#/components/schemas/Error') },
    Unauthorized: { description: 'Missing or wrong API key: SW_UNAUTHORIZED.', content: json('#/components/schemas/Error') },
    NotFound: { description: 'No such job (or its retention elapsed): SW_JOB_NOT_FOUND.', content: json('#/components/schemas/Error') },
    TooLarge: { description: 'Body over the route limit (/run 10 MB, /runsync 20 MB): SW_PAYLOAD_TOO_LARGE.', content: json('#/components/schemas/Error') },
    RateLimited: { description: 'Rate limit exceeded: SW_RATE_LIMITED; see Retry-After.', content: json('#/components/schemas/Error') },
  },
  securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'The API key the server was started with.' } },
};

function json(ref: string): Schema {
  return { 'application/json': { schema: { $ref: ref } } };
}

function requestSchemaFor(endpoint: OpenApiEndpoint): Schema {
  const request = toDocumentSchema(JobRequestSchema);
  const properties = { ...(request.properties as Schema), input: endpoint.inputSchema ?? ANY_INPUT };
  return { ...request, properties };
}

function badInputNote(endpoint: OpenApiEndpoint): string {
  return endpoint.checksInput
    ? 'Input that fails the schema is refused at submission: 400 with error.code SW_INPUT_VALIDATION and error.details.issues; no job is created.'
    : 'Any JSON object is accepted as input (as on the platform). A worker whose schema refuses it FAILS the job with error_code SW_INPUT_VALIDATION: /runsync then answers 200 with status FAILED.';
}

function operations(endpoint: OpenApiEndpoint, base: string, tag: string, suffix: string): Record<string, Schema> {
  const key = `${endpoint.id}${suffix}`.replace(/[^A-Za-z0-9_]/g, '_');
  const schemaRef = `#/components/schemas/JobRequest_${endpoint.id.replace(/[^A-Za-z0-9_]/g, '_')}`;
  const body = {
    required: true,
    content: { 'application/json': { schema: { $ref: schemaRef }, ...(endpoint.requestExample !== undefined ? { example: endpoint.requestExample } : {}) } },
  };
  const badRequest = endpoint.checksInput
    ? { description: `SW_INVALID_JOB_REQUEST (not a job request), SW_INPUT_VALIDATION (input fails the schema).`, content: json('#/components/schemas/Error') }
    : { $ref: '#/components/responses/BadRequest' };
  const common = { '401': { $ref: '#/components/responses/Unauthorized' }, '429': { $ref: '#/components/responses/RateLimited' } };
  const jobId = { name: 'jobId', in: 'path', required: true, schema: { type: 'string' } };
  const wait = (what: string, max: number) => ({
    name: 'wait',
    in: 'query',
    required: false,
    description: what,
    schema: { type: 'integer', minimum: 0, maximum: max },
  });
  return {
    [`${base}/run`]: {
      post: {
        tags: [tag],
        operationId: `run_${key}`,
        summary: 'Submit a job; answers at once with its id.',
        description: badInputNote(endpoint),
        requestBody: body,
        responses: {
          '200': { description: 'Queued.', content: json('#/components/schemas/Submitted') },
          '400': badRequest,
          '413': { $ref: '#/components/responses/TooLarge' },
          ...common,
        },
      },
    },
    [`${base}/runsync`]: {
      post: {
        tags: [tag],
        operationId: `runsync_${key}`,
        summary: 'Submit a job and wait for it (up to ?wait= ms).',
        description: `${badInputNote(endpoint)} When the wait elapses first, the answer has only id and status; poll /status.`,
        parameters: [wait(`ms to wait, default ${RUNSYNC_WAIT_MS.default}`, RUNSYNC_WAIT_MS.max)],
        requestBody: body,
        responses: {
          '200': {
            description: 'The job record (COMPLETED, FAILED, ...), or id and status when the wait elapsed.',
            content: json('#/components/schemas/JobRecord'),
          },
          '400': badRequest,
          '413': { $ref: '#/components/responses/TooLarge' },
          ...common,
        },
      },
    },
    [`${base}/status/{jobId}`]: {
      get: {
        tags: [tag],
        operationId: `status_${key}`,
        summary: "A job's status and, once it ended, its output or error.",
        parameters: [jobId],
        responses: {
          '200': { description: 'The job record.', content: json('#/components/schemas/JobRecord') },
          '404': { $ref: '#/components/responses/NotFound' },
          ...common,
        },
      },
    },
    [`${base}/stream/{jobId}`]: {
      get: {
        tags: [tag],
        operationId: `stream_${key}`,
        summary: 'Stream chunks since the previous call (long-polls up to ?wait= ms when none are unread).',
        parameters: [jobId, wait('ms to wait for a chunk', RUNSYNC_WAIT_MS.max)],
        responses: {
          '200': { description: 'Status and new chunks.', content: json('#/components/schemas/Stream') },
          '404': { $ref: '#/components/responses/NotFound' },
          ...common,
        },
      },
    },
    [`${base}/cancel/{jobId}`]: {
      post: {
        tags: [tag],
        operationId: `cancel_${key}`,
        summary: 'Cancel a queued or running job.',
        parameters: [jobId],
        responses: {
          '200': { description: 'Cancelled.', content: json('#/components/schemas/Submitted') },
          '404': { $ref: '#/components/responses/NotFound' },
          '409': { description: 'The job has already ended: SW_CANCEL_NOT_ALLOWED.', content: json('#/components/schemas/Error') },
          ...common,
        },
      },
    },
    [`${base}/status-sync/{jobId}`]: {
      get: {
        tags: [tag],
        operationId: `status_sync_${key}`,
        summary: "A job's status, waiting up to ?wait= ms for it to end.",
        parameters: [jobId, wait(`ms to wait, default ${RUNSYNC_WAIT_MS.default}`, RUNSYNC_WAIT_MS.max)],
        responses: {
          '200': { description: 'The job record (its end, or its status when the wait elapsed).', content: json('#/components/schemas/JobRecord') },
          '404': { $ref: '#/components/responses/NotFound' },
          ...common,
        },
      },
    },
    [`${base}/retry/{jobId}`]: {
      post: {
        tags: [tag],
        operationId: `retry_${key}`,
        summary: 'Run a FAILED or TIMED_OUT job again with the same input (back at the end of the queue).',
        parameters: [jobId],
        responses: {
          '200': { description: 'Queued again.', content: json('#/components/schemas/Submitted') },
          '404': { $ref: '#/components/responses/NotFound' },
          '409': { description: 'The job is not FAILED or TIMED_OUT: SW_RETRY_NOT_ALLOWED.', content: json('#/components/schemas/Error') },
          ...common,
        },
      },
    },
    [`${base}/purge-queue`]: {
      post: {
        tags: [tag],
        operationId: `purge_queue_${key}`,
        summary: 'Remove every queued job (running ones go on).',
        responses: { '200': { description: 'How many were removed.', content: json('#/components/schemas/Purged') }, ...common },
      },
    },
    [`${base}/requests`]: {
      get: {
        tags: [tag],
        operationId: `requests_${key}`,
        summary: 'The jobs kept, newest first (?status= comma-separated states, ?limit=).',
        parameters: [
          { name: 'status', in: 'query', required: false, description: 'Comma-separated states, default all.', schema: { type: 'string' } },
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1 } },
        ],
        responses: { '200': { description: 'The jobs.', content: json('#/components/schemas/Requests') }, ...common },
      },
    },
    [`${base}/health`]: {
      get: {
        tags: [tag],
        operationId: `health_${key}`,
        summary: 'Job and worker counts of the endpoint.',
        responses: { '200': { description: 'Counts.', content: json('#/components/schemas/Health') }, ...common },
      },
    },
  };
}

/** An endpoint as the docs show it: its name and id, or its id. */
function endpointLabel(endpoint: OpenApiEndpoint): string {
  return endpoint.name !== undefined ? `${endpoint.name} (${endpoint.id})` : endpoint.id;
}

/** The whole document. */
export function buildOpenApiDocument(options: OpenApiOptions): Schema {
  const paths: Record<string, Schema> = {};
  const schemas: Record<string, Schema> = { ...COMPONENTS.schemas };
  const tags: Schema[] = [];
  for (const endpoint of options.endpoints) {
    const tag = `endpoint ${endpointLabel(endpoint)}`;
    tags.push({ name: tag, description: `The queue API of endpoint ${endpointLabel(endpoint)} under /v2/${endpoint.id}.` });
    schemas[`JobRequest_${endpoint.id.replace(/[^A-Za-z0-9_]/g, '_')}`] = requestSchemaFor(endpoint);
    Object.assign(paths, operations(endpoint, `/v2/${endpoint.id}`, tag, ''));
    if (options.rootEndpoint === endpoint.id) {
      const rootTag = `endpoint ${endpointLabel(endpoint)} at the root`;
      tags.push({ name: rootTag, description: `The same queue API of endpoint ${endpoint.id}, at the root (as the Python SDK's local API).` });
      Object.assign(paths, operations(endpoint, '', rootTag, '_root'));
    }
  }
  if (options.management === true) {
    tags.push({
      name: MANAGEMENT_TAG,
      description: 'Templates, network volumes, endpoints and pods, as the platform REST API (an endpoint made here serves its queue API under /v2/{its id}).',
    });
    Object.assign(paths, managementPaths());
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'serverless-worker queue API',
      version: options.version,
      description:
        'The queue API of the endpoints this server knows (the serverless queue API of the platform), each under its name where it has one: /run, /runsync, /status/{jobId}, /status-sync/{jobId}, /stream/{jobId}, ' +
        '/cancel/{jobId}, /retry/{jobId}, /purge-queue, /requests, /health' +
        (options.management === true ? '; and the management API under /v1.' : '.') +
        ' Endpoints created later appear on the next request of this document. The dashboard is at /ui.',
    },
    servers: [{ url: '/' }],
    ...(options.authenticated ? { security: [{ apiKey: [] }] } : {}),
    tags,
    paths,
    components: { ...COMPONENTS, schemas },
  };
}
