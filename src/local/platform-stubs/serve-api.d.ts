// serverless-worker-platform/serve-api for the SDK's own build (tsconfig.build.json maps the
// module here, since the platform is built after the SDK): the SDK's declared contract
// (../platform-contract.ts), not a copy of the platform's code. In the repository's type
// check the module resolves to the platform's source, which states that it satisfies it.
import type { PlatformServeApi } from '../platform-contract.js';

export declare const PLATFORM_VERSION: PlatformServeApi['PLATFORM_VERSION'];
export declare const runServeApi: PlatformServeApi['runServeApi'];
