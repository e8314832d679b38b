/**
 * `harness --job-log-bytes`, `--job-log-keep-ms`, `--job-log-total-bytes` (issue 32 item 9's
 * bounds on each job's own log lines, as flags): the flags go through the harness's own
 * commander options and settings schema into the launcher options, and the bound they set
 * is the one a job's lines are kept under; a bad value is refused naming it and the range.
 */
import { Command, CommanderError } from 'commander';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { HARNESS_SETTINGS, HarnessCommandOptionsSchema } from '../../packages/platform/src/cli/commands/harness-settings.js';
import { launcherOptionsFrom } from '../../packages/platform/src/cli/harness-launcher.js';
import { addSettingOptions } from '../../packages/platform/src/cli/setting-options.js';
import { JOB_LINES_LIMITS, JobLines } from '../../packages/platform/src/harness/launcher/job-lines.js';
import { LauncherOptionsSchema } from '../../packages/platform/src/harness/launcher/launcher-options.js';
import { parseOrThrow } from '../../src/job/parse.js';

const silent = pino({ level: 'silent' });

/** The harness command's options from `argv`, as `serverless-worker harness` parses them. */
function harnessOptions(argv: string[]) {
  const command = addSettingOptions(new Command('harness'), HARNESS_SETTINGS)
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  command.parse(argv, { from: 'user' });
  return parseOrThrow(HarnessCommandOptionsSchema, command.opts(), 'SW_INVALID_OPTIONS', 'harness options');
}

async function launcherSettings(argv: string[]) {
  const options = await launcherOptionsFrom({ ...harnessOptions(argv), image: ['soak/worker:1=true'], gpus: 'none' }, silent);
  return parseOrThrow(LauncherOptionsSchema, options, 'SW_INVALID_OPTIONS', 'launcher options');
}

describe('harness --job-log-* flags', () => {
  it('default to the documented bounds', async () => {
    expect((await launcherSettings([])).jobLines).toMatchObject({
      bytesPerJob: JOB_LINES_LIMITS.bytesPerJob,
      keepMs: JOB_LINES_LIMITS.keepMs,
      totalBytes: JOB_LINES_LIMITS.totalBytes,
    });
  });

  it("set the bound a job's lines are kept under", async () => {
    const { jobLines } = await launcherSettings(['--job-log-bytes', '2048', '--job-log-keep-ms', '60000', '--job-log-total-bytes', '8192']);
    expect(jobLines).toMatchObject({ bytesPerJob: 2048, keepMs: 60_000, totalBytes: 8192 });
    const kept = new JobLines(jobLines);
    const text = 'x'.repeat(900);
    for (let i = 0; i < 5; i++)
      kept.add('ep', 'job-1', { at: i, workerId: 'w1', stream: 'stdout', line: `{"requestId":"job-1","i":${i},"msg":"${text}"}`, seq: i + 1 });
    const read = kept.read('ep', 'job-1', 10);
    // About 930 bytes a line: 2 fit in 2 KiB, where the default (256 KiB) would keep all 5.
    expect(read?.lines).toHaveLength(2);
    expect(read?.dropped).toBe('3 older lines of this job were dropped: a job keeps its last 2 KiB of lines');
    // --job-log-keep-ms: a minute after the last line they are gone, and the page says why.
    expect(kept.read('ep', 'job-1', 4 + 60_000)?.dropped).toBe("5 lines: this job's lines were dropped 1 min after its last line");
  });

  it('refuse a value that is not a whole number in range, naming it and the range', () => {
    for (const [flag, value] of [
      ['--job-log-bytes', '12x'],
      ['--job-log-bytes', '100'],
      ['--job-log-keep-ms', '-5'],
      ['--job-log-total-bytes', '1e9'],
    ] as const) {
      let refused: unknown;
      try {
        harnessOptions([flag, value]);
      } catch (error) {
        refused = error;
      }
      expect(refused, `${flag} ${value}`).toBeInstanceOf(CommanderError);
      expect((refused as Error).message).toContain(`argument '${value}' is invalid`);
      expect((refused as Error).message).toMatch(/expected a whole number from \d+ to \d+/);
    }
  });

  it("refuse one job's bound above every job's together, naming both", async () => {
    await expect(launcherSettings(['--job-log-bytes', '65536', '--job-log-total-bytes', '4096'])).rejects.toThrow(
      "one job's bound (bytesPerJob, --job-log-bytes: 65536) must be at most every job's together (totalBytes, --job-log-total-bytes: 4096)",
    );
  });
});
