/**
 * @module harness/management/routes/pods
 * Pod routes: connected workers seen as pods, read from the optional `PodsView`.
 * Without one (no worker registry wired in) the list is empty and every id is 404.
 */
import type { FastifyInstance } from 'fastify';
import { ServerlessWorkerError } from 'serverless-worker/internal';
import { registerRoute } from '../../http/route-spec.js';
import { POD_ROUTES as ROUTES } from '../management-routes.js';
import type { Pod } from '../schemas/index.js';
import { idParam, type RouteContext } from './route-helpers.js';

export function registerPodRoutes(app: FastifyInstance, context: RouteContext): void {
  const { podsView } = context;

  registerRoute(app, ROUTES.list, async (): Promise<Pod[]> => (await podsView?.listPods()) ?? []);

  registerRoute(app, ROUTES.get, async (request): Promise<Pod> => {
    const id = idParam(request.params);
    const pod = await podsView?.getPod(id);
    if (pod) return pod;
    throw new ServerlessWorkerError('SW_POD_NOT_FOUND', `No pod with id "${id}" (pods are the workers connected now)`, {
      podId: id,
    });
  });
}
