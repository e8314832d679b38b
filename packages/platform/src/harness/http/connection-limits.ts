/**
 * @module harness/http/connection-limits
 * How many connections the harness takes at once, and how long a request may take to
 * arrive. 20 000 idle connections used to fill the process's descriptor table: every new
 * connection failed for a minute and outgoing calls (load-balancing pings, webhooks, the
 * database) failed with EMFILE; a body sent a byte every 5 s stayed open for minutes
 * (issue 32). Now:
 * - at most `maxConnections` client connections (default: the process's descriptor limit
 *   less a reserve kept for everything else, DESCRIPTOR_RESERVE); a connection past it is
 *   closed at once;
 * - a connection whose request headers have not all arrived after `headersTimeoutMs`
 *   (an idle fresh connection too) is answered 400 and closed;
 * - a request whose body has not all arrived `requestTimeoutMs` after it began likewise.
 *   Neither limits how long an answer may take (/runsync waits, streams, long polls).
 */
import { execFileSync } from 'node:child_process';
const { readFileSync } = process.getBuiltinModule('node:fs');

/** Default time for a request's headers to arrive, ms (Node's own is 60 s). */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** Default time for a whole request (headers and body) to arrive, ms (fastify's own is none). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** How often Node looks for connections past those times, ms (its own default is 30 s). */
export const CONNECTION_CHECK_MS = 1_000;
/** Connections taken when the descriptor limit cannot be read. */
const FALLBACK_MAX_CONNECTIONS = 1_024;

/** Descriptors kept for what is not a client connection: a quarter of the limit, at least 128. */
export function descriptorReserve(limit: number): number {
  return Math.max(128, Math.floor(limit / 4));
}

/** The default maxConnections for a descriptor limit: the limit less its reserve, at least 32. */
export function maxConnectionsFor(limit: number): number {
  return Math.max(32, limit - descriptorReserve(limit));
}

/** The process's soft limit on open descriptors (RLIMIT_NOFILE), or undefined where it cannot be read. */
export function descriptorLimit(): number | undefined {
  try {
    const match = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (match?.[1] !== undefined) return Number(match[1]);
  } catch {
    // not Linux: ask the shell below
  }
  if (process.platform === 'win32') return undefined;
  try {
    const text = execFileSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8', timeout: 2_000 }).trim();
    return /^\d+$/.test(text) ? Number(text) : undefined;
  } catch {
    return undefined;
  }
}

/** maxConnections when none is given: from this process's descriptor limit. */
export function defaultMaxConnections(): number {
  const limit = descriptorLimit();
  return limit === undefined ? FALLBACK_MAX_CONNECTIONS : maxConnectionsFor(limit);
}
