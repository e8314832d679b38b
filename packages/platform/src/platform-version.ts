/**
 * @module platform-version
 * The platform package's version: always the SDK's (the two packages move together, and
 * test/package/versions.unit.test.ts keeps the package.json files and both literals equal).
 */
export const PLATFORM_VERSION: string = '0.1.0';
