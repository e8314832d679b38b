/**
 * @module harness/launcher/docker/container-runner
 * One worker as a container: create it, register a wait for its exit, start it, follow
 * its output (stdout and stderr, line by line, as a process's pipes are read), and once
 * it has exited and its output is read to the end, remove it. Signals go through the
 * engine's kill (SIGTERM, then SIGKILL after the launcher's shutdown deadline: what
 * `docker stop` does, with the deadline in ms). A stop that comes before the container
 * started (its create still in flight) keeps it from starting.
 */
import { systemClock, withinTime } from 'serverless-worker/internal';
import type { WorkerExit, WorkerRunner, WorkerStart } from '../launch-backend.js';
import type { DockerEngine } from './docker-engine.js';
import { LogFrames } from './log-frames.js';

/** How long the output may trail the exit before the container is removed anyway. */
const LOG_DRAIN_MS = 5_000;

export interface ContainerRunnerOptions {
  engine: DockerEngine;
  /** The container's name (unique on the engine). */
  name: string;
  /** The create body (container-spec.ts). */
  spec: Record<string, unknown>;
  onLine: WorkerStart['onLine'];
  /** The container exists (its id) and is gone again: the backend tracks what it must remove on close. */
  onCreated(id: string): void;
  onRemoved(id: string): void;
}

export class ContainerRunner implements WorkerRunner {
  readonly label: string;
  readonly exited: Promise<WorkerExit>;
  readonly #options: ContainerRunnerOptions;
  #id: string | undefined;
  #started = false;
  #done = false;
  /** The engine's wait answered: the container exited (its output and removal may still be under way). */
  #exitSeen = false;
  /** The strongest signal asked for before the container ran. */
  #pending: 'SIGTERM' | 'SIGKILL' | undefined;

  constructor(options: ContainerRunnerOptions) {
    this.#options = options;
    this.label = `container ${options.name}`;
    this.exited = this.#run().finally(() => {
      this.#done = true;
    });
  }

  get running(): boolean {
    return !this.#done && !this.#exitSeen;
  }

  signal(signal: 'SIGTERM' | 'SIGKILL'): void {
    if (this.#done) return;
    if (this.#id === undefined || !this.#started) {
      if (this.#pending !== 'SIGKILL') this.#pending = signal;
      return;
    }
    this.#options.engine.kill(this.#id, signal).catch(() => {
      // Not running any more (409) or gone: its exit is on its way.
    });
  }

  async #run(): Promise<WorkerExit> {
    const { engine, onLine } = this.#options;
    try {
      this.#id = await engine.createContainer(this.#options.name, this.#options.spec);
    } catch (error) {
      const message = `could not create the container: ${(error as Error).message}`;
      onLine('stderr', message);
      return { code: null, signal: null, startError: message };
    }
    const id = this.#id;
    this.#options.onCreated(id);
    const abort = new AbortController();
    try {
      // Told to stop while it was being created: it never runs.
      if (this.#pending !== undefined) return { code: null, signal: this.#pending };
      const wait = await engine.waitForExit(id, abort.signal);
      // Observed below; this keeps its rejection by the abort (a failed start) from going unhandled.
      wait.exitCode.catch(() => undefined);
      await engine.startContainer(id);
      this.#started = true;
      const output = this.#follow(id, abort.signal);
      if (this.#pending !== undefined) this.signal(this.#pending);
      const code = await wait.exitCode;
      this.#exitSeen = true;
      await withinTime(output, LOG_DRAIN_MS, undefined, systemClock, false);
      return { code, signal: null };
    } catch (error) {
      const message = `could not ${this.#started ? 'follow' : 'start'} the container: ${(error as Error).message}`;
      onLine('stderr', message);
      return { code: null, signal: null, ...(this.#started ? {} : { startError: message }) };
    } finally {
      abort.abort();
      try {
        await engine.remove(id);
      } catch (error) {
        onLine('stderr', `could not remove the container ${id}: ${(error as Error).message}`);
      }
      this.#options.onRemoved(id);
    }
  }

  /** Read the container's output to its end; a read that fails says so in the worker's log. */
  async #follow(id: string, signal: AbortSignal): Promise<void> {
    const frames = new LogFrames(this.#options.onLine);
    try {
      const stream = await this.#options.engine.followLogs(id, signal);
      for await (const chunk of stream) frames.push(chunk as Buffer);
    } catch (error) {
      if (!signal.aborted) this.#options.onLine('stderr', `the container's output could not be read: ${(error as Error).message}`);
    } finally {
      frames.end();
    }
  }
}
