/**
 * The watchdog thread's HTTP against a scripted platform on loopback: a job-done post
 * answered 503 then 200 is retried and lands, with the API key on every try; the
 * verdict posts name each job's attempt (a stale attempt's verdict can never land on
 * the current one) and carry stopPod and the key; the heartbeat lists the jobs on the
 * board until the main thread has been blocked eventLoopBlockedMs, then pings without
 * them. Also: the direct children the SIGKILL fallback kills.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildPlatformUrls } from '../../../src/transports/platform/urls.js';
import { JOB_ID_PLACEHOLDER, JobBoard, JobBoardReader, type WatchdogThreadData } from '../../../src/transports/watchdog/index.js';
import { blockedFor, claimsJobs, expiredSlots, verdicts } from '../../../src/transports/watchdog/thread-decisions.js';
import { childPids, postVerdicts, verdictUrl } from '../../../src/transports/watchdog/thread-fire.js';
import { ThreadHeartbeat } from '../../../src/transports/watchdog/thread-heartbeat.js';
import { ThreadHttp } from '../../../src/transports/watchdog/thread-http.js';

const API_KEY = 'watchdog-key';
const RETRY = { deadlineMs: 20_000, minDelayMs: 1, maxDelayMs: 20, attemptTimeoutMs: 5_000 };

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

const seen: Seen[] = [];
/** Statuses to answer, in order; 200 once used up. */
let script: number[] = [];
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', authorization: request.headers.authorization, body });
      response.writeHead(script.shift() ?? 200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => {
  seen.length = 0;
  script = [];
});

const data = (doneUrl: string): WatchdogThreadData => ({
  board: new SharedArrayBuffer(8),
  timeoutGraceMs: 2_000,
  checkIntervalMs: 100,
  staleAfterMs: 1_000,
  exitWaitMs: 3_000,
  origin: { workerId: 'w-1', hostname: 'host-a', version: '9.9.9' },
  jsonLogs: true,
  fire: { kind: 'platform', doneUrl, apiKey: API_KEY, retry: RETRY },
});

describe('the watchdog thread posts', () => {
  it('retries a job-done post answered 503 and lands it on the 200, with the API key each time', async () => {
    script = [503];
    const client = new ThreadHttp('9.9.9', API_KEY);
    try {
      const outcome = await client.postUntilLanded(`${base}/job-done/w-1/j-1?isStream=false`, '{"error":"x","stopPod":true}', RETRY);
      expect(outcome).toEqual({ delivered: true, attempts: 2, last: 'HTTP 200' });
    } finally {
      client.close();
    }
    expect(seen.map((request) => [request.method, request.url, request.authorization, request.body])).toEqual([
      ['POST', '/job-done/w-1/j-1?isStream=false', API_KEY, '{"error":"x","stopPod":true}'],
      ['POST', '/job-done/w-1/j-1?isStream=false', API_KEY, '{"error":"x","stopPod":true}'],
    ]);
  });

  it('gives up at once on a 4xx that retrying cannot fix', async () => {
    script = [401];
    const client = new ThreadHttp('9.9.9', 'wrong');
    try {
      expect(await client.postUntilLanded(`${base}/job-done/w-1/j-2`, '{}', RETRY)).toEqual({ delivered: false, attempts: 1, last: 'HTTP 401' });
    } finally {
      client.close();
    }
  });

  it('posts each verdict to its own attempt with stopPod and the key: the stale attempt TIMED_OUT, the current one SW_WORKER_SHUTDOWN', async () => {
    const doneUrl = `${base}/job-done/w-1/${encodeURIComponent(JOB_ID_PLACEHOLDER)}?isStream=false`;
    const board = new JobBoard(4);
    const reader = new JobBoardReader(board.buffer);
    board.claim('job/1', 10_000, 5_000, 1);
    board.claim('job/1', 60_000, 55_000, 2);
    const jobs = reader.jobs();
    const list = verdicts(jobs, expiredSlots(jobs, 13_000, 2_000), 8_000, data(doneUrl));
    expect(verdictUrl(doneUrl, jobs[0]!)).toBe(`${base}/job-done/w-1/job%2F1?isStream=false&attempt=1`);
    script = [503];
    const client = new ThreadHttp('9.9.9', API_KEY);
    try {
      await postVerdicts(list, data(doneUrl), client);
    } finally {
      client.close();
    }
    const landed = seen.filter((request) => request.body !== '');
    expect(landed.every((request) => request.authorization === API_KEY)).toBe(true);
    const byAttempt = new Map(
      landed.map((request) => {
        const body = JSON.parse(request.body) as { error: string; stopPod: boolean };
        return [request.url, { stopPod: body.stopPod, code: (JSON.parse(body.error) as { error_code: string }).error_code }];
      }),
    );
    expect(byAttempt.get('/job-done/w-1/job%2F1?isStream=false&attempt=1')).toEqual({ stopPod: true, code: 'SW_EXECUTION_TIMEOUT' });
    expect(byAttempt.get('/job-done/w-1/job%2F1?isStream=false&attempt=2')).toEqual({ stopPod: true, code: 'SW_WORKER_SHUTDOWN' });
    // Three posts: one was answered 503 and posted again.
    expect(landed).toHaveLength(3);
  });
});

describe('the verdict URL', () => {
  it('is the job-done URL the transport itself posts the same attempt to', () => {
    const urls = buildPlatformUrls(
      {
        getJobUrl: 'https://api.example/v2/ep/job-take/$ID?gpu=a100',
        postOutputUrl: 'https://api.example/v2/ep/job-done/$RUNPOD_POD_ID/$ID?',
        pingIntervalMs: 10_000,
      },
      'w-9',
    );
    const doneUrl = urls.done(JOB_ID_PLACEHOLDER, false);
    const board = new JobBoard(2);
    board.claim('id with/slash', 1, 0, 3);
    board.claim('plain', 1, 0);
    const [withAttempt, without] = new JobBoardReader(board.buffer).jobs();
    expect(verdictUrl(doneUrl, withAttempt!)).toBe(urls.done('id with/slash', false, 3));
    expect(verdictUrl(doneUrl, without!)).toBe(urls.done('plain', false));
  });
});

describe('the heartbeat in the watchdog thread', () => {
  it('lists the jobs on the board until the main thread has been blocked eventLoopBlockedMs, then pings without them', async () => {
    let now = 1_000_000;
    const board = new JobBoard(2, () => now);
    const reader = new JobBoardReader(board.buffer);
    const blockedUnclaimMs = 10_000;
    let firing = false;
    const client = new ThreadHttp('9.9.9', API_KEY);
    const failures: unknown[] = [];
    const heartbeat = new ThreadHeartbeat(
      { url: `${base}/ping/w-1`, apiKey: API_KEY, intervalMs: 60_000, timeoutMs: 5_000, version: '9.9.9' },
      client,
      (message) => failures.push(message),
      () => claimsJobs(blockedFor(reader.lastTickAt(), now), blockedUnclaimMs, firing),
      () => reader.jobs().map((job) => job.id),
    );
    try {
      board.claim('blocked-job', now + 5_000, now);
      heartbeat.setJobs(['held-job']);
      now += 9_999; // blocked just under the bound
      await heartbeat.pingNow();
      now += 1; // blocked for eventLoopBlockedMs
      await heartbeat.pingNow();
      board.tick(); // the loop ran again
      await heartbeat.pingNow();
      firing = true; // the watchdog reports the jobs itself
      await heartbeat.pingNow();
    } finally {
      heartbeat.stop();
      client.close();
    }
    expect(seen.map((request) => [request.url, request.authorization])).toEqual([
      ['/ping/w-1?job_id=held-job%2Cblocked-job&runpod_version=9.9.9', API_KEY],
      ['/ping/w-1?runpod_version=9.9.9', API_KEY],
      ['/ping/w-1?job_id=held-job%2Cblocked-job&runpod_version=9.9.9', API_KEY],
      ['/ping/w-1?runpod_version=9.9.9', API_KEY],
    ]);
    expect(failures).toEqual([]);
  });
});

describe('the SIGKILL fallback', () => {
  it('finds the direct children of this process (the ones it kills before its own SIGKILL)', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await once(child, 'spawn');
      expect(childPids()).toContain(child.pid);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    expect(childPids()).not.toContain(child.pid);
  });
});
