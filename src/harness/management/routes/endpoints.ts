/**
 * @module harness/management/routes/endpoints
 * Endpoint routes: create (spec 4.1), and the list, get, update (PATCH, POST
 * .../update) and delete the spec leaves out. Create and delete tell the job harness
 * through `EndpointHooks`, so `/v2/{id}` serves exactly the endpoints that exist.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parseInput } from '../parse-input.js';
import { EndpointCreateInputSchema, EndpointUpdateInputSchema, type Endpoint } from '../schemas/index.js';
import { idParam, type RouteContext } from './route-helpers.js';

export function registerEndpointRoutes(app: FastifyInstance, context: RouteContext): void {
  const { store, endpointHooks } = context;

  app.post('/endpoints', async (request): Promise<Endpoint> => {
    const input = parseInput(EndpointCreateInputSchema, request.body, { code: 'SW_INVALID_ENDPOINT', what: 'endpoint' });
    const endpoint = store.createEndpoint(input);
    try {
      endpointHooks?.onEndpointCreated(endpoint.id);
    } catch (error) {
      // An endpoint that /v2 cannot serve must not linger in the list.
      store.deleteEndpoint(endpoint.id);
      throw error;
    }
    return endpoint;
  });

  const update = async (request: FastifyRequest): Promise<Endpoint> => {
    const id = idParam(request.params);
    store.getEndpoint(id);
    const patch = parseInput(EndpointUpdateInputSchema, request.body, { code: 'SW_INVALID_ENDPOINT', what: 'endpoint update' });
    return store.updateEndpoint(id, patch);
  };
  app.patch('/endpoints/:id', update);
  app.post('/endpoints/:id/update', update);

  app.get('/endpoints', async (): Promise<Endpoint[]> => store.listEndpoints());

  app.get('/endpoints/:id', async (request): Promise<Endpoint> => store.getEndpoint(idParam(request.params)));

  app.delete('/endpoints/:id', async (request, reply) => {
    const id = idParam(request.params);
    store.deleteEndpoint(id);
    endpointHooks?.onEndpointDeleted?.(id);
    return reply.code(204).send();
  });
}
