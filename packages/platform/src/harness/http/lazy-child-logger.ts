/**
 * @module harness/http/lazy-child-logger
 * Fastify makes a child logger for every request (`request.log`, bound to its request
 * id). A pino child is not free: its bindings are serialized and, with redaction on, its
 * redaction set up, for every request, while almost no request logs anything (request
 * lines are off; only warnings and errors use `request.log`). Under `/runsync` load that
 * was about 2-3 % of the local API's CPU (bench/README.md, issue 19).
 *
 * `lazyChildLoggerFactory` (fastify's `childLoggerFactory` option) answers a stand-in
 * that makes the real child on its first use, so a line logged through `request.log`
 * still carries the request id, and a request that logs nothing costs one small object.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

class LazyChildLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  /** The real child, made once. */
  #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  get level(): string {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  // Methods on the prototype, not arrow fields: nothing more is allocated per request.
  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }

  error(...args: unknown[]): void {
    this.#log('error', args);
  }

  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }

  info(...args: unknown[]): void {
    this.#log('info', args);
  }

  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }

  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }

  #log(level: Level, args: unknown[]): void {
    const real = this.#real();
    (real[level] as (...rest: unknown[]) => void).call(real, ...args);
  }
}

/** Fastify's `childLoggerFactory`: a request logger that becomes a pino child on first use. */
export function lazyChildLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  // Structurally a FastifyBaseLogger; its methods take pino's overloads as one rest parameter.
  return new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}
