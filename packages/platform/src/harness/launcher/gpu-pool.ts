/**
 * @module harness/launcher/gpu-pool
 * The machine's GPUs as the launcher hands them out: each worker gets `gpuCount`
 * devices of its own, returned when its process exits. Never shared. The devices
 * reach the worker through CUDA_VISIBLE_DEVICES (NVIDIA) or HIP_VISIBLE_DEVICES (AMD).
 */

export type GpuPoolVendor = 'nvidia' | 'amd';

export interface GpuPoolSettings {
  vendor: GpuPoolVendor;
  /** Device ids as the visible-devices variable takes them: indexes or UUIDs. */
  devices: readonly string[];
  /** The GPU type, for the pods view (like "NVIDIA H100 80GB HBM3"); default "GPU". */
  name?: string;
}

export class GpuPool {
  readonly vendor: GpuPoolVendor;
  readonly name: string;
  readonly #free: string[];
  readonly #all: readonly string[];

  constructor(settings: GpuPoolSettings) {
    this.vendor = settings.vendor;
    this.name = settings.name ?? 'GPU';
    this.#all = [...new Set(settings.devices)];
    this.#free = [...this.#all];
  }

  /** The variable that names a worker's devices. */
  get variable(): 'CUDA_VISIBLE_DEVICES' | 'HIP_VISIBLE_DEVICES' {
    return this.vendor === 'amd' ? 'HIP_VISIBLE_DEVICES' : 'CUDA_VISIBLE_DEVICES';
  }

  get total(): number {
    return this.#all.length;
  }

  get freeCount(): number {
    return this.#free.length;
  }

  /** `count` free devices (lowest first), or undefined when fewer are free. */
  take(count: number): string[] | undefined {
    if (count > this.#free.length) return undefined;
    this.#free.sort((a, b) => this.#all.indexOf(a) - this.#all.indexOf(b));
    return this.#free.splice(0, count);
  }

  /** Return devices taken earlier. */
  give(devices: readonly string[]): void {
    for (const device of devices) {
      if (this.#all.includes(device) && !this.#free.includes(device)) this.#free.push(device);
    }
  }
}
