/**
 * @module harness/launcher/process-backend
 * Workers as local processes: `/bin/sh -c COMMAND` for templates whose imageName has a
 * command (`--image NAME=COMMAND`), in its own process group (so a shell's children
 * stop with it), with the harness's environment under the worker's variables, its
 * output read line by line. Signals go to this worker's own process group only, by its pid.
 * Each worker is told the harness's pid (SW_HARNESS_PID: an SDK worker exits once the
 * harness is gone) and, given ProcessRecords, its group is recorded on disk so a harness
 * started after a crash stops what this one left (process-records.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Endpoint, Template } from '../management/index.js';
import type { LaunchBackend, WorkerExit, WorkerRunner, WorkerStart } from './launch-backend.js';
import type { ImageCommand } from './launcher-options.js';
import type { ProcessRecords } from './process-records.js';
import { HARNESS_PID_ENV } from 'serverless-worker/internal';

export class ProcessBackend implements LaunchBackend {
  readonly kind = 'process';
  readonly #images: Readonly<Record<string, ImageCommand>>;
  readonly #records: ProcessRecords | undefined;

  constructor(images: Readonly<Record<string, ImageCommand>>, records?: ProcessRecords) {
    this.#images = images;
    this.#records = records;
  }

  runs(template: Template): boolean {
    return Object.hasOwn(this.#images, template.imageName);
  }

  runKey(_endpoint: Endpoint, template: Template): unknown {
    const image = this.#images[template.imageName];
    return [image?.command ?? null, image?.cwd ?? null];
  }

  async startProblem(): Promise<string | undefined> {
    return undefined;
  }

  start(start: WorkerStart): WorkerRunner {
    const image = this.#images[start.template.imageName];
    if (!image) throw new Error(`no command for image ${start.template.imageName}`);
    const runner = new ProcessRunner(image, { ...process.env, ...start.env, [HARNESS_PID_ENV]: String(process.pid) }, start.onLine);
    const records = this.#records;
    if (records && runner.pid !== undefined) {
      records.add({ workerId: start.id, endpointId: start.endpoint.id, pid: runner.pid });
      void runner.exited.then(() => records.remove(start.id));
    }
    return runner;
  }

  async close(): Promise<void> {
    // Each worker's process was stopped by the launcher: nothing is left to record.
    this.#records?.close();
  }
}

class ProcessRunner implements WorkerRunner {
  readonly #child: ChildProcess;
  /** Its output streams closed: every process of its group that held them is gone. */
  #closed = false;
  readonly exited: Promise<WorkerExit>;

  constructor(image: ImageCommand, env: NodeJS.ProcessEnv, onLine: WorkerStart['onLine']) {
    this.#child = spawn('/bin/sh', ['-c', image.command], {
      env,
      ...(image.cwd !== undefined ? { cwd: image.cwd } : {}),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    for (const stream of ['stdout', 'stderr'] as const) {
      const source = this.#child[stream];
      if (source) createInterface({ input: source, crlfDelay: Infinity }).on('line', (line) => onLine(stream, line));
    }
    this.exited = new Promise<WorkerExit>((resolve) => {
      // 'close' waits for the output streams too, so no line arrives after the exit.
      this.#child.once('close', (code, signal) => {
        this.#closed = true;
        resolve({ code, signal });
      });
    });
    this.#child.once('error', (error) => onLine('stderr', `could not start: ${error.message}`));
  }

  /** The shell's pid: its process group's id. */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  get running(): boolean {
    return !this.#closed;
  }

  get label(): string {
    return `pid ${this.#child.pid ?? '?'}`;
  }

  signal(signal: 'SIGTERM' | 'SIGKILL'): void {
    // Not the shell's own exit: a shell that ran the command as its child may exit on
    // SIGTERM while the command ignores it and lives on in the group; SIGKILL must still go.
    const pid = this.#child.pid;
    if (pid === undefined || this.#closed) return;
    try {
      // The worker's own process group (it was started detached): the shell and what it runs.
      process.kill(-pid, signal);
    } catch {
      // Already gone.
    }
  }
}
