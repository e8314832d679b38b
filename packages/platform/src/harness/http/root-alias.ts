/**
 * @module harness/http/root-alias
 * The queue API of one endpoint at the root too (`/run`, `/runsync`, `/status/:id`,
 * `/stream/:id`, `/cancel/:id`, `/health`, ...), as the platform's Python SDK answers
 * its local API: a request URL is rewritten to `/v2/<endpoint>/...` before routing,
 * so the API key, rate limits, errors and answers are those of the /v2 routes.
 */

const ROOT_ROUTE = /^\/(?:run|runsync|health|purge-queue|requests|(?:status|status-sync|stream|cancel|retry)\/[^/?]+)\/?(?:\?|$)/;

/** The URL to route: `url` under `/v2/<endpointId>` when it is a root queue API path, else `url` unchanged. */
export function rootAliasUrl(url: string, endpointId: string): string {
  return ROOT_ROUTE.test(url) ? `/v2/${encodeURIComponent(endpointId)}${url}` : url;
}
