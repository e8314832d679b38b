/**
 * @module harness/openapi
 * `GET /openapi.json` (the queue API as OpenAPI 3.1, built per request so endpoints
 * created later appear) and `GET /docs` (Swagger UI on that document, its assets
 * loaded from node_modules only when asked for).
 * Layer: harness feature (docs/architecture.md): owns its routes; reads the dashboard's static files and input examples.
 */
import type { FastifyInstance } from 'fastify';
import { type Harness, RUNTIME_VERSION, ServerlessWorkerError } from 'serverless-worker/internal';
import { DOCS_ASSETS, DOCS_HTML, DOCS_INIT_JS, DOCS_LOGIN_CSS, readDocsAsset } from './docs-assets.js';
import { registerRoute } from '../http/route-spec.js';
import { OPENAPI_ROUTES } from './openapi-routes.js';
import { inputExample } from '../dashboard/input-example.js';
import { buildOpenApiDocument, type OpenApiEndpoint } from './openapi-document.js';

export { buildOpenApiDocument, toDocumentSchema, type OpenApiEndpoint, type OpenApiOptions } from './openapi-document.js';

/** Per endpoint: the input's JSON Schema for the document, and a check run at submission. */
export interface EndpointInputSpec {
  /** JSON Schema (draft 2020-12) of job input; default any object. */
  readonly jsonSchema?: Readonly<Record<string, unknown>>;
  /** Throws (400 SW_INPUT_VALIDATION) for input the endpoint refuses; default none (any input accepted, as on the platform). */
  readonly check?: (input: unknown) => void;
}

export interface OpenApiRoutesOptions {
  readonly harness: Harness;
  readonly endpointInputs: Readonly<Record<string, EndpointInputSpec>>;
  readonly rootEndpoint?: string | undefined;
  readonly authenticated: boolean;
  /** The worker's test input (test_input.json): every endpoint's example request; default one made from its input schema. */
  readonly testInput?: unknown;
  /** Endpoint names by id (the /v1 endpoints'), shown beside their ids; default none. */
  readonly endpointNames?: (() => Promise<Readonly<Record<string, string>>>) | undefined;
  /** Whether the server has the management API under /v1 (its routes are listed); default false. */
  readonly management?: boolean | undefined;
}

/** The example request "Try it out" starts from: the test input, else one made from the input schema, never placeholders like "webhook": "string". */
function requestExample(testInput: unknown, spec: EndpointInputSpec | undefined): unknown {
  if (testInput !== undefined) return testInput;
  return { input: spec?.jsonSchema ? inputExample(spec.jsonSchema) : {} };
}

export async function openApiRoutes(app: FastifyInstance, options: OpenApiRoutesOptions): Promise<void> {
  registerRoute(app, OPENAPI_ROUTES.document, async () => {
    const names = (await options.endpointNames?.()) ?? {};
    const ids = new Set<string>([...Object.keys(options.endpointInputs), ...[...options.harness.endpoints()].map((endpoint) => endpoint.id)]);
    if (options.rootEndpoint !== undefined) ids.add(options.rootEndpoint);
    const endpoints: OpenApiEndpoint[] = [...ids].sort().map((id) => {
      const spec = options.endpointInputs[id];
      return {
        id,
        ...(names[id] !== undefined ? { name: names[id] } : {}),
        checksInput: spec?.check !== undefined,
        ...(spec?.jsonSchema ? { inputSchema: spec.jsonSchema } : {}),
        requestExample: requestExample(options.testInput, spec),
      };
    });
    return buildOpenApiDocument({
      endpoints,
      authenticated: options.authenticated,
      version: RUNTIME_VERSION,
      management: options.management === true,
      ...(options.rootEndpoint !== undefined ? { rootEndpoint: options.rootEndpoint } : {}),
    });
  });

  // The page and Swagger UI's files are public (they hold no data: the page asks for the key); /openapi.json needs it.
  registerRoute(app, OPENAPI_ROUTES.page, async (_request, reply) => reply.type('text/html; charset=utf-8').send(DOCS_HTML));
  registerRoute(app, OPENAPI_ROUTES.init, async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(DOCS_INIT_JS));
  registerRoute(app, OPENAPI_ROUTES.login, async (_request, reply) => reply.type('text/css; charset=utf-8').send(DOCS_LOGIN_CSS));
  registerRoute(app, OPENAPI_ROUTES.asset, async (request, reply) => {
    const { file } = request.params as { file: string };
    const type = Object.hasOwn(DOCS_ASSETS, file) ? DOCS_ASSETS[file] : undefined;
    if (type === undefined) throw new ServerlessWorkerError('SW_ROUTE_NOT_FOUND', `No route GET /docs/${file}`, { path: `/docs/${file}` });
    return reply
      .type(type)
      .header('cache-control', 'public, max-age=3600')
      .send(await readDocsAsset(file));
  });
}
