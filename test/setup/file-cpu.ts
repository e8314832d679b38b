/**
 * @module test/setup/file-cpu
 * Setup file of the tiers outside the unit tier (test/setup/tiers.ts): the CPU seconds a test
 * file cost, from before its imports to after its last hook, put in the file's task meta for
 * the file-times reporter (test/setup/file-times-reporter.ts). Two figures: the worker
 * process's own (`process.cpuUsage()`), and its children's, as Linux counts the children a
 * process has waited for (`cutime` + `cstime` in /proc/self/stat: a worker, a harness, npm or
 * Chromium started by the file and ended before its last hook, with their own waited-for
 * children). Not counted: what runs outside the worker's process tree (the Docker engine's
 * builds and containers, the run's shared PostgreSQL server), and a child still running at the
 * file's end. Wall time tells what a file waits for; CPU time is what two shared cores run out of.
 */
import { readFileSync } from 'node:fs';
import { afterAll, expect } from 'vitest';
import { tierOfFile } from './tiers.js';

/** Seconds of CPU, the worker's own and its waited-for children's. */
export interface FileCpu {
  readonly own: number;
  readonly children: number;
}

declare module '@vitest/runner' {
  interface TaskMeta {
    fileCpu?: FileCpu;
  }
}

/** Linux's USER_HZ: the unit of /proc's tick counts (100 on every Linux platform Node runs on). */
const TICKS_PER_SECOND = 100;

/** The children's CPU in seconds, or undefined where /proc is not there. */
function childrenSeconds(): number | undefined {
  let stat: string;
  try {
    stat = readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return undefined;
  }
  // After "pid (comm) ", field 3 (state) comes first: cutime is field 16, cstime field 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
}

const ownAtStart = process.cpuUsage();
const childrenAtStart = childrenSeconds();
// Not for a unit file: `npm test`'s one project (tiers.ts, ONE_PROJECT_ENV) runs this before every file of every tier.
const testPath = expect.getState().testPath;
const counted = testPath === undefined || tierOfFile(testPath) !== 'unit';

// vitest wants the hook's first argument (its context) destructured, even when unused.
// oxlint-disable-next-line no-empty-pattern
afterAll(({}, suite) => {
  if (!counted) return;
  const own = process.cpuUsage(ownAtStart);
  const childrenAtEnd = childrenSeconds();
  const round = (seconds: number): number => Math.round(seconds * 10) / 10;
  suite.meta.fileCpu = {
    own: round((own.user + own.system) / 1e6),
    children: childrenAtStart === undefined || childrenAtEnd === undefined ? 0 : round(childrenAtEnd - childrenAtStart),
  };
});
