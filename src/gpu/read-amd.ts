/**
 * @module gpu/read-amd
 * AMD GPUs through `rocm-smi --json`, limited by HIP_VISIBLE_DEVICES.
 */
import type { GpuReadResult } from './reading.js';
import { readVendorGpus } from './read-vendor.js';
import { parseRocmSmiJson, ROCM_SMI_ARGS } from './rocm-smi-json.js';
import type { RunToolOptions } from './run-tool.js';

/**
 * Read AMD GPUs. Never throws: no rocm-smi, a failing or hanging one give
 * `{ ok: false, reason }`. Options: timeoutMs (default 3000), env (default process.env).
 */
export function readAmdGpus(options: RunToolOptions = {}): Promise<GpuReadResult> {
  return readVendorGpus({ vendor: 'amd', args: ROCM_SMI_ARGS, parse: parseRocmSmiJson }, options);
}
