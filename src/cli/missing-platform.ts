/**
 * @module cli/missing-platform
 * Where the serverless-worker-platform package is not installed, its commands still
 * appear in `--help` and answer with one line naming what to install (exit 1), as does any
 * unknown command the platform may hold.
 */
import type { Command } from 'commander';
import { PLATFORM_INSTALL, PLATFORM_PACKAGE } from '../local/platform-package.js';

/** The platform's top-level commands, as its cli/platform-commands.ts registers them. */
export const PLATFORM_COMMANDS: ReadonlyArray<readonly [name: string, description: string]> = [
  ['harness', 'the local platform as a standalone server'],
  ['template', 'templates through the management API'],
  ['endpoint', 'Serverless endpoints through the management API'],
  ['volume', 'network volumes through the management API'],
  ['logs', "a harness's log lines (a job's, a worker's), --follow to keep reading"],
  ['jobs', "an endpoint's jobs on a harness, filtered as the dashboard filters them"],
  ['build', 'bundle a worker into one file for its image'],
];

/** The one line a platform command prints where the package is missing. */
export function missingPlatformLine(command: string): string {
  return `serverless-worker ${command}: this command is in the local platform package, ${PLATFORM_PACKAGE}, which is not installed; install it with: ${PLATFORM_INSTALL}\n`;
}

export function registerMissingPlatformCommands(program: Command): void {
  for (const [name, description] of PLATFORM_COMMANDS) {
    program
      .command(name, { hidden: false })
      .description(`${description} (needs ${PLATFORM_PACKAGE})`)
      .allowUnknownOption()
      .allowExcessArguments()
      .helpOption(false)
      .action(() => {
        process.stderr.write(missingPlatformLine(name));
        process.exitCode = 1;
      });
  }
}
