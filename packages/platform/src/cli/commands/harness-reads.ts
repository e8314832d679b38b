/**
 * @module cli/commands/harness-reads
 * The harness's dashboard reads (`/ui/api/logs`, `/ui/api/endpoints/{id}/jobs`) for the
 * `logs` and `jobs` commands. They live beside the management API: the server's origin
 * is the management base URL without its `/v1` (http://127.0.0.1:8000/v1 reads
 * http://127.0.0.1:8000/ui/api/...). Replies are parsed with zod; a failure throws a
 * ServerlessWorkerError whose one line has the server's message and code.
 */
import * as z from 'zod';
import { ServerlessWorkerError } from 'serverless-worker/internal';
import { DEFAULT_MANAGEMENT_TIMEOUT_MS } from '../../harness/management/management-client.js';

/** A log line; `seq` (the capture order, harness/launcher/log-order.ts) is absent from a harness older than it. */
export const LogLineReplySchema = z.object({ at: z.number(), seq: z.number().int().optional(), workerId: z.string(), stream: z.string(), line: z.string() });
export type LogLineReply = z.infer<typeof LogLineReplySchema>;
export const LogsReplySchema = z.object({
  launcher: z.boolean(),
  inProcess: z.boolean().optional(),
  lines: z.array(LogLineReplySchema),
  /** Of a job's lines: why some are no longer kept, and how many (a harness older than the count sends the words alone). */
  dropped: z.string().optional(),
  droppedLines: z.number().int().min(0).optional(),
});
export type LogsReply = z.infer<typeof LogsReplySchema>;

export const JobRowReplySchema = z.looseObject({
  id: z.string(),
  status: z.string(),
  kind: z.string().optional(),
  submittedAt: z.string().optional(),
  executionTime: z.number().nullable().optional(),
  delayTime: z.number().nullable().optional(),
  retries: z.number().optional(),
  workerId: z.string().optional(),
  errorType: z.string().optional(),
  errorCode: z.string().optional(),
  errorMessage: z.string().optional(),
});
export type JobRowReply = z.infer<typeof JobRowReplySchema>;
export const JobsPageReplySchema = z.object({
  endpointId: z.string(),
  total: z.number(),
  offset: z.number(),
  limit: z.number(),
  jobs: z.array(JobRowReplySchema),
});
export type JobsPageReply = z.infer<typeof JobsPageReplySchema>;

const ErrorBodySchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/** The server's origin (and any path before `/v1`) from a management base URL. */
export function harnessOrigin(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

export class HarnessReads {
  readonly origin: string;
  readonly #apiKey: string | undefined;

  constructor(baseUrl: string, apiKey: string | undefined) {
    this.origin = harnessOrigin(baseUrl);
    this.#apiKey = apiKey;
  }

  /** GET /ui/api/logs: `query` holds endpoint, and job, worker, max as given. */
  logs(query: URLSearchParams): Promise<LogsReply> {
    return this.#get(`/ui/api/logs?${query.toString()}`, LogsReplySchema);
  }

  /** GET /ui/api/endpoints/{id}/jobs with the dashboard's filters. */
  jobs(endpointId: string, query: URLSearchParams): Promise<JobsPageReply> {
    return this.#get(`/ui/api/endpoints/${encodeURIComponent(endpointId)}/jobs?${query.toString()}`, JobsPageReplySchema);
  }

  async #get<S extends z.ZodType>(path: string, schema: S): Promise<z.infer<S>> {
    const url = `${this.origin}${path}`;
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        headers: { accept: 'application/json', ...(this.#apiKey !== undefined ? { authorization: `Bearer ${this.#apiKey}` } : {}) },
        signal: AbortSignal.timeout(DEFAULT_MANAGEMENT_TIMEOUT_MS),
      });
      text = await response.text();
    } catch (error) {
      const cause = error as { name?: string; message?: string; cause?: { code?: string } };
      const reason =
        cause.name === 'TimeoutError' ? `no answer within ${DEFAULT_MANAGEMENT_TIMEOUT_MS} ms` : (cause.cause?.code ?? cause.message ?? String(error));
      throw new ServerlessWorkerError('SW_MANAGEMENT_UNREACHABLE', `Cannot reach the harness: GET ${url}: ${reason}`, { url });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!response.ok) {
      const coded = ErrorBodySchema.safeParse(json);
      const message = coded.success ? coded.data.error.message : text.slice(0, 300) || response.statusText;
      const code = coded.success ? coded.data.error.code : undefined;
      const hint =
        response.status === 404 && code === 'SW_ROUTE_NOT_FOUND'
          ? `; ${this.origin} has no dashboard reads: logs and jobs read a serverless-worker harness (its dashboard on), at the URL of its /v1 (SERVERLESS_WORKER_API_URL or --base-url)`
          : '';
      throw new ServerlessWorkerError('SW_MANAGEMENT_API_ERROR', `${message} (${code ? `${code}; ` : ''}HTTP ${response.status} from GET ${url})${hint}`, {
        httpStatus: response.status,
        url,
        ...(code ? { serverCode: code } : {}),
      });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new ServerlessWorkerError(
        'SW_MANAGEMENT_UNREACHABLE',
        `The harness answered GET ${url} with an unexpected body: ${parsed.error.issues[0]?.message ?? 'not the expected JSON'}`,
        { url },
      );
    }
    return parsed.data;
  }
}
