/**
 * @module cli/commands/management
 * Placeholder: this subcommand is being built.
 */
import type { Command } from 'commander';

export function registerManagementCommands(program: Command): void {
  void program;
}
