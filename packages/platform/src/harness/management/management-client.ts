/**
 * @module harness/management/management-client
 * A typed client of the management API (`/v1`) over undici, for the harness and for
 * the platform alike. Inputs are typed from the zod schemas; replies are parsed with
 * the lenient reply schemas (only `id` required, unknown fields kept), since the
 * platform marks every record field optional. A failed call throws a
 * ServerlessWorkerError whose one-line message carries the server's message and code.
 */
import type { Dispatcher } from 'undici';
import * as z from 'zod';
import { isKnownErrorCode, ServerlessWorkerError } from 'serverless-worker/internal';
import '../../job/platform-error-codes.js';
import {
  EndpointReplySchema,
  NetworkVolumeReplySchema,
  PodReplySchema,
  TemplateReplySchema,
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

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

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

  // ---- templates ----

  /** POST /templates */
  createTemplate(input: TemplateCreateInput): Promise<TemplateReply> {
    return this.#call('POST', '/templates', TemplateReplySchema, input);
  }
  /** POST /templates/{id}/update: absent fields keep their value; `category` and `isServerless` are refused. */
  updateTemplate(id: string, input: TemplateUpdateInput): Promise<TemplateReply> {
    return this.#call('POST', `/templates/${encodeURIComponent(id)}/update`, TemplateReplySchema, input);
  }
  /** GET /templates */
  listTemplates(): Promise<TemplateReply[]> {
    return this.#call('GET', '/templates', z.array(TemplateReplySchema));
  }
  /** GET /templates/{id} */
  getTemplate(id: string): Promise<TemplateReply> {
    return this.#call('GET', `/templates/${encodeURIComponent(id)}`, TemplateReplySchema);
  }
  /** The template with this exact name, or undefined (names are unique). */
  async findTemplateByName(name: string): Promise<TemplateReply | undefined> {
    return (await this.listTemplates()).find((template) => template.name === name);
  }
  /** DELETE /templates/{id} */
  deleteTemplate(id: string): Promise<void> {
    return this.#call('DELETE', `/templates/${encodeURIComponent(id)}`, z.unknown()).then(() => undefined);
  }

  // ---- network volumes ----

  /** POST /networkvolumes */
  createNetworkVolume(input: NetworkVolumeCreateInput): Promise<NetworkVolumeReply> {
    return this.#call('POST', '/networkvolumes', NetworkVolumeReplySchema, input);
  }
  /** PATCH /networkvolumes/{id}: a new size must be greater than the current one. */
  updateNetworkVolume(id: string, input: NetworkVolumeUpdateInput): Promise<NetworkVolumeReply> {
    return this.#call('PATCH', `/networkvolumes/${encodeURIComponent(id)}`, NetworkVolumeReplySchema, input);
  }
  /** GET /networkvolumes */
  listNetworkVolumes(): Promise<NetworkVolumeReply[]> {
    return this.#call('GET', '/networkvolumes', z.array(NetworkVolumeReplySchema));
  }
  /** GET /networkvolumes/{id} */
  getNetworkVolume(id: string): Promise<NetworkVolumeReply> {
    return this.#call('GET', `/networkvolumes/${encodeURIComponent(id)}`, NetworkVolumeReplySchema);
  }
  /** DELETE /networkvolumes/{id} */
  deleteNetworkVolume(id: string): Promise<void> {
    return this.#call('DELETE', `/networkvolumes/${encodeURIComponent(id)}`, z.unknown()).then(() => undefined);
  }

  // ---- endpoints ----

  /** POST /endpoints */
  createEndpoint(input: EndpointCreateInput): Promise<EndpointReply> {
    return this.#call('POST', '/endpoints', EndpointReplySchema, input);
  }
  /** PATCH /endpoints/{id} */
  updateEndpoint(id: string, input: EndpointUpdateInput): Promise<EndpointReply> {
    return this.#call('PATCH', `/endpoints/${encodeURIComponent(id)}`, EndpointReplySchema, input);
  }
  /** GET /endpoints */
  listEndpoints(): Promise<EndpointReply[]> {
    return this.#call('GET', '/endpoints', z.array(EndpointReplySchema));
  }
  /** GET /endpoints/{id} */
  getEndpoint(id: string): Promise<EndpointReply> {
    return this.#call('GET', `/endpoints/${encodeURIComponent(id)}`, EndpointReplySchema);
  }
  /** DELETE /endpoints/{id} */
  deleteEndpoint(id: string): Promise<void> {
    return this.#call('DELETE', `/endpoints/${encodeURIComponent(id)}`, z.unknown()).then(() => undefined);
  }

  // ---- pods ----

  /** GET /pods */
  listPods(): Promise<PodReply[]> {
    return this.#call('GET', '/pods', z.array(PodReplySchema));
  }
  /** GET /pods/{id} */
  getPod(id: string): Promise<PodReply> {
    return this.#call('GET', `/pods/${encodeURIComponent(id)}`, PodReplySchema);
  }

  // ---- transport ----

  async #call<S extends z.ZodType>(method: Method, path: string, schema: S, body?: unknown): Promise<z.infer<S>> {
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
    if (status === 204 || text.length === 0) return schema.parse(undefined);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ServerlessWorkerError(
        'SW_MANAGEMENT_UNREACHABLE',
        `The management API answered ${where} with HTTP ${status} and a body that is not JSON: ${oneLine(text, 120)}`,
        { method, url, httpStatus: status },
      );
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new ServerlessWorkerError(
        'SW_MANAGEMENT_UNREACHABLE',
        `The management API answered ${where} with an unexpected body: ${oneLine(parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; '), 200)}`,
        { method, url, httpStatus: status },
      );
    }
    return parsed.data;
  }

  #failure(status: number, text: string, method: Method, url: string): ServerlessWorkerError {
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
