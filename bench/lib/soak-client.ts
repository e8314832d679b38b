/**
 * @module bench/lib/soak-client
 * The soak's client: submits a mix of jobs to whichever harness runs (plain /run, long
 * /run, /runsync, /run with a 5 s executionTimeout that the job outlasts, /run with a
 * 10 s ttl), remembers every job a harness accepted (answered with an id), and polls the
 * status of each until it is seen in a final state. A job with a ttl that answers 404
 * once its ttl has passed ended by expiry. What is still not final at the end is lost
 * (404: not in the store) or stuck (still there).
 */
import { call } from '../../test/kit/http.js';
import type { Random } from '../../test/reliability/support/random.js';

export type JobKind = 'run' | 'run-long' | 'runsync' | 'timeout' | 'ttl';

const FINAL = new Set(['COMPLETED', 'FAILED', 'TIMED_OUT', 'CANCELLED']);
const TTL_MS = 10_000;

export interface TrackedJob {
  readonly id: string;
  readonly kind: JobKind;
  readonly submittedAt: number;
  readonly ttlMs?: number;
  /** `COMPLETED`, `FAILED SW_REQUEUE_LIMIT`, `TIMED_OUT`, `expired (ttl)`, ... once seen. */
  final?: string;
  /** The output's runId of a COMPLETED job. */
  runId?: string;
  /** The last status read: a state, `404`, or an error. */
  last?: string;
}

/** What to send for a job of `kind`: the request's path suffix and body. */
function request(kind: JobKind, random: Random): { path: string; body: Record<string, unknown> } {
  switch (kind) {
    case 'run':
      return { path: '/run', body: { input: { ms: random.int(50, 800) } } };
    case 'run-long':
      return { path: '/run', body: { input: { ms: random.int(3_000, 9_000) } } };
    case 'runsync':
      return { path: '/runsync?wait=3000', body: { input: { ms: random.int(50, 1_500) } } };
    case 'timeout':
      return { path: '/run', body: { input: { ms: 8_000 }, policy: { executionTimeout: 5_000 } } };
    case 'ttl':
      return { path: '/run', body: { input: { ms: random.int(100, 14_000) }, policy: { ttl: TTL_MS } } };
  }
}

/** The kinds, weighted: mostly short /run and /runsync, some long, some bound to end early. */
const MIX: readonly JobKind[] = ['run', 'run', 'run', 'run', 'run', 'runsync', 'runsync', 'run-long', 'timeout', 'ttl'];

/** `FAILED SW_REQUEUE_LIMIT` from a status answer: its state and the first SW_ code its error names. */
function finalName(answer: { status: string; error?: unknown }): string {
  if (answer.status === 'COMPLETED' || answer.error === undefined) return answer.status;
  const code = /SW_[A-Z_]+/.exec(JSON.stringify(answer.error))?.[0];
  return code ? `${answer.status} ${code}` : answer.status;
}

const increment = (tally: Record<string, number>, key: string): void => void (tally[key] = (tally[key] ?? 0) + 1);

export class SoakClient {
  readonly jobs = new Map<string, TrackedJob>();
  /** Submissions no harness accepted: `503 SW_STORE_UNAVAILABLE`, `no answer (ECONNREFUSED)`, `no harness up`. */
  readonly refused: Record<string, number> = {};
  readonly #endpoint: string;
  readonly #liveUrls: () => string[];
  readonly #random: Random;

  constructor(endpointId: string, liveUrls: () => string[], random: Random) {
    this.#endpoint = endpointId;
    this.#liveUrls = liveUrls;
    this.#random = random;
  }

  #url(): string | undefined {
    const urls = this.#liveUrls();
    return urls.length === 0 ? undefined : this.#random.pick(urls);
  }

  /** Submit one job of a kind from the mix; resolves once it was answered (or not). */
  async submit(): Promise<void> {
    const kind = this.#random.pick(MIX);
    const base = this.#url();
    if (base === undefined) return increment(this.refused, 'no harness up');
    const { path, body } = request(kind, this.#random);
    const submittedAt = Date.now();
    try {
      const answer = await call('POST', `${base}/v2/${this.#endpoint}${path}`, { body, signal: AbortSignal.timeout(30_000) });
      const json = answer.json as { id?: string; status?: string; output?: { runId?: string }; error?: unknown; code?: string } | undefined;
      if (answer.status !== 200 || typeof json?.id !== 'string') {
        const code = /SW_[A-Z_]+/.exec(answer.text)?.[0] ?? '';
        return increment(this.refused, `${answer.status} ${code}`.trim());
      }
      const job: TrackedJob = { id: json.id, kind, submittedAt, ...(kind === 'ttl' ? { ttlMs: TTL_MS } : {}) };
      if (typeof json.status === 'string' && FINAL.has(json.status)) {
        job.final = finalName({ status: json.status, error: json.error });
        if (typeof json.output?.runId === 'string') job.runId = json.output.runId;
      }
      this.jobs.set(job.id, job);
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      increment(this.refused, `no answer (${cause?.code ?? (error as Error).name})`);
    }
  }

  pending(): TrackedJob[] {
    return [...this.jobs.values()].filter((job) => job.final === undefined);
  }

  /** Read the status of every job not yet seen final, `parallel` at a time. */
  async pollPending(parallel = 8): Promise<void> {
    const queue = this.pending();
    const next = async (): Promise<void> => {
      for (let job = queue.shift(); job !== undefined; job = queue.shift()) await this.#poll(job);
    };
    await Promise.all(Array.from({ length: parallel }, next));
  }

  async #poll(job: TrackedJob): Promise<void> {
    const base = this.#url();
    if (base === undefined) return;
    try {
      const answer = await call('GET', `${base}/v2/${this.#endpoint}/status/${job.id}`, { signal: AbortSignal.timeout(10_000) });
      if (answer.status === 404) {
        job.last = '404';
        if (job.ttlMs !== undefined && Date.now() >= job.submittedAt + job.ttlMs) job.final = 'expired (ttl)';
        return;
      }
      const json = answer.json as { status?: string; error?: unknown; output?: { runId?: string } } | undefined;
      if (answer.status !== 200 || typeof json?.status !== 'string') {
        job.last = `${answer.status}`;
        return;
      }
      job.last = json.status;
      if (!FINAL.has(json.status)) return;
      job.final = finalName({ status: json.status, error: json.error });
      if (typeof json.output?.runId === 'string') job.runId = json.output.runId;
    } catch (error) {
      job.last = `error ${(error as Error).name}`;
    }
  }

  /** Accepted jobs by kind. */
  submittedByKind(): Record<string, number> {
    const tally: Record<string, number> = {};
    for (const job of this.jobs.values()) increment(tally, job.kind);
    return tally;
  }
}
