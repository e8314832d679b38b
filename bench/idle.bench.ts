/**
 * @module bench/idle
 * What an idle server costs (issue 26, part 7: "idle is free", <= 2 ms of CPU a second):
 * the compiled CLI started as a real process, left alone to settle, then its CPU time
 * read from /proc over two windows (20 s each; 5 s with --quick) with nobody calling it and no
 * dashboard open: the first 20 s after it listens, and 20 s from 40 s on (settled). Cases:
 * - `harness`: `main.js harness --port 0` (memory store, no worker): the harness process;
 * - `harness --image`: the same with a launcher (`--image bench/idle:1=COMMAND`) and an
 *   endpoint made through /v1 on a template with that image (workersMin 0, nothing
 *   queued: no worker runs), so that the launcher has an endpoint to scale and nothing to do;
 * - `--serve-api`: the compiled bench worker run as `worker.js --serve-api --port 0`: the
 *   harness process (the target applies to it) and, apart, its supervised worker child,
 *   which pings the harness every RUNPOD_PING_INTERVAL (10 s) and holds a job-take long
 *   poll, as the worker protocol requires of it.
 * Each run starts a fresh process (the median of the runs is reported).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO_ROOT, childExecArgv, stopChild, track } from './lib/child.js';
import { childScript } from './lib/compiled.js';
import { processTree, readProc } from './lib/proc.js';
import type { BenchCase, Benchmark, Measurement, MetricSpec } from './lib/runner.js';

/**
 * Two windows per run: the first WINDOW_MS after the server listens (start-up work ends
 * in it: JIT, the worker child's start, and V8's memory reducer, which runs one or more
 * full GCs some 8 s after allocation calms down), and WINDOW_MS from SETTLED_AT_MS on
 * (what a server left idle costs for as long as it stays so).
 */
const WINDOW_MS = 20_000;
const SETTLED_AT_MS = 40_000;
const QUICK_WINDOW_MS = 5_000;
const QUICK_SETTLED_AT_MS = 15_000;

type Kind = 'harness' | 'harness-launcher' | 'serve-api';

/** The launcher case's image: never started (workersMin 0, no job), so its command does not matter. */
const LAUNCHER_IMAGE = 'bench/idle:1';

/** POST `body` to the harness at `url` (no API key: the bench harness has none); answers the JSON. */
async function post<T>(url: string, body: unknown): Promise<T> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** A template with the launcher's image and an endpoint on it that wants no worker. */
async function launcherEndpoint(url: string): Promise<void> {
  const template = await post<{ id: string }>(`${url}/v1/templates`, { name: 'idle-bench', imageName: LAUNCHER_IMAGE, category: 'CPU' });
  await post(`${url}/v1/endpoints`, { templateId: template.id, workersMin: 0, workersMax: 1 });
}

async function start(kind: Kind): Promise<ChildProcess> {
  const script = kind === 'serve-api' ? await childScript('bench/children/platform-worker.ts', 'compiled') : await childScript('src/cli/main.ts', 'compiled');
  const args =
    kind === 'serve-api'
      ? ['--serve-api', '--port', '0']
      : ['harness', '--port', '0', ...(kind === 'harness-launcher' ? ['--gpus', 'none', '--image', `${LAUNCHER_IMAGE}=node -e 0`] : [])];
  const child = track(
    spawn(process.execPath, [...childExecArgv(script), script, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', process.env.BENCH_VERBOSE ? 'inherit' : 'ignore'],
    }),
  );
  const ready = kind === 'serve-api' ? /http:\/\/127\.0\.0\.1:\d+\/v2\/local/ : /harness listening on (http:\/\/[^\s]+)/;
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${kind} did not listen within 60 s: ${out}`)), 60_000);
    child.stdout?.on('data', (data: Buffer) => {
      out += data.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`${kind} exited (${String(code)}) before listening: ${out}`)));
  });
  child.stdout?.resume();
  if (kind === 'harness-launcher') await launcherEndpoint(ready.exec(out)?.[1]?.replace(/\/$/, '') ?? '');
  return child;
}

/** CPU ms of `pid` alone and of its descendants together. */
function cpuOf(pid: number): { own: number; children: number } {
  const own = readProc(pid)?.cpuMs ?? Number.NaN;
  let children = 0;
  for (const member of processTree(pid).slice(1)) children += readProc(member)?.cpuMs ?? 0;
  return { own, children };
}

interface Window {
  readonly own: number;
  readonly children: number;
}

/** CPU ms a second of `pid` and of its descendants over `ms`. */
async function windowOf(pid: number, ms: number): Promise<Window> {
  const before = cpuOf(pid);
  const began = performance.now();
  await sleep(ms);
  const after = cpuOf(pid);
  const seconds = (performance.now() - began) / 1000;
  return { own: (after.own - before.own) / seconds, children: (after.children - before.children) / seconds };
}

function idleCase(kind: Kind): BenchCase {
  const metrics: Record<string, MetricSpec> = {
    'CPU/s, harness, first 20 s': { unit: 'ms/s', digits: 2 },
    'CPU/s, harness, settled': { unit: 'ms/s', digits: 2, target: { op: '<=', value: 2 } },
  };
  if (kind === 'serve-api') {
    metrics['CPU/s, worker child, first 20 s'] = { unit: 'ms/s', digits: 2 };
    metrics['CPU/s, worker child, settled'] = { unit: 'ms/s', digits: 2 };
  }
  return {
    name: kind === 'harness' ? 'harness' : kind === 'harness-launcher' ? 'harness --image' : '--serve-api',
    metrics,
    warmup: false,
    async measure({ quick }): Promise<Measurement> {
      const child = await start(kind);
      try {
        const pid = child.pid ?? 0;
        const began = performance.now();
        const windowMs = quick ? QUICK_WINDOW_MS : WINDOW_MS;
        const first = await windowOf(pid, windowMs);
        await sleep(Math.max(0, (quick ? QUICK_SETTLED_AT_MS : SETTLED_AT_MS) - (performance.now() - began)));
        const settled = await windowOf(pid, windowMs);
        const figures: Record<string, number> = { 'CPU/s, harness, first 20 s': first.own, 'CPU/s, harness, settled': settled.own };
        if (kind === 'serve-api') {
          figures['CPU/s, worker child, first 20 s'] = first.children;
          figures['CPU/s, worker child, settled'] = settled.children;
        }
        return figures;
      } finally {
        await stopChild(child, 15_000);
      }
    },
  };
}

export const idleBenchmark: Benchmark = {
  name: 'idle',
  title: 'an idle harness (alone, and with a launcher) and an idle --serve-api (nobody calling, no dashboard open): CPU a second of each process, from /proc',
  cases: () => [idleCase('harness'), idleCase('harness-launcher'), idleCase('serve-api')],
};
