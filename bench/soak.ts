/**
 * @module bench/soak
 * Issue 32's soak: `npm run bench -- soak [--minutes 10] [--rate 3] [--fault-every-s 15]
 * [--drain-s 180] [--ping-interval-ms 10000] [--faults worker,harness,postgres] [--seed N]` (or `npx tsx bench/soak.ts ...`). On an embedded
 * PostgreSQL server, two `serverless-worker harness` processes share one database;
 * their process launchers run bench/children/soak-worker.ts for one endpoint
 * (workersMin 2, workersMax 4, 4 jobs per worker; `--ping-interval-ms` is the harnesses'
 * heartbeat interval, default theirs: a worker silent 3 intervals is gone). A client submits `--rate` jobs a second
 * for `--minutes` (fractions allowed: 0.5 for a quick try), a mix of /run (short and
 * long), /runsync, jobs that outlast a 5 s executionTimeout and jobs with a 10 s ttl,
 * while a fault is injected every `--fault-every-s` seconds, in turn: SIGKILL of a
 * launched worker, SIGKILL of a harness (restarted on its port 1-3 s later), SIGKILL of a
 * worker, a PostgreSQL stop and start (2-5 s down); `--faults` keeps only those kinds, in that
 * order (`--faults harness`: harness SIGKILLs alone). Then it stops submitting, waits up to
 * `--drain-s` for every accepted job to be seen in a final state, and prints the counts:
 * submitted, completed once, ended otherwise (by reason), lost (accepted, never seen
 * final, not in the store), run twice (the handler ran to its end twice: the worker
 * appends each run to a file; a job whose earlier run ended just before the SIGKILL of
 * its worker or its harness is counted apart, runTwiceResultLostWithKill: its result
 * died with that process and the job was requeued, at least once by design), stuck
 * (still not final), refused submissions, faults by kind. Exits 1 when lost, run twice
 * or stuck is not 0. All traffic to 127.0.0.1.
 */
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { seededRandom } from '../test/reliability/support/random.js';
import { loadAverage, machineInfo } from './lib/machine.js';
import { startSoakCluster } from './lib/soak-cluster.js';
import { SoakClient } from './lib/soak-client.js';
import { summariseRuns, type Kill } from './lib/soak-runs.js';

const FAULT_CYCLE = ['worker SIGKILL', 'harness SIGKILL', 'worker SIGKILL', 'PostgreSQL restart'] as const;
type FaultKind = (typeof FAULT_CYCLE)[number];

const FAULT_NAMES: Record<string, FaultKind> = { worker: 'worker SIGKILL', harness: 'harness SIGKILL', postgres: 'PostgreSQL restart' };

/** `--faults worker,harness`: the cycle with only those kinds; default the whole cycle. */
function faultCycle(text: string | undefined): readonly FaultKind[] {
  if (text === undefined) return FAULT_CYCLE;
  const wanted = text.split(',').map((name) => name.trim());
  const unknown = wanted.filter((name) => !(name in FAULT_NAMES));
  if (unknown.length > 0 || wanted.length === 0) throw new Error(`--faults takes a list of worker, harness, postgres; got ${JSON.stringify(text)}`);
  const kinds = new Set(wanted.map((name) => FAULT_NAMES[name]));
  return FAULT_CYCLE.filter((kind) => kinds.has(kind));
}

function positiveNumber(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a number above 0, instead got ${JSON.stringify(text)}`);
  return value;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** How many harness exits showed each error (the first error line of what it printed last). */
function crashSignatures(exits: readonly string[]): Record<string, number> {
  const tally: Record<string, number> = {};
  for (const how of exits) {
    const signature = /^(?:TypeError|Error|RangeError)[^\n]*/m.exec(how)?.[0] ?? how.slice(0, 60);
    tally[signature] = (tally[signature] ?? 0) + 1;
  }
  return tally;
}

/** Run the soak with the command line `argv` (flags only); answers the exit code. */
export async function runSoak(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      minutes: { type: 'string' },
      rate: { type: 'string' },
      'fault-every-s': { type: 'string' },
      'drain-s': { type: 'string' },
      seed: { type: 'string' },
      'ping-interval-ms': { type: 'string' },
      faults: { type: 'string' },
    },
  });
  const cycle = faultCycle(values.faults);
  const minutes = positiveNumber('minutes', values.minutes, 10);
  const rate = positiveNumber('rate', values.rate, 3);
  const faultEveryMs = positiveNumber('fault-every-s', values['fault-every-s'], Math.min(15, (minutes * 60) / 4)) * 1000;
  const drainMs = positiveNumber('drain-s', values['drain-s'], 180) * 1000;
  const pingIntervalMs = Math.floor(positiveNumber('ping-interval-ms', values['ping-interval-ms'], 10_000));
  const seed = Math.floor(positiveNumber('seed', values.seed, Date.now() % 1_000_000));
  const random = seededRandom(seed);
  const log = (line: string): void => void process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

  const machine = machineInfo();
  log(
    `${minutes} min, ${rate} jobs/s, a fault every ${faultEveryMs / 1000} s (${[...new Set(cycle)].join(', ')}), drain up to ${drainMs / 1000} s, ping interval ${pingIntervalMs} ms, seed ${seed}; load ${machine.loadavg}`,
  );
  const cluster = await startSoakCluster({ workersMin: 2, workersMax: 4, concurrency: 4, lifetimeMs: minutes * 60_000 + drainMs + 300_000, pingIntervalMs });
  log(`PostgreSQL ${cluster.postgres.url.replace(/:[^:@/]+@/, ':***@')}; harnesses ${cluster.liveUrls().join(', ')}; endpoint ${cluster.endpointId}`);
  const client = new SoakClient(cluster.endpointId, () => cluster.liveUrls(), random);
  const faults: Record<string, number> = {};
  const kills: Kill[] = [];
  const began = Date.now();
  const endAt = began + minutes * 60_000;
  let exitCode = 1;
  try {
    const submissions: Array<Promise<void>> = [];
    const submitting = (async () => {
      for (let n = 0; Date.now() < endAt; n++) {
        const wait = began + (n * 1000) / rate - Date.now();
        if (wait > 0) await sleep(wait);
        submissions.push(client.submit());
      }
    })();
    const polling = (async () => {
      while (Date.now() < endAt) {
        await client.pollPending();
        await sleep(2_000);
      }
    })();
    for (let n = 0; Date.now() + faultEveryMs < endAt; n++) {
      await sleep(Math.max(0, began + (n + 1) * faultEveryMs - Date.now()));
      const kind: FaultKind = cycle[n % cycle.length] ?? 'worker SIGKILL';
      if (kind === 'worker SIGKILL') {
        const pids = cluster.workerPids();
        if (pids.length === 0) {
          log('no launched worker to kill');
          continue;
        }
        const pid = random.pick(pids);
        kills.push({ pid, at: Date.now(), what: 'worker' });
        process.kill(pid, 'SIGKILL');
        log(`SIGKILL launched worker pid ${pid} (of ${pids.length})`);
      } else if (kind === 'harness SIGKILL') {
        const harness = cluster.harnesses[(faults[kind] ?? 0) % 2] ?? cluster.harnesses[0];
        if (!harness) continue;
        const downMs = random.int(1_000, 3_000);
        const pid = harness.process?.child.pid;
        if (pid === undefined) {
          log(`harness ${harness.name} is down (it exited by itself and is starting again): not killed`);
          continue;
        }
        kills.push({ pid, at: Date.now(), what: 'harness' });
        log(`SIGKILL harness ${harness.name} (pid ${pid}), restart after ${downMs} ms`);
        await cluster.killHarness(harness, downMs);
        log(`harness ${harness.name} back`);
      } else {
        const downMs = random.int(2_000, 5_000);
        log(`PostgreSQL down for ${downMs} ms`);
        await cluster.restartPostgres(downMs);
      }
      faults[kind] = (faults[kind] ?? 0) + 1;
    }
    await submitting;
    await Promise.all(submissions);
    await polling;
    log(`submitting ended: ${client.jobs.size} accepted, ${client.pending().length} not final yet; draining`);
    const drainEnd = Date.now() + drainMs;
    while (client.pending().length > 0 && Date.now() < drainEnd) {
      await client.pollPending();
      if (client.pending().length > 0) await sleep(2_000);
    }
    // Those still pending: read once more, then lost (not in the store) or stuck.
    await client.pollPending();
    const deaths: Kill[] = [
      ...kills,
      ...cluster.harnesses.flatMap((harness) => harness.unexpectedExits.map(({ pid, at }) => ({ pid, at, what: 'harness' as const }))),
    ];
    const { ends, startedAgain, runTwiceResultLost, runTwiceUnexplained } = summariseRuns(cluster.runsFile, deaths);
    const endedOtherwise: Record<string, number> = {};
    let completedOnce = 0;
    let completedRunNotOnFile = 0;
    for (const job of client.jobs.values()) {
      if (job.final === undefined) continue;
      if (job.final === 'COMPLETED' && (ends.get(job.id)?.length ?? 0) <= 1) completedOnce++;
      if (job.final !== 'COMPLETED') endedOtherwise[job.final] = (endedOtherwise[job.final] ?? 0) + 1;
      if (job.final === 'COMPLETED' && job.runId !== undefined && !(ends.get(job.id) ?? []).includes(job.runId)) completedRunNotOnFile++;
    }
    const pending = client.pending();
    const lost = pending.filter((job) => job.last === '404');
    const stuck = pending.filter((job) => job.last !== '404');
    const accepted = (ids: readonly string[]): string[] => ids.filter((id) => client.jobs.has(id));
    const resultLost = accepted(runTwiceResultLost);
    const unexplained = accepted(runTwiceUnexplained);
    const unexpectedExits = cluster.harnesses.flatMap((harness) => harness.unexpectedExits.map((exit) => `${harness.name} pid ${exit.pid}: ${exit.how}`));
    const report = {
      date: machine.date,
      machine: `${machine.nproc} CPUs (${machine.cpuModel}), ${machine.memTotalGiB} GiB, node ${machine.node}`,
      loadBefore: machine.loadavg,
      loadAfter: loadAverage(),
      minutes,
      rate,
      pingIntervalMs,
      seed,
      durationS: Math.round((Date.now() - began) / 1000),
      submitted: client.jobs.size,
      submittedByKind: client.submittedByKind(),
      completedOnce,
      endedOtherwise,
      lost: lost.length,
      runTwice: unexplained.length,
      runTwiceResultLostWithKill: resultLost.length,
      stuck: stuck.length,
      startedMoreThanOnce: accepted([...startedAgain]).length,
      completedRunNotOnFile,
      refusedSubmissions: client.refused,
      faults,
      harnessExitsByThemselves: crashSignatures(cluster.harnesses.flatMap((harness) => harness.unexpectedExits.map((exit) => exit.how))),
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    for (const job of [...lost, ...stuck].slice(0, 20)) log(`not final: ${JSON.stringify(job)}`);
    for (const id of [...unexplained, ...resultLost].slice(0, 20)) {
      log(
        `run twice${unexplained.includes(id) ? '' : ' (result lost with a kill)'}: ${id} runs ${JSON.stringify(ends.get(id))} kind ${client.jobs.get(id)?.kind ?? ''}`,
      );
    }
    for (const exit of unexpectedExits) log(`harness exited by itself: ${exit}`);
    exitCode = lost.length > 0 || unexplained.length > 0 || stuck.length > 0 ? 1 : 0;
  } finally {
    await cluster.close();
  }
  return exitCode;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runSoak(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`soak failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(2);
    },
  );
}
