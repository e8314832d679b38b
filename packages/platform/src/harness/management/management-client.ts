/**
 * @module harness/management/management-client
 * A typed client of the management API (`/v1`) over undici, for the harness and for
 * the platform alike. Every call is one route of the route table (management-routes.ts):
 * its path, method, input and reply types come from there. Replies are parsed with
 * the lenient reply schemas (only `id` required, unknown fields kept), since the
 * platform marks every record field optional. A failed call throws a
 * ServerlessWorkerError whose one-line message carries the server's message and code.
 */
import type { Dispatcher } from 'undici';
import * as z from 'zod';
import { isKnownErrorCode, ServerlessWorkerError } from 'serverless-worker/internal';
import '../../job/platform-error-codes.js';
import type { AnyRouteSpec, HttpMethod } from '../http/route-spec.js';
import { ENDPOINT_ROUTES, MANAGEMENT_ROUTES, NETWORK_VOLUME_ROUTES, POD_ROUTES, TEMPLATE_ROUTES } from './management-routes.js';
import {
  type EndpointCreateInput,
  type EndpointReply,
  type EndpointUpdateInput,
  type NetworkVolumeCreateInput,
  type NetworkVolumeReply,
  type NetworkVolumeUpdateInput,
  type PodReply,
  type TemplateCreateInput,
  type TemplateReply,
  type TemplateUpdateInput,
} from './schemas/index.js';

/** The harness's management API on its default port. */
export const DEFAULT_MANAGEMENT_API_URL = 'http://127.0.0.1:8000/v1';
/** Per-call time limit: 30 s. */
export const DEFAULT_MANAGEMENT_TIMEOUT_MS = 30_000;

export interface ManagementClientOptions {
  /** Base URL ending in `/v1`; default `http://127.0.0.1:8000/v1`. */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer <apiKey>`; default none. */
  apiKey?: string;
  /** Time limit of one call in ms (headers and body); default 30 000. */
  timeoutMs?: number;
  /** undici dispatcher (an Agent, a ProxyAgent); default undici's global one. */
  dispatcher?: Dispatcher;
}

const ClientOptionsSchema = z.object({
  baseUrl: z
    .url({ protocol: /^https?$/, error: 'baseUrl must be an http:// or https:// URL, like http://127.0.0.1:8000/v1' })
    .default(DEFAULT_MANAGEMENT_API_URL),
  apiKey: z.string().min(1, { error: 'apiKey must not be empty' }).optional(),
  timeoutMs: z.number().int().positive({ error: 'timeoutMs must be a positive whole number of milliseconds' }).default(DEFAULT_MANAGEMENT_TIMEOUT_MS),
});

/** Our error body, `{ error: { code, message, details? } }`. */
const CodedErrorBodySchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() }),
});
/** Other error bodies seen from HTTP APIs: `{ error: "..." }` or `{ message: "..." }`, with an optional code. */
const PlainErrorBodySchema = z.object({
  error: z.string().optional(),
  message: z.string().optional(),
  code: z.string().optional(),
});

/** Any route of the management API's table. */
type ManagementRoute = (typeof MANAGEMENT_ROUTES)[number];
/** A route's path parameters as the caller gives them (`{}` for a route without any). */
type ParamsOf<R extends AnyRouteSpec> = R['params'] extends z.ZodType ? z.input<R['params']> : Record<string, never>;
/** The body argument: present exactly for the routes that take a body. */
type BodyArgs<R extends AnyRouteSpec> = R['body'] extends z.ZodType ? [body: z.input<R['body']>] : [];
/** What the call resolves to: the reply as the client schema parses it, void for an empty answer. */
type ReplyOf<R extends AnyRouteSpec> = R['clientReply'] extends z.ZodType ? z.output<R['clientReply']> : void;

function oneLine(text: string, max = 500): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 3)}...` : flat;
}

export class ManagementClient {
  /** The validated base URL, without a trailing slash. */
  readonly baseUrl: string;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;
  readonly #dispatcher: Dispatcher | undefined;

  constructor(options: ManagementClientOptions = {}) {
    const parsed = ClientOptionsSchema.safeParse({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs,
    });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `ManagementClient: ${issue?.message ?? 'invalid options'}`);
    }
    this.baseUrl = parsed.data.baseUrl.replace(/\/+$/, '');
    this.#apiKey = parsed.data.apiKey;
    this.#timeoutMs = parsed.data.timeoutMs;
    this.#dispatcher = options.dispatcher;
  }

  // The named calls the CLI and users know, each one route of the table.

  /** POST /templates */
  createTemplate = (input: TemplateCreateInput): Promise<TemplateReply> => this.call(TEMPLATE_ROUTES.create, {}, input);
  /** POST /templates/{id}/update: absent fields keep their value; `category` and `isServerless` are refused. */
  updateTemplate = (id: string, input: TemplateUpdateInput): Promise<TemplateReply> => this.call(TEMPLATE_ROUTES.updatePost, { id }, input);
  /** GET /templates */
  listTemplates = (): Promise<TemplateReply[]> => this.call(TEMPLATE_ROUTES.list, {});
  /** GET /templates/{id} */
  getTemplate = (id: string): Promise<TemplateReply> => this.call(TEMPLATE_ROUTES.get, { id });
  /** DELETE /templates/{id} */
  deleteTemplate = (id: string): Promise<void> => this.call(TEMPLATE_ROUTES.delete, { id });
  /** The template with this exact name, or undefined (names are unique). */
  async findTemplateByName(name: string): Promise<TemplateReply | undefined> {
    return (await this.listTemplates()).find((template) => template.name === name);
  }

  /** POST /networkvolumes */
  createNetworkVolume = (input: NetworkVolumeCreateInput): Promise<NetworkVolumeReply> => this.call(NETWORK_VOLUME_ROUTES.create, {}, input);
  /** PATCH /networkvolumes/{id}: a new size must be greater than the current one. */
  updateNetworkVolume = (id: string, input: NetworkVolumeUpdateInput): Promise<NetworkVolumeReply> => this.call(NETWORK_VOLUME_ROUTES.update, { id }, input);
  /** GET /networkvolumes */
  listNetworkVolumes = (): Promise<NetworkVolumeReply[]> => this.call(NETWORK_VOLUME_ROUTES.list, {});
  /** GET /networkvolumes/{id} */
  getNetworkVolume = (id: string): Promise<NetworkVolumeReply> => this.call(NETWORK_VOLUME_ROUTES.get, { id });
  /** DELETE /networkvolumes/{id} */
  deleteNetworkVolume = (id: string): Promise<void> => this.call(NETWORK_VOLUME_ROUTES.delete, { id });

  /** POST /endpoints */
  createEndpoint = (input: EndpointCreateInput): Promise<EndpointReply> => this.call(ENDPOINT_ROUTES.create, {}, input);
  /** PATCH /endpoints/{id} */
  updateEndpoint = (id: string, input: EndpointUpdateInput): Promise<EndpointReply> => this.call(ENDPOINT_ROUTES.update, { id }, input);
  /** GET /endpoints */
  listEndpoints = (): Promise<EndpointReply[]> => this.call(ENDPOINT_ROUTES.list, {});
  /** GET /endpoints/{id} */
  getEndpoint = (id: string): Promise<EndpointReply> => this.call(ENDPOINT_ROUTES.get, { id });
  /** DELETE /endpoints/{id} */
  deleteEndpoint = (id: string): Promise<void> => this.call(ENDPOINT_ROUTES.delete, { id });

  /** GET /pods */
  listPods = (): Promise<PodReply[]> => this.call(POD_ROUTES.list, {});
  /** GET /pods/{id} */
  getPod = (id: string): Promise<PodReply> => this.call(POD_ROUTES.get, { id });

  // ---- transport ----

  /**
   * Call one route of the management API's table (management-routes.ts): its path
   * parameters, its body (for the routes that take one), and its reply parsed with the
   * route's client schema. The named methods above are this with the route filled in.
   */
  async call<R extends ManagementRoute>(route: R, params: ParamsOf<R>, ...body: BodyArgs<R>): Promise<ReplyOf<R>> {
    const values: Record<string, unknown> = params;
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, (_match, name: string) => encodeURIComponent(String(values[name])));
    const answer = await this.#send(route.method, path, body[0]);
    // A route without a reply schema (a delete: 204) has nothing to read.
    if (route.clientReply === undefined) return undefined as ReplyOf<R>;
    return this.#parse(route.clientReply, answer, route.method, `${this.baseUrl}${path}`) as ReplyOf<R>;
  }

  async #send(method: HttpMethod, path: string, body: unknown): Promise<{ status: number; json: unknown }> {
    const url = `${this.baseUrl}${path}`;
    const where = `${method} ${url}`;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.#apiKey !== undefined) headers.authorization = `Bearer ${this.#apiKey}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let status: number;
    let text: string;
    try {
      // Loaded on first call: the package index exports this client, and a worker that imports the index must not load undici for it.
      const { request } = await import('undici');
      const response = await request(url, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.#timeoutMs),
        ...(this.#dispatcher ? { dispatcher: this.#dispatcher } : {}),
      });
      status = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      const cause = error as { code?: string; name?: string; message?: string };
      const reason = cause.name === 'TimeoutError' ? `no answer within ${this.#timeoutMs} ms` : (cause.code ?? cause.message ?? String(error));
      throw new ServerlessWorkerError(
        'SW_MANAGEMENT_UNREACHABLE',
        `Cannot reach the management API: ${where}: ${oneLine(reason)}`,
        { method, url },
        { cause: error },
      );
    }
    if (status >= 400) throw this.#failure(status, text, method, url);
    if (status === 204 || text.length === 0) return { status, json: undefined };
    try {
      return { status, json: JSON.parse(text) };
    } catch {
      throw new ServerlessWorkerError(
        'SW_MANAGEMENT_UNREACHABLE',
        `The management API answered ${where} with HTTP ${status} and a body that is not JSON: ${oneLine(text, 120)}`,
        { method, url, httpStatus: status },
      );
    }
  }

  #parse(schema: z.ZodType, answer: { status: number; json: unknown }, method: HttpMethod, url: string): unknown {
    const parsed = schema.safeParse(answer.json);
    if (parsed.success) return parsed.data;
    throw new ServerlessWorkerError(
      'SW_MANAGEMENT_UNREACHABLE',
      `The management API answered ${method} ${url} with an unexpected body: ${oneLine(parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; '), 200)}`,
      { method, url, httpStatus: answer.status },
    );
  }

  #failure(status: number, text: string, method: HttpMethod, url: string): ServerlessWorkerError {
    let serverCode: string | undefined;
    let message = oneLine(text, 300) || '(empty body)';
    let serverDetails: Record<string, unknown> | undefined;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      // Not JSON: the text itself is the message.
    }
    const coded = CodedErrorBodySchema.safeParse(json);
    const plain = PlainErrorBodySchema.safeParse(json);
    if (coded.success) {
      serverCode = coded.data.error.code;
      message = oneLine(coded.data.error.message);
      serverDetails = coded.data.error.details;
    } else if (plain.success && (plain.data.error ?? plain.data.message) !== undefined) {
      serverCode = plain.data.code;
      message = oneLine(plain.data.error ?? plain.data.message ?? '');
    }
    // A base URL without /v1 reaches the server's other routes: its 404 says what to add.
    const hint =
      status === 404 && !/\/v1$/.test(this.baseUrl) && (serverCode === undefined || serverCode === 'SW_ROUTE_NOT_FOUND')
        ? `; the base URL ${this.baseUrl} does not end in /v1, where the management API is: set SERVERLESS_WORKER_API_URL (or --base-url) to ${this.baseUrl}/v1`
        : '';
    const line = `${message} (${serverCode ? `${serverCode}; ` : ''}HTTP ${status} from ${method} ${url})${hint}`;
    const details = { httpStatus: status, method, url, ...(serverCode ? { serverCode } : {}), ...(serverDetails ? { serverDetails } : {}) };
    return new ServerlessWorkerError(serverCode !== undefined && isKnownErrorCode(serverCode) ? serverCode : 'SW_MANAGEMENT_API_ERROR', line, details);
  }
}

export interface ManagementClientFromEnvOptions {
  /** Overrides SERVERLESS_WORKER_API_URL; the CLI's `--base-url`. */
  baseUrl?: string;
  /** Overrides SERVERLESS_WORKER_API_KEY and RUNPOD_API_KEY; the CLI's `--api-key`. */
  apiKey?: string;
  /** Environment to read; default process.env. */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/**
 * A client configured as the CLI is: base URL from the option, else
 * SERVERLESS_WORKER_API_URL, else http://127.0.0.1:8000/v1; API key from the option,
 * else SERVERLESS_WORKER_API_KEY, else RUNPOD_API_KEY, else none.
 */
export function managementClientFromEnv(options: ManagementClientFromEnvOptions = {}): ManagementClient {
  const env = options.env ?? process.env;
  const baseUrl = options.baseUrl ?? (env.SERVERLESS_WORKER_API_URL || undefined) ?? DEFAULT_MANAGEMENT_API_URL;
  const apiKey = options.apiKey ?? (env.SERVERLESS_WORKER_API_KEY || env.RUNPOD_API_KEY || undefined);
  return new ManagementClient({
    baseUrl,
    ...(apiKey ? { apiKey } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
}
