/**
 * @module log/url-for-log
 * The one way a URL goes into a log line or an error message: scheme, host and path;
 * user info (`user:password@`), query and fragment, where tokens and ids often ride,
 * are left out and the line says so.
 */

/** `url` for logs: no credentials, query or fragment; `[unparseable URL]` when it is not a URL. */
export function urlForLog(url: string): string {
  try {
    const parsed = new URL(url);
    const hidden = parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '';
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}${hidden ? ' (query, fragment and credentials hidden)' : ''}`;
  } catch {
    return '[unparseable URL]';
  }
}
