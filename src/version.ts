/**
 * @module version
 * The runtime's version, reported in error payloads and the heartbeat.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pkg = require('../package.json') as { version: string };

export const RUNTIME_VERSION: string = pkg.version;
