/**
 * The file-times reporter (test/setup/file-times-reporter.ts): a file's whole time on its worker,
 * imports and hooks included, written for the files outside the unit tier when SW_FILE_TIMES
 * names a path.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TestModule, Vitest } from 'vitest/node';
import FileTimesReporter, { FILE_TIMES_ENV, fileTimesOf } from './file-times-reporter.js';

type Diagnostic = ReturnType<TestModule['diagnostic']>;

/** A test module as the reporter reads it: its path, project and diagnostic (ms). */
function moduleOf(path: string, project: string, ms: Partial<Diagnostic>, meta: ReturnType<TestModule['meta']> = {}): TestModule {
  const diagnostic = { prepareDuration: 0, environmentSetupDuration: 0, collectDuration: 0, setupDuration: 0, duration: 0, ...ms } as Diagnostic;
  return { moduleId: path, project: { name: project }, diagnostic: () => diagnostic, meta: () => meta } as unknown as TestModule;
}

const dirs: string[] = [];
afterEach(() => {
  delete process.env[FILE_TIMES_ENV];
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the file-times reporter', () => {
  it("counts a file's preparation, imports, setup files and run (its hooks are in its run)", () => {
    const times = fileTimesOf(
      moduleOf('/r/test/a.test.ts', 'integration', { prepareDuration: 100, collectDuration: 2_400, setupDuration: 500, duration: 90_000 }),
    );
    expect(times).toEqual({ seconds: 93, imports: 2.4, setup: 0.6, run: 90 });
  });

  it("adds the CPU seconds that test/setup/file-cpu.ts put in the file's meta", () => {
    const times = fileTimesOf(moduleOf('/r/test/a.test.ts', 'integration', { duration: 4_000 }, { fileCpu: { own: 1.5, children: 7.2 } }));
    expect(times).toEqual({ seconds: 4, imports: 0, setup: 0, run: 4, cpu: { own: 1.5, children: 7.2 } });
  });

  it('writes the files outside the unit tier, by path from the root, when SW_FILE_TIMES names a file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'file-times-'));
    dirs.push(dir);
    const out = join(dir, 'times.json');
    process.env[FILE_TIMES_ENV] = out;
    const reporter = new FileTimesReporter();
    reporter.onInit({ config: { root: '/r' } } as Vitest);
    reporter.onTestRunEnd([
      moduleOf('/r/test/b.test.ts', 'system', { duration: 1_000 }),
      moduleOf('/r/test/a.unit.test.ts', 'unit', { duration: 1_000 }),
      moduleOf('/r/test/a.test.ts', 'integration', { collectDuration: 1_000, duration: 2_000 }),
    ]);
    const written = JSON.parse(readFileSync(out, 'utf8')) as Record<string, { seconds: number }>;
    expect(Object.keys(written)).toEqual(['test/a.test.ts', 'test/b.test.ts']);
    expect(written['test/a.test.ts']?.seconds).toBe(3);
  });
});
