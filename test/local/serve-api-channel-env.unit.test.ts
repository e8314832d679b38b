/** SW_SERVE_API_CHANNEL: how `--serve-api` joins its worker child (ipc by default, http on request, anything else refused). */
import { describe, expect, it } from 'vitest';
import { SERVE_API_CHANNEL_ENV, serveApiChannel } from '../../packages/platform/src/local/serve-api.js';

describe('serveApiChannel', () => {
  it('defaults to ipc, takes ipc and http', () => {
    expect(serveApiChannel({})).toBe('ipc');
    expect(serveApiChannel({ [SERVE_API_CHANNEL_ENV]: '' })).toBe('ipc');
    expect(serveApiChannel({ [SERVE_API_CHANNEL_ENV]: 'ipc' })).toBe('ipc');
    expect(serveApiChannel({ [SERVE_API_CHANNEL_ENV]: 'http' })).toBe('http');
  });

  it('refuses another value with SW_INVALID_ENV naming the variable and the values it takes', () => {
    expect(() => serveApiChannel({ [SERVE_API_CHANNEL_ENV]: 'socket' })).toThrow(
      expect.objectContaining({
        code: 'SW_INVALID_ENV',
        message: expect.stringContaining('SW_SERVE_API_CHANNEL must be "ipc" (the default) or "http", not "socket"'),
      }),
    );
  });
});
