/**
 * @module local/tiering
 * The local API gets to its full speed within a few thousand requests of its start rather
 * than tens of thousands. V8 runs a function in its interpreter (and, from Node 24, in
 * Maglev) until it has been called about 3 000 times, and only then compiles it with
 * TurboFan. A request's path is a hundred-odd functions called once or twice a request, so
 * they reach TurboFan together: `bench/burst-ramp.ts` showed `--serve-api` climbing for
 * 15 000 requests (Node 24: one burst near the 10 000th at a third of the rate, while about
 * 140 functions were compiled at once) and Node 22 for 12 000. With TurboFan at 600 calls,
 * both were past two thirds of their full rate after about 6 000 requests, and Node 24's
 * later rate was higher; the first 1 900 requests cost about 0.15 ms more CPU each, the
 * compiler's work done sooner (bench/README, issue 46: the local API tiers up sooner).
 *
 * Both processes of `--serve-api` run our code on a request's path (the handler runs in the
 * worker child, whose command line gets the same flags: supervisor.ts). This process was
 * started by the user's own `node`, so its flags are set at run time, which V8 reads for these
 * each time it counts a function's calls anew. A flag the user named on the command line or
 * in NODE_OPTIONS keeps their value. The flags exist from V8 12 (Node 22); Node 20's V8 does
 * not know them and `node` refuses an unknown V8 flag on its command line, so there they are
 * left out.
 *
 * Without Maglev, too (on by default from Node 24): a function goes from the interpreter and
 * Sparkplug straight to TurboFan. Maglev compiles on V8's background threads, and the memory it
 * takes there stays with glibc's per-thread arenas: 70 s after 20 000 `/runsync` on Node 24, the
 * local API's process held about 18 MiB less without it (malloc's arenas 25 -> 10 MiB, its main
 * heap 13 -> 9), at the same rate and CPU a request (bench/README, issue 46: Maglev off, the
 * child's collections on its own thread).
 */
import { setFlagsFromString } from 'node:v8';

/** V8 flags that make a function optimized sooner (and by TurboFan alone), for a process that serves requests. */
export const TIERING_FLAGS: readonly string[] = ['--invocation-count-for-turbofan=600', '--no-maglev'];

/** The first V8 version that knows TIERING_FLAGS (Node 22's). */
const FIRST_V8_MAJOR = 12;

/** TIERING_FLAGS for V8 `version` (default this process's), or none where that V8 does not know them. */
export function tieringFlagsFor(version: string = process.versions.v8): readonly string[] {
  const major = Number.parseInt(version, 10);
  return Number.isInteger(major) && major >= FIRST_V8_MAJOR ? TIERING_FLAGS : [];
}

/** The names (`--name`, without a value) of the V8 and Node flags this process was started with, on its command line and in NODE_OPTIONS. */
export function givenFlagNames(execArgv: readonly string[] = process.execArgv, nodeOptions: string = process.env.NODE_OPTIONS ?? ''): Set<string> {
  return new Set([...execArgv, ...nodeOptions.split(/\s+/)].filter((flag) => flag.startsWith('--')).map((flag) => flagName(flag)));
}

/** `--name` of `--name=value` and of `--no-name` (dashes and underscores are the same to V8: written with dashes). */
export function flagName(flag: string): string {
  return (flag.split('=')[0] ?? flag).replaceAll('_', '-').replace(/^--no-/, '--');
}

/** Sets tieringFlagsFor() in this process, except those the user named; answers the flags set. */
export function tierUpSooner(given: ReadonlySet<string> = givenFlagNames()): readonly string[] {
  const flags = tieringFlagsFor().filter((flag) => !given.has(flagName(flag)));
  for (const flag of flags) setFlagsFromString(flag);
  return flags;
}
