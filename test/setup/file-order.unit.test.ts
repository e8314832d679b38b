/**
 * The suite's start order (test/setup/file-order.ts): by kind (browser, system, Docker,
 * integration), within a kind unknown files first, then the longest recorded, ties by path;
 * and the recorded table names only test files that exist.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { FILE_KIND_ORDER, USES_DOCKER, byExpectedSeconds, orderByKind, readFileSeconds, type FileKind } from './file-order.js';

describe('the order npm test starts its files in', () => {
  it('starts files the table does not know first, then the longest, ties by path', () => {
    const order = ['b.test.ts', 'short.test.ts', 'new.test.ts', 'long.test.ts', 'a.test.ts'].sort(
      byExpectedSeconds({ 'short.test.ts': 1, 'long.test.ts': 60, 'a.test.ts': 5, 'b.test.ts': 5 }),
    );
    expect(order).toEqual(['new.test.ts', 'long.test.ts', 'a.test.ts', 'b.test.ts', 'short.test.ts']);
  });

  it('starts the browser files, then the system files, then the Docker files, then the integration files, each longest first', () => {
    const seconds = { 'i-long.test.ts': 90, 'i-short.test.ts': 1, 'b.test.ts': 5, 's.test.ts': 60, 'd.test.ts': 30 };
    const kinds: Record<string, FileKind> = {
      'i-long.test.ts': 'integration',
      'i-short.test.ts': 'integration',
      'i-new.test.ts': 'integration',
      'b.test.ts': 'browser',
      's.test.ts': 'system',
      'd.test.ts': 'docker',
    };
    const kindOf = (path: string): FileKind => kinds[path] as FileKind;
    expect(orderByKind(['i-short.test.ts', 'd.test.ts', 'i-long.test.ts', 's.test.ts', 'i-new.test.ts', 'b.test.ts'], seconds, kindOf)).toEqual([
      'b.test.ts',
      's.test.ts',
      'd.test.ts',
      'i-new.test.ts',
      'i-long.test.ts',
      'i-short.test.ts',
    ]);
    expect(FILE_KIND_ORDER).toEqual(['browser', 'system', 'docker', 'integration']);
  });

  it('knows the files that use the Docker engine by their imports', () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const read = (path: string): string => readFileSync(`${root}${path}`, 'utf8');
    expect(USES_DOCKER.test(read('test/docker/images.test.ts'))).toBe(true);
    expect(USES_DOCKER.test(read('test/harness/launcher/docker-launcher.system.test.ts'))).toBe(true);
    expect(USES_DOCKER.test(read('test/package/packed-package.test.ts'))).toBe(false);
  });

  it('records seconds for test files outside the unit tier only, each of which exists', () => {
    const seconds = readFileSeconds();
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const paths = Object.keys(seconds);
    expect(paths.length).toBeGreaterThan(50);
    expect(paths.filter((path) => path.endsWith('.unit.test.ts'))).toEqual([]);
    // A file renamed or removed since the table was recorded: record it anew (npm run test:order).
    expect(paths.filter((path) => !existsSync(`${root}${path}`))).toEqual([]);
  });
});
