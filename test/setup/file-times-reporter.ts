/**
 * @module test/setup/file-times-reporter
 * A vitest reporter that writes, for each test file outside the unit tier, the seconds the file
 * held its worker: its preparation, its imports (collection), its setup files and its run,
 * `beforeAll` and `afterAll` hooks included. The JSON report's times (first test's start to the
 * last test's end) leave out the imports and the hooks around the tests: `images.test.ts` was
 * recorded at about 33 s while its image builds in `beforeAll` held a worker for minutes.
 * With each file's CPU seconds (its worker's own and its waited-for children's,
 * test/setup/file-cpu.ts) where counted. `.ci/run` adds it with SW_FILE_TIMES=<path>; `npm run test:order -- <that path>` records
 * test/setup/file-seconds.json from it (file-order.ts starts the longest files first).
 */
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';
import type { FileCpu } from './file-cpu.js';

/** The environment variable naming the file to write; nothing is written without it. */
export const FILE_TIMES_ENV = 'SW_FILE_TIMES';

/** One file's seconds, whole and by phase; `cpu` where test/setup/file-cpu.ts counted it. */
export interface FileTimes {
  readonly seconds: number;
  readonly imports: number;
  readonly setup: number;
  readonly run: number;
  readonly cpu?: FileCpu;
}

const seconds = (ms: number): number => Math.round(ms / 100) / 10;

/** The seconds `module` held its worker, by phase, and the CPU it cost where that was counted. */
export function fileTimesOf(module: Pick<TestModule, 'diagnostic' | 'meta'>): FileTimes {
  const { prepareDuration, environmentSetupDuration, collectDuration, setupDuration, duration } = module.diagnostic();
  const whole = prepareDuration + environmentSetupDuration + collectDuration + setupDuration + duration;
  const { fileCpu } = module.meta();
  return {
    seconds: seconds(whole),
    imports: seconds(collectDuration),
    setup: seconds(setupDuration + prepareDuration + environmentSetupDuration),
    run: seconds(duration),
    ...(fileCpu === undefined ? {} : { cpu: fileCpu }),
  };
}

export default class FileTimesReporter implements Reporter {
  #root = process.cwd();

  onInit(vitest: Vitest): void {
    this.#root = vitest.config.root;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const path = process.env[FILE_TIMES_ENV];
    if (path === undefined || path === '') return;
    const times: Record<string, FileTimes> = {};
    for (const module of modules) {
      if (module.project.name === 'unit') continue;
      times[relative(this.#root, module.moduleId)] = fileTimesOf(module);
    }
    const sorted = Object.fromEntries(Object.entries(times).sort(([a], [b]) => (a < b ? -1 : 1)));
    writeFileSync(path, `${JSON.stringify(sorted, null, 2)}\n`);
  }
}
