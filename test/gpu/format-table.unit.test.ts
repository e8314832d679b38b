import { describe, expect, it } from 'vitest';
import { formatGpuTable } from '../../src/gpu/format-table.js';
import { parseNvidiaSmiCsv } from '../../src/gpu/nvidia-smi-csv.js';
import type { GpuReadResult } from '../../src/gpu/reading.js';
import { fixture, NVIDIA_2X_H100, NVIDIA_NA_FIELDS } from './fake-tools.js';

function readingsOf(text: string): GpuReadResult {
  const { gpus } = parseNvidiaSmiCsv(text);
  const [first, ...rest] = gpus;
  if (!first) throw new Error('fixture has no GPU');
  return { ok: true, vendor: 'nvidia', tool: 'nvidia-smi', gpus: [first, ...rest], hidden: 0, readAt: 0 };
}

describe('formatGpuTable', () => {
  it('prints an aligned table with a header line', () => {
    const lines = formatGpuTable(readingsOf(fixture(NVIDIA_2X_H100)))
      .trimEnd()
      .split('\n');
    expect(lines[0]).toBe('nvidia-smi: 2 GPUs, driver 550.54.15');
    expect(lines[1]).toMatch(/^IDX {2}NAME +UUID +UTIL {2}MEM ACT {2}MEMORY MiB \(used \/ total\) {2}TEMP {2}POWER W \(draw \/ limit\)$/);
    expect(lines[2]).toContain('NVIDIA H100 80GB HBM3');
    expect(lines[2]).toContain('87%');
    expect(lines[2]).toContain('40321 / 81559');
    expect(lines[2]).toContain('64 C');
    expect(lines[2]).toContain('512 / 700');
    // Aligned: every column starts at the same offset on every line.
    const uuidAt = lines[1]?.indexOf('UUID');
    expect(lines[2]?.indexOf('GPU-')).toBe(uuidAt);
    expect(lines[3]?.indexOf('GPU-')).toBe(uuidAt);
  });

  it('prints "-" for figures the tool did not report', () => {
    const lines = formatGpuTable(readingsOf(fixture(NVIDIA_NA_FIELDS))).split('\n');
    expect(lines[2]).toMatch(/14% +- +512 \/ 6144 +47 C +-$/);
    expect(lines[3]).toMatch(/Tesla T4 .* - +0% +0 \/ 15360 +- +27 \/ 70$/);
  });

  it('prints the reason when there are no readings', () => {
    const text = formatGpuTable({
      ok: false,
      reason: 'not-installed',
      message: 'nvidia-smi: not found on PATH; rocm-smi: not found on PATH',
      attempts: [],
      readAt: 0,
    });
    expect(text).toBe('No GPU readings (not-installed): nvidia-smi: not found on PATH; rocm-smi: not found on PATH\n');
  });
});
