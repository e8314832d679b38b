/**
 * @module local/source-watch
 * `--serve-api --watch`: the worker's source files watched, so that a save restarts only
 * the worker child (supervisor.ts restart()), not the whole process with its queue API,
 * dashboard and jobs, as `tsx watch` around the whole process did (about 10 s, every
 * queued and finished job gone). Watched: the worker script's folder, recursively, for
 * files a worker imports or reads (TypeScript, JavaScript, JSON); node_modules, dist and
 * dot-folders left out. A burst of events (an editor's save writes and renames) is one
 * restart, `debounceMs` after the last.
 */
import type { FSWatcher } from 'node:fs';
import { systemClock, type Clock, type TimerHandle } from 'serverless-worker/internal';
const { watch } = process.getBuiltinModule('node:fs');

/** Files whose change restarts the worker: sources and the JSON they may read. */
const SOURCE = /\.(?:[cm]?[jt]sx?|json)$/;
/** Path parts never watched: installed packages, build output, dot-folders (.git). */
const IGNORED = /(?:^|[\\/])(?:node_modules|dist|\.[^\\/]+)(?:[\\/]|$)/;

export const DEFAULT_WATCH_DEBOUNCE_MS = 150;

/** Whether a change of `file` (relative to the watched folder) restarts the worker. */
export function isWatchedSource(file: string): boolean {
  return SOURCE.test(file) && !IGNORED.test(file);
}

export interface SourceWatch {
  close(): void;
}

/** Call `onChange(file)` once per burst of changes of source files under `dir`. */
export function watchSources(dir: string, onChange: (file: string) => void, options: { debounceMs?: number; clock?: Clock } = {}): SourceWatch {
  const clock = options.clock ?? systemClock;
  const debounceMs = options.debounceMs ?? DEFAULT_WATCH_DEBOUNCE_MS;
  let timer: TimerHandle | undefined;
  let last = '';
  const watcher: FSWatcher = watch(dir, { recursive: true }, (_event, name) => {
    const file = typeof name === 'string' ? name : '';
    if (!isWatchedSource(file)) return;
    last = file;
    timer?.cancel();
    timer = clock.setTimer(debounceMs, () => {
      timer = undefined;
      onChange(last);
    });
  });
  return {
    close() {
      timer?.cancel();
      watcher.close();
    },
  };
}
