/**
 * @module version
 * The runtime's version, reported in error payloads, the heartbeat and the user agent.
 * A literal, not a read of package.json: a bundled worker (esbuild, one file in an
 * image) has no package.json beside it, and nothing in the package may read its own
 * files by relative path at run time. test/bundle/version.test.ts keeps it equal to
 * package.json's version.
 */
export const RUNTIME_VERSION: string = '0.1.0';
