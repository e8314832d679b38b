/**
 * `harness --start-failure-timeout-ms` and the launcher config's `startFailureTimeoutMs`
 * (issue 49 item 6: how long the queued jobs of an endpoint whose workers cannot start
 * wait before they fail SW_WORKER_START_FAILED): the flag goes through the harness's own
 * options into the launcher options, over the config file's value; the default is the
 * documented 3 min; a bad value is refused naming the range.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { HARNESS_SETTINGS, HarnessCommandOptionsSchema } from '../../packages/platform/src/cli/commands/harness-settings.js';
import { launcherOptionsFrom } from '../../packages/platform/src/cli/harness-launcher.js';
import { addSettingOptions } from '../../packages/platform/src/cli/setting-options.js';
import { DEFAULT_START_FAILURE_TIMEOUT_MS, LauncherOptionsSchema } from '../../packages/platform/src/harness/launcher/launcher-options.js';
import { parseOrThrow } from '../../src/job/parse.js';
import { tempDir } from '../gpu/fake-tools.js';

const silent = pino({ level: 'silent' });

function harnessOptions(argv: string[]) {
  const command = addSettingOptions(new Command('harness'), HARNESS_SETTINGS)
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  command.parse(argv, { from: 'user' });
  return parseOrThrow(HarnessCommandOptionsSchema, command.opts(), 'SW_INVALID_OPTIONS', 'harness options');
}

async function startFailureTimeout(argv: string[]): Promise<number> {
  const options = await launcherOptionsFrom({ ...harnessOptions(argv), image: ['soak/worker:1=true'], gpus: 'none' }, silent);
  return parseOrThrow(LauncherOptionsSchema, options, 'SW_INVALID_OPTIONS', 'launcher options').startFailureTimeoutMs;
}

describe('harness --start-failure-timeout-ms', () => {
  it('defaults to 3 min, takes the config file, and the flag over it', async () => {
    expect(DEFAULT_START_FAILURE_TIMEOUT_MS).toBe(180_000);
    expect(await startFailureTimeout([])).toBe(180_000);
    const config = join(tempDir(), 'launcher.json');
    writeFileSync(config, JSON.stringify({ startFailureTimeoutMs: 60_000 }));
    expect(await startFailureTimeout(['--launcher-config', config])).toBe(60_000);
    expect(await startFailureTimeout(['--launcher-config', config, '--start-failure-timeout-ms', '5000'])).toBe(5_000);
  });

  it('refuses a value out of range, naming the range', async () => {
    let refused: unknown;
    try {
      harnessOptions(['--start-failure-timeout-ms', '-1']);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(CommanderError);
    expect((refused as Error).message).toMatch(/expected a whole number from 0 to 604800000/);
    const config = join(tempDir(), 'launcher.json');
    writeFileSync(config, JSON.stringify({ startFailureTimeoutMs: 10 ** 12 }));
    await expect(startFailureTimeout(['--launcher-config', config])).rejects.toThrow(/startFailureTimeoutMs must be from 0 to 604800000 ms/);
  });
});
