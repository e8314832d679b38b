/**
 * @module gpu/read-nvidia
 * NVIDIA GPUs through `nvidia-smi --query-gpu`, limited by CUDA_VISIBLE_DEVICES.
 */
import { NVIDIA_SMI_ARGS, parseNvidiaSmiCsv } from './nvidia-smi-csv.js';
import { NVIDIA_SMI_LIST_ARGS, parseNvidiaSmiList } from './nvidia-smi-list.js';
import type { GpuReadResult } from './reading.js';
import { readVendorGpus } from './read-vendor.js';
import { runGpuTool, type RunToolOptions } from './run-tool.js';

/** MIG uuid -> parent GPU uuid from `nvidia-smi -L`; empty when that fails (MIG entries then name nothing). */
async function nvidiaMigParents(options: RunToolOptions): Promise<Map<string, string>> {
  const run = await runGpuTool('nvidia-smi', NVIDIA_SMI_LIST_ARGS, options);
  const parents = new Map<string, string>();
  if (run.kind !== 'ok') return parents;
  for (const gpu of parseNvidiaSmiList(run.stdout)) {
    for (const mig of gpu.migUuids) parents.set(mig, gpu.uuid);
  }
  return parents;
}

/**
 * Read NVIDIA GPUs. Never throws: no nvidia-smi, a failing or hanging one give
 * `{ ok: false, reason }`. Options: timeoutMs (default 3000), env (default process.env).
 */
export function readNvidiaGpus(options: RunToolOptions = {}): Promise<GpuReadResult> {
  return readVendorGpus({ vendor: 'nvidia', args: NVIDIA_SMI_ARGS, parse: parseNvidiaSmiCsv, migParents: nvidiaMigParents }, options);
}
