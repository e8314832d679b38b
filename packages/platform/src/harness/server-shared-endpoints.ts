/**
 * @module harness/server-shared-endpoints
 * With a shared management store (PostgreSQL), endpoints are created through any
 * harness on the database, or before this one started. This harness serves them too:
 * those recorded are created in its Harness at start, and a harness that does not create
 * endpoints on first use (`--endpoint`) looks an unknown `/v2/{id}` or `/lb/{id}` up in
 * the store before the route answers SW_ENDPOINT_NOT_FOUND.
 */
import type { FastifyRequest } from 'fastify';
import type { Harness } from 'serverless-worker/internal';
import type { ManagementStore } from './management/index.js';

const ENDPOINT_PATH = /^\/(?:v2|lb)\/([A-Za-z0-9._-]{1,128})(?:[/?]|$)/;

/** Create in `harness` every endpoint the store records (a shared store only). */
export async function serveRecordedEndpoints(harness: Harness, store: ManagementStore): Promise<void> {
  if (store.kind !== 'postgres') return;
  for (const endpoint of await store.listEndpoints()) harness.createEndpoint(endpoint.id);
}

/** An onRequest hook for a shared store and a harness without autoCreateEndpoints; undefined when none is needed. */
export function sharedEndpointsHook(harness: Harness, store: ManagementStore): ((request: FastifyRequest) => Promise<void>) | undefined {
  if (store.kind !== 'postgres' || harness.autoCreateEndpoints) return undefined;
  return async (request) => {
    const id = ENDPOINT_PATH.exec(request.url)?.[1];
    if (id === undefined || harness.findEndpoint(id)) return;
    if (await store.hasEndpoint(id)) harness.createEndpoint(id);
  };
}
