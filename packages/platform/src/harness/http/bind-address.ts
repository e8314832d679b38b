/**
 * @module harness/http/bind-address
 * Which addresses count as loopback, and the rule that keeps an unauthenticated
 * harness off the network: without an API key it listens on loopback only, unless
 * the caller explicitly allows otherwise.
 */
import { isIP } from 'node:net';
import { ServerlessWorkerError } from 'serverless-worker/internal';

/** True for localhost, 127.0.0.0/8, ::1 and IPv4-mapped loopback. */
export function isLoopbackHost(host: string): boolean {
  const bare = host
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  const v4 = bare.startsWith('::ffff:') ? bare.slice('::ffff:'.length) : bare;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  // The URL parser writes an IPv6 address in its shortest form: ::1 whatever the spelling.
  return isIP(bare) === 6 && new URL(`http://[${bare}]/`).hostname === '[::1]';
}

/** Throw SW_INSECURE_BIND when `host` is not loopback and neither a key nor the explicit opt-out is given. */
export function checkBindAddress(host: string, hasApiKey: boolean, allowUnauthenticatedNonLoopback: boolean): void {
  if (hasApiKey || allowUnauthenticatedNonLoopback || isLoopbackHost(host)) return;
  throw new ServerlessWorkerError(
    'SW_INSECURE_BIND',
    `Refusing to listen on ${host} without an API key: anyone who can reach it could run jobs. ` +
      'Set an API key (--api-key or SERVERLESS_WORKER_API_KEY), listen on 127.0.0.1, or pass --insecure-no-auth.',
    { host },
  );
}

/** The URL a local client uses for a listening address (`0.0.0.0` and `::` are reached on loopback). */
export function localBaseUrl(address: string, port: number): string {
  if (address === '0.0.0.0') return `http://127.0.0.1:${port}`;
  if (address === '::') return `http://[::1]:${port}`;
  return isIP(address) === 6 ? `http://[${address}]:${port}` : `http://${address}:${port}`;
}
