/**
 * @module gpu/presence
 * The start-up check for images that expect a GPU. The worker runtime calls it before
 * taking jobs and, when it fails, reports unhealthy through the heartbeat
 * (`status=unhealthy&check=gpu&reason=<message>`) and exits with the message.
 */
import { combineAttempts, readGpus } from './read-gpus.js';
import { clip, type GpuReading, type GpuReadResult, type GpuVendor } from './reading.js';
import type { RunToolOptions } from './run-tool.js';

/** What an image expects: an NVIDIA GPU, an AMD GPU, or either. */
export type GpuExpectation = GpuVendor | 'any';

/** The name of this check in the heartbeat's unhealthy report. */
export const GPU_HEALTH_CHECK_NAME = 'gpu';

/** The heartbeat's `reason` holds at most this many characters (worker protocol, section 1). */
export const HEALTH_REASON_MAX_CHARS = 256;

export type GpuPresence =
  | { ok: true; vendor: GpuVendor; gpus: GpuReading[]; readings: GpuReadResult }
  | {
      ok: false;
      expected: GpuExpectation;
      /** What was found instead, e.g. "1 AMD GPU (AMD Instinct MI300X)" or "no GPU (nvidia-smi: not found on PATH)". */
      found: string;
      /** "Expected an NVIDIA GPU (nvidia-smi) but found ...", at most 256 chars: the heartbeat reason and the exit message. */
      message: string;
      /** What was read: the other vendor's GPUs, or the "no GPU readings" state. */
      readings: GpuReadResult;
    };

const EXPECTED_TEXT: Record<GpuExpectation, string> = {
  nvidia: 'an NVIDIA GPU (nvidia-smi)',
  amd: 'an AMD GPU (rocm-smi)',
  any: 'a GPU (nvidia-smi or rocm-smi)',
};

const VENDOR_TEXT: Record<GpuVendor, string> = { nvidia: 'NVIDIA', amd: 'AMD' };

/** "2 NVIDIA GPUs (NVIDIA H100 80GB HBM3)" or "no GPU (nvidia-smi: ...; rocm-smi: ...)". */
export function describeFound(result: GpuReadResult): string {
  if (!result.ok) return `no GPU (${result.message})`;
  const names = [...new Set(result.gpus.map((g) => g.name || 'unnamed'))].join(', ');
  const n = result.gpus.length;
  return `${n} ${VENDOR_TEXT[result.vendor]} GPU${n === 1 ? '' : 's'} (${names})`;
}

/**
 * Check that the expected GPU answers. Reads the expected vendor's tool first; when
 * it gives nothing, reads the other so that the message says what is there instead.
 * Never throws. Options: timeoutMs (default 3000 per tool), env (default process.env).
 */
export async function checkGpuPresence(expect: GpuExpectation, options: RunToolOptions = {}): Promise<GpuPresence> {
  const wanted: GpuVendor[] = expect === 'any' ? ['nvidia', 'amd'] : [expect];
  const first = await readGpus({ ...options, vendors: wanted });
  if (first.ok) return { ok: true, vendor: first.vendor, gpus: first.gpus, readings: first };
  let readings: GpuReadResult = first;
  if (expect !== 'any') {
    const other = await readGpus({ ...options, vendors: [expect === 'nvidia' ? 'amd' : 'nvidia'] });
    readings = other.ok ? other : combineAttempts([...first.attempts, ...other.attempts]);
  }
  const found = readings.ok ? `${describeFound(readings)}; ${first.message}` : describeFound(readings);
  const message = clip(`Expected ${EXPECTED_TEXT[expect]} but found ${found}`, HEALTH_REASON_MAX_CHARS);
  return { ok: false, expected: expect, found, message, readings };
}
