/**
 * @module harness/launcher/docker/docker-engine
 * A small client of the Docker Engine API (the calls the launcher makes, nothing
 * else), over the engine's unix socket or plain TCP with undici; every answer parsed
 * with zod. Paths carry API version 1.41 (Docker 20.10 and every engine since answer it).
 * No docker CLI is run. undici is loaded on first use, as the harness's other clients do.
 *
 *     const engine = new DockerEngine(parseDockerHost(process.env.DOCKER_HOST));
 *     await engine.ping();
 *     const id = await engine.createContainer('name', { Image: 'me/worker:1', ... });
 */
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import * as z from 'zod';
import type { DockerHost } from './docker-host.js';

const API = '/v1.41';

/** An answer of the engine other than 2xx: its status and the engine's message. */
export class DockerEngineError extends Error {
  override readonly name = 'DockerEngineError';
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

const EngineMessageSchema = z.object({ message: z.string() });
const CreatedSchema = z.object({ Id: z.string().min(1) });
const WaitSchema = z.object({ StatusCode: z.number().int(), Error: z.object({ Message: z.string() }).nullish() });
const ImageSchema = z.object({ Id: z.string() });
const ContainerSummarySchema = z.object({
  Id: z.string(),
  Names: z.array(z.string()).nullish(),
  State: z.string().optional(),
  Labels: z.record(z.string(), z.string()).nullish(),
});
export type ContainerSummary = z.infer<typeof ContainerSummarySchema>;
const InspectSchema = z.object({ Id: z.string(), State: z.object({ Status: z.string() }).loose() }).loose();
export type ContainerInspect = z.infer<typeof InspectSchema>;

interface CallOptions {
  method: 'GET' | 'POST' | 'DELETE';
  body?: unknown;
  query?: Record<string, string>;
  /** For long polls (wait, logs with follow): no body or headers timeout. */
  long?: boolean;
  signal?: AbortSignal;
}

export class DockerEngine {
  readonly host: DockerHost;
  #dispatcher: Promise<Dispatcher> | undefined;

  constructor(host: DockerHost) {
    this.host = host;
  }

  /** GET /_ping: resolves when the engine answers. */
  async ping(): Promise<void> {
    const response = await this.#call('/_ping', { method: 'GET' });
    await response.body.dump();
  }

  /** The image's id, or undefined when the engine has no image of that name (404). */
  async imageId(name: string): Promise<string | undefined> {
    try {
      return (await this.#json(`/images/${name}/json`, { method: 'GET' }, ImageSchema)).Id;
    } catch (error) {
      if (error instanceof DockerEngineError && error.status === 404) return undefined;
      throw error;
    }
  }

  /** POST /containers/create; answers the new container's id. */
  async createContainer(name: string, body: unknown): Promise<string> {
    return (await this.#json('/containers/create', { method: 'POST', query: { name }, body }, CreatedSchema)).Id;
  }

  async startContainer(id: string): Promise<void> {
    await (await this.#call(`/containers/${id}/start`, { method: 'POST' })).body.dump();
  }

  /**
   * Register a wait for the container's next exit (call it before start: `next-exit`
   * does not see an exit that came first). Resolves once the engine has taken the wait
   * (its headers came); `exitCode` resolves with the exit status.
   */
  async waitForExit(id: string, signal?: AbortSignal): Promise<{ exitCode: Promise<number> }> {
    const response = await this.#call(`/containers/${id}/wait`, {
      method: 'POST',
      query: { condition: 'next-exit' },
      long: true,
      ...(signal ? { signal } : {}),
    });
    const exitCode = response.body.json().then((json) => {
      const parsed = WaitSchema.parse(json);
      if (parsed.Error?.Message) throw new Error(`the engine could not wait for the container: ${parsed.Error.Message}`);
      return parsed.StatusCode;
    });
    return { exitCode };
  }

  /** Send a signal to the container's main process. */
  async kill(id: string, signal: string): Promise<void> {
    await (await this.#call(`/containers/${id}/kill`, { method: 'POST', query: { signal } })).body.dump();
  }

  /** Remove the container, running or not, with its anonymous volumes. */
  async remove(id: string): Promise<void> {
    await (await this.#call(`/containers/${id}`, { method: 'DELETE', query: { force: 'true', v: 'true' } })).body.dump();
  }

  async inspect(id: string): Promise<ContainerInspect> {
    return this.#json(`/containers/${id}/json`, { method: 'GET' }, InspectSchema);
  }

  /** Containers (running or not) that carry every label given as `key=value`. */
  async listByLabels(labels: readonly string[]): Promise<ContainerSummary[]> {
    return this.#json(
      '/containers/json',
      { method: 'GET', query: { all: 'true', filters: JSON.stringify({ label: labels }) } },
      z.array(ContainerSummarySchema),
    );
  }

  /**
   * The container's output from its start on, following it until the container stops:
   * the raw stream (multiplexed, since containers run without a TTY; see log-frames.ts).
   */
  async followLogs(id: string, signal?: AbortSignal): Promise<Readable> {
    const response = await this.#call(`/containers/${id}/logs`, {
      method: 'GET',
      query: { follow: 'true', stdout: 'true', stderr: 'true' },
      long: true,
      ...(signal ? { signal } : {}),
    });
    return response.body;
  }

  async close(): Promise<void> {
    const dispatcher = this.#dispatcher;
    this.#dispatcher = undefined;
    if (dispatcher) await (await dispatcher).close();
  }

  async #json<T>(path: string, options: CallOptions, schema: z.ZodType<T>): Promise<T> {
    const response = await this.#call(path, options);
    const json: unknown = await response.body.json();
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new Error(`the Docker engine answered ${options.method} ${path} with an unexpected body: ${z.prettifyError(parsed.error)}`);
    return parsed.data;
  }

  async #call(path: string, options: CallOptions): Promise<Dispatcher.ResponseData> {
    const { request, Agent } = await import('undici');
    // One agent: its pool opens a connection per request in flight (wait and logs hold theirs).
    this.#dispatcher ??= Promise.resolve(this.host.kind === 'unix' ? new Agent({ connect: { socketPath: this.host.socketPath } }) : new Agent());
    const dispatcher = await this.#dispatcher;
    const origin = this.host.kind === 'unix' ? 'http://docker' : this.host.origin;
    const query = options.query ? `?${new URLSearchParams(options.query).toString()}` : '';
    let response: Dispatcher.ResponseData;
    try {
      response = await request(`${origin}${API}${path}${query}`, {
        method: options.method,
        dispatcher,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body), headers: { 'content-type': 'application/json' } } : {}),
        ...(options.long ? { bodyTimeout: 0, headersTimeout: 0 } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new Error(`cannot reach the Docker engine at ${this.host.display}: ${(error as Error).message}`, { cause: error });
    }
    if (response.statusCode >= 200 && response.statusCode < 300) return response;
    const text = await response.body.text();
    let message = text.trim();
    try {
      message = EngineMessageSchema.parse(JSON.parse(text)).message;
    } catch {
      // Not the engine's JSON error body: keep the text.
    }
    throw new DockerEngineError(response.statusCode, `${options.method} ${path}: ${response.statusCode} ${message}`);
  }
}
