/**
 * @module worker/serializable-check
 * JSON serialization of yielded values and handler metrics that, on failure, finds the
 * BigInt or cycle and names where it is (SW_OUTPUT_NOT_SERIALIZABLE).
 */
import { ServerlessWorkerError } from '../job/errors.js';

/**
 * `JSON.stringify(value)`, with failures turned into SW_OUTPUT_NOT_SERIALIZABLE naming
 * the spot, as a path from `root` (`'output'`, `'metrics'`). The one check of handler
 * results and yields; `what` starts the message (default `Yielded <root>`).
 * @returns the JSON text, or undefined where JSON.stringify gives undefined.
 * @throws ServerlessWorkerError SW_OUTPUT_NOT_SERIALIZABLE for a BigInt, a cycle or a throwing toJSON.
 */
export function serializeOrThrow(value: unknown, root: string, what = `Yielded ${root}`): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (error) {
    let found: string | undefined;
    try {
      found = findUnserializable(value, root);
    } catch {
      found = undefined; // a getter or toJSON that throws again, or nesting too deep to walk
    }
    const reason = found ?? `${root} (${error instanceof Error ? error.message : String(error)})`;
    throw new ServerlessWorkerError(
      'SW_OUTPUT_NOT_SERIALIZABLE',
      `${what} cannot be serialized to JSON: ${reason}. Convert BigInt to string and break cycles.`,
      { found: reason },
      { cause: error },
    );
  }
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * Walks `value` as JSON.stringify would (calling toJSON) and describes the first BigInt,
 * cycle or throwing toJSON, with its path from `root`; undefined when there is none.
 */
export function findUnserializable(value: unknown, root: string): string | undefined {
  const ancestors = new Map<object, string>();
  const visit = (input: unknown, path: string, key: string): string | undefined => {
    let v = input;
    if ((typeof v === 'object' && v !== null) || typeof v === 'bigint') {
      const toJSON = (v as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') {
        try {
          v = toJSON.call(v, key) as unknown;
        } catch (error) {
          return `a toJSON() that threw at ${path} (${error instanceof Error ? error.message : String(error)})`;
        }
      }
    }
    if (typeof v === 'bigint') return `a BigInt at ${path}`;
    if (typeof v !== 'object' || v === null) return undefined;
    const seen = ancestors.get(v);
    if (seen !== undefined) return `a cycle at ${path} (it refers back to ${seen})`;
    ancestors.set(v, path);
    try {
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          const found = visit(v[i] as unknown, `${path}[${i}]`, String(i));
          if (found !== undefined) return found;
        }
      } else {
        for (const k of Object.keys(v)) {
          const childPath = IDENTIFIER.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`;
          const found = visit((v as Record<string, unknown>)[k], childPath, k);
          if (found !== undefined) return found;
        }
      }
    } finally {
      ancestors.delete(v);
    }
    return undefined;
  };
  return visit(value, root, '');
}
