/**
 * @module harness/http/route-hooks
 * onRequest hooks put on the routes that need them, not on every request (issue 46).
 * A hook added with `app.addHook('onRequest')` runs for every request of the server: the
 * rate limit for `/metrics` and the dashboard's files too, the unknown-endpoint check for
 * every `/status` poll, each one a turn of fastify's hook runner and, for an async hook,
 * a promise. Here each hook names the routes it is for (by their options, when they are
 * added: an onRoute hook), and is added to those routes' own onRequest hooks, in the order
 * the hooks were given and before the route's own hooks: the order a request meets them
 * in is what it was with server-wide hooks.
 *
 * Only routes added after a hook is given get it: give the hooks before registering the
 * routes (as for any onRoute hook). A request that matches no route (404, 405) runs none
 * of these; a hook that must answer those too (the API key) stays server-wide.
 */
import type { FastifyInstance, onRequestHookHandler, RouteOptions } from 'fastify';

interface RouteHook {
  readonly wants: (route: RouteOptions) => boolean;
  readonly hook: onRequestHookHandler;
}

const hooksByApp = new WeakMap<FastifyInstance, RouteHook[]>();

/** The hooks of `route` that are asked for, before its own onRequest hooks. */
function withHooks(route: RouteOptions, hooks: readonly RouteHook[]): void {
  const mine = hooks.filter((entry) => entry.wants(route)).map((entry) => entry.hook);
  if (mine.length === 0) return;
  const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
  route.onRequest = [...mine, ...(own as onRequestHookHandler[])];
}

/**
 * Run `hook` on every route added from now on for which `wants(route)` holds (its url,
 * method and config as given to fastify), before the route's own onRequest hooks and
 * after the hooks given earlier through this function.
 */
export function addRouteOnRequest(app: FastifyInstance, wants: (route: RouteOptions) => boolean, hook: onRequestHookHandler): void {
  let hooks = hooksByApp.get(app);
  if (hooks === undefined) {
    const created: RouteHook[] = [];
    hooks = created;
    hooksByApp.set(app, created);
    app.addHook('onRoute', (route) => withHooks(route, created));
  }
  hooks.push({ wants, hook });
}
