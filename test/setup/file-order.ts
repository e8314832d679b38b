/**
 * @module test/setup/file-order
 * The order `npm test` starts its files in: by kind, then longest first within a kind, by the
 * seconds each file took in a recorded CI run (test/setup/file-seconds.json; files not in the
 * table, new ones, start first within their kind, as vitest does with unknown files).
 * The kinds, in FILE_KIND_ORDER:
 * - browser files first: they need neither the pack nor the Docker engine, which `npm test`
 *   makes from the run's start (eager-setup.ts: the pack about 30-50 s in, the stand-in bases
 *   about 60 s in);
 * - then the system tier's other files (the packed packages: their long installs early, so
 *   that the two workers end together), then the files that use the Docker engine;
 * - then the integration tier, longest first, its short files last;
 * - the unit tier last, in vitest's order.
 * By kind, not longest first across the tiers: with a project per tier, vitest keeps a shared
 * worker (isolate: false, tiers.ts) only while the next file in its queue is of the same
 * tier: a browser or system file between two integration files made the next integration
 * file start a fresh process and import everything again. `npm test` now runs the tiers as
 * one project (tiers.ts, ONE_PROJECT_ENV), whose workers live the whole run; the kinds still
 * put the files that wait for the pack and the Docker engine after the browser files.
 * Vitest's own order runs the projects one after another (browser, integration, system, unit)
 * and, on a clean clone with no results cache, the larger files of each first: the system
 * tier's long, mostly waiting files then ran at the end with one worker idle.
 * `npm run test:order -- <file-times.json>` records the table anew from the file times
 * `.ci/run` writes (file-times-reporter.ts: imports and hooks included).
 */
import { join, relative } from 'node:path';
import { readFileSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { tierOfFile } from './tiers.js';

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

/** Where a file starts (FILE_KIND_ORDER): its tier, and in the system tier whether it uses the run's Docker engine. */
export type FileKind = 'browser' | 'system' | 'docker' | 'integration';

/** The order of the kinds (the module doc says why). */
export const FILE_KIND_ORDER: readonly FileKind[] = ['browser', 'system', 'docker', 'integration'];

/** A test file that imports the Docker engine's helpers (its source text). */
export const USES_DOCKER = /from ['"][^'"]*\/(use-docker-engine|docker-image)\.js['"]/;

/** `paths` by kind (FILE_KIND_ORDER), longest first within a kind (byExpectedSeconds). */
export function orderByKind(paths: readonly string[], seconds: FileSeconds, kindOf: (path: string) => FileKind): string[] {
  const compare = byExpectedSeconds(seconds);
  return FILE_KIND_ORDER.flatMap((kind) => paths.filter((path) => kindOf(path) === kind).sort(compare));
}

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const vitestOrder = await super.sort(files);
    const seconds = readFileSeconds();
    const root = this.ctx.config.root;
    const pathOf = (spec: TestSpecification): string => relative(root, spec.moduleId);
    // The tier by the file's name (tiers.ts), not by its project: `npm test` runs them all as one project.
    const unit = vitestOrder.filter((spec) => tierOfFile(pathOf(spec)) === 'unit');
    const byPath = new Map(vitestOrder.filter((spec) => tierOfFile(pathOf(spec)) !== 'unit').map((spec) => [pathOf(spec), spec]));
    const kindOf = (path: string): FileKind => {
      const tier = tierOfFile(path);
      if (tier === 'browser') return 'browser';
      if (tier === 'integration') return 'integration';
      return USES_DOCKER.test(readFileSync(join(root, path), 'utf8')) ? 'docker' : 'system';
    };
    const order = orderByKind([...byPath.keys()], seconds, kindOf).map((path) => byPath.get(path) as TestSpecification);
    return [...order, ...unit];
  }
}
