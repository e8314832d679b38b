/**
 * @module bench/bounded-bodies
 * Issue 32 item 5: N concurrent ~9.9 MB /run bodies (834 000 keys each, default 80) at a
 * harness process with the default --max-queued-bytes (128 MiB) and no worker: most are
 * over the cap. Reports how many were taken and refused (503 SW_QUEUE_FULL), the time
 * until every post was answered, the slowest and median answer, /health's worst latency
 * (polled every 50 ms meanwhile) and the harness's RSS 5 s after the last answer, after
 * 30 s idle, and after a full GC with V8's heap, external and array-buffer bytes.
 * Run: `npx tsx bench/bounded-bodies.ts [posts] [repo root]`; the root (default this
 * checkout) lets the same run measure another checkout's harness (a base commit, for a
 * before/after). All traffic to 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';

const POSTS = Number(process.argv[2] ?? '80');
const ROOT = resolve(process.argv[3] ?? fileURLToPath(new URL('..', import.meta.url)));
const CHILD = join(ROOT, 'bench/children/big-bodies-harness.ts');

function bigBody(): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < 834_000; i++) parts.push(`"k${i}":${i % 10}`);
  return Buffer.from(`{"input":{${parts.join(',')}}}`);
}

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 'NaN') / 1024;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function main(): Promise<void> {
  const body = bigBody();
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', CHILD], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, LOG_LEVEL: 'silent' },
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const { url } = JSON.parse(String((await lines.next()).value)) as { url: string };
  const base = `${url}/v2/bench`;
  const pid = child.pid ?? 0;
  const rssBefore = rssMb(pid);
  const agent = new Agent({ connections: POSTS + 4, headersTimeout: 0, bodyTimeout: 0 });
  let polling = true;
  let healthWorst = 0;
  const poll = (async () => {
    while (polling) {
      const started = performance.now();
      const answer = await request(`${base}/health`, { dispatcher: agent });
      await answer.body.text();
      healthWorst = Math.max(healthWorst, performance.now() - started);
      await sleep(50);
    }
  })();
  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: POSTS }, async () => {
      const answer = await request(`${base}/run`, { dispatcher: agent, method: 'POST', body, headers: { 'content-type': 'application/json' } });
      await answer.body.text();
      return { status: answer.statusCode, ms: performance.now() - started };
    }),
  );
  const allMs = performance.now() - started;
  polling = false;
  await poll;
  await sleep(5_000);
  const rssAfter = rssMb(pid);
  // What stays once the harness has been idle 30 s, and then after a full GC, split by kind.
  await sleep(25_000);
  const rssIdle30s = rssMb(pid);
  child.stdin.write('stats\n');
  const afterGc = JSON.parse(String((await lines.next()).value)) as Record<string, number>;
  const mb = (bytes: number | undefined): number => Math.round((bytes ?? Number.NaN) / 2 ** 20);
  const times = answers.map((a) => a.ms).sort((a, b) => a - b);
  const tally: Record<number, number> = {};
  for (const { status } of answers) tally[status] = (tally[status] ?? 0) + 1;
  console.log(
    JSON.stringify({
      root: ROOT,
      posts: POSTS,
      bodyMb: Number((body.length / 1e6).toFixed(2)),
      statuses: tally,
      allAnsweredS: Number((allMs / 1000).toFixed(1)),
      medianAnswerS: Number(((times[Math.floor(times.length / 2)] ?? 0) / 1000).toFixed(1)),
      healthWorstMs: Math.round(healthWorst),
      rssBeforeMb: Math.round(rssBefore),
      rssAfterMb: Math.round(rssAfter),
      rssIdle30sMb: Math.round(rssIdle30s),
      afterGcMb: {
        rss: mb(afterGc.rss),
        heapUsed: mb(afterGc.heapUsed),
        heapTotal: mb(afterGc.heapTotal),
        external: mb(afterGc.external),
        arrayBuffers: mb(afterGc.arrayBuffers),
      },
    }),
  );
  child.stdin.write('exit\n');
  await agent.close();
  setTimeout(() => child.kill('SIGKILL'), 2_000).unref();
}

await main();
