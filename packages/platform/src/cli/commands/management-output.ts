/**
 * @module cli/commands/management-output
 * What every management subcommand shares: the connection flags (`--base-url`,
 * `--api-key`, else the environment), the client built from them, records to stdout as
 * JSON and notes to stderr (so `jq` reads stdout while a person reads stderr), through
 * the program's output configuration.
 */
import type { Command } from 'commander';
import { DEFAULT_MANAGEMENT_API_URL, managementClientFromEnv, type ManagementClient } from '../../harness/management/management-client.js';

export interface ConnectionFlags {
  baseUrl?: string;
  apiKey?: string;
}

/** Add `--base-url` and `--api-key` to a subcommand. */
export function withConnection(command: Command): Command {
  return command
    .option('--base-url <url>', `management API base URL (default: $SERVERLESS_WORKER_API_URL or ${DEFAULT_MANAGEMENT_API_URL})`)
    .option('--api-key <key>', 'API key sent as a Bearer token (default: $SERVERLESS_WORKER_API_KEY, else $RUNPOD_API_KEY)');
}

/** The client for these flags: a flag wins over its environment variable. */
export function client(flags: ConnectionFlags): ManagementClient {
  return managementClientFromEnv({
    ...(flags.baseUrl !== undefined ? { baseUrl: flags.baseUrl } : {}),
    ...(flags.apiKey !== undefined ? { apiKey: flags.apiKey } : {}),
  });
}

/**
 * What a command prints: records and tables on stdout, notes on stderr, through the
 * program's output configuration (commander's `configureOutput`, inherited by every
 * subcommand): the process's streams when run as the command, a test's buffers in process.
 */
export interface CliOutput {
  /** One record (or a list) on stdout, as indented JSON. */
  record(record: unknown): void;
  /** One line for a person, on stderr. */
  note(line: string): void;
  /**
   * Rows as a plain text table on stdout: a header line, then one line per row, columns
   * padded to their widest cell (for a person; scripts read the JSON).
   */
  table(header: readonly string[], rows: readonly (readonly string[])[]): void;
  /** Text as it is, on stdout. */
  text(text: string): void;
}

/** The output of `command` (read at each write, so a configuration set later still counts). */
export function cliOutput(command: Command): CliOutput {
  const out = (text: string): void => {
    const write = command.configureOutput().writeOut;
    if (write) write(text);
    else process.stdout.write(text);
  };
  const err = (text: string): void => {
    const write = command.configureOutput().writeErr;
    if (write) write(text);
    else process.stderr.write(text);
  };
  return {
    record: (record) => out(`${JSON.stringify(record, null, 2)}\n`),
    note: (line) => err(`${line}\n`),
    table: (header, rows) => {
      const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
      const line = (cells: readonly string[]): string =>
        cells
          .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
          .join('  ')
          .trimEnd();
      out(`${[line(header), ...rows.map(line)].join('\n')}\n`);
    },
    text: out,
  };
}
