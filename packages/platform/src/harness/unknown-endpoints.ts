/**
 * @module harness/unknown-endpoints
 * A job sent to an endpoint id the harness does not know. A harness that makes endpoints
 * on first use (the default: any id works locally) does so only for a submission (or a
 * worker joining), never for a read (Harness.existingEndpoint). Once endpoints exist
 * in the management API (/v1/endpoints), the harness is being used as the service is:
 * a submission to any other id answers 404 SW_ENDPOINT_NOT_FOUND, as the service answers
 * a wrong endpoint id (spec section 7; the service's body is not published: ours names
 * the known ids). Before that, an endpoint made on first use is logged once, with a
 * warning (a misspelt id in a client would otherwise queue jobs no worker ever takes),
 * and listed on the dashboard's overview (`createdOnUse`). An id deleted through the
 * management API answers 404 SW_ENDPOINT_NOT_FOUND from then on, even when it was the last
 * /v1 endpoint (before, it went back to being made on first use: it accepted jobs no
 * worker took).
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import type { Logger } from 'pino';
import { type Harness, ServerlessWorkerError } from 'serverless-worker/internal';
import type { ManagementStore } from './management/index.js';

/** The routes that submit a job: /run, /runsync, the OpenAI-compatible calls. */
const SUBMIT_PATH = /^\/v2\/([A-Za-z0-9._-]{1,128})\/(?:(?:run|runsync)(?:[/?]|$)|openai\/)/;

/** Ids of the endpoints deleted through this harness's management API (kept up to this many, the latest). */
export const DELETED_IDS_KEPT = 10_000;

/** The ids deleted through DELETE /v1/endpoints/{id}: a submission to one answers 404 (unknownEndpointHook). */
export class DeletedEndpointIds {
  readonly #ids = new Set<string>();

  add(id: string): void {
    this.#ids.delete(id);
    this.#ids.add(id);
    if (this.#ids.size > DELETED_IDS_KEPT) {
      const oldest = this.#ids.values().next().value;
      if (oldest !== undefined) this.#ids.delete(oldest);
    }
  }

  /** An endpoint made again with this id (the service's ids are new ones; a store may reuse). */
  remove(id: string): void {
    this.#ids.delete(id);
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }
}

/** The routes the hook is for (http/route-hooks.ts): those that submit a job, by their pattern. */
const SUBMIT_ROUTE = /^\/v2\/:endpointId\/(?:run|runsync|openai\/.*)$/;

/** Whether `route` submits jobs (the unknown-endpoint hook's routes). */
export function isSubmitRoute(route: Pick<RouteOptions, 'url'>): boolean {
  return SUBMIT_ROUTE.test(route.url);
}

type OnRequest = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

/**
 * An onRequest hook refusing submissions to unknown ids once /v1 has endpoints, and to
 * deleted ones; undefined when endpoints are not made on first use. A callback hook with
 * an answer in the same turn for the common case (an endpoint this process serves, never
 * deleted): an async hook costs a promise and a turn of the microtask queue per request.
 */
export function unknownEndpointHook(harness: Harness, store: ManagementStore, deleted: DeletedEndpointIds = new DeletedEndpointIds()): OnRequest | undefined {
  if (!harness.autoCreateEndpoints) return undefined;
  const check = unknownEndpointCheck(harness, store, deleted);
  return (request, _reply, done) => {
    const id = SUBMIT_PATH.exec(request.url)?.[1];
    if (id === undefined || (!deleted.has(id) && harness.findEndpoint(id) !== undefined)) {
      done();
      return;
    }
    check(id).then(() => done(), done);
  };
}

function unknownEndpointCheck(harness: Harness, store: ManagementStore, deleted: DeletedEndpointIds): (id: string) => Promise<void> {
  return async (id) => {
    if (deleted.has(id) && !(await store.hasEndpoint(id))) {
      throw new ServerlessWorkerError(
        'SW_ENDPOINT_NOT_FOUND',
        `Endpoint ${id} does not exist: it was deleted through the management API (DELETE /v1/endpoints/${id}); create an endpoint (POST /v1/endpoints) and send jobs to its id`,
        { endpointId: id, deleted: true },
      );
    }
    if (harness.findEndpoint(id)) return;
    const managed = (await store.listEndpoints()).map((endpoint) => endpoint.id);
    if (managed.length === 0 || managed.includes(id)) return;
    // Made through another harness on a shared job store: known, served.
    if ((await harness.store.endpointSettings(id)) !== undefined) return;
    const shown = managed.slice(0, 20).join(', ');
    throw new ServerlessWorkerError(
      'SW_ENDPOINT_NOT_FOUND',
      `Endpoint ${id} does not exist: this harness has endpoints made through the management API (${shown}${managed.length > 20 ? ', ...' : ''}), and answers 404 for any other id, as the service does for a wrong endpoint id`,
      { endpointId: id, known: managed.slice(0, 100) },
    );
  };
}

/** Log a warning the first time each endpoint is made on first use; answers the unsubscribe. */
export function warnOnCreatedOnUse(harness: Harness, logger: Logger): () => void {
  return harness.onCreatedOnUse((endpointId) => {
    logger.warn(
      { endpointId },
      `endpoint ${endpointId} created on first use: any id works on this harness, so a misspelt id in a client queues jobs no worker takes (GET /ui/api/overview lists these ids as createdOnUse)`,
    );
  });
}
