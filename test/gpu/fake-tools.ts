/**
 * @module test/gpu/fake-tools
 * Environments for running the fake nvidia-smi / rocm-smi in test/fixtures/bin. PATH
 * holds only the fake folder (or an empty one), so a real tool on the test machine can
 * never answer in their place; FAKE_GPU_NODE lets the fakes find node without PATH.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const FAKE_BIN_DIR = fileURLToPath(new URL('../fixtures/bin', import.meta.url));
export const FIXTURE_DIR = fileURLToPath(new URL('../fixtures/gpu', import.meta.url));

export const NVIDIA_2X_H100 = 'nvidia-smi.2x-h100.documented-format.csv';
export const NVIDIA_MIG_A100 = 'nvidia-smi.mig-a100.documented-format.csv';
export const NVIDIA_MIG_A100_LIST = 'nvidia-smi-L.mig-a100.documented-format.txt';
export const NVIDIA_NA_FIELDS = 'nvidia-smi.na-fields.documented-format.csv';
export const NVIDIA_EXTRA_COLUMNS = 'nvidia-smi.extra-columns-blank-lines.documented-format.csv';
export const ROCM_2X_MI300X = 'rocm-smi.2x-mi300x.documented-format.json';
export const ROCM_OLDER_KEYS = 'rocm-smi.1x-rx7900xtx-older-keys-na.documented-format.json';

/**
 * Timeout for reads that should succeed: far above a fake's start-up even on a loaded
 * machine, so that only the hang tests ever see a timeout.
 */
export const ANSWER_TIMEOUT_MS = 20_000;

/** The text of a fixture. */
export function fixture(name: string): string {
  return readFileSync(join(FIXTURE_DIR, name), 'utf8');
}

/** A fresh empty folder. */
export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'sw-gpu-test-'));
}

/** An environment whose PATH finds only the fake tools, with `vars` added. */
export function fakeToolEnv(vars: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: FAKE_BIN_DIR, FAKE_GPU_NODE: process.execPath, ...vars };
}

/** An environment whose PATH finds no GPU tool at all. */
export function noToolEnv(vars: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: tempDir(), ...vars };
}

/** A call log file and a reader of its lines (one per fake tool run). */
export function callLog(): { path: string; calls: () => string[] } {
  const path = join(tempDir(), 'calls.log');
  return {
    path,
    calls: () => {
      try {
        return readFileSync(path, 'utf8').split('\n').filter(Boolean);
      } catch {
        return [];
      }
    },
  };
}
