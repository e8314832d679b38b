/**
 * A launcher closed while a scale-up is under way (its slot claim not yet answered, as
 * on a PostgreSQL store under load) starts no worker after close(): close() waits for
 * the round, the round launches nothing more, and no process is left running.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LocalSlotClaims, type SlotClaims } from '../../../packages/platform/src/harness/launcher/index.js';
import { Harness } from '../../../src/harness/index.js';
import { Launcher } from '../../../packages/platform/src/harness/launcher/index.js';
import { InMemoryManagementStore } from '../../../packages/platform/src/harness/management/index.js';
import { fetchOkJson, startHarnessServer, waitFor } from '../../kit/index.js';
import { FIXTURE_COMMAND, TEST_IMAGE } from './launcher-setup.js';
import { REPO_ROOT } from '../../platform/worker-process.js';
import pino from 'pino';
import { Writable } from 'node:stream';

/** Slot claims whose answers the test lets through one at a time. */
class GatedClaims implements SlotClaims {
  readonly inner = new LocalSlotClaims('gated');
  readonly machineId = 'gated';
  readonly shared = false;
  readonly waiting: Array<() => void> = [];

  async claim(endpointId: string, max: number, workerId: string, now: number): Promise<number | undefined> {
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    return this.inner.claim(endpointId, max, workerId, now);
  }
  heldElsewhere = async (): Promise<string[]> => [];
  renew = async (): Promise<void> => {};
  release = (endpointId: string, workerId: string): Promise<void> => this.inner.release(endpointId, workerId);
  close = (): Promise<void> => this.inner.close();
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe('Launcher.close during a scale-up', () => {
  it('launches nothing once close() began, and close() returns with no worker running', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ level: 'info' }, sink);
    const harness = new Harness({ autoCreateEndpoints: false });
    const store = new InMemoryManagementStore();
    const slots = new GatedClaims();
    const launcher = new Launcher(
      { images: { [TEST_IMAGE]: { command: FIXTURE_COMMAND, cwd: REPO_ROOT } }, tickMs: 50, shutdownDeadlineMs: 5_000 },
      { harness, store, logger, slots },
    );
    const server = await startHarnessServer({ harness, management: { store }, logger, launchedWorkers: launcher });
    closers.push(
      () => harness.close(),
      () => server.close(),
      () => launcher.close(),
    );
    launcher.start({ url: server.url, pingIntervalMs: 1_000 });

    const template = await fetchOkJson<{ id: string }>(`${server.url}/v1/templates`, 'POST', {
      name: 'gated',
      imageName: TEST_IMAGE,
      isServerless: true,
      category: 'CPU',
      env: { LOG_LEVEL: 'warn' },
    });
    await fetchOkJson(`${server.url}/v1/endpoints`, 'POST', { templateId: template.id, workersMin: 2, workersMax: 2 });
    // The round asks for the first slot and waits: the drain begins now.
    await waitFor(() => slots.waiting.length > 0, 'the scale-up asked for a slot', 30_000);
    const closing = launcher.close();
    for (const release of slots.waiting.splice(0)) release();
    // Any further claim of that round is let through too: none may launch.
    const letThrough = setInterval(() => {
      for (const release of slots.waiting.splice(0)) release();
    }, 10);
    try {
      await closing;
    } finally {
      clearInterval(letThrough);
    }
    expect(lines.filter((line) => String(line.msg).startsWith('scale up: started worker'))).toEqual([]);
    expect(await launcher.pods()).toEqual([]);
    expect(launcher.scaleEvents().filter((event) => event.kind === 'scale-up')).toEqual([]);
  }, 60_000);
});
