/**
 * The load of the PostgreSQL restart test and soak (test/reliability/postgres-restart.test.ts,
 * bench/postgres-restarts.ts): submitters posting /run as fast as answered, at most
 * `backlog` jobs not yet finished, and workers over HTTP (the worker API's transactions: a
 * take, a result) that post each result until it is acknowledged, as a worker does. Then
 * finish(): stop, take and finish what is left, and answer the jobs accepted that never
 * ended COMPLETED.
 */
import { call, type HttpAnswer, waitFor } from '../../kit/index.js';

export interface RestartLoadOptions {
  readonly url: string;
  /** Whether the harness process still runs: the load stops when it does not. */
  readonly alive: () => boolean;
  readonly submitters: number;
  readonly workers: number;
  readonly backlog: number;
}

export interface RestartLoad {
  readonly accepted: ReadonlySet<string>;
  readonly finished: ReadonlySet<string>;
  /** Answers by `route status` (`run 200`, `take 503`, `done no answer`, ...). */
  readonly answers: Readonly<Record<string, number>>;
  /** The first answers other than 200, 204 and 503 (`route status body`), at most MAX_UNEXPECTED: what the clients were told. */
  readonly unexpected: readonly string[];
  /** Stop, then take and finish the jobs left (within `timeoutMs`); answers the accepted jobs not COMPLETED then. */
  finish(timeoutMs: number): Promise<string[]>;
}

/** Unexpected answers kept with their bodies at most. */
const MAX_UNEXPECTED = 5;

export function startRestartLoad(options: RestartLoadOptions): RestartLoad {
  const { url, alive } = options;
  const accepted = new Set<string>();
  const finished = new Set<string>();
  const answers: Record<string, number> = {};
  const unexpected: string[] = [];
  /** Count `answer` of `route`; one other than 200, 204 and 503 is kept with its body (the harness's error code and message). */
  const tally = (route: string, answer: HttpAnswer | undefined): void => {
    const what = `${route} ${answer?.status ?? 'no answer'}`;
    answers[what] = (answers[what] ?? 0) + 1;
    if (answer !== undefined && ![200, 204, 503].includes(answer.status) && unexpected.length < MAX_UNEXPECTED) {
      unexpected.push(`${what} ${answer.text.slice(0, 2_000)}`);
    }
  };
  let loading = true;
  const running = (): boolean => loading && alive();

  const submitter = async (): Promise<void> => {
    while (running()) {
      if (accepted.size - finished.size >= options.backlog) {
        await waitFor(() => !running() || accepted.size - finished.size < options.backlog, 'room in the backlog', 600_000, 5);
        continue;
      }
      const answer = await call('POST', `${url}/v2/ep/run`, { body: { input: { n: accepted.size } } }).catch(() => undefined);
      tally('run', answer);
      if (answer?.status === 200) accepted.add((answer.json as { id: string }).id);
    }
  };
  /** Take a job as `name` and post its result until acknowledged; false when nothing was taken. */
  const takeAndFinish = async (name: string): Promise<boolean> => {
    const taken = await call('GET', `${url}/v2/ep/job-take/${name}`).catch(() => undefined);
    tally('take', taken);
    if (taken?.status !== 200) return false;
    const { id } = taken.json as { id: string };
    await waitFor(
      async () => {
        if (!alive()) return true;
        const done = await call('POST', `${url}/v2/ep/job-done/${name}/${id}`, { body: { output: { ok: true } } }).catch(() => undefined);
        tally('done', done);
        return done?.status === 200;
      },
      `job-done of ${id} acknowledged`,
      600_000,
      5,
    );
    finished.add(id);
    return true;
  };
  const worker = async (name: string): Promise<void> => {
    while (running()) await takeAndFinish(name);
  };
  const load = [
    ...Array.from({ length: options.submitters }, () => submitter()),
    ...Array.from({ length: options.workers }, (_, i) => worker(`restart-worker-${i}`)),
  ];

  return {
    accepted,
    finished,
    answers,
    unexpected,
    async finish(timeoutMs) {
      loading = false;
      await Promise.all(load);
      const unfinished = new Set([...accepted].filter((id) => !finished.has(id)));
      const deadline = Date.now() + timeoutMs;
      while (unfinished.size > 0 && Date.now() < deadline && alive()) {
        for (const id of [...unfinished]) {
          const status = ((await call('GET', `${url}/v2/ep/status/${id}`).catch(() => undefined))?.json as { status?: string } | undefined)?.status;
          if (status === 'COMPLETED') unfinished.delete(id);
        }
        // The rest are queued (or held by a take whose answer was lost, until the silence window): take them.
        if (unfinished.size > 0) await takeAndFinish('drain');
      }
      return [...unfinished];
    },
  };
}
