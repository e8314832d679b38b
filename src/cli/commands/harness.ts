/**
 * @module cli/commands/harness
 * Placeholder: this subcommand is being built.
 */
import type { Command } from 'commander';

export function registerHarnessCommand(program: Command): void {
  void program;
}
