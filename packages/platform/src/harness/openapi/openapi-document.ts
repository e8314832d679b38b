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
 *
 * The paths, their parameters, bodies and replies come from the route tables
 * (queue-api/queue-routes.ts, management/management-routes.ts), the same declarations
 * the server registers its routes from; this file adds what differs per endpoint.
 */
import * as z from 'zod';
import { JOB_STATUSES, JobRequestSchema } from 'serverless-worker/internal';
import { MANAGEMENT_ROUTES, MANAGEMENT_TAG } from '../management/management-routes.js';
import { QUEUE_API_ROUTES, ROOT_QUEUE_ROUTES } from '../queue-api/queue-routes.js';
import { fullPath, openApiPath } from '../http/route-spec.js';
import { jsonSchemaOf, nameRecords, routeOperation, type NamedSchemas } from './route-operation.js';

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
  return jsonSchemaOf(schema, 'input');
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
    Logs: {
      type: 'object',
      required: ['lines'],
      properties: {
        lines: {
          type: 'array',
          items: {
            type: 'object',
            required: ['at', 'workerId', 'stream', 'line', 'seq'],
            properties: {
              at: { type: 'integer', description: 'Epoch ms the harness read the line.' },
              workerId: { type: 'string' },
              stream: { type: 'string', enum: ['stdout', 'stderr', 'launcher'] },
              line: { type: 'string' },
              seq: { type: 'integer', description: 'The order the lines were read in.' },
            },
          },
        },
      },
    },
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

/** The queue API of `endpoint` under `base` (`/v2/<id>`, or the root): each route of the table with this endpoint's request schema and input rule. */
function operations(endpoint: OpenApiEndpoint, base: string, tag: string, suffix: string, named: NamedSchemas): Record<string, Schema> {
  const key = `${endpoint.id}${suffix}`.replace(/[^A-Za-z0-9_]/g, '_');
  const schemaRef = `#/components/schemas/JobRequest_${endpoint.id.replace(/[^A-Za-z0-9_]/g, '_')}`;
  const body = {
    required: true,
    content: { 'application/json': { schema: { $ref: schemaRef }, ...(endpoint.requestExample !== undefined ? { example: endpoint.requestExample } : {}) } },
  };
  const badRequest = endpoint.checksInput
    ? { description: `SW_INVALID_JOB_REQUEST (not a job request), SW_INPUT_VALIDATION (input fails the schema).`, content: json('#/components/schemas/Error') }
    : { $ref: '#/components/responses/BadRequest' };
  const paths: Record<string, Schema> = {};
  for (const route of base === '' ? ROOT_QUEUE_ROUTES : QUEUE_API_ROUTES) {
    const path = openApiPath(`${base}${route.path.replace(/^\/:endpointId/, '')}`);
    const operation = routeOperation(route, { operationId: `${route.operationId}_${key}`, tag, named, fixedParams: ['endpointId'] });
    if (route.body !== undefined) {
      // The job request: this endpoint's input schema, and what its refused input gets.
      operation.requestBody = body;
      operation.description = [badInputNote(endpoint), route.description].filter((text) => text !== undefined).join(' ');
      (operation.responses as Schema)['400'] = badRequest;
    }
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation };
  }
  return paths;
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
  const named: NamedSchemas = { schemas, names: new Map() };
  for (const endpoint of options.endpoints) {
    const tag = `endpoint ${endpointLabel(endpoint)}`;
    tags.push({ name: tag, description: `The queue API of endpoint ${endpointLabel(endpoint)} under /v2/${endpoint.id}.` });
    schemas[`JobRequest_${endpoint.id.replace(/[^A-Za-z0-9_]/g, '_')}`] = requestSchemaFor(endpoint);
    Object.assign(paths, operations(endpoint, `/v2/${endpoint.id}`, tag, '', named));
    if (options.rootEndpoint === endpoint.id) {
      const rootTag = `endpoint ${endpointLabel(endpoint)} at the root`;
      tags.push({ name: rootTag, description: `The same queue API of endpoint ${endpoint.id}, at the root (as the Python SDK's local API).` });
      Object.assign(paths, operations(endpoint, '', rootTag, '_root', named));
    }
  }
  if (options.management === true) {
    tags.push({
      name: MANAGEMENT_TAG,
      description: 'Templates, network volumes, endpoints and pods, as the platform REST API (an endpoint made here serves its queue API under /v2/{its id}).',
    });
    nameRecords(MANAGEMENT_ROUTES, named);
    for (const route of MANAGEMENT_ROUTES) {
      const path = openApiPath(fullPath(route));
      paths[path] = { ...paths[path], [route.method.toLowerCase()]: routeOperation(route, { operationId: route.operationId, tag: MANAGEMENT_TAG, named }) };
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'serverless-worker queue API',
      version: options.version,
      description:
        'The queue API of the endpoints this server knows (the serverless queue API of the platform), each under its name where it has one: /run, /runsync, /status/{jobId}, /status-sync/{jobId}, /stream/{jobId}, ' +
        '/cancel/{jobId}, /retry/{jobId}, /purge-queue, /requests, /health, /logs' +
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
