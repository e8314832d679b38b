/**
 * @module harness/management/routes/network-volumes
 * Network volume routes (spec 4.1): create, update (PATCH as in the spec, POST
 * .../update as an alias), list, get, delete.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { registerRoute } from '../../http/route-spec.js';
import { NETWORK_VOLUME_ROUTES as ROUTES } from '../management-routes.js';
import { parseInput } from '../parse-input.js';
import { NETWORK_VOLUME_FIELDS_NOT_UPDATABLE, NetworkVolumeCreateInputSchema, NetworkVolumeUpdateInputSchema, type NetworkVolume } from '../schemas/index.js';
import { idParam, type RouteContext } from './route-helpers.js';

export function registerNetworkVolumeRoutes(app: FastifyInstance, context: RouteContext): void {
  const { store } = context;

  registerRoute(app, ROUTES.create, async (request): Promise<NetworkVolume> => {
    const input = parseInput(NetworkVolumeCreateInputSchema, request.body, {
      code: 'SW_INVALID_NETWORK_VOLUME',
      what: 'network volume',
    });
    return await store.createNetworkVolume(input);
  });

  const update = async (request: FastifyRequest): Promise<NetworkVolume> => {
    const id = idParam(request.params);
    await store.getNetworkVolume(id);
    const patch = parseInput(NetworkVolumeUpdateInputSchema, request.body, {
      code: 'SW_INVALID_NETWORK_VOLUME',
      what: 'network volume update',
      refused: NETWORK_VOLUME_FIELDS_NOT_UPDATABLE,
    });
    return await store.updateNetworkVolume(id, patch);
  };
  registerRoute(app, ROUTES.update, update);
  registerRoute(app, ROUTES.updatePost, update);

  registerRoute(app, ROUTES.list, async (): Promise<NetworkVolume[]> => await store.listNetworkVolumes());

  registerRoute(app, ROUTES.get, async (request): Promise<NetworkVolume> => await store.getNetworkVolume(idParam(request.params)));

  registerRoute(app, ROUTES.delete, async (request, reply) => {
    await store.deleteNetworkVolume(idParam(request.params));
    return reply.code(204).send();
  });
}
