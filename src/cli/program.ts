/**
 * @module cli/program
 * The `serverless-worker` program, apart from the process that runs it: the SDK's own
 * subcommands (`init`, `gpu`), the local platform's (`harness`, `build`, `template`,
 * `endpoint`, `volume`, `logs`, `jobs`) when the serverless-worker-platform package is
 * installed, and otherwise one line naming what to install. `runProgram` parses the
 * arguments and answers the exit status; what the commands print goes through the
 * streams it is given (commander's output configuration, which every subcommand inherits),
 * so that a test can run a command in its own process.
 */
import { Command } from 'commander';
import { registerGpuCommand } from './commands/gpu.js';
import { registerInitCommand } from './commands/init.js';
import { registerMissingPlatformCommands } from './missing-platform.js';
import { isPlatformMissing, sameVersionPlatform } from '../local/platform-package.js';
import { RUNTIME_VERSION } from '../version.js';

/** Where the program writes: stdout (records, help) and stderr (notes, failures). */
export interface CliStreams {
  writeOut(text: string): void;
  writeErr(text: string): void;
}

/** The process's own stdout and stderr. */
export const PROCESS_STREAMS: CliStreams = {
  writeOut: (text) => void process.stdout.write(text),
  writeErr: (text) => void process.stderr.write(text),
};

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

/** The program, writing to `streams`; every subcommand inherits them. */
export async function buildProgram(streams: CliStreams = PROCESS_STREAMS): Promise<Command> {
  const program = new Command('serverless-worker')
    .description('Runtime and local harness for Serverless worker images')
    .version(RUNTIME_VERSION)
    .configureOutput({ writeOut: (text) => streams.writeOut(text), writeErr: (text) => streams.writeErr(text) })
    .showHelpAfterError()
    .exitOverride();
  const platform = await loadPlatformCommands();
  if (platform) platform.registerPlatformCommands(program);
  else registerMissingPlatformCommands(program);
  registerGpuCommand(program);
  registerInitCommand(program);
  return program;
}

/**
 * Run the program on `args` (the arguments after the command's name) and answer its exit
 * status: 0; 2 for a usage error (commander said why); 1 for a failure, said in one line
 * `serverless-worker: <message>` on stderr.
 */
export async function runProgram(args: readonly string[], streams: CliStreams = PROCESS_STREAMS): Promise<number> {
  try {
    const program = await buildProgram(streams);
    await program.parseAsync([...args], { from: 'user' });
    return 0;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help') return 0;
    if (typeof code === 'string' && code.startsWith('commander.')) return 2;
    streams.writeErr(`serverless-worker: ${(error as Error).message}\n`);
    return 1;
  }
}
