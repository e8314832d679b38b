/**
 * @module version
 * The runtime's version, reported in error payloads and the heartbeat. A constant,
 * not a read of package.json at run time: a bundled worker has no package.json beside
 * it (test/version.test.ts keeps the two equal).
 */

export const RUNTIME_VERSION: string = '0.1.0';
