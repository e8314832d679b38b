/**
 * @module bench/runsync-interleaved
 * CPU a `/runsync` of two compiled trees, both servers up at once and driven in short
 * alternating slices (issue 46): `npx tsx bench/runsync-interleaved.ts --a <folder> --b
 * <folder> [--mode serve-api|harness] [--slices 20] [--seconds 1.5] [--a-node-args="..."] [--b-node-args="..."]` (with `=`: the value starts with a dash).
 * `--a-node-args`/`--b-node-args`: node flags for that side's server (its worker child inherits them:
 * they go in NODE_OPTIONS), e.g. one tree against itself with a V8 flag. Each folder is a
 * copy of this bench's compiled folder (lib/compiled.ts) made at the commit to compare,
 * its package links pointed at the copy (as runsync-ladder.ts's `--baseline`). The
 * ladder runs one fresh server after the other for 5 s each; on a shared machine whose
 * load moves by the second, a slice of 1.5 s of each in turn puts both under the same
 * neighbours, and the ratio slice by slice cancels what moves them both. Per slice: 8
 * keep-alive undici connections in a closed loop, a no-op handler, the CPU of the
 * server's main process and of all its processes from /proc over the requests answered.
 * `--mode serve-api`: the bench worker with `--serve-api --no-rate-limit` (the worker in
 * a child); `harness`: runsync-ladder-server.ts's `harness` rung (the worker in process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { REPO_ROOT, stopChild, track } from './lib/child.js';
import { loadAverage } from './lib/machine.js';
import { processTree, readProc } from './lib/proc.js';
import { freePort } from './lib/runpod-python.js';
import { median } from './lib/stats.js';

const CONNECTIONS = 8;
const WARM_REQUESTS = 2_000;

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    mode: { type: 'string', default: 'serve-api' },
    slices: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '1.5' },
    'a-node-args': { type: 'string', default: '' },
    'b-node-args': { type: 'string', default: '' },
  },
  strict: true,
});
if (values.a === undefined || values.b === undefined) throw new Error('--a and --b: the two compiled folders to compare');
if (values.mode !== 'serve-api' && values.mode !== 'harness') throw new Error(`--mode must be serve-api or harness; got ${values.mode}`);
const mode = values.mode;

interface Side {
  readonly name: string;
  readonly nodeArgs: string;
  /** The last of the server's stderr, to say why it exited. */
  stderr: string;
  readonly child: ChildProcess;
  readonly pool: Pool;
  readonly main: number[];
  readonly all: number[];
  readonly rate: number[];
}

async function startSide(name: string, folder: string, nodeArgs: string): Promise<Side> {
  const port = await freePort();
  const script = join(folder, mode === 'serve-api' ? 'bench/children/platform-worker.js' : 'bench/children/runsync-ladder-server.js');
  const args = mode === 'serve-api' ? ['--serve-api', '--no-rate-limit'] : ['--layer', 'harness'];
  const options = [process.env.NODE_OPTIONS ?? '', nodeArgs].filter((part) => part !== '').join(' ');
  const env = { ...process.env, BENCH_CONCURRENCY: String(CONNECTIONS), ...(options !== '' ? { NODE_OPTIONS: options } : {}) };
  const child = track(spawn(process.execPath, [script, ...args, '--port', String(port)], { cwd: REPO_ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] }));
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONNECTIONS, keepAliveTimeout: 30_000 });
  const side: Side = { name, nodeArgs, stderr: '', child, pool, main: [], all: [], rate: [] };
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (side.stderr = (side.stderr + text).slice(-2_000)));
  return side;
}

async function runsync(side: Side): Promise<void> {
  const answer = await side.pool.request({ method: 'POST', path: '/runsync', body: '{"input":{}}', headers: { 'content-type': 'application/json' } });
  const text = await answer.body.text();
  if (answer.statusCode !== 200) throw new Error(`${side.name}: /runsync answered ${answer.statusCode}: ${text.slice(0, 200)}`);
}

async function warm(side: Side): Promise<void> {
  for (let tries = 0; ; tries++) {
    try {
      await runsync(side);
      break;
    } catch (error) {
      if (side.child.exitCode !== null) {
        // NODE_OPTIONS takes only the flags Node lists for it (`node --help`, "Environment variables"); others stop the server at once.
        const flags = side.nodeArgs === '' ? '' : ` with NODE_OPTIONS flags "${side.nodeArgs}" (NODE_OPTIONS accepts only some V8 flags)`;
        throw new Error(`${side.name}: the server exited (code ${side.child.exitCode})${flags}; its stderr ended:\n${side.stderr}`, { cause: error });
      }
      if (tries > 300) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  for (let i = 0; i < WARM_REQUESTS; i++) await runsync(side);
}

const cpuOf = (pids: readonly number[]): number => pids.reduce((sum, pid) => sum + (readProc(pid)?.cpuMs ?? 0), 0);

/** One slice of `seconds` on `side`: CPU µs a request of its main process and of all its processes, requests/s. */
async function slice(side: Side, seconds: number): Promise<void> {
  const pids = processTree(side.child.pid ?? 0);
  const [main0, all0] = [cpuOf(pids.slice(0, 1)), cpuOf(pids)];
  let done = 0;
  let stop = false;
  const began = performance.now();
  const timer = setTimeout(() => (stop = true), seconds * 1_000);
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (!stop) {
        await runsync(side);
        done++;
      }
    }),
  );
  clearTimeout(timer);
  const elapsed = performance.now() - began;
  side.main.push(((cpuOf(pids.slice(0, 1)) - main0) / done) * 1_000);
  side.all.push(((cpuOf(pids) - all0) / done) * 1_000);
  side.rate.push((done / elapsed) * 1_000);
}

const sides = [await startSide('a', values.a, values['a-node-args']), await startSide('b', values.b, values['b-node-args'])];
try {
  for (const side of sides) await warm(side);
  const slices = Number(values.slices);
  const seconds = Number(values.seconds);
  console.log(`/runsync interleaved, ${mode}: ${slices} slices of ${seconds} s a side, ${CONNECTIONS} connections; load ${loadAverage()}`);
  console.log(`  a = ${values.a} ${values['a-node-args']}\n  b = ${values.b} ${values['b-node-args']}`);
  for (let i = 0; i < slices; i++) for (const side of i % 2 === 0 ? sides : [...sides].reverse()) await slice(side, seconds);
  const range = (list: readonly number[]): string => `${Math.min(...list).toFixed(0)}-${Math.max(...list).toFixed(0)}`;
  for (const side of sides) {
    console.log(
      `  ${side.name}: main process ${median(side.main).toFixed(0)} µs a request (${range(side.main)}), all processes ${median(side.all).toFixed(0)} (${range(side.all)}), ${median(side.rate).toFixed(0)} req/s`,
    );
  }
  const [a, b] = sides as [Side, Side];
  const ratio = (of: (side: Side) => number[]): number => median(of(b).map((value, i) => value / (of(a)[i] ?? Number.NaN)));
  console.log(
    `  b / a slice by slice (median): main process ${ratio((side) => side.main).toFixed(3)}, all processes ${ratio((side) => side.all).toFixed(3)}; load ${loadAverage()}`,
  );
} finally {
  for (const side of sides) {
    await side.pool.close();
    await stopChild(side.child);
  }
}
