#!/usr/bin/env node
/**
 * @module cli/main
 * The `serverless-worker` command. Each subcommand lives in its own file under
 * commands/ and registers itself on the program.
 */
import { Command } from 'commander';
import { registerBuildCommand } from '../../packages/platform/src/cli/commands/build.js';
import { registerGpuCommand } from './commands/gpu.js';
import { registerHarnessCommand } from '../../packages/platform/src/cli/commands/harness.js';
import { registerInitCommand } from './commands/init.js';
import { registerManagementCommands } from '../../packages/platform/src/cli/commands/management.js';
import { RUNTIME_VERSION } from '../version.js';

export function buildProgram(): Command {
  const program = new Command('serverless-worker')
    .description('Runtime and local harness for Serverless worker images')
    .version(RUNTIME_VERSION)
    .showHelpAfterError()
    .exitOverride();
  registerHarnessCommand(program);
  registerGpuCommand(program);
  registerManagementCommands(program);
  registerBuildCommand(program);
  registerInitCommand(program);
  return program;
}

async function main(): Promise<void> {
  const program = buildProgram();
  try {
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
