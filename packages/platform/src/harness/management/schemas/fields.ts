/**
 * @module harness/management/schemas/fields
 * Field builders shared by the management schemas. Every message starts with the
 * field's name and says what it allows, so `formatIssues` prints it as is and only
 * appends the value received.
 */
import * as z from 'zod';

/** A string of 1..`max` characters, not all blank; `max` default 256. */
export function nonEmptyString(field: string, max = 256) {
  const message = `${field} must be a non-empty string of at most ${max} characters`;
  return z
    .string({ error: message })
    .max(max, { error: message })
    .refine((value) => value.trim().length > 0, { error: message });
}

/** An integer in [min, max] (max optional), in `unit`. */
export function integerIn(field: string, range: { min: number; max?: number }, unit = '') {
  const suffix = unit ? ` ${unit}` : '';
  const message =
    range.max === undefined
      ? `${field} must be an integer of at least ${range.min}${suffix}`
      : `${field} must be an integer from ${range.min} to ${range.max}${suffix}`;
  const base = z.number({ error: message }).int({ error: message }).min(range.min, { error: message });
  return range.max === undefined ? base : base.max(range.max, { error: message });
}

/** true or false. */
export function boolean(field: string) {
  return z.boolean({ error: `${field} must be true or false` });
}

/** An array of strings, each a command word (may be empty). */
export function stringList(field: string) {
  return z.array(z.string({ error: `each ${field} entry must be a string` }), {
    error: `${field} must be an array of strings`,
  });
}

/**
 * A field that an update refuses. Typed `never` so typed callers cannot send it; a
 * value that arrives anyway fails with `why` in the message.
 */
export function refusedOnUpdate(field: string, why: string) {
  return z.never({ error: `${field} cannot be changed by an update: ${why}` }).optional();
}

/** Environment variable names as POSIX shells accept them. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `env`: names matching ENV_NAME, string values. */
export function envMap(field: string) {
  return z.record(z.string().regex(ENV_NAME), z.string({ error: `each ${field} value must be a string (quote numbers and booleans)` }), {
    error: (issue) =>
      issue.code === 'invalid_key'
        ? `${field} names must match ${ENV_NAME.source} (letters, digits, underscore; not starting with a digit)`
        : issue.code === 'invalid_type'
          ? `${field} must be an object of string values, like {"LOG_LEVEL": "info"}`
          : undefined,
  });
}

/**
 * One exposed port, `<port_number>/<protocol>`, port 1..65535. The documented
 * protocols are http and tcp; another name (a deploy client sends `22/ssh`) is kept
 * as given, and the route logs a warning (see `undocumentedPortProtocols`).
 */
export const PORT_SPEC = /^([1-9][0-9]{0,4})\/([a-z][a-z0-9-]{0,15})$/i;

/** The protocols the platform documents for template ports. */
export const DOCUMENTED_PORT_PROTOCOLS = ['http', 'tcp'] as const;

/** The entries of `ports` whose protocol is not http or tcp (kept, with a warning). */
export function undocumentedPortProtocols(ports: readonly string[]): string[] {
  return ports.filter((port) => {
    const protocol = PORT_SPEC.exec(port)?.[2];
    return protocol !== undefined && !(DOCUMENTED_PORT_PROTOCOLS as readonly string[]).includes(protocol);
  });
}

/** `ports`: distinct `<port>/<protocol>` strings. */
export function portList(field: string) {
  const entry = `each ${field} entry must be "<port>/<protocol>" with port 1 to 65535 and a protocol name (http or tcp), like "8888/http"`;
  return z
    .array(
      z.string({ error: entry }).refine((value) => Number(PORT_SPEC.exec(value)?.[1] ?? 0) <= 65_535 && PORT_SPEC.test(value), {
        error: entry,
      }),
      { error: `${field} must be an array of strings like ["8888/http", "22/tcp"]` },
    )
    .refine((list) => new Set(list).size === list.length, {
      error: `${field} must not list the same port twice`,
    });
}

/** An absolute POSIX path. */
export function absolutePath(field: string) {
  const message = `${field} must be an absolute path starting with "/"`;
  return z.string({ error: message }).startsWith('/', { error: message });
}

/**
 * The error map of a strict object: an unknown field is named, with the list of
 * fields `what` accepts, so a typo (`imagename`) is caught and explained.
 */
export function unknownFieldsError(what: string, allowed: readonly string[]) {
  return (issue: { code?: string; keys?: string[] }): string | undefined => {
    if (issue.code !== 'unrecognized_keys') return undefined;
    const keys = issue.keys ?? [];
    return `unknown field${keys.length > 1 ? 's' : ''} ${keys.join(', ')} in ${what}; allowed fields: ${allowed.join(', ')}`;
  };
}
