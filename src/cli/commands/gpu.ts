/**
 * @module cli/commands/gpu
 * Placeholder: this subcommand is being built.
 */
import type { Command } from 'commander';

export function registerGpuCommand(program: Command): void {
  void program;
}
