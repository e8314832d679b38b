// serverless-worker-platform/cli for the SDK's own build (tsconfig.build.json maps the module
// here, since the platform is built after the SDK): the SDK's declared contract
// (../platform-contract.ts), not a copy of the platform's code. In the repository's type
// check the module resolves to the platform's source, which states that it satisfies it.
import type { PlatformCli } from '../platform-contract.js';

export declare const PLATFORM_VERSION: PlatformCli['PLATFORM_VERSION'];
export declare const PLATFORM_COMMANDS: PlatformCli['PLATFORM_COMMANDS'];
export declare const registerPlatformCommands: PlatformCli['registerPlatformCommands'];
