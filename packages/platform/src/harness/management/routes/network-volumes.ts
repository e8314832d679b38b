/**
 * @module harness/management/routes/network-volumes
 * Network volume routes (spec 4.1): create, update (PATCH as in the spec, POST
 * .../update as an alias), list, get, delete.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parseInput } from '../parse-input.js';
import { NETWORK_VOLUME_FIELDS_NOT_UPDATABLE, NetworkVolumeCreateInputSchema, NetworkVolumeUpdateInputSchema, type NetworkVolume } from '../schemas/index.js';
import { idParam, type RouteContext } from './route-helpers.js';

export function registerNetworkVolumeRoutes(app: FastifyInstance, context: RouteContext): void {
  const { store } = context;

  app.post('/networkvolumes', async (request): Promise<NetworkVolume> => {
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
  app.patch('/networkvolumes/:id', update);
  app.post('/networkvolumes/:id/update', update);

  app.get('/networkvolumes', async (): Promise<NetworkVolume[]> => await store.listNetworkVolumes());

  app.get('/networkvolumes/:id', async (request): Promise<NetworkVolume> => await store.getNetworkVolume(idParam(request.params)));

  app.delete('/networkvolumes/:id', async (request, reply) => {
    await store.deleteNetworkVolume(idParam(request.params));
    return reply.code(204).send();
  });
}
