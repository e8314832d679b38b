/**
 * @module cli/platform-commands
 * The platform's commands of the `serverless-worker` CLI (the SDK's bin loads this module
 * when the package is installed): `harness`, `build`, and the management commands
 * (`template`, `endpoint`, `volume`, `logs`, `jobs`).
 */
import type { Command } from 'commander';
import type { PlatformCli } from 'serverless-worker/internal';
import { PLATFORM_VERSION } from '../platform-version.js';
import { registerBuildCommand } from './commands/build.js';
import { registerHarnessCommand } from './commands/harness.js';
import { registerManagementCommands } from './commands/management.js';
// The platform's error codes, registered before any error is raised or answered.
import '../job/platform-error-codes.js';

export { PLATFORM_VERSION };

/** The top-level command names registered here (the SDK's CLI names them where the package is missing). */
export const PLATFORM_COMMANDS = ['harness', 'template', 'endpoint', 'volume', 'logs', 'jobs', 'build'] as const;

/** Register every platform command on the SDK's program. */
export function registerPlatformCommands(program: Command): void {
  registerHarnessCommand(program);
  registerManagementCommands(program);
  registerBuildCommand(program);
}

// The SDK loads this entry point by the contract it declares (local/platform-contract.ts there).
void ({ PLATFORM_VERSION, PLATFORM_COMMANDS, registerPlatformCommands } satisfies PlatformCli);
