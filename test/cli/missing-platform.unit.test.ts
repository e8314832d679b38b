/**
 * Where the platform package is missing, the SDK's CLI still lists its commands and answers
 * each with one line naming what to install: the list it keeps is the platform's own, and
 * the line names the package at the SDK's version.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { PLATFORM_COMMANDS as SDK_LIST, missingPlatformLine, registerMissingPlatformCommands } from '../../src/cli/missing-platform.js';
import { PLATFORM_COMMANDS, registerPlatformCommands } from '../../packages/platform/src/cli/platform-commands.js';
import { RUNTIME_VERSION } from '../../src/version.js';

const names = (program: Command): string[] => program.commands.map((command) => command.name()).sort();

describe('the platform commands where the platform is missing', () => {
  it('are the commands the platform registers', () => {
    const withPlatform = new Command('serverless-worker');
    registerPlatformCommands(withPlatform);
    const without = new Command('serverless-worker');
    registerMissingPlatformCommands(without);
    expect(names(withPlatform)).toEqual([...PLATFORM_COMMANDS].sort());
    expect(names(without)).toEqual([...PLATFORM_COMMANDS].sort());
    expect(SDK_LIST.map(([name]) => name).sort()).toEqual([...PLATFORM_COMMANDS].sort());
  });

  it('answer with one line naming the package at the SDK version', () => {
    const line = missingPlatformLine('harness');
    expect(line.trimEnd().split('\n')).toHaveLength(1);
    expect(line).toContain(`npm install --save-dev serverless-worker-platform@${RUNTIME_VERSION}`);
  });
});
