/**
 * @module gpu/nvidia-smi-list
 * `nvidia-smi -L` lists each GPU and, under it, its MIG instances. `--query-gpu` shows
 * only the parent GPUs, so this list is how a `MIG-...` uuid in CUDA_VISIBLE_DEVICES is
 * traced to the GPU that holds it.
 */

/** Arguments for the device list. */
export const NVIDIA_SMI_LIST_ARGS: readonly string[] = ['-L'];

export interface NvidiaListedGpu {
  index: number;
  uuid: string;
  /** MIG instance uuids under this GPU, in listed order. */
  migUuids: string[];
}

// GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5d5ba0d6-...)
const GPU_LINE = /^GPU\s+(\d+):.*\(UUID:\s*(GPU-[^)\s]+)\)/;
// "  MIG 3g.40gb Device 0: (UUID: MIG-c6d4...)"; drivers before R470 print MIG-GPU-<uuid>/<gi>/<ci>.
const MIG_LINE = /^\s*MIG\s.*\(UUID:\s*(MIG-[^)\s]+)\)/;

/** Parse `nvidia-smi -L`. Never throws; lines it does not recognise are ignored. */
export function parseNvidiaSmiList(text: string): NvidiaListedGpu[] {
  const gpus: NvidiaListedGpu[] = [];
  for (const line of text.split(/\r?\n/)) {
    const gpu = GPU_LINE.exec(line);
    if (gpu?.[1] && gpu[2]) {
      gpus.push({ index: Number(gpu[1]), uuid: gpu[2], migUuids: [] });
      continue;
    }
    const mig = MIG_LINE.exec(line);
    const parent = gpus.at(-1);
    if (mig?.[1] && parent) parent.migUuids.push(mig[1]);
  }
  return gpus;
}
