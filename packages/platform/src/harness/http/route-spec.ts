/**
 * @module harness/http/route-spec
 * A route declared once, as data: method, path, the zod schemas of its path
 * parameters, query, body and reply, and what the OpenAPI document says about it. The
 * feature that owns the route registers it from the declaration (`registerRoute`), the
 * OpenAPI document is generated from the same declarations, the management client's
 * calls are typed from them, and the tests' route list is derived from them: the four
 * copies of each route that used to drift apart are one.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import type * as z from 'zod';
import './route-config.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/**
 * How the document describes an error answer: a shared response of the document's
 * `components.responses` (BadRequest, NotFound...), or its own description (the body is
 * the error body, `{"error":{"code","message","details"}}`).
 */
export type FailureDoc = { readonly ref: string } | { readonly description: string };

/** One route. Paths use fastify's syntax (`:id`, `*`), relative to the prefix the plugin is registered under. */
export interface RouteSpec<
  Params extends z.ZodType | undefined = z.ZodType | undefined,
  Query extends z.ZodType | undefined = z.ZodType | undefined,
  Body extends z.ZodType | undefined = z.ZodType | undefined,
  Reply extends z.ZodType | undefined = z.ZodType | undefined,
  ClientReply extends z.ZodType | undefined = Reply,
> {
  readonly method: HttpMethod;
  /** The path under `prefix`, with `:name` placeholders (and `*` for a rest of path). */
  readonly path: string;
  /** Where the owning plugin is registered: `/v1`, `/v2`. */
  readonly prefix: string;
  /** False for the routes anyone may read without the API key (they hold no data); default true. */
  readonly auth: boolean;
  /** The OpenAPI operationId (the root copy of a queue route gets a suffix). */
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tag: string;
  /** Path parameters: a z.object whose keys are the path's placeholders. */
  readonly params: Params;
  /** Query string: a z.object of text values (the document shows each one's parsed type). */
  readonly query: Query;
  /** JSON request body. */
  readonly body: Body;
  /** The success answer's body; undefined for an empty answer (204). */
  readonly reply: Reply;
  /**
   * What a client parses the reply with: more lenient than `reply` where another
   * server (the platform) may leave fields out; default `reply`.
   */
  readonly clientReply: ClientReply;
  /** The success status: 200 with `reply`, 204 without a body. */
  readonly status: 200 | 204;
  /** What the success answer is, for the document. */
  readonly replyDescription: string;
  /** The error answers the document lists (401 comes with `auth`), by HTTP status. */
  readonly failures: Readonly<Record<string, FailureDoc>>;
  /**
   * Documented under this components.schemas name (reply, and `<name>Input` style names
   * for bodies) instead of inline; default inline.
   */
  readonly replyName?: string;
  readonly bodyName?: string;
  /** The reply is documented by this components.schemas entry of the document (a reply built without a zod schema). */
  readonly replyRef?: string;
}

/** Any route, whatever its schemas. */
export type AnyRouteSpec = RouteSpec<z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined>;

/** A route with the defaults filled: no schemas, auth on, status 200, no failures. */
export function defineRoute<
  Params extends z.ZodType | undefined = undefined,
  Query extends z.ZodType | undefined = undefined,
  Body extends z.ZodType | undefined = undefined,
  Reply extends z.ZodType | undefined = undefined,
  ClientReply extends z.ZodType | undefined = Reply,
>(
  spec: Omit<RouteSpec<Params, Query, Body, Reply, ClientReply>, 'params' | 'query' | 'body' | 'reply' | 'clientReply' | 'auth' | 'status' | 'failures'> & {
    readonly params?: Params;
    readonly query?: Query;
    readonly body?: Body;
    readonly reply?: Reply;
    readonly clientReply?: ClientReply;
    readonly auth?: boolean;
    readonly status?: 200 | 204;
    readonly failures?: Readonly<Record<string, FailureDoc>>;
  },
): RouteSpec<Params, Query, Body, Reply, ClientReply> {
  return Object.freeze({
    ...spec,
    params: spec.params as Params,
    query: spec.query as Query,
    body: spec.body as Body,
    reply: spec.reply as Reply,
    clientReply: (spec.clientReply ?? spec.reply) as ClientReply,
    auth: spec.auth ?? true,
    status: spec.status ?? 200,
    failures: spec.failures ?? {},
  });
}

/** What a handler of `route` returns: the reply's type (or the fastify reply it sent itself: 204, a stream); anything where the route has no reply schema. */
export type RouteResult<R extends AnyRouteSpec> = R['reply'] extends z.ZodType ? z.output<R['reply']> | FastifyReply : unknown;

type RouteHandler<R extends AnyRouteSpec> = (request: FastifyRequest, reply: FastifyReply) => Promise<RouteResult<R>>;

/** `/templates/:id` -> `/templates/{id}`; a `*` rest of path becomes `{path}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{path}');
}

/** The full fastify pattern of a route: its prefix and path. */
export function fullPath(route: AnyRouteSpec): string {
  return `${route.prefix}${route.path}`;
}

/**
 * Register `route` on `app` (a plugin registered under `route.prefix`), as fastify's
 * shorthand does (`options` are fastify's own: bodyLimit, config, hooks). The method
 * and path come from the declaration, so a route cannot be served under a path that
 * the document and the client do not know.
 */
export function registerRoute<R extends AnyRouteSpec>(app: FastifyInstance, route: R, handler: RouteHandler<R>): void;
export function registerRoute<R extends AnyRouteSpec>(app: FastifyInstance, route: R, options: RouteShorthandOptions, handler: RouteHandler<R>): void;
export function registerRoute<R extends AnyRouteSpec>(
  app: FastifyInstance,
  route: R,
  optionsOrHandler: RouteShorthandOptions | RouteHandler<R>,
  maybeHandler?: RouteHandler<R>,
): void {
  const [options, handler] = typeof optionsOrHandler === 'function' ? [{}, optionsOrHandler] : [optionsOrHandler, maybeHandler];
  if (handler === undefined) throw new TypeError(`registerRoute: no handler for ${route.method} ${fullPath(route)}`);
  // A route the table marks as needing no key is served without one (route-config.ts's `public`): the table says it once.
  const config = route.auth ? options.config : { ...options.config, public: true };
  app.route({ ...options, ...(config !== undefined ? { config } : {}), method: route.method, url: route.path, handler });
}
