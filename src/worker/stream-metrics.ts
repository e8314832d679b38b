/**
 * @module worker/stream-metrics
 * Lets a streaming handler attach its own metrics to a yielded value:
 * `yield withMetrics('tok', { output_tokens: 1 })`. The stream chunker unwraps the
 * value and merges these metrics into the metrics of every chunk the value becomes;
 * the runtime's own keys (`stream_index` and the part markers) win on a clash.
 */

/**
 * Metric names that inference workers report in stream chunks (spec section 4.4).
 * Listed for autocompletion only: any other JSON-serializable key is allowed too.
 */
export interface InferenceStreamMetrics {
  readonly input_tokens?: number;
  readonly output_tokens?: number;
  readonly avg_gen_throughput?: number;
  readonly avg_prompt_throughput?: number;
  readonly cpu_kv_cache_usage?: number;
  readonly gpu_kv_cache_usage?: number;
  readonly pending?: number;
  readonly running?: number;
  readonly swapped?: number;
  readonly scenario?: string;
}

/** Metrics a handler may attach to a yielded value: the known names above, or any other key. */
export type HandlerStreamMetrics = InferenceStreamMetrics & Readonly<Record<string, unknown>>;

// A symbol rather than a duck-typed shape, so that a handler's own `{ value, metrics }`
// object is never mistaken for a tagged value.
const TAG: unique symbol = Symbol('serverless-worker.withMetrics');

/** A yielded value with handler metrics attached; build it with {@link withMetrics}. */
export interface WithMetrics<T = unknown> {
  readonly [TAG]: true;
  readonly value: T;
  readonly metrics: HandlerStreamMetrics;
}

/**
 * Attaches `metrics` to a value a handler yields. Every chunk the value is split into
 * carries these metrics, merged under the runtime's keys (`stream_index`, part markers),
 * which win on a clash. Tagging a tagged value merges both sets, the outer one winning.
 * The metrics must be JSON-serializable (no BigInt, no cycles); the 1 MiB chunk limit
 * applies to `output` only.
 */
export function withMetrics<T>(value: T, metrics: HandlerStreamMetrics): WithMetrics<T> {
  return Object.freeze({ [TAG]: true as const, value, metrics });
}

/** True when `value` was built by {@link withMetrics}. */
export function hasMetrics(value: unknown): value is WithMetrics {
  return typeof value === 'object' && value !== null && (value as { [TAG]?: unknown })[TAG] === true;
}

/**
 * Splits a yielded value into the plain value and the handler metrics attached to it
 * (undefined when none). Nested tags are merged, the outermost winning.
 */
export function unwrapMetrics(value: unknown): { value: unknown; metrics: HandlerStreamMetrics | undefined } {
  if (!hasMetrics(value)) return { value, metrics: undefined };
  let metrics: HandlerStreamMetrics = value.metrics;
  let inner: unknown = value.value;
  while (hasMetrics(inner)) {
    metrics = { ...inner.metrics, ...metrics };
    inner = inner.value;
  }
  return { value: inner, metrics };
}
