/**
 * @module harness/management/routes/templates
 * Template routes (spec 4.1): create, update (POST .../update as in the spec, PATCH
 * as an alias), list, get, delete.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { registerRoute } from '../../http/route-spec.js';
import { TEMPLATE_ROUTES as ROUTES } from '../management-routes.js';
import { parseInput } from '../parse-input.js';
import {
  TEMPLATE_FIELDS_NOT_UPDATABLE,
  TemplateCreateInputSchema,
  TemplateUpdateInputSchema,
  undocumentedPortProtocols,
  type Template,
} from '../schemas/index.js';
import { idParam, type RouteContext } from './route-helpers.js';

/** Log a warning for ports whose protocol is neither http nor tcp (kept as given). */
function warnOnPorts(request: FastifyRequest, ports: readonly string[] | undefined): void {
  const odd = undocumentedPortProtocols(ports ?? []);
  if (odd.length === 0) return;
  request.log.warn({ ports: odd }, `template ports ${odd.join(', ')}: the platform documents only the protocols http and tcp; kept as given`);
}

export function registerTemplateRoutes(app: FastifyInstance, context: RouteContext): void {
  const { store } = context;

  registerRoute(app, ROUTES.create, async (request): Promise<Template> => {
    const input = parseInput(TemplateCreateInputSchema, request.body, { code: 'SW_INVALID_TEMPLATE', what: 'template' });
    warnOnPorts(request, input.ports);
    return await store.createTemplate(input);
  });

  const update = async (request: FastifyRequest): Promise<Template> => {
    const id = idParam(request.params);
    // Unknown id first: a 404 says more than a complaint about the body.
    await store.getTemplate(id);
    const patch = parseInput(TemplateUpdateInputSchema, request.body, {
      code: 'SW_INVALID_TEMPLATE',
      what: 'template update',
      refused: TEMPLATE_FIELDS_NOT_UPDATABLE,
    });
    warnOnPorts(request, patch.ports);
    return await store.updateTemplate(id, patch);
  };
  registerRoute(app, ROUTES.updatePost, update);
  registerRoute(app, ROUTES.update, update);

  registerRoute(app, ROUTES.list, async (): Promise<Template[]> => await store.listTemplates());

  registerRoute(app, ROUTES.get, async (request): Promise<Template> => await store.getTemplate(idParam(request.params)));

  registerRoute(app, ROUTES.delete, async (request, reply) => {
    await store.deleteTemplate(idParam(request.params));
    return reply.code(204).send();
  });
}
