/**
 * @module harness/postgres/unavailable
 * Whether an error means the database cannot be reached right now (down, restarting,
 * refusing connections, the connection lost mid-statement), as opposed to a bug or bad
 * data. The HTTP layer answers such an error 503 SW_STORE_UNAVAILABLE with Retry-After
 * instead of 500 SW_INTERNAL (a 5 s PostgreSQL restart used to answer 500s, issue 32):
 * the request may be sent again once the database is back.
 */

/** postgres.js's own codes for a connection that could not be made or was lost. */
const DRIVER_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT']);
/** Socket errors of a connection to the database. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
]);
/**
 * SQLSTATEs of a server that is going away or not taking connections: class 08
 * (connection exception), 57P01-57P03 (admin/crash shutdown, cannot connect now),
 * 53300 (too many connections).
 */
const SERVER_STATES = /^(08...|57P0[1-3]|53300)$/;

/** What is down, in words, when `error` (or an error in its `cause` chain) says the database cannot be reached; undefined otherwise. */
export function databaseUnavailable(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const found = current as { code?: unknown; message?: unknown; severity?: unknown; cause?: unknown; errors?: unknown };
    const code = typeof found.code === 'string' ? found.code : undefined;
    const message = typeof found.message === 'string' ? found.message : String(code);
    if (code !== undefined) {
      if (DRIVER_CODES.has(code) || SOCKET_CODES.has(code)) return `PostgreSQL cannot be reached (${code}: ${message})`;
      if (SERVER_STATES.test(code) && typeof found.severity === 'string') return `PostgreSQL is not taking statements (SQLSTATE ${code}: ${message})`;
    }
    // An AggregateError (a connection tried on several addresses) holds the socket errors.
    if (Array.isArray(found.errors) && found.errors.length > 0) current = found.errors[0];
    else current = found.cause;
  }
  return undefined;
}
