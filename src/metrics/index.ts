/**
 * @module metrics
 * Prometheus metrics: every name in one table, a registry per createMetrics() call,
 * job recording helpers in base units, and the binding of a GPU sampler to the gauges.
 * Layer: utility (docs/architecture.md): every layer may use it.
 */
export * from './bind-gpu.js';
export * from './create-metrics.js';
export * from './names.js';
export * from './record-job.js';
export * from './metrics-server.js';
