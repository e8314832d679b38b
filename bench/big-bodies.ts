/**
 * @module bench/big-bodies
 * Issue 24's big /run bodies: a 9.9 MB body of ~834 000 small keys against a harness in
 * a process of its own (bench/children/big-bodies-harness.ts, no worker, memory store):
 * - the harness's longest event-loop delay while it takes one such body (median of runs);
 * - heap held per queued job (heapUsed after a full GC, before and after 8 bodies queued);
 * - /health latency (worst, polled every 10 ms from this process) while 4 bodies arrive at once;
 * - how many bodies the default --max-queued-bytes lets queue before 503 SW_QUEUE_FULL,
 *   and the heap then: 9.9 MB bodies (input kept as text) and 50 kB ones (parsed).
 * Run: `npx tsx bench/big-bodies.ts [runs]` (default 5). All traffic to 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';

const RUNS = Number(process.argv[2] ?? '5');
const CHILD = fileURLToPath(new URL('./children/big-bodies-harness.ts', import.meta.url));
const agent = new Agent({ keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });

/** {"input":{"k0":0,"k1":1,...}}: 834 000 keys, 9.9 MB. */
function bigBody(): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < 834_000; i++) parts.push(`"k${i}":${i % 10}`);
  return Buffer.from(`{"input":{${parts.join(',')}}}`);
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

async function startHarness(env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', CHILD], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, number | string>> => JSON.parse(String((await lines.next()).value)) as Record<string, number | string>;
  const { url } = (await next()) as { url: string };
  const ask = async (command: string) => {
    child.stdin.write(`${command}\n`);
    return next();
  };
  return {
    url: `${url}/v2/bench`,
    ask,
    stop: async () => {
      await ask('exit').catch(() => undefined);
      child.kill('SIGKILL');
    },
  };
}

async function post(url: string, body: Buffer): Promise<number> {
  const answer = await request(`${url}/run`, { dispatcher: agent, method: 'POST', body, headers: { 'content-type': 'application/json' } });
  await answer.body.text();
  return answer.statusCode;
}

async function main(): Promise<void> {
  const body = bigBody();
  console.log(`body: ${(body.length / 1e6).toFixed(2)} MB, 834 000 keys; ${RUNS} runs; node ${process.version}`);
  const delays: number[] = [];
  const perJob: number[] = [];
  const healthWorst: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const harness = await startHarness();
    // Warm up the route and the parser once with a small body.
    await post(harness.url, Buffer.from('{"input":{}}'));
    await harness.ask('reset');
    if ((await post(harness.url, body)) !== 200) throw new Error('the body was refused');
    delays.push(Number((await harness.ask('stats')).maxMs));
    const before = Number((await harness.ask('stats')).heapUsed);
    for (let i = 0; i < 8; i++) await post(harness.url, body);
    const after = Number((await harness.ask('stats')).heapUsed);
    perJob.push((after - before) / 8);
    // /health while 4 arrive at once.
    let polling = true;
    let worst = 0;
    const poller = (async () => {
      while (polling) {
        const t = performance.now();
        const answer = await request(`${harness.url}/health`, { dispatcher: agent });
        await answer.body.text();
        worst = Math.max(worst, performance.now() - t);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    await Promise.all([0, 1, 2, 3].map(() => post(harness.url, body)));
    polling = false;
    await poller;
    healthWorst.push(worst);
    await harness.stop();
    console.log(
      `run ${run + 1}: loop delay ${delays.at(-1)?.toFixed(0)} ms, heap/queued job ${(perJob.at(-1)! / 1e6).toFixed(1)} MB, /health worst ${worst.toFixed(0)} ms`,
    );
  }
  console.log(
    `median: event-loop delay while one body is taken ${median(delays).toFixed(0)} ms (min ${Math.min(...delays).toFixed(0)}, max ${Math.max(...delays).toFixed(0)})`,
  );
  console.log(`median: heap held per queued job ${(median(perJob) / 1e6).toFixed(1)} MB`);
  console.log(
    `median: /health worst latency with 4 bodies at once ${median(healthWorst).toFixed(0)} ms (min ${Math.min(...healthWorst).toFixed(0)}, max ${Math.max(...healthWorst).toFixed(0)})`,
  );

  // The default cap: how many queue before 503.
  const capped = await startHarness();
  let accepted = 0;
  let status = 200;
  while (status === 200 && accepted < 200) {
    status = await post(capped.url, body);
    if (status === 200) accepted++;
  }
  const heap = Number((await capped.ask('stats')).heapUsed);
  console.log(`default --max-queued-bytes: ${accepted} bodies of 9.9 MB queued, then ${status}; heap ${(heap / 1e6).toFixed(0)} MB`);
  await capped.stop();

  // Bodies under RAW_INPUT_MIN_CHARS are parsed and kept as objects: the heap per byte is higher.
  const smallParts: string[] = [];
  for (let i = 0; i < 5_000; i++) smallParts.push(`"k${i}":${i % 10}`);
  const small = Buffer.from(`{"input":{${smallParts.join(',')}}}`);
  const cappedSmall = await startHarness();
  let smallAccepted = 0;
  status = 200;
  while (status === 200 && smallAccepted < 5_000) {
    status = await post(cappedSmall.url, small);
    if (status === 200) smallAccepted++;
  }
  const smallHeap = Number((await cappedSmall.ask('stats')).heapUsed);
  console.log(
    `default --max-queued-bytes: ${smallAccepted} bodies of ${(small.length / 1e3).toFixed(0)} kB (5 000 keys, parsed) queued, then ${status}; heap ${(smallHeap / 1e6).toFixed(0)} MB`,
  );
  await cappedSmall.stop();
  await agent.close();
}

await main();
