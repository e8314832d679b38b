/**
 * @module harness/management/management-routes
 * Every route of the management API (/v1), declared once: the route plugins register
 * from it, the OpenAPI document is generated from it, the ManagementClient's calls are
 * typed from it, and the tests' route list is derived from it.
 *
 * Templates, network volumes and endpoints offer list, get, create, update (PATCH and
 * its POST .../update form) and delete; pods (the connected workers) list and get.
 */
import * as z from 'zod';
import { defineRoute, type FailureDoc } from '../http/route-spec.js';
import {
  EndpointCreateInputSchema,
  EndpointReplySchema,
  EndpointSchema,
  EndpointUpdateInputSchema,
  NetworkVolumeCreateInputSchema,
  NetworkVolumeReplySchema,
  NetworkVolumeSchema,
  NetworkVolumeUpdateInputSchema,
  PodReplySchema,
  PodSchema,
  TemplateCreateInputSchema,
  TemplateReplySchema,
  TemplateSchema,
  TemplateUpdateInputSchema,
} from './schemas/index.js';

export const MANAGEMENT_PREFIX = '/v1';
export const MANAGEMENT_TAG = 'management API (/v1)';

/** The `{id}` of a record's routes. */
export const IdParamsSchema = z.object({
  id: z.string({ error: 'id must be a string' }).min(1, { error: 'id must not be empty' }),
});

const BAD_REQUEST: FailureDoc = { ref: 'BadRequest' };

/** What one kind of record is called, and the codes its routes answer. */
interface Kind<Record extends z.ZodType, Reply extends z.ZodType, Create extends z.ZodType, Update extends z.ZodType> {
  /** The collection's path segment and operationId suffix: `templates`. */
  readonly path: string;
  readonly what: string;
  /** The record's name under components.schemas: `Template`. */
  readonly name: string;
  readonly record: Record;
  /** The client's lenient form of the record. */
  readonly reply: Reply;
  readonly create: Create;
  readonly update: Update;
  readonly notFound: string;
  /** 409 on delete, where records still use it. */
  readonly inUse?: string;
}

/** The six routes of a kind of record the API can change. */
function recordRoutes<Rec extends z.ZodType, Reply extends z.ZodType, Create extends z.ZodType, Update extends z.ZodType>(
  kind: Kind<Rec, Reply, Create, Update>,
) {
  const base = { prefix: MANAGEMENT_PREFIX, tag: MANAGEMENT_TAG } as const;
  const notFound: FailureDoc = { description: `No such ${kind.what}: ${kind.notFound}.` };
  const one = { ...base, params: IdParamsSchema, replyName: kind.name } as const;
  const change = {
    ...one,
    body: kind.update,
    bodyName: `${kind.name}Update`,
    reply: kind.record,
    clientReply: kind.reply,
    replyDescription: `The ${kind.what} as it is now.`,
    failures: { '400': BAD_REQUEST, '404': notFound },
  } as const;
  return {
    list: defineRoute({
      ...base,
      method: 'GET',
      path: `/${kind.path}`,
      operationId: `list_${kind.path}`,
      summary: `Every ${kind.what}.`,
      reply: z.array(kind.record),
      clientReply: z.array(kind.reply),
      replyDescription: 'The records.',
    }),
    create: defineRoute({
      ...base,
      method: 'POST',
      path: `/${kind.path}`,
      operationId: `create_${kind.path}`,
      summary: `Create a ${kind.what}.`,
      body: kind.create,
      bodyName: `${kind.name}Create`,
      reply: kind.record,
      clientReply: kind.reply,
      replyName: kind.name,
      replyDescription: `The ${kind.what} created.`,
      failures: { '400': BAD_REQUEST },
    }),
    get: defineRoute({
      ...one,
      method: 'GET',
      path: `/${kind.path}/:id`,
      operationId: `get_${kind.path}`,
      summary: `One ${kind.what}.`,
      reply: kind.record,
      clientReply: kind.reply,
      replyDescription: `The ${kind.what}.`,
      failures: { '404': notFound },
    }),
    update: defineRoute({
      ...change,
      method: 'PATCH',
      path: `/${kind.path}/:id`,
      operationId: `update_${kind.path}`,
      summary: `Change a ${kind.what}'s fields.`,
    }),
    updatePost: defineRoute({
      ...change,
      method: 'POST',
      path: `/${kind.path}/:id/update`,
      operationId: `update_post_${kind.path}`,
      summary: `Change a ${kind.what}'s fields (POST form of PATCH).`,
    }),
    delete: defineRoute({
      ...base,
      method: 'DELETE',
      path: `/${kind.path}/:id`,
      operationId: `delete_${kind.path}`,
      summary: `Delete a ${kind.what}.`,
      params: IdParamsSchema,
      status: 204,
      replyDescription: 'Deleted.',
      failures: { '404': notFound, ...(kind.inUse !== undefined ? { '409': { description: `The ${kind.what} is still in use: ${kind.inUse}.` } } : {}) },
    }),
  };
}

export const TEMPLATE_ROUTES = recordRoutes({
  path: 'templates',
  what: 'template',
  name: 'Template',
  record: TemplateSchema,
  reply: TemplateReplySchema,
  create: TemplateCreateInputSchema,
  update: TemplateUpdateInputSchema,
  notFound: 'SW_TEMPLATE_NOT_FOUND',
  inUse: 'an endpoint uses it, SW_TEMPLATE_IN_USE',
});

export const NETWORK_VOLUME_ROUTES = recordRoutes({
  path: 'networkvolumes',
  what: 'network volume',
  name: 'NetworkVolume',
  record: NetworkVolumeSchema,
  reply: NetworkVolumeReplySchema,
  create: NetworkVolumeCreateInputSchema,
  update: NetworkVolumeUpdateInputSchema,
  notFound: 'SW_NETWORK_VOLUME_NOT_FOUND',
  inUse: 'an endpoint uses it, SW_NETWORK_VOLUME_IN_USE',
});

export const ENDPOINT_ROUTES = recordRoutes({
  path: 'endpoints',
  what: 'endpoint',
  name: 'Endpoint',
  record: EndpointSchema,
  reply: EndpointReplySchema,
  create: EndpointCreateInputSchema,
  update: EndpointUpdateInputSchema,
  notFound: 'SW_ENDPOINT_NOT_FOUND',
});

const POD = 'pod (a launched worker, read only)';

export const POD_ROUTES = {
  list: defineRoute({
    prefix: MANAGEMENT_PREFIX,
    tag: MANAGEMENT_TAG,
    method: 'GET',
    path: '/pods',
    operationId: 'list_pods',
    summary: `Every ${POD}.`,
    reply: z.array(PodSchema),
    clientReply: z.array(PodReplySchema),
    replyDescription: 'The records.',
  }),
  get: defineRoute({
    prefix: MANAGEMENT_PREFIX,
    tag: MANAGEMENT_TAG,
    method: 'GET',
    path: '/pods/:id',
    operationId: 'get_pods',
    summary: `One ${POD}.`,
    params: IdParamsSchema,
    reply: PodSchema,
    clientReply: PodReplySchema,
    replyName: 'Pod',
    replyDescription: 'The pod.',
    failures: { '404': { description: 'No such pod (pods are the workers connected now): SW_POD_NOT_FOUND.' } },
  }),
};

/** The management API's routes in the order the document lists them. */
export const MANAGEMENT_ROUTES = Object.freeze([
  ...Object.values(TEMPLATE_ROUTES),
  ...Object.values(NETWORK_VOLUME_ROUTES),
  ...Object.values(ENDPOINT_ROUTES),
  ...Object.values(POD_ROUTES),
]);
