// The shape the SDK uses of serverless-worker-platform/cli, for building the SDK before
// the platform (tsconfig.build.json maps the module here).
import type { Command } from 'commander';

export declare const PLATFORM_COMMANDS: readonly string[];
export declare function registerPlatformCommands(program: Command): void;
