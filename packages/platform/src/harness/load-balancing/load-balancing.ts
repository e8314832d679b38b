/**
 * @module harness/load-balancing/load-balancing
 * The load-balancing endpoints of one harness: a pool of workers per endpoint, and
 * the harness's health check: `GET <healthUrl>/ping` to every worker every
 * `pingIntervalMs` (bounded by `pingTimeoutMs`), as the platform does. A worker
 * unhealthy for `forgetAfterMs` is forgotten. One instance per server, given to the
 * routes that read it (the queue API's /health, the dashboard) when they are made.
 */
import type { Logger } from 'pino';
import * as z from 'zod';
import { type Clock, defaultPort, repeatEvery, systemClock, TargetPolicy, type TimerHandle, urlForLog } from 'serverless-worker/internal';
import { LbPool, type LbWorker, type LbWorkerState, type LbWorkerView } from './lb-pool.js';
import type { LoadBalancingSettings } from './options.js';
const { Agent, request: httpRequest } = process.getBuiltinModule('node:http');
const { Agent: HttpsAgent, request: httpsRequest } = process.getBuiltinModule('node:https');

/** What the load-balancing endpoints know of their server, for the target policy. */
export interface LbReach {
  /** The harness's own port, once it listens. */
  readonly selfPort: () => number | undefined;
  /** Whether the server requires an API key (then worker URLs may be any address the policy allows, not only loopback). */
  readonly authenticated: boolean;
}

export interface RegisterInput {
  readonly workerId: string;
  readonly url: string;
  readonly healthUrl: string;
  readonly concurrency: number;
}

/** A worker the harness no longer pings: forgotten after being unhealthy too long, or removed (DELETE). Kept for the dashboard. */
export interface GoneLbWorker {
  readonly endpointId: string;
  readonly worker: LbWorkerView;
  /** Epoch ms it went. */
  readonly at: number;
  readonly reason: string;
}

/** Gone workers kept per harness (the newest). */
export const GONE_LB_WORKERS_KEPT = 50;

export class LoadBalancing {
  readonly settings: LoadBalancingSettings;
  /** Keep-alive connections to the workers, for proxied requests. */
  readonly agent = new Agent({ keepAlive: true });
  /** The same for workers registered with an https:// URL. */
  readonly httpsAgent = new HttpsAgent({ keepAlive: true });
  readonly #pools = new Map<string, LbPool>();
  readonly #logger: Logger;
  readonly #pinging = new Set<LbWorker>();
  readonly #gone: GoneLbWorker[] = [];
  /** The harness's clock: ping rounds, registration times, the proxy's request time limit. */
  readonly clock: Clock;
  #timer: TimerHandle | undefined;
  #started = false;

  /** Where workers may be: checked at registration, and on every connection a name resolves for. */
  readonly policy: TargetPolicy;

  constructor(
    settings: LoadBalancingSettings,
    logger: Logger,
    reach: LbReach = { selfPort: () => undefined, authenticated: false },
    clock: Clock = systemClock,
  ) {
    this.settings = settings;
    this.#logger = logger;
    this.clock = clock;
    this.policy = new TargetPolicy({
      selfPort: reach.selfPort,
      allow: settings.allow,
      // Without a key anyone on this machine may register: no worker URL beyond it, so no request reaches further through the proxy.
      ...(reach.authenticated
        ? {}
        : { loopbackOnly: 'a harness without an API key takes load-balancing workers on loopback only: set an API key, or widen with --lb-allow' }),
    });
  }

  /** The pool of `endpointId`, if any worker ever registered there. */
  pool(endpointId: string): LbPool | undefined {
    return this.#pools.get(endpointId);
  }

  pools(): LbPool[] {
    return [...this.#pools.values()];
  }

  /**
   * Add a worker and ping it at once. The same registration again (same id, URLs and
   * concurrency: a worker repeats its own every few seconds) is a refresh: the entry, its
   * state and counters are kept and `created` is false. A different one under the same id
   * replaces the entry.
   */
  register(endpointId: string, input: RegisterInput): { readonly worker: LbWorker; readonly created: boolean } {
    let pool = this.#pools.get(endpointId);
    if (!pool) {
      pool = new LbPool(endpointId);
      this.#pools.set(endpointId, pool);
    }
    const held = pool.get(input.workerId);
    if (held && held.url === input.url && held.healthUrl === input.healthUrl && held.concurrency === input.concurrency) return { worker: held, created: false };
    const worker = pool.register({ id: input.workerId, url: input.url, healthUrl: input.healthUrl, concurrency: input.concurrency }, this.clock.now());
    this.#logger.info(
      { endpointId, workerId: input.workerId, url: urlForLog(input.url), healthUrl: urlForLog(input.healthUrl) },
      'load-balancing worker registered',
    );
    void this.#ping(pool, worker);
    this.#armPings();
    return { worker, created: true };
  }

  remove(endpointId: string, workerId: string): boolean {
    const pool = this.#pools.get(endpointId);
    const worker = pool?.get(workerId);
    const removed = pool?.remove(workerId) ?? false;
    if (removed && pool && worker) {
      this.#wentAway(pool, worker, 'removed (DELETE of its registration)');
      this.#logger.info({ endpointId, workerId }, 'load-balancing worker removed');
    }
    return removed;
  }

  /** Workers gone lately, oldest first (at most GONE_LB_WORKERS_KEPT): a dead worker leaves a trace. */
  gone(endpointId?: string): GoneLbWorker[] {
    return this.#gone.filter((entry) => endpointId === undefined || entry.endpointId === endpointId);
  }

  #wentAway(pool: LbPool, worker: LbWorker, reason: string): void {
    this.#gone.push({ endpointId: pool.endpointId, worker: pool.view(worker), at: this.clock.now(), reason });
    if (this.#gone.length > GONE_LB_WORKERS_KEPT) this.#gone.splice(0, this.#gone.length - GONE_LB_WORKERS_KEPT);
  }

  /** A request could not reach the worker: out of the pool until a ping answers 200. */
  markUnreachable(pool: LbPool, worker: LbWorker, error: string): void {
    if (pool.setState(worker, 'unhealthy', this.clock.now(), error)) {
      this.#logger.warn({ endpointId: pool.endpointId, workerId: worker.id, error }, 'load-balancing worker unreachable: out of the pool');
    }
  }

  /** Start pinging every worker: the ping timer runs only while some worker is registered (an idle harness ticks no timer). */
  start(): void {
    this.#started = true;
    this.#armPings();
  }

  /** Whether the ping timer is armed now (for tests: none while no worker is registered). */
  get pingTimerArmed(): boolean {
    return this.#timer !== undefined;
  }

  #armPings(): void {
    if (!this.#started || this.#timer) return;
    if (!this.pools().some((pool) => pool.all().length > 0)) return;
    this.#timer = repeatEvery(this.clock, this.settings.pingIntervalMs, () => this.pingAll());
  }

  stop(): void {
    this.#started = false;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.agent.destroy();
    this.httpsAgent.destroy();
  }

  /** One round of pings (each worker at most one at a time), and forget long-unhealthy workers. */
  pingAll(): void {
    const now = this.clock.now();
    for (const pool of this.#pools.values()) {
      for (const worker of pool.all()) {
        if (worker.state === 'unhealthy' && now - worker.since >= this.settings.forgetAfterMs) {
          pool.remove(worker.id);
          this.#wentAway(pool, worker, `forgotten: unhealthy for ${Math.round((now - worker.since) / 1000)} s (forgetAfterMs ${this.settings.forgetAfterMs})`);
          this.#logger.warn(
            { endpointId: pool.endpointId, workerId: worker.id, lastError: worker.lastError },
            'load-balancing worker unhealthy for too long: forgotten',
          );
          continue;
        }
        void this.#ping(pool, worker);
      }
    }
    // Nobody left to ping: the timer stops until the next registration.
    if (!this.pools().some((p) => p.all().length > 0)) {
      this.#timer?.cancel();
      this.#timer = undefined;
    }
  }

  async #ping(pool: LbPool, worker: LbWorker): Promise<void> {
    if (this.#pinging.has(worker)) return;
    this.#pinging.add(worker);
    let state: LbWorkerState;
    let error: string | undefined;
    try {
      const { status, body } = await getPing(new URL('/ping', worker.healthUrl), this.settings.pingTimeoutMs, this.policy);
      state = status === 200 ? 'healthy' : status === 204 ? 'initializing' : 'unhealthy';
      if (state === 'unhealthy') {
        const reason = pingReason(body);
        error = `/ping answered HTTP ${status}${reason !== undefined ? `: ${reason}` : ''}`;
      }
    } catch (caught) {
      state = 'unhealthy';
      error = `/ping failed: ${caught instanceof Error ? caught.message : String(caught)}`;
    } finally {
      this.#pinging.delete(worker);
    }
    if (pool.get(worker.id) !== worker) return; // removed or replaced meanwhile
    const previous = worker.state;
    if (pool.setState(worker, state, this.clock.now(), error)) {
      const fields = { endpointId: pool.endpointId, workerId: worker.id, from: previous, to: state, ...(error ? { error } : {}) };
      if (state === 'healthy' && worker.coldStartMs !== undefined && previous === 'initializing') {
        this.#logger.info(
          { ...fields, coldStartMs: worker.coldStartMs },
          `load-balancing worker ready (cold start ${worker.coldStartMs} ms, first 204 to first 200)`,
        );
      } else if (state === 'unhealthy') this.#logger.warn(fields, 'load-balancing worker unhealthy: out of the pool');
      else this.#logger.info(fields, `load-balancing worker ${state}`);
    }
  }
}

/** Bytes of a /ping answer read, at most (a worker's reason is up to 256 characters). */
const PING_BODY_MAX = 2_048;

/** A worker's /ping body as serveLoadBalancing writes it after a failed start-up. */
const PingBodySchema = z.object({ reason: z.string().min(1) });

/** The failure reason a /ping body carries (`{"status":"unhealthy","reason":"..."}`), if any. */
export function pingReason(body: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const result = PingBodySchema.safeParse(parsed);
  return result.success ? result.data.reason.slice(0, 256) : undefined;
}

/** One GET, bounded; answers the status code and the start of the body. */
function getPing(url: URL, timeoutMs: number, policy: TargetPolicy): Promise<{ status: number; body: string }> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    // A name is checked again on what it resolves to now (registration checked it once).
    const request = send(url, { method: 'GET', agent: false, timeout: timeoutMs, lookup: policy.lookupFor(defaultPort(url)) }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (text: string) => {
        if (body.length < PING_BODY_MAX) body += text.slice(0, PING_BODY_MAX - body.length);
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', reject);
    request.end();
  });
}
