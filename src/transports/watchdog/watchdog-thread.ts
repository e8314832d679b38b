/**
 * @module transports/watchdog/watchdog-thread
 * The program of the watchdog thread (started from this file by watchdog.ts; see
 * thread-file.ts for how the file is found in src/, dist/ and a bundle). It runs the
 * platform heartbeat when given one, and watches the jobs on the JobBoard: once a job
 * has passed its execution deadline plus `timeoutGraceMs` while the main thread's tick
 * has stood still for `staleAfterMs`, it stops listing the jobs in the heartbeat,
 * reports every running job (thread-fire.ts) and ends the process. While the main
 * thread is blocked longer than `blockedUnclaimMs`, the heartbeat lists no job.
 *
 * Messages in: `{type: 'jobs', ids}` (the jobs in progress, for the heartbeat) and
 * `{type: 'stop'}`. Messages out: `{type: 'failure', consecutive, status?, message}`
 * per failed ping (the main thread logs and counts them when its loop is free).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { JobBoardReader, type WatchedJob } from './job-board.js';
import { blockedFor as blockedSince, claimsJobs, expiredSlots, verdicts } from './thread-decisions.js';
import { endProcess, logLine, postVerdicts, printDryRunRecord } from './thread-fire.js';
import { ThreadHeartbeat } from './thread-heartbeat.js';
import { ThreadHttp } from './thread-http.js';
import type { FromThreadMessage, ToThreadMessage, WatchdogThreadData } from './thread-protocol.js';
import { collectStartupGarbage } from './thread-startup-gc.js';

const data = workerData as WatchdogThreadData;
const port = parentPort;
const board = new JobBoardReader(data.board);
const http = new ThreadHttp(data.origin.version, data.fire?.kind === 'platform' ? data.fire.apiKey : data.heartbeat?.apiKey);
const pingHttp = data.heartbeat ? new ThreadHttp(data.heartbeat.version, data.heartbeat.apiKey) : undefined;

let firing = false;
let stopped = false;

/** How long the main thread's tick has stood still, ms. */
function blockedFor(): number {
  return blockedSince(board.lastTickAt(), Date.now());
}

function claimJobs(): boolean {
  return claimsJobs(blockedFor(), data.blockedUnclaimMs, firing);
}

const heartbeat =
  data.heartbeat && pingHttp
    ? new ThreadHeartbeat(
        data.heartbeat,
        pingHttp,
        (message: FromThreadMessage) => port?.postMessage(message),
        claimJobs,
        () => board.jobs().map((job) => job.id),
      )
    : undefined;

let unclaimedLogged = false;

function check(): void {
  if (firing || stopped) return;
  const blocked = blockedFor();
  if (blocked < data.staleAfterMs) {
    unclaimedLogged = false;
    return;
  }
  if (heartbeat && data.blockedUnclaimMs !== undefined && blocked >= data.blockedUnclaimMs && !unclaimedLogged) {
    unclaimedLogged = true;
    logLine(data, 'warn', `the event loop has been blocked for ${Math.round(blocked)} ms: the heartbeat no longer lists this worker's jobs`, {
      blockedMs: Math.round(blocked),
    });
  }
  if (!data.fire) return;
  const jobs = board.jobs();
  const expired = expiredSlots(jobs, Date.now(), data.timeoutGraceMs);
  if (expired.size === 0) return;
  void fire(jobs, expired, blocked);
}

async function fire(jobs: readonly WatchedJob[], expired: ReadonlySet<number>, blocked: number): Promise<void> {
  if (!board.markFired()) return;
  firing = true;
  const list = verdicts(jobs, expired, blocked, data);
  const named = list
    .filter((verdict) => verdict.timedOut)
    .map((verdict) => verdict.job.id)
    .join(', ');
  const reason =
    `job ${named} blocked the event loop for ${Math.round(blocked / 100) / 10} s, past its execution timeout plus the ` +
    `${data.timeoutGraceMs} ms grace: the watchdog reports ${list.length === 1 ? 'it' : `it and ${list.length - 1} other running job(s)`} and exits 1`;
  // The platform must stop waiting on this worker for these jobs: ping without them now,
  // beside the result posts (a slow ping endpoint must not hold the results back).
  await Promise.all([heartbeat?.pingNow(), report(list, reason, blocked)]);
  await endProcess(data.exitWaitMs);
}

/** Report the verdicts the way the mode reports results. */
async function report(list: ReturnType<typeof verdicts>, reason: string, blocked: number): Promise<void> {
  switch (data.fire?.kind) {
    case 'platform':
      logLine(data, 'fatal', reason, { requestIds: list.map((verdict) => verdict.job.id), blockedMs: Math.round(blocked), code: 'SW_EXECUTION_TIMEOUT' });
      await postVerdicts(list, data, http);
      break;
    case 'dry-run':
      for (const verdict of list) printDryRunRecord(verdict);
      logLine(data, 'fatal', reason);
      break;
    default:
      logLine(data, 'fatal', reason);
  }
}

// The board is checked only while the main thread says jobs are watched (an idle worker's thread sleeps).
let checker: NodeJS.Timeout | undefined;
function watching(on: boolean): void {
  if (on && checker === undefined && !stopped) {
    checker = setInterval(check, data.checkIntervalMs);
  } else if (!on && checker !== undefined) {
    clearInterval(checker);
    checker = undefined;
    unclaimedLogged = false;
  }
}

// What loading this thread's modules left in its heap is collected once, a second from now (thread-startup-gc.ts).
const startupCollection = collectStartupGarbage();

port?.on('message', (message: ToThreadMessage) => {
  if (message.type === 'jobs') heartbeat?.setJobs(message.ids.map(String));
  else if (message.type === 'watching') watching(message.on);
  else if (message.type === 'stop' && !firing) {
    watching(false);
    stopped = true;
    startupCollection.cancel();
    heartbeat?.stop();
    http.close();
    pingHttp?.close();
    port.close();
  }
});

heartbeat?.start();
port?.postMessage({ type: 'ready' } satisfies FromThreadMessage);
