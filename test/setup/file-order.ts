/**
 * @module test/setup/file-order
 * The order `npm test` starts its files in: longest first, by the seconds each file took in a
 * recorded CI run (test/setup/file-seconds.json), so that the two workers end together.
 * Vitest's own order runs the projects one after another (browser, integration, system, unit)
 * and, on a clean clone with no results cache, the larger files of each first: the system
 * tier's long, mostly waiting files (packing, Docker) then ran at the end with one worker
 * idle, about 200 s of a 800 s run at a concurrency under 1.
 * Files not in the table (new ones) start first, as vitest does with unknown files; the unit
 * tier stays last and in vitest's order (its files share their workers, isolate: false).
 * Files that use the run's Docker engine wait until the others' recorded seconds add up to
 * DOCKER_AFTER_WORK_SECONDS: `npm test` makes the engine and its stand-in bases from the run's
 * start (eager-setup.ts), after the pack, and they took minutes on a loaded machine; a Docker
 * file started earlier held its worker idle until they were made (88 s in a CI run).
 * `npm run test:order -- <file-times.json>` records the table anew from the file times
 * `.ci/run` writes (file-times-reporter.ts: imports and hooks included).
 */
import { join, relative } from 'node:path';
import { readFileSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** `test/...` path -> seconds; read once. */
export type FileSeconds = Readonly<Record<string, number>>;

export const FILE_SECONDS_PATH = new URL('./file-seconds.json', import.meta.url);

export function readFileSeconds(): FileSeconds {
  return JSON.parse(readFileSync(FILE_SECONDS_PATH, 'utf8')) as FileSeconds;
}

/** Unknown files first, then the longest; ties by path so that the order is the same each run. */
export function byExpectedSeconds(seconds: FileSeconds): (a: string, b: string) => number {
  return (a, b) => {
    const sa = seconds[a] ?? Number.POSITIVE_INFINITY;
    const sb = seconds[b] ?? Number.POSITIVE_INFINITY;
    if (sa !== sb) return sb - sa;
    return a < b ? -1 : a > b ? 1 : 0;
  };
}

/**
 * Recorded seconds of the other files (both workers' together) that start before any Docker
 * file (of about 1 050). At 600 a CI run (13:18, 2026-12-02) showed a worker idle for about 90 s
 * around the Docker files, taken for a wait on the stand-ins, so this was raised to 800; the
 * next run's set-up log ([setup] lines, eager-setup.ts) had them made 62 s into the run, and
 * the same dip came with the Docker files at 800. It is their image builds in `beforeAll`,
 * which the JSON report's file times leave out (images.test.ts is recorded at about 33 s).
 */
export const DOCKER_AFTER_WORK_SECONDS = 800;

/** A test file that imports the Docker engine's helpers (its source text). */
export const USES_DOCKER = /from ['"][^'"]*\/(use-docker-engine|docker-image)\.js['"]/;

/** `ordered` with the files `usesDocker` names moved to where the others' seconds reach DOCKER_AFTER_WORK_SECONDS (their order kept). */
export function deferDockerFiles(ordered: readonly string[], seconds: FileSeconds, usesDocker: (path: string) => boolean): string[] {
  const docker = ordered.filter(usesDocker);
  const others = ordered.filter((path) => !usesDocker(path));
  let work = 0;
  let at = others.findIndex((path) => (work += seconds[path] ?? 0) >= DOCKER_AFTER_WORK_SECONDS);
  if (at < 0) at = others.length;
  return [...others.slice(0, at + 1), ...docker, ...others.slice(at + 1)];
}

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const vitestOrder = await super.sort(files);
    const seconds = readFileSeconds();
    const root = this.ctx.config.root;
    const pathOf = (spec: TestSpecification): string => relative(root, spec.moduleId);
    const compare = byExpectedSeconds(seconds);
    const unit = vitestOrder.filter((spec) => spec.project.name === 'unit');
    const rest = vitestOrder.filter((spec) => spec.project.name !== 'unit').sort((a, b) => compare(pathOf(a), pathOf(b)));
    const byPath = new Map(rest.map((spec) => [pathOf(spec), spec]));
    const usesDocker = (path: string): boolean => USES_DOCKER.test(readFileSync(join(root, path), 'utf8'));
    const order = deferDockerFiles([...byPath.keys()], seconds, usesDocker).map((path) => byPath.get(path) as TestSpecification);
    return [...order, ...unit];
  }
}
