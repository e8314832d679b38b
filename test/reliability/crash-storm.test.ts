/**
 * @module test/reliability/crash-storm.test
 * A crash storm (issue 13): worker processes with concurrency 2 run plain and
 * streaming jobs while a seeded killer SIGKILLs a busy worker every ~1.2 s and starts a
 * replacement. Every job must end exactly once, COMPLETED, with its own final
 * attempt's output (the outputs and stream items name the attempt that made them, so
 * an accepted stale result would show); no run's result was refused or undelivered; a
 * reader polling each stream throughout must rebuild exactly the final attempt's items
 * with joinChunks. Figures printed: jobs, kills, requeues, lost, duplicated, stale
 * results refused. Bounded in jobs, kills and time; loopback only.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Harness } from '../../src/harness/index.js';
import { parseJobRequest, type StreamChunk } from '../../src/job/index.js';
import { joinChunks } from '../../src/worker/join-chunks.js';
import { waitFor } from '../kit/index.js';
import { printFigures, since } from './support/figures.js';
import { seededRandom } from './support/random.js';
import { startReliabilityServer, type ReliabilityServer } from './support/reliability-server.js';
import { killWorkers, startWorkerProcess, type WorkerProcess } from './support/worker-process.js';

const ENDPOINT = 'storm';
const PING_MS = 200;
const SEED = Number(process.env.RELIABILITY_SEED ?? 20_261_121);
const WORKERS = 3;
const KILLS = 6;
const PLAIN_JOBS = 24;
const STREAM_JOBS = 12;
const CHUNKS = 12;

let running: ReliabilityServer | undefined;

afterEach(async () => {
  await killWorkers();
  await running?.close();
  running = undefined;
});
afterAll(async () => {
  await killWorkers();
});

describe('crash storm', () => {
  it(
    "plain and streaming jobs on concurrency-2 workers, busy workers SIGKILLed: every job ends once with its final attempt's output",
    { timeout: 240_000 },
    async () => {
      const random = seededRandom(SEED);
      // The requeue cap is tested on its own; here a job may be hit more than 3 times.
      const server = await startReliabilityServer({
        harness: new Harness({ maxRequeues: 50 }),
        workerApi: { longPollMs: 2_000, liveness: { pingIntervalMs: PING_MS, missedPings: 5 } },
      });
      running = server;
      const endpoint = server.harness.endpoint(ENDPOINT);
      const ends = new Map<string, number>();
      endpoint.jobEnded.add((job) => void ends.set(job.id, (ends.get(job.id) ?? 0) + 1));
      const all: WorkerProcess[] = [];
      let next = 0;
      const spawn = (): WorkerProcess => {
        const worker = startWorkerProcess(`storm-${next++}`, { ...server.envFor(ENDPOINT, PING_MS), TEST_CONCURRENCY: '2', LOG_LEVEL: 'info' });
        all.push(worker);
        return worker;
      };
      let live = Array.from({ length: WORKERS }, spawn);
      await waitFor(
        async () => (await Promise.all(live.map((worker) => endpoint.workers.get(worker.workerId)))).every((presence) => presence !== undefined),
        'the workers to join',
        60_000,
        20,
      );

      const started = performance.now();
      const plain = await Promise.all(
        Array.from({ length: PLAIN_JOBS }, async (_, tag) => (await endpoint.submit(parseJobRequest({ input: { mode: 'sleep', ms: 400, tag } }))).id),
      );
      const streams = await Promise.all(
        Array.from(
          { length: STREAM_JOBS },
          async () => (await endpoint.submit(parseJobRequest({ input: { mode: 'stream', chunks: CHUNKS, everyMs: 60, markAttempt: true } }))).id,
        ),
      );
      const ids = [...plain, ...streams];
      const ended = (): boolean => ids.every((id) => ends.has(id));

      // A reader per stream, polling /stream's store until the job ends.
      const read = new Map<string, StreamChunk[]>(streams.map((id) => [id, []]));
      const readers = streams.map(async (id) => {
        for (const until = Date.now() + 200_000; Date.now() < until;) {
          const got = await endpoint.readStream(id);
          read.get(id)?.push(...got.stream);
          if (got.status !== 'IN_PROGRESS' && got.status !== 'IN_QUEUE') return;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      });

      let kills = 0;
      // The kills spread over the whole run, plain jobs and streams alike: between two kills
      // a share of the jobs ends (the replacement worker has joined and the queue moves on),
      // then one of the workers holding a job is killed.
      const endsBetweenKills = Math.floor(ids.length / (2 * KILLS));
      const streamIds = new Set(streams);
      let endedAtLastKill = 0;
      while (kills < KILLS && !ended()) {
        const busy = await waitFor(
          async () => {
            if (ended()) return [];
            if (ends.size < endedAtLastKill + endsBetweenKills) return undefined;
            const presences = await Promise.all(live.map((worker) => endpoint.workers.get(worker.workerId)));
            const holding = live.filter((_worker, i) => (presences[i]?.jobIds.length ?? 0) > 0);
            // Every other kill waits for a stream under way while any is left: a stream restarted on another worker is half the point.
            const streaming = live.filter((_worker, i) => presences[i]?.jobIds.some((id) => streamIds.has(id)) ?? false);
            if (kills % 2 === 1 && streams.some((id) => !ends.has(id))) return streaming.length > 0 ? streaming : undefined;
            return holding.length > 0 ? holding : undefined;
          },
          `${endsBetweenKills} more jobs to end since the last kill, and a worker to hold one`,
          200_000,
          50,
        );
        if (busy.length === 0) break;
        endedAtLastKill = ends.size;
        const victim = random.pick(busy);
        victim.signal('SIGKILL');
        kills++;
        live = [...live.filter((worker) => worker !== victim), spawn()];
      }
      await waitFor(ended, 'every job to end', 200_000, 50);
      await Promise.all(readers);
      const elapsed = since(started);

      const duplicated = [...ends.values()].filter((count) => count > 1).length;
      const lost = ids.filter((id) => !ends.has(id)).length;
      expect({ duplicated, lost }).toEqual({ duplicated: 0, lost: 0 });
      // The output is the final attempt's: a stale attempt's result accepted would name an older one.
      for (const [tag, id] of plain.entries()) {
        const attempt = (await endpoint.find(id))?.attempt;
        expect(attempt).toBeGreaterThanOrEqual(1);
        expect(await endpoint.status(id)).toMatchObject({ status: 'COMPLETED', output: { tag, attempt } });
      }
      let restartedStreams = 0;
      for (const id of streams) {
        const job = await endpoint.find(id);
        expect(job?.attempt).toBeGreaterThanOrEqual(1);
        const expected = Array.from({ length: CHUNKS }, (_, i) => `chunk-${i}@${job?.attempt}`);
        expect(await endpoint.status(id)).toMatchObject({ status: 'COMPLETED', output: expected });
        const chunks = read.get(id) ?? [];
        if (chunks.some((chunk) => chunk.metrics?.attempt !== job?.attempt)) restartedStreams++;
        expect(chunks.filter((chunk) => chunk.metrics?.attempt === job?.attempt).map((chunk) => chunk.output)).toEqual(expected);
        expect(joinChunks(chunks)).toEqual(expected);
      }
      const endLines = all.flatMap((worker) =>
        worker
          .stderr()
          .split('\n')
          .filter((line) => line.includes('"end":"')),
      );
      const runEnds: Record<string, number> = {};
      for (const line of endLines) {
        const end = /"end":"(\w+)"/.exec(line)?.[1] ?? '?';
        runEnds[end] = (runEnds[end] ?? 0) + 1;
      }
      const notApplied: Record<string, number> = {};
      for (const worker of all) {
        for (const line of worker
          .stderr()
          .split('\n')
          .filter((l) => l.includes('did not apply it'))) {
          const reason = /"reason":"(\w+)"/.exec(line)?.[1] ?? '?';
          notApplied[reason] = (notApplied[reason] ?? 0) + 1;
        }
      }
      const staleRefused = runEnds.stale_attempt ?? 0;
      // Every result a live worker posted was accepted, or refused as a stale attempt's: none refused otherwise, none lost on the way.
      expect({ refused: runEnds.refused ?? 0, undelivered: runEnds.undelivered ?? 0 }).toEqual({ refused: 0, undelivered: 0 });
      const health = await endpoint.health();
      expect(health.jobs).toMatchObject({ completed: ids.length, failed: 0, inQueue: 0, inProgress: 0 });
      printFigures('crash storm', {
        seed: SEED,
        jobs: ids.length,
        streams: STREAM_JOBS,
        workers: `${WORKERS}x2`,
        kills,
        requeued: health.jobs.retried,
        restartedStreams,
        lost,
        duplicated,
        staleResultsRefused: staleRefused,
        runEnds,
        notApplied,
        repeatedResults: server.seen.results.filter((result) => result.ack.applied && result.ack.repeated === true).length,
        ms: elapsed,
      });
    },
  );
});
