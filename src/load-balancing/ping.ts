/**
 * @module load-balancing/ping
 * `GET /ping` of a load-balancing worker, answered from the lifecycle state as the
 * platform reads it: 204 while starting or initializing (the platform measures cold
 * start from the first 204 to the first 200), 200 once ready, 503 while draining,
 * stopped, or after a failed start-up, then with the failure's reason (anything but
 * 200/204 is unhealthy and taken out of the routing pool).
 */
import type { ServerResponse } from 'node:http';
import type { LifecycleState } from '../worker/lifecycle-state.js';

/** The /ping status for a lifecycle state (and whether start-up failed). */
export function pingStatus(state: LifecycleState, failed: boolean): 200 | 204 | 503 {
  if (failed) return 503;
  switch (state) {
    case 'starting':
    case 'initializing':
      return 204;
    case 'ready':
      return 200;
    case 'draining':
    case 'stopped':
      return 503;
  }
}

/** Longest failure reason /ping carries (as the platform's unhealthy report). */
export const PING_REASON_MAX = 256;

/** Answer /ping on `response`; `failure`: why start-up failed (undefined while it has not), sent as `reason`. */
export function answerPing(response: ServerResponse, state: LifecycleState, failure: string | undefined): void {
  const status = pingStatus(state, failure !== undefined);
  if (status === 204) {
    response.writeHead(204);
    response.end();
    return;
  }
  const body = JSON.stringify(failure !== undefined ? { status: 'unhealthy', reason: failure.slice(0, PING_REASON_MAX) } : { status: state });
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  response.end(body);
}

/** Whether `url` (path and query) is /ping. */
export function isPingPath(url: string | undefined): boolean {
  const path = (url ?? '/').split('?')[0];
  return path === '/ping' || path === '/ping/';
}
