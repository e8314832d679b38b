/**
 * @module test/setup/run-all
 * `npm test` after the prerequisites: the static checks (tsc --noEmit, the dashboard's type
 * check, oxlint, oxfmt) and vitest at the same time. Run one after the other they took
 * about 110 s of a CI run before the first test (2 shared cores); beside vitest they use the
 * CPU its tests leave idle while they wait on child processes, sockets and timers (about a
 * quarter of a CI run's CPU time was idle). The checks run one at a time under Linux's
 * SCHED_IDLE policy (`chrt --idle 0`): they get the CPU only when no test process wants
 * it, so they cannot slow a test (at nice 10 they did: a CI run's tests took 1 280 s
 * instead of 1 082). At worst they finish after vitest, as if run after it. Without chrt
 * they run at nice 19. Their output is held and printed after vitest's, with one line per
 * check. Arguments go to vitest
 * (`npm test -- --reporter=json ...`). The exit code is vitest's, or 1 if a check failed.
 * SW_TEST_CHECKS=first runs the checks before vitest, stopping at the first failure (the
 * old order: a type error found before a long run).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setPriority } from 'node:os';
import { EAGER_SETUP_ENV } from './eager-setup.js';
import { ONE_PROJECT_ENV } from './tiers.js';

interface Check {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** Arguments added when the check runs beside vitest (in the background): one thread's worth of work. */
  readonly backgroundArgs?: readonly string[];
}

/**
 * The type checks run TypeScript 7 (the native compiler, `typescript-7` in devDependencies):
 * about a third of TypeScript 5.9's time and CPU on this tree. `typescript` stays 5.9 for
 * what loads its JavaScript API (the snippet check, the tests that read declarations);
 * both packages declare a `tsc` bin, so this one is called by its path.
 */
const TSC_7 = ['node_modules/typescript-7/bin/tsc'];

/**
 * Beside vitest the checks run on one thread each: TypeScript 7 with one checker (its default,
 * four, each binding the shared declarations again) and every Go program (tsc 7, oxlint's
 * tsgolint) with GOMAXPROCS=1. Measured on the 2-core machine, quiet: the three cost 48 s of
 * CPU with their defaults and 24 s so (tsc 21 -> 8.6 s, the dashboard's 8.8 -> 3.5 s, oxlint
 * 18 -> 11 s), each taking about as long by the clock. In the background, on cores the tests
 * keep busy, CPU time is what they take from the run. First (SW_TEST_CHECKS=first) they run
 * alone and keep their threads.
 */
const ONE_CHECKER = ['--checkers', '1'];
const ONE_GO_THREAD = { GOMAXPROCS: '1' };

const CHECKS: readonly Check[] = [
  { name: 'tsc --noEmit', command: process.execPath, args: [...TSC_7, '-p', 'tsconfig.json', '--noEmit'], backgroundArgs: ONE_CHECKER },
  { name: "the dashboard's type check", command: process.execPath, args: [...TSC_7, '-p', 'tsconfig.ui.json'], backgroundArgs: ONE_CHECKER },
  { name: 'oxlint', command: 'npx', args: ['oxlint', '--type-aware', '--deny-warnings', '.'] },
  { name: 'oxfmt', command: 'npx', args: ['oxfmt', '--check'] },
];

interface CheckResult {
  readonly check: Check;
  readonly code: number;
  readonly output: string;
  readonly seconds: number;
}

/** `chrt` of util-linux, when this machine has it (Debian's base system does). */
const CHRT = ['/usr/bin/chrt', '/bin/chrt'].find((path) => existsSync(path));

/** Run one check with its output held; in the background (SCHED_IDLE, or nice 19) unless `foreground`. */
function runCheck(check: Check, foreground: boolean): Promise<CheckResult> {
  const startedAt = Date.now();
  return new Promise((resolve) => {
    const idle = !foreground && CHRT !== undefined;
    const checkArgs = foreground ? check.args : [...check.args, ...(check.backgroundArgs ?? [])];
    const [command, args] = idle ? [CHRT, ['--idle', '0', check.command, ...checkArgs]] : [check.command, checkArgs];
    const env = foreground ? process.env : { ...process.env, ...ONE_GO_THREAD };
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    if (!foreground && !idle && child.pid !== undefined) {
      try {
        setPriority(child.pid, 19);
      } catch {
        // Not allowed here: it runs at the same priority, which only costs time.
      }
    }
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', (error) => chunks.push(Buffer.from(`could not start ${check.command}: ${error.message}\n`)));
    child.on('close', (code) => resolve({ check, code: code ?? 1, output: Buffer.concat(chunks).toString('utf8'), seconds: (Date.now() - startedAt) / 1000 }));
  });
}

async function runChecks(foreground: boolean, stopAtFailure: boolean): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const check of CHECKS) {
    const result = await runCheck(check, foreground);
    results.push(result);
    if (stopAtFailure && result.code !== 0) break;
  }
  return results;
}

function runVitest(args: readonly string[]): Promise<number> {
  return new Promise((resolve) => {
    // The whole suite: the system tier's builds start with the run (test/setup/eager-setup.ts).
    // The four tiers as one project (tiers.ts, ONE_PROJECT_ENV): one set of workers for the whole run.
    const child = spawn('npx', ['vitest', 'run', ...args], { stdio: 'inherit', env: { ...process.env, [EAGER_SETUP_ENV]: '1', [ONE_PROJECT_ENV]: '1' } });
    child.on('error', () => resolve(1));
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** What a check's failure prints: its output, then one line each. */
function report(results: readonly CheckResult[]): boolean {
  for (const result of results) if (result.code !== 0) process.stdout.write(`\n--- ${result.check.name} failed (exit ${result.code}) ---\n${result.output}\n`);
  for (const result of results) console.log(`check: ${result.check.name} ${result.code === 0 ? 'passed' : 'FAILED'} (${result.seconds.toFixed(0)} s)`);
  return results.length === CHECKS.length && results.every((result) => result.code === 0);
}

const vitestArgs = process.argv.slice(2);
if (process.env.SW_TEST_CHECKS === 'first') {
  const checked = report(await runChecks(true, true));
  process.exitCode = checked ? await runVitest(vitestArgs) : 1;
} else {
  const checks = runChecks(false, false);
  const vitestCode = await runVitest(vitestArgs);
  const checked = report(await checks);
  process.exitCode = vitestCode !== 0 ? vitestCode : checked ? 0 : 1;
}
