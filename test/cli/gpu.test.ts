/**
 * `serverless-worker gpu` run as a real child process, with PATH pointing at the fake
 * nvidia-smi / rocm-smi in test/fixtures/bin.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { GpuReadResultSchema } from '../../src/gpu/reading.js';
import { FAKE_BIN_DIR, NVIDIA_2X_H100, ROCM_2X_MI300X, tempDir } from '../gpu/fake-tools.js';
import { nodeArgsFor } from '../compiled-fixtures.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE_DIR = dirname(process.execPath);
// Bounds a run; node starts slowly on a loaded machine.
const RUN_TIMEOUT_MS = 25_000;
// --timeout for fakes that should answer: far above their start-up, so only hang tests time out.
const ANSWER_TIMEOUT = '20000';

/** src/cli/main.ts (its compiled bundle: test/compiled-fixtures.ts) with `gpu ...args`; the fake tools come first on PATH, node after. */
const CLI = nodeArgsFor('src/cli/main.ts');

function runGpuCommand(args: string[], vars: Record<string, string>) {
  return execa(process.execPath, [...CLI, 'gpu', ...args], {
    cwd: ROOT,
    env: { PATH: `${FAKE_BIN_DIR}:${NODE_DIR}`, HOME: process.env.HOME ?? ROOT, FAKE_GPU_NODE: process.execPath, ...vars },
    extendEnv: false,
    reject: false,
    timeout: RUN_TIMEOUT_MS,
  });
}

/** The same with PATH holding no GPU tool at all (node's own folder may hold a real nvidia-smi on a GPU machine). */
function runGpuCommandWithoutTools(args: string[]) {
  return execa(process.execPath, [...CLI, 'gpu', ...args], {
    cwd: ROOT,
    env: { PATH: tempDir(), HOME: process.env.HOME ?? ROOT },
    extendEnv: false,
    reject: false,
    timeout: RUN_TIMEOUT_MS,
  });
}

describe('serverless-worker gpu', () => {
  it('prints the readings as an aligned table', async () => {
    const result = await runGpuCommand(['--timeout', ANSWER_TIMEOUT], { FAKE_NVIDIA_SMI_FIXTURE: NVIDIA_2X_H100 });
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('nvidia-smi: 2 GPUs, driver 550.54.15');
    expect(lines[1]).toMatch(/^IDX {2}NAME +UUID +UTIL/);
    expect(lines[2]).toMatch(/^ {2}0 {2}NVIDIA H100 80GB HBM3 {2}GPU-6f3c2b1a-9d8e-4f70-a1b2-c3d4e5f60718 +87% +45% +40321 \/ 81559 +64 C +512 \/ 700$/);
    expect(lines[3]).toMatch(/^ {2}1 {2}NVIDIA H100 80GB HBM3 {2}GPU-0a1b2c3d/);
    expect(lines[2]?.indexOf('GPU-')).toBe(lines[1]?.indexOf('UUID'));
  });

  it('--json prints the readings for scripts', async () => {
    const result = await runGpuCommand(['--json', '--timeout', ANSWER_TIMEOUT], {
      FAKE_NVIDIA_SMI_MODE: 'fail',
      FAKE_ROCM_SMI_FIXTURE: ROCM_2X_MI300X,
      HIP_VISIBLE_DEVICES: '1',
    });
    expect(result.exitCode, result.stderr).toBe(0);
    const parsed = GpuReadResultSchema.parse(JSON.parse(result.stdout));
    expect(parsed).toMatchObject({ ok: true, vendor: 'amd', tool: 'rocm-smi', hidden: 1 });
    expect(parsed.ok && parsed.gpus.map((g) => [g.index, g.name, g.utilizationPercent])).toEqual([[1, 'AMD Instinct MI300X', 0]]);
  });

  it('with no GPU prints the reason and exits 0; --json gives the reason too', async () => {
    const table = await runGpuCommandWithoutTools([]);
    expect(table.exitCode, table.stderr).toBe(0);
    expect(table.stdout).toBe('No GPU readings (not-installed): nvidia-smi: not found on PATH; rocm-smi: not found on PATH');
    const json = await runGpuCommandWithoutTools(['--json']);
    expect(json.exitCode).toBe(0);
    expect(GpuReadResultSchema.parse(JSON.parse(json.stdout))).toMatchObject({ ok: false, reason: 'not-installed' });
  });

  it('--expect exits 1 with what was expected and what was found', async () => {
    const result = await runGpuCommand(['--expect', 'nvidia', '--timeout', ANSWER_TIMEOUT], {
      FAKE_NVIDIA_SMI_MODE: 'fail',
      FAKE_ROCM_SMI_FIXTURE: ROCM_2X_MI300X,
    });
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toMatch(/^rocm-smi: 2 GPUs/);
    expect(result.stderr).toContain(
      'serverless-worker gpu: Expected an NVIDIA GPU (nvidia-smi) but found 2 AMD GPUs (AMD Instinct MI300X); nvidia-smi: exited with code 9',
    );
  });

  it('a hanging tool is cut off at --timeout and the command still exits 0', async () => {
    const result = await runGpuCommand(['--timeout', '300'], { FAKE_NVIDIA_SMI_MODE: 'hang', FAKE_ROCM_SMI_MODE: 'hang' });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      'No GPU readings (timed-out): nvidia-smi: did not answer within 300 ms and was killed; rocm-smi: did not answer within 300 ms and was killed',
    );
  });

  it('refuses a bad --timeout with exit code 2, and --help documents the exit codes', async () => {
    const bad = await runGpuCommandWithoutTools(['--timeout', 'soon']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("option '--timeout <ms>' argument 'soon' is invalid");
    const help = await runGpuCommandWithoutTools(['--help']);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('--json');
    expect(help.stdout).toMatch(/0 +readings printed, or no GPU/);
    expect(help.stdout).toMatch(/1 +--expect was given/);
  });
});
