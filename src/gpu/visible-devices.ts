/**
 * @module gpu/visible-devices
 * CUDA_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES limit which GPUs a worker may use, so
 * they limit what we report: a worker given one GPU of eight should not report the
 * other seven. nvidia-smi and rocm-smi ignore these variables, hence this filter.
 */
import type { GpuReading } from './reading.js';

/** The variable that limits each vendor's GPUs. */
export const VISIBLE_DEVICES_VARIABLE = { nvidia: 'CUDA_VISIBLE_DEVICES', amd: 'HIP_VISIBLE_DEVICES' } as const;

/**
 * The entries of a visible-devices value, or undefined when the variable is unset (all
 * GPUs visible). An empty or blank value gives `[]`: no GPU visible.
 */
export function parseVisibleDevices(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

export interface VisibleFilterResult {
  visible: GpuReading[];
  hidden: number;
}

/** How an entry names a GPU: `0x18f6...` (rocm-smi Unique ID) and `GPU-18f6...` (HIP) are the same AMD card. */
function uuidForms(reading: GpuReading): string[] {
  const uuid = reading.uuid.toLowerCase();
  if (reading.vendor === 'amd' && uuid.startsWith('0x')) return [uuid, `gpu-${uuid.slice(2)}`];
  return [uuid];
}

/**
 * Keep the GPUs that `entries` names, in the order named. An entry is an index (the
 * tool's index), a uuid, a unique uuid prefix of at least `GPU-` plus one character (as
 * CUDA allows), or a MIG instance uuid found in `migParents` (MIG uuid -> parent GPU
 * uuid). As CUDA does, the first entry that names no GPU ends the list: `-1` hides all.
 */
export function filterVisibleGpus(
  gpus: readonly GpuReading[],
  entries: readonly string[] | undefined,
  migParents: ReadonlyMap<string, string> = new Map(),
): VisibleFilterResult {
  if (entries === undefined) return { visible: [...gpus], hidden: 0 };
  const chosen = new Map<GpuReading, string[]>();
  for (const raw of entries) {
    const entry = raw.toLowerCase();
    let match: GpuReading | undefined;
    let mig: string | undefined;
    if (/^\d+$/.test(entry)) {
      match = gpus.find((g) => g.index === Number(entry));
    } else if (entry.startsWith('mig-')) {
      const parentUuid = migParents.get(raw) ?? migParents.get(entry);
      match = parentUuid ? gpus.find((g) => g.uuid.toLowerCase() === parentUuid.toLowerCase()) : undefined;
      mig = raw;
    } else if (entry.length > 'gpu-'.length || entry.startsWith('0x')) {
      const exact = gpus.filter((g) => uuidForms(g).includes(entry));
      const prefixed = gpus.filter((g) => uuidForms(g).some((form) => form.startsWith(entry)));
      match = exact[0] ?? (prefixed.length === 1 ? prefixed[0] : undefined);
    }
    if (!match) break;
    const migs = chosen.get(match) ?? [];
    if (mig) migs.push(mig);
    chosen.set(match, migs);
  }
  const visible = [...chosen].map(([gpu, migs]) => (migs.length > 0 ? { ...gpu, migInstances: migs } : gpu));
  return { visible, hidden: gpus.length - visible.length };
}
