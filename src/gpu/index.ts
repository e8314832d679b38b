/**
 * @module gpu
 * GPU readings through nvidia-smi and rocm-smi: pure parsers, readers that never throw,
 * a sampler with per-job windows, the start-up presence check, and the CLI's table.
 * Layer: utility (docs/architecture.md): every layer may use it.
 */
export * from './format-table.js';
export * from './nvidia-smi-csv.js';
export * from './nvidia-smi-list.js';
export * from './parse-value.js';
export * from './presence.js';
export * from './read-amd.js';
export * from './read-gpus.js';
export * from './read-nvidia.js';
export * from './reading.js';
export * from './rocm-smi-json.js';
export * from './run-tool.js';
export * from './sampler.js';
export * from './visible-devices.js';
export * from './window-summary.js';
