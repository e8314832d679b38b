#!/usr/bin/env node
/**
 * @module cli/main
 * The `serverless-worker` command. The SDK's own subcommands (`init`, `gpu`) live under
 * commands/; the local platform's (`harness`, `build`, `template`, `endpoint`, `volume`)
 * come from the serverless-worker-platform package when it is installed, and otherwise
 * answer with one line naming what to install.
 */
import { Command } from 'commander';
import { registerGpuCommand } from './commands/gpu.js';
import { registerInitCommand } from './commands/init.js';
import { registerMissingPlatformCommands } from './missing-platform.js';
import { isPlatformMissing, sameVersionPlatform } from '../local/platform-package.js';
import { RUNTIME_VERSION } from '../version.js';

/** The platform's command module, or undefined when the package is not installed; refused when it is of another version. */
async function loadPlatformCommands(): Promise<typeof import('serverless-worker-platform/cli') | undefined> {
  let entry: typeof import('serverless-worker-platform/cli');
  try {
    entry = await import('serverless-worker-platform/cli');
  } catch (error) {
    if (isPlatformMissing(error)) return undefined;
    throw error;
  }
  return sameVersionPlatform('serverless-worker', entry);
}

export async function buildProgram(): Promise<Command> {
  const program = new Command('serverless-worker')
    .description('Runtime and local harness for Serverless worker images')
    .version(RUNTIME_VERSION)
    .showHelpAfterError()
    .exitOverride();
  const platform = await loadPlatformCommands();
  if (platform) platform.registerPlatformCommands(program);
  else registerMissingPlatformCommands(program);
  registerGpuCommand(program);
  registerInitCommand(program);
  return program;
}

async function main(): Promise<void> {
  try {
    const program = await buildProgram();
    await program.parseAsync(process.argv);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help') {
      process.exitCode = 0;
      return;
    }
    if (typeof code === 'string' && code.startsWith('commander.')) {
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`serverless-worker: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}

await main();
