/**
 * @module harness/load-balancing/lb-routes
 * The harness's load-balancing endpoints, in two plugins:
 *
 * | route | what |
 * |---|---|
 * | `POST /v2/{endpoint_id}/load-balancing/workers` | register a worker: `{url, healthUrl?, workerId?, concurrency?}` (a worker started with SERVERLESS_WORKER_HARNESS_URL does it itself, and repeats it as a refresh); 201 `created: true`, or 200 `created: false` for a registration already held |
 * | `GET /v2/{endpoint_id}/load-balancing/workers` | the workers and their states |
 * | `DELETE /v2/{endpoint_id}/load-balancing/workers/{worker_id}` | unregister (a worker does it when it drains) |
 * | any method `/lb/{endpoint_id}/{path}` | the endpoint itself: `/{path}` of a healthy worker, round-robin |
 *
 * The proxy plugin reads no body (a content-type parser that leaves the stream alone),
 * so the body reaches the worker as the caller sent it, whatever its size or type.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import * as z from 'zod';
import { parseOrThrow, ServerlessWorkerError, urlForLog } from 'serverless-worker/internal';
import { registerRoute } from '../http/route-spec.js';
import { LB_ROUTES } from './lb-route-table.js';
import { proxyRequest, sendRawError } from './lb-proxy.js';
import type { LoadBalancing } from './load-balancing.js';

/** Methods passed through to a load-balancing worker. */
export const LB_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Where the endpoint `endpointId` is reached, relative to the harness's URL. */
export const LB_PATH_PREFIX = '/lb';

/** `/lb/{endpoint_id}` at the start of a request target. */
const ENDPOINT_PREFIX = new RegExp(`^${LB_PATH_PREFIX}/[^/?#]*`);

const EndpointParamsSchema = z.object({
  endpointId: z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, { error: 'endpoint ids are 1-128 letters, digits, ".", "-" or "_"' }),
});
const WorkerParamsSchema = EndpointParamsSchema.extend({ workerId: z.string().min(1).max(200) });

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });
const RegisterBodySchema = z.object({
  /** Base URL of the worker's app: http://host:PORT. */
  url: httpUrl,
  /** Base URL where /ping is answered (PORT_HEALTH); default `url`. */
  healthUrl: httpUrl.optional(),
  /** Default a random id. */
  workerId: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,200}$/, { error: 'must be 1-200 letters, digits, ".", "-" or "_"' })
    .optional(),
  /** Requests at once the harness sends this worker; default 100. */
  concurrency: z.number().int().min(1).max(100_000).default(100),
});

export interface LbRouteOptions {
  readonly lb: LoadBalancing;
}

/** Registration routes; mount under the prefix /v2 (JSON bodies as elsewhere). */
export async function lbRegistrationRoutes(app: FastifyInstance, options: LbRouteOptions): Promise<void> {
  const { lb } = options;
  registerRoute(app, LB_ROUTES.register, async (request, reply) => {
    const { endpointId } = parseOrThrow(EndpointParamsSchema, request.params, 'SW_INVALID_REQUEST', 'path');
    const body = parseOrThrow(RegisterBodySchema, request.body ?? {}, 'SW_INVALID_REQUEST', 'load-balancing worker registration');
    // The proxy sends callers' requests there: never the harness itself, metadata or link-local addresses, and loopback only without a key.
    for (const [field, url] of [
      ['url', body.url],
      ['healthUrl', body.healthUrl],
    ] as const) {
      if (url === undefined) continue;
      const refused = await lb.policy.refuseUrl(url);
      if (refused !== undefined) {
        request.log.warn({ endpointId, field, url: urlForLog(url), reason: refused }, 'load-balancing worker registration refused by the target policy');
        throw new ServerlessWorkerError('SW_TARGET_REFUSED', `Load-balancing worker ${field} ${urlForLog(url)} refused: ${refused}`, {
          endpointId,
          field,
          reason: refused,
        });
      }
    }
    const { worker, created } = lb.register(endpointId, {
      workerId: body.workerId ?? `lb-${randomUUID().slice(0, 8)}`,
      url: body.url,
      healthUrl: body.healthUrl ?? body.url,
      concurrency: body.concurrency,
    });
    return reply.code(created ? 201 : 200).send({ endpointId, workerId: worker.id, created, path: `${LB_PATH_PREFIX}/${endpointId}/` });
  });
  registerRoute(app, LB_ROUTES.list, async (request) => {
    const { endpointId } = parseOrThrow(EndpointParamsSchema, request.params, 'SW_INVALID_REQUEST', 'path');
    const pool = lb.pool(endpointId);
    return { endpointId, workers: pool ? pool.all().map((worker) => pool.view(worker)) : [] };
  });
  registerRoute(app, LB_ROUTES.remove, async (request) => {
    const { endpointId, workerId } = parseOrThrow(WorkerParamsSchema, request.params, 'SW_INVALID_REQUEST', 'path');
    return { removed: lb.remove(endpointId, workerId) };
  });
}

/** The proxy; mount under the prefix /lb. */
export async function lbProxyRoutes(app: FastifyInstance, options: LbRouteOptions): Promise<void> {
  const { lb } = options;
  app.removeAllContentTypeParsers();
  // Leave the body stream unread: it is piped to the worker as it comes.
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));

  const forward = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const { endpointId } = parseOrThrow(EndpointParamsSchema, request.params, 'SW_INVALID_REQUEST', 'path');
    if (!(request.raw.url ?? '/').startsWith(`${LB_PATH_PREFIX}/`)) {
      // Absolute form (`GET http://host/lb/...`) is for proxies; the worker's target is the path, so only origin form is taken.
      throw new ServerlessWorkerError(
        'SW_INVALID_REQUEST',
        `The request target must be a path starting with ${LB_PATH_PREFIX}/${endpointId}/ (origin form); got ${JSON.stringify((request.raw.url ?? '').slice(0, 100))}. Send the path, not an absolute URL.`,
        { endpointId },
      );
    }
    const pool = lb.pool(endpointId);
    const worker = pool?.pick();
    if (!pool || !worker) {
      throw new ServerlessWorkerError(
        'SW_NO_WORKER_AVAILABLE',
        `No healthy load-balancing worker of endpoint ${endpointId} has room (${pool ? pool.describe() : 'no worker is registered'}); retry later`,
        { endpointId, ...(pool ? { workers: pool.counts() } : {}) },
      );
    }
    // What follows /lb/{endpoint_id} in the request target as sent (the id segment as
    // written: it may be percent-encoded), passed on untouched as the worker's target.
    const raw = request.raw.url ?? '/';
    const rest = raw.replace(ENDPOINT_PREFIX, '');
    const path = rest === '' || rest.startsWith('?') ? `/${rest}` : rest;
    reply.hijack();
    try {
      await proxyRequest(request.raw, reply.raw, { lb, pool, worker, path });
    } catch (error) {
      sendRawError(
        reply.raw,
        error instanceof ServerlessWorkerError ? error : new ServerlessWorkerError('SW_INTERNAL', `proxy failed: ${(error as Error).message}`),
      );
    }
  };
  // The methods an HTTP app is called with (HEAD comes with GET).
  const method = [...LB_METHODS];
  app.route({ method, url: '/:endpointId', handler: forward });
  app.route({ method, url: '/:endpointId/*', handler: forward });
}
