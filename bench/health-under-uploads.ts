/**
 * @module bench/health-under-uploads
 * Issue 49 item 4: /health while N concurrent ~9.9 MB /run bodies arrive (default 80), each
 * side in a process of its own: the harness (bench/children/big-bodies-harness.ts, memory
 * store, default --max-queued-bytes, no worker), the uploads (this process, undici), and a
 * /health probe opening a fresh connection every 100 ms (bench/children/health-poller.ts).
 * Reports the answers' statuses and times, the probe's worst and median latency during the
 * uploads, split on the server side (BENCH_TRACE_HEALTH) into accept -> request parsed ->
 * answered, the harness's longest event-loop delay, and its RSS / heap before, 5 s after
 * the last answer, and 30 s after the queue was then purged (and after a full GC), that
 * figure split by mapping (glibc's main arena, anonymous mappings, files: lib/proc.ts).
 * The harness child takes extra node flags from BENCH_HARNESS_ARGS (e.g. --cpu-prof), and
 * BENCH_STRACE=<file> attaches strace to it for its accept4 and epoll calls.
 * Run: `npx tsx bench/health-under-uploads.ts [posts] [repo root]`. All traffic to 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { residentByMapping } from './lib/proc.js';

const POSTS = Number(process.argv[2] ?? '80');
const ROOT = resolve(process.argv[3] ?? fileURLToPath(new URL('..', import.meta.url)));
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 'NaN') / 1024;
const mb = (bytes: number | undefined): number => Math.round((bytes ?? Number.NaN) / 2 ** 20);
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

function bigBody(): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < 834_000; i++) parts.push(`"k${i}":${i % 10}`);
  return Buffer.from(`{"input":{${parts.join(',')}}}`);
}

async function main(): Promise<void> {
  const body = bigBody();
  const harness = spawn(
    process.execPath,
    [
      '--expose-gc',
      ...(process.env.BENCH_HARNESS_ARGS ?? '').split(' ').filter(Boolean),
      '--import',
      'tsx',
      join(ROOT, 'bench/children/big-bodies-harness.ts'),
    ],
    {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, LOG_LEVEL: 'silent', BENCH_TRACE_HEALTH: '1' },
    },
  );
  const lines = createInterface({ input: harness.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, unknown>> => JSON.parse(String((await lines.next()).value)) as Record<string, unknown>;
  const ask = async (command: string) => {
    harness.stdin.write(`${command}\n`);
    return next();
  };
  const { url } = (await next()) as { url: string };
  const base = `${url}/v2/bench`;
  const pid = harness.pid ?? 0;
  const before = await ask('stats');
  if (process.env.BENCH_STRACE) {
    spawn('strace', ['-f', '--seccomp-bpf', '-tt', '-e', 'trace=accept4,epoll_wait,epoll_pwait', '-o', process.env.BENCH_STRACE, '-p', String(pid)], {
      stdio: 'inherit',
    });
    await sleep(1_000);
  }
  const poller = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./children/health-poller.ts', import.meta.url)), `${base}/health`], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const probes: Array<{ at: number; port: number; connectMs: number; firstByteMs: number; ms: number; status: number }> = [];
  const probeLines = createInterface({ input: poller.stdout });
  probeLines.on('line', (line) => probes.push(JSON.parse(line) as (typeof probes)[number]));
  while (probes.length < 3) await sleep(50);
  await ask('reset');
  const agent = new Agent({ connections: POSTS + 4, headersTimeout: 0, bodyTimeout: 0 });
  const startedAt = Date.now();
  const started = performance.now();
  // The same probe from the uploading process, over the uploads' pool (as bench/bounded-bodies.ts did).
  const inProcess: Array<{ at: number; ms: number }> = [];
  let uploading = true;
  const inProcessPoll = (async () => {
    while (uploading) {
      const at = Date.now();
      const t = performance.now();
      const answer = await request(`${base}/health`, { dispatcher: agent });
      await answer.body.text();
      inProcess.push({ at, ms: performance.now() - t });
      await sleep(100);
    }
  })();
  const answers = await Promise.all(
    Array.from({ length: POSTS }, async () => {
      try {
        const answer = await request(`${base}/run`, { dispatcher: agent, method: 'POST', body, headers: { 'content-type': 'application/json' } });
        const text = await answer.body.text();
        return { status: answer.statusCode, code: /"code":"(\w+)"/.exec(text)?.[1] ?? '', ms: performance.now() - started };
      } catch (error) {
        return { status: 0, code: (error as { code?: string }).code ?? String(error), ms: performance.now() - started };
      }
    }),
  );
  const endedAt = Date.now();
  uploading = false;
  await inProcessPoll;
  const loop = await ask('stats');
  const rss5s = (await sleep(5_000), rssMb(pid));
  // The queue purged (what the reporter did), then 30 s idle: what the harness still holds.
  const purged = await request(`${base}/purge-queue`, { dispatcher: agent, method: 'POST' });
  const { removed } = (await purged.body.json()) as { removed: number };
  await sleep(30_000);
  const rss30s = rssMb(pid);
  const mappings30s = residentByMapping(pid);
  const after = await ask('stats');
  poller.stdin.end();
  const { trace } = (await ask('trace')) as { trace: Array<{ port: number; acceptedAt: number; requestAt: number; answeredAt: number }> };
  const during = probes.filter((p) => p.at >= startedAt && p.at <= endedAt);
  const tally: Record<string, number> = {};
  for (const { status, code } of answers) tally[`${status} ${code}`.trim()] = (tally[`${status} ${code}`.trim()] ?? 0) + 1;
  const worst = during.reduce((w, p) => (p.ms > w.ms ? p : w), { at: 0, port: 0, connectMs: 0, firstByteMs: 0, ms: 0, status: 0 });
  console.log(
    JSON.stringify({
      root: ROOT,
      node: process.version,
      posts: POSTS,
      statuses: tally,
      allAnsweredS: Number(((endedAt - startedAt) / 1000).toFixed(1)),
      medianAnswerS: Number((median(answers.map((a) => a.ms)) / 1000).toFixed(1)),
      healthProbesDuring: during.length,
      healthWorst: worst,
      healthMedianMs: Math.round(median(during.map((p) => p.ms))),
      inProcessHealthWorstMs: Math.round(Math.max(0, ...inProcess.map((p) => p.ms))),
      inProcessHealthMedianMs: Math.round(median(inProcess.map((p) => p.ms))),
      // The worst probe as the server saw it: from the probe's start to the accept, to its request parsed, to the answer sent.
      healthWorstServerSide: ((t) =>
        t ? { toAcceptMs: t.acceptedAt - worst.at, toRequestMs: t.requestAt - worst.at, toAnswerMs: t.answeredAt - worst.at } : undefined)(
        trace.find((t) => t.port === worst.port),
      ),
      harnessLoopDelayMaxMs: Math.round(Number(loop.maxMs)),
      purged: removed,
      rssMb: {
        before: mb(Number(before.rss)),
        atEnd: mb(Number(loop.rss)),
        after5s: Math.round(rss5s),
        purged30s: Math.round(rss30s),
        purged30sGc: mb(Number(after.rss)),
      },
      // Where the 30 s figure lies: glibc's main arena, anonymous mappings (a thread's arena is one of about 64 MB), files.
      residentByMapping30s: mappings30s,
      heapUsedMb: {
        before: mb(Number(before.heapUsed)),
        atEnd: mb(Number(loop.heapUsed)),
        purged30sGc: mb(Number(after.heapUsed)),
        external: mb(Number(after.external)),
      },
    }),
  );
  harness.stdin.write('exit\n');
  await agent.close();
  setTimeout(() => harness.kill('SIGKILL'), 2_000).unref();
}

await main();
