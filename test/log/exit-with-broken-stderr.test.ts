/**
 * A process whose stderr reader is gone still exits when it calls process.exit with log
 * lines waiting (log/exit-safe-destination): SonicBoom's exit flush retried the failing
 * write forever, so a launched worker outlived its SIGKILLed harness.
 */
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { runTs } from '../child-process.js';

describe('the logger at exit', () => {
  it('exits with lines waiting after the reader of its stderr is gone', async () => {
    const child = runTs('test/fixtures/log/exit-with-lines-waiting.ts', [], { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe', buffer: false, timeout: 25_000 });
    const stdout = child.stdout;
    const stderr = child.stderr;
    const stdin = child.stdin;
    if (!stdout || !stderr || !stdin) throw new Error('the child has no pipes');
    let ready = '';
    for await (const chunk of stdout) {
      ready += String(chunk);
      if (ready.includes('ready\n')) break;
    }
    // Close the reading end, as a SIGKILLed harness does: the child's next write fails with EPIPE.
    stderr.destroy();
    await once(stderr, 'close');
    stdin.write('go\n');
    const result = await child;
    expect(result.timedOut).toBe(false);
    expect(result.exitCode).toBe(3);
  }, 30_000);
});
