/**
 * @module transports/watchdog/thread-protocol
 * What the main thread gives the watchdog thread (workerData) and the messages between
 * them. Types only, shared by both sides; the main thread builds workerData itself, so
 * it is not parsed again in the thread.
 */

/** The heartbeat: `GET <url>?job_id=<ids>&runpod_version=<v>` every `intervalMs`. */
export interface HeartbeatSettings {
  /** The ping URL with the worker id in it, without parameters. */
  readonly url: string;
  readonly apiKey?: string;
  /** Period, ms. */
  readonly intervalMs: number;
  /** Bound of one ping, ms. */
  readonly timeoutMs: number;
  /** Sent as runpod_version and in the user agent. */
  readonly version: string;
}

/** Retry rules of a result post (the platform transport's resultDeadlineMs, retryMin/MaxDelayMs, requestTimeoutMs). */
export interface PostRetrySettings {
  readonly deadlineMs: number;
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  readonly attemptTimeoutMs: number;
}

/** What the watchdog does when a blocked job passes its deadline plus grace. */
export type FireAction =
  /** Post each job's error result to the job-done URL, then end the process. */
  | {
      readonly kind: 'platform';
      /** The job-done URL (isStream=false) of the job id JOB_ID_PLACEHOLDER, percent-encoded in it. */
      readonly doneUrl: string;
      readonly apiKey?: string;
      readonly retry: PostRetrySettings;
    }
  /** Print the final record of the job on stdout, as the dry run does, then end the process. */
  | { readonly kind: 'dry-run' }
  /** One line on stderr naming the job and the blocked time, then end the process (--serve-api). */
  | { readonly kind: 'exit' };

/** The job id in FireAction.doneUrl, as `encodeURIComponent` writes it there. */
export const JOB_ID_PLACEHOLDER = '\u0000job-id\u0000';

/** workerData of the watchdog thread. */
export interface WatchdogThreadData {
  /** The JobBoard's buffer. */
  readonly board: SharedArrayBuffer;
  /** Time given to an aborted handler before the worker gives up on it, ms (timeoutGraceMs). */
  readonly timeoutGraceMs: number;
  /** How often the thread looks at the board, ms. */
  readonly checkIntervalMs: number;
  /** The main thread counts as blocked once its tick has not moved for this long, ms. */
  readonly staleAfterMs: number;
  /** The heartbeat, or none (local modes; RUNPOD_WEBHOOK_PING unset). */
  readonly heartbeat?: HeartbeatSettings;
  /** While the main thread is blocked longer than this, the heartbeat lists no job, ms; none: always list them. */
  readonly blockedUnclaimMs?: number;
  /** What to do when a blocked job passes its deadline plus grace; none: watch only the heartbeat. */
  readonly fire?: FireAction;
  /** After reporting, how long the process may take to exit (process.exit(1) run in the main thread) before SIGKILL, ms. */
  readonly exitWaitMs: number;
  /** Error payload fields. */
  readonly origin: { readonly workerId: string; readonly hostname: string; readonly version: string };
  /** Emit one JSON log line a message (platform) or plain text (local). */
  readonly jsonLogs: boolean;
}

/** Main -> thread. */
export type ToThreadMessage =
  | { readonly type: 'jobs'; readonly ids: readonly string[] }
  /** Jobs are watched (the thread checks the board) or none is (it rests: no wake-ups while the worker is idle). */
  | { readonly type: 'watching'; readonly on: boolean }
  | { readonly type: 'stop' };

/** Thread -> main: `ready` once it watches (and its first ping is under way), `failure` per failed ping. */
export type FromThreadMessage =
  | { readonly type: 'ready' }
  | {
      readonly type: 'failure';
      readonly consecutive: number;
      readonly status?: number;
      readonly message: string;
    };
