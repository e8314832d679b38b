/**
 * @module harness/load-balancing/redact-url
 * A registered worker URL as the workers list and the dashboard show it: user info
 * (`user:password@`) replaced by `***@`, so that credentials a worker registered with are
 * never shown (they used to be, verbatim; issue 32). The proxy still uses the URL as
 * registered.
 */

/** `url` with its user info hidden; unchanged when it has none or is not a URL. */
export function redactUrlCredentials(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (parsed.username === '' && parsed.password === '') return url;
  parsed.username = '***';
  parsed.password = '';
  return parsed.toString();
}
