// The shape the SDK uses of serverless-worker-platform/serve-api, for building the SDK
// before the platform (tsconfig.build.json maps the module here). In the repository's own
// type check the module resolves to the platform's source, which must fit this shape.
import type { Logger } from 'pino';
import type { Handler, WorkerArgs, WorkerConfig } from '../../worker/index.js';

export declare function runServeApi(handler: Handler<unknown, unknown>, config: WorkerConfig, args: WorkerArgs, logger: Logger): Promise<void>;
