/**
 * @module build/extra-entry-points
 * The package's own files that the runtime starts by path next to the importing module
 * (`new Worker(new URL('./name.js', import.meta.url))`). A bundle puts every import
 * into one file, so `import.meta.url` becomes the bundle's: each such file must be
 * emitted beside the bundle as an entry point of its own. This list is the one place
 * that names them; test/build/extra-entry-points.test.ts fails when src starts a file
 * by URL, or a `*-thread.ts` module, that is not listed here.
 */

export interface ExtraEntryPoint {
  /** Path inside the package's source tree, without extension (`.js` in dist, `.ts` in a clone). */
  readonly source: string;
  /** Output name beside the bundle, without extension: the `./name.js` the runtime asks for. */
  readonly out: string;
}

/** Files emitted beside every bundle. */
export const EXTRA_ENTRY_POINTS: readonly ExtraEntryPoint[] = [
  // The watchdog thread (heartbeat and deadline watchdog, issue #12): resolved at run time
  // beside the importing module as ./watchdog-thread.js (WATCHDOG_THREAD_FILE in
  // transports/watchdog/thread-file.ts names the same file).
  { source: 'transports/watchdog/watchdog-thread', out: 'watchdog-thread' },
];
