/**
 * @module local/platform-contract
 * What the SDK needs of the serverless-worker-platform package, declared here, in the SDK,
 * so that the SDK builds without the platform: the platform's entry points state that they
 * satisfy these shapes (`satisfies` in its serve-api.ts and cli/platform-commands.ts), and
 * the repository's type check holds both sides to them. Each entry point carries its
 * package's version, which the SDK compares with its own before using anything else of it
 * (platform-package.ts).
 */
import type { Command } from 'commander';
import type { Logger } from 'pino';
import type { Handler, WorkerArgs, WorkerConfig } from '../worker/index.js';

/** Every entry point of the platform that the SDK loads. */
export interface PlatformEntry {
  /** The platform package's version: the SDK refuses one that is not its own. */
  readonly PLATFORM_VERSION: string;
}

/** `serverless-worker-platform/serve-api`: the local API with the worker in a supervised child. */
export interface PlatformServeApi extends PlatformEntry {
  runServeApi(handler: Handler<unknown, unknown>, config: WorkerConfig, args: WorkerArgs, logger: Logger): Promise<void>;
}

/** `serverless-worker-platform/cli`: the platform's commands of `serverless-worker`. */
export interface PlatformCli extends PlatformEntry {
  readonly PLATFORM_COMMANDS: readonly string[];
  registerPlatformCommands(program: Command): void;
}
