/**
 * @module worker/serializable-check
 * JSON serialization of yielded values and handler metrics that, on failure, finds the
 * BigInt or cycle and names where it is (SW_OUTPUT_NOT_SERIALIZABLE).
 */
import { ServerlessWorkerError } from '../job/errors.js';
import { jsonShape } from '../job/json-shape.js';
import { MAX_JSON_DEPTH } from '../job/limits.js';
import { shortPath } from './short-path.js';

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
    // Too deep for JSON.stringify's stack: name where it passes the depth limit.
    const deep = error instanceof RangeError ? pathBeyond(value, root, MAX_JSON_DEPTH) : undefined;
    if (deep !== undefined) throw tooDeep(what, deep, error);
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

/** A value as JSON text and as the plain value that text parses back to. */
export interface JsonForm {
  /** What JSON.stringify gives: the bytes the platform path posts; undefined for undefined, a function or a Symbol. */
  readonly json: string | undefined;
  /** JSON.parse(json): plain objects, arrays, strings, finite numbers, booleans and null only. */
  readonly value: unknown;
}

/**
 * The one conversion of what a handler returns, yields or reports as progress: the JSON
 * the platform transport would post, and the value that JSON parses back to, which the
 * local modes (dry run, --serve-api, runJob, the in-process transport) store instead of
 * the handler's own object. So a function, a Symbol, a toJSON, a Buffer, a Date, a Map,
 * a class instance, NaN or -0 becomes the same thing in every mode, and nothing the
 * harness keeps can throw when it is copied or answered later.
 * @throws ServerlessWorkerError SW_OUTPUT_NOT_SERIALIZABLE (BigInt, cycle, throwing
 *   toJSON) or SW_OUTPUT_TOO_DEEP (nested past MAX_JSON_DEPTH), naming the path from `root`.
 */
export function toJsonForm(value: unknown, root: string, what = `Yielded ${root}`): JsonForm {
  const json = serializeOrThrow(value, root, what);
  if (json === undefined) return { json, value: undefined };
  // A string parses back to itself (lone surrogates included): no need to parse it.
  if (typeof value === 'string') return { json, value };
  // Text shorter than twice the limit cannot nest past it: most results skip the scan.
  if (json.length > 2 * MAX_JSON_DEPTH && jsonShape(json, { maxDepth: MAX_JSON_DEPTH, maxKeys: Infinity }).over === 'depth') {
    // JSON.parse does not recurse in V8: the parsed copy is safe to walk for the path.
    throw tooDeep(what, pathBeyond(JSON.parse(json), root, MAX_JSON_DEPTH) ?? root);
  }
  return { json, value: JSON.parse(json) as unknown };
}

function tooDeep(what: string, fullPath: string, cause?: unknown): ServerlessWorkerError {
  // A path past the limit has 1 000 steps or more: named as `output[0]×1001`, at most 200 characters.
  const path = shortPath(fullPath);
  return new ServerlessWorkerError(
    'SW_OUTPUT_TOO_DEEP',
    `${what} is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects, at ${path}. Flatten it, or send it as a JSON string.`,
    { found: path, maxDepth: MAX_JSON_DEPTH },
    cause === undefined ? undefined : { cause },
  );
}

function childPath(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/**
 * The path of the first array or object nested deeper than `maxDepth` (the value itself
 * at depth 1), walked without recursion and without calling toJSON; undefined when none is.
 */
export function pathBeyond(value: unknown, root: string, maxDepth: number): string | undefined {
  const stack: { readonly v: unknown; readonly path: string; readonly depth: number }[] = [{ v: value, path: root, depth: 1 }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const { v, path, depth } = top;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > maxDepth) return path;
    // Pushed last to first, so the walk goes in key order, depth first.
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i] as unknown, path: `${path}[${i}]`, depth: depth + 1 });
    } else {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i] as string;
        stack.push({ v: (v as Record<string, unknown>)[k], path: childPath(path, k), depth: depth + 1 });
      }
    }
  }
  return undefined;
}

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
          const found = visit((v as Record<string, unknown>)[k], childPath(path, k), k);
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
