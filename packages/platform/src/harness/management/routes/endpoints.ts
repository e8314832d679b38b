/**
 * @module harness/management/routes/endpoints
 * Endpoint routes: create (spec 4.1), and the list, get, update (PATCH, POST
 * .../update) and delete the spec leaves out. Create and delete tell the job harness
 * through `EndpointHooks`, so `/v2/{id}` serves exactly the endpoints that exist.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { registerRoute } from '../../http/route-spec.js';
import { ENDPOINT_ROUTES as ROUTES } from '../management-routes.js';
import { parseInput } from '../parse-input.js';
import { EndpointCreateInputSchema, EndpointUpdateInputSchema, type Endpoint } from '../schemas/index.js';
import { idParam, type RouteContext } from './route-helpers.js';

export function registerEndpointRoutes(app: FastifyInstance, context: RouteContext): void {
  const { store, endpointHooks, podsView } = context;
  /** The record with its workers now: the pods of this endpoint. */
  const withWorkers = async (endpoint: Endpoint): Promise<Endpoint> => ({
    ...endpoint,
    workers: ((await podsView?.listPods()) ?? []).filter((pod) => pod.endpointId === endpoint.id),
  });
  const warnIfPodTemplate = async (request: FastifyRequest, endpoint: Endpoint): Promise<void> => {
    const template = await store.getTemplate(endpoint.templateId);
    if (template.isServerless) return;
    request.log.warn(
      { endpointId: endpoint.id, templateId: template.id },
      `endpoint ${endpoint.id} uses template ${template.id}, created without isServerless (recorded false): serving it as a Serverless template`,
    );
  };

  registerRoute(app, ROUTES.create, async (request): Promise<Endpoint> => {
    const input = parseInput(EndpointCreateInputSchema, request.body, { code: 'SW_INVALID_ENDPOINT', what: 'endpoint' });
    const endpoint = await store.createEndpoint(input);
    try {
      endpointHooks?.onEndpointCreated(endpoint.id, endpoint);
    } catch (error) {
      // An endpoint that /v2 cannot serve must not linger in the list.
      await store.deleteEndpoint(endpoint.id);
      throw error;
    }
    await warnIfPodTemplate(request, endpoint);
    return withWorkers(endpoint);
  });

  const update = async (request: FastifyRequest): Promise<Endpoint> => {
    const id = idParam(request.params);
    await store.getEndpoint(id);
    const patch = parseInput(EndpointUpdateInputSchema, request.body, { code: 'SW_INVALID_ENDPOINT', what: 'endpoint update' });
    const endpoint = await store.updateEndpoint(id, patch);
    endpointHooks?.onEndpointUpdated?.(endpoint);
    if (patch.templateId !== undefined) await warnIfPodTemplate(request, endpoint);
    return withWorkers(endpoint);
  };
  registerRoute(app, ROUTES.update, update);
  registerRoute(app, ROUTES.updatePost, update);

  registerRoute(app, ROUTES.list, async (): Promise<Endpoint[]> => Promise.all((await store.listEndpoints()).map(withWorkers)));

  registerRoute(app, ROUTES.get, async (request): Promise<Endpoint> => withWorkers(await store.getEndpoint(idParam(request.params))));

  registerRoute(app, ROUTES.delete, async (request, reply) => {
    const id = idParam(request.params);
    await store.deleteEndpoint(id);
    endpointHooks?.onEndpointDeleted?.(id);
    return reply.code(204).send();
  });
}
