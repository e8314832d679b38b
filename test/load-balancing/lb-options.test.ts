/**
 * serveLoadBalancing()/startLoadBalancingWorker() options: an option the schema does not
 * know is refused (SW_INVALID_OPTIONS) naming the closest known one, as serve() does,
 * before anything listens; a bad value names the option.
 */
import { describe, expect, it } from 'vitest';
import { startLoadBalancingWorker } from '../../src/index.js';
import { resolveLbOptions } from '../../src/load-balancing/lb-options.js';

const app = () => (_request: unknown, response: { end(): void }) => response.end();

describe('serveLoadBalancing options', () => {
  it('refuses a misspelt option with "did you mean" the known one', () => {
    expect(() => resolveLbOptions({ app, healthPrt: 0 })).toThrow(
      expect.objectContaining({ code: 'SW_INVALID_OPTIONS', message: expect.stringContaining('healthPrt; did you mean healthPort?') }),
    );
    expect(() => resolveLbOptions({ app, shutdownTimeout: 5, initTimeoutMS: 10 })).toThrow(
      /shutdownTimeout; did you mean shutdownTimeoutMs\?; initTimeoutMS; did you mean initTimeoutMs\?/,
    );
    // Nothing close: named alone.
    expect(() => resolveLbOptions({ app, zzzzzz: true })).toThrow(
      /Unknown serveLoadBalancing\(\) option zzzzzz \(docs\/reference\/options\.md lists every option\)/,
    );
  });

  it('refuses it from startLoadBalancingWorker before listening', async () => {
    await expect(startLoadBalancingWorker({ app, prot: 0 } as never, { processEnv: {} })).rejects.toMatchObject({
      code: 'SW_INVALID_OPTIONS',
      message: expect.stringContaining('did you mean port?'),
    });
  });

  it('still takes every known option, and names a bad value', () => {
    expect(resolveLbOptions({ app, port: 0, healthPort: 0, concurrency: 2 })).toMatchObject({ port: 0, healthPort: 0, concurrency: 2 });
    expect(() => resolveLbOptions({ app, concurrency: 0 })).toThrow(/concurrency/);
  });
});
