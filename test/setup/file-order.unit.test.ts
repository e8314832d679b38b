/**
 * The suite's start order (test/setup/file-order.ts): unknown files first, then the longest
 * recorded, ties by path; and the recorded table names only test files that exist.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { DOCKER_AFTER_WORK_SECONDS, USES_DOCKER, byExpectedSeconds, deferDockerFiles, readFileSeconds } from './file-order.js';

describe('the order npm test starts its files in', () => {
  it('starts files the table does not know first, then the longest, ties by path', () => {
    const order = ['b.test.ts', 'short.test.ts', 'new.test.ts', 'long.test.ts', 'a.test.ts'].sort(
      byExpectedSeconds({ 'short.test.ts': 1, 'long.test.ts': 60, 'a.test.ts': 5, 'b.test.ts': 5 }),
    );
    expect(order).toEqual(['new.test.ts', 'long.test.ts', 'a.test.ts', 'b.test.ts', 'short.test.ts']);
  });

  it('starts the Docker files once the others recorded before them add up to DOCKER_AFTER_WORK_SECONDS, in their order', () => {
    const half = DOCKER_AFTER_WORK_SECONDS / 2;
    const seconds = { 'd1.test.ts': 90, 'a.test.ts': half, 'd2.test.ts': 10, 'b.test.ts': half, 'c.test.ts': 5 };
    const usesDocker = (path: string): boolean => path.startsWith('d');
    expect(deferDockerFiles(['d1.test.ts', 'a.test.ts', 'd2.test.ts', 'b.test.ts', 'c.test.ts'], seconds, usesDocker)).toEqual([
      'a.test.ts',
      'b.test.ts',
      'd1.test.ts',
      'd2.test.ts',
      'c.test.ts',
    ]);
    // Not enough other work: they go last.
    expect(deferDockerFiles(['d1.test.ts', 'c.test.ts'], seconds, usesDocker)).toEqual(['c.test.ts', 'd1.test.ts']);
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
