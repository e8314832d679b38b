import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Examples import the package by name, as a worker author would.
    alias: [
      { find: /^serverless-worker\/testing$/, replacement: fileURLToPath(new URL('./src/testing/index.ts', import.meta.url)) },
      { find: /^serverless-worker\/harness$/, replacement: fileURLToPath(new URL('./src/exports/harness.ts', import.meta.url)) },
      { find: /^serverless-worker\/runtime$/, replacement: fileURLToPath(new URL('./src/exports/runtime.ts', import.meta.url)) },
      { find: /^serverless-worker$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Child processes and real sockets: give slow shared machines room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Two files at a time: most tests wait on child processes, sockets and timers, not
    // the CPU. On the 2-core CI machines the default (one worker) took 826 s, two took 519 s,
    // the same 1 017 tests passing.
    maxWorkers: 2,
    // One PostgreSQL server and one private Docker engine per run, each started only when
    // a test asks for it.
    globalSetup: ['test/postgres/global-setup.ts', 'test/docker/engine/global-setup.ts'],
  },
});
