/**
 * @module cli/commands/output-mode
 * Whether a list prints for a person or for a program: a table (or pretty lines) when stdout
 * is a terminal, JSON when it is piped or redirected (as `gh`, `kubectl` and `docker` pick
 * by the terminal), `--json` or `--table` to force either. A script that pipes into `jq`
 * gets JSON without a flag; a person at a prompt gets something readable.
 */
import { Option, type Command } from 'commander';
import { ServerlessWorkerError } from 'serverless-worker/internal';

export type OutputMode = 'json' | 'human';

export interface OutputFlags {
  json?: boolean;
  table?: boolean;
  pretty?: boolean;
}

/** The flag that forces the human output: `--table` for lists, `--pretty` for log lines. */
export type HumanFlag = 'table' | 'pretty';

/** Add `--json` and `--table` (or `--pretty`, with `human` its help's words) to a command. */
export function withOutputFlags(command: Command, humanFlag: HumanFlag = 'table', human = 'a table'): Command {
  return command
    .addOption(new Option('--json', 'JSON, even on a terminal (the default when stdout is piped or redirected)'))
    .addOption(new Option(`--${humanFlag}`, `${human}, even when stdout is piped (the default on a terminal)`));
}

/** The mode for these flags and this stdout; both flags at once is an error naming them. */
export function outputMode(flags: OutputFlags, humanFlag: HumanFlag = 'table', stdoutIsTerminal = process.stdout.isTTY === true): OutputMode {
  const human = flags[humanFlag] === true;
  if (flags.json === true && human) {
    throw new ServerlessWorkerError(
      'SW_INVALID_OPTIONS',
      `--json and --${humanFlag} ask for two outputs: give one of them (or neither: ${humanFlag} on a terminal, JSON when piped)`,
      {
        flags: ['--json', `--${humanFlag}`],
      },
    );
  }
  if (flags.json === true) return 'json';
  if (human) return 'human';
  return stdoutIsTerminal ? 'human' : 'json';
}
