import { describe, expect, it } from 'vitest';
import { harnessBanner } from '../../packages/platform/src/cli/commands/harness-banner.js';

describe('harness banner', () => {
  it('prints ready-to-paste worker variables for "local" when any endpoint id works', () => {
    const text = harnessBanner({ url: 'http://127.0.0.1:8000', authenticated: false }, []);
    expect(text).toContain("export RUNPOD_WEBHOOK_GET_JOB='http://127.0.0.1:8000/v2/local/job-take/$ID?'");
    expect(text).not.toMatch(/%3C|<endpoint_id>/);
    expect(text).toContain('any id');
    expect(text).toContain('load-balancing: http://127.0.0.1:8000/lb/local/<path>');
  });

  it('uses the first named endpoint and asks for the key when one is set', () => {
    const text = harnessBanner({ url: 'http://127.0.0.1:9000', authenticated: true }, ['gpu-a', 'gpu-b']);
    expect(text).toContain('/v2/gpu-a/job-done/$RUNPOD_POD_ID/$ID?');
    expect(text).toContain('also set RUNPOD_AI_API_KEY');
  });

  it('prints the dashboard URL when the server has one', () => {
    const text = harnessBanner({ url: 'http://127.0.0.1:8000', authenticated: true, dashboardUrl: 'http://127.0.0.1:8000/ui' }, []);
    expect(text).toContain('dashboard:      http://127.0.0.1:8000/ui');
    expect(harnessBanner({ url: 'http://127.0.0.1:8000', authenticated: false }, [])).not.toContain('dashboard');
  });

  it('asks to log in with the API key only when the harness has one (issue 35)', () => {
    const ui = { url: 'http://127.0.0.1:8000', dashboardUrl: 'http://127.0.0.1:8000/ui' };
    expect(harnessBanner({ ...ui, authenticated: true }, [])).toContain('log in with the API key');
    const open = harnessBanner({ ...ui, authenticated: false }, []);
    expect(open).not.toContain('log in with the API key');
    expect(open).toContain('no login: this harness has no API key');
  });
});
