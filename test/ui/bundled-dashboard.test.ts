/**
 * The dashboard from a bundled worker: `bundleWorker` (what `serverless-worker build`
 * runs) bundles the echo example into a folder with no node_modules above it; the
 * bundle, run with --serve-api, serves /ui, the page's modules and the vendor modules
 * from the sw-dashboard/ folder written beside it. Without that folder, /ui answers
 * SW_DASHBOARD_UNAVAILABLE naming where it looked. /docs reads Swagger UI's files from
 * the same folder (SW_DOCS_UNAVAILABLE without it). No browser: plain HTTP.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleWorker, describeOutput } from '../../packages/platform/src/build/bundle.js';
import { DOCS_ASSETS } from '../../packages/platform/src/harness/openapi/docs-assets.js';
import { BUNDLED_UI_FOLDER, VENDOR_FILES } from '../../packages/platform/src/harness/dashboard/static-files.js';
import { REPO_ROOT } from '../child-process.js';
import { waitFor } from '../kit/index.js';

let out: string;

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'sw-ui-bundle-'));
  const output = await bundleWorker({ entry: 'examples/echo/worker.ts', outdir: join(out, 'dist'), cwd: REPO_ROOT });
  console.log(describeOutput(output, out));
}, 120_000);

afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

function env(): Record<string, string | undefined> {
  const vars: Record<string, string | undefined> = { LOG_LEVEL: 'warn' };
  for (const name of Object.keys(process.env)) if (name.startsWith('RUNPOD_') || name.startsWith('SERVERLESS_WORKER_')) vars[name] = undefined;
  return vars;
}

/** Run the bundle with --serve-api, call `check` with its dashboard URL, stop it. */
async function withServedBundle(check: (dashboard: string) => Promise<void>): Promise<void> {
  const child = execa(process.execPath, ['dist/worker.js', '--serve-api', '--port', '0'], { cwd: out, env: env(), reject: false, timeout: 60_000 });
  let stdout = '';
  child.stdout?.on('data', (data: Buffer) => (stdout += data.toString()));
  try {
    const dashboard = await waitFor(
      () => /dashboard: (http:\/\/127\.0\.0\.1:\d+\/ui)/.exec(stdout)?.[1],
      'the serve-api banner with the dashboard URL',
      30_000,
    );
    await check(dashboard);
  } finally {
    child.kill('SIGTERM');
    await child;
  }
}

describe('the dashboard from a bundled worker (--serve-api)', { timeout: 120_000 }, () => {
  it('writes the page and the vendor modules beside the bundle, with no node_modules above it', () => {
    expect(existsSync(join(tmpdir(), 'node_modules'))).toBe(false);
    expect(existsSync(join(out, 'dist', BUNDLED_UI_FOLDER, 'index.html'))).toBe(true);
    expect(existsSync(join(out, 'dist', BUNDLED_UI_FOLDER, 'app.js'))).toBe(true);
    for (const name of Object.keys(VENDOR_FILES)) expect(existsSync(join(out, 'dist', BUNDLED_UI_FOLDER, 'vendor', name)), name).toBe(true);
    for (const name of Object.keys(DOCS_ASSETS)) expect(existsSync(join(out, 'dist', BUNDLED_UI_FOLDER, 'swagger', name)), name).toBe(true);
  });

  it('serves /ui, its modules and the vendor modules with their content types', async () => {
    await withServedBundle(async (dashboard) => {
      const page = await fetch(dashboard);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await page.text()).toContain('/ui/static/app.js');

      const app = await fetch(`${dashboard}/static/app.js`);
      expect(app.status).toBe(200);
      expect(app.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(await app.text()).toBe(await readFile(join(REPO_ROOT, 'packages/platform/ui/app.js'), 'utf8'));

      for (const [name, type] of [
        ['preact.mjs', 'text/javascript; charset=utf-8'],
        ['uplot.mjs', 'text/javascript; charset=utf-8'],
        ['uplot.css', 'text/css; charset=utf-8'],
      ] as const) {
        const vendor = await fetch(`${dashboard}/vendor/${name}`);
        expect(vendor.status, name).toBe(200);
        expect(vendor.headers.get('content-type'), name).toBe(type);
        expect((await vendor.text()).length, name).toBeGreaterThan(1000);
      }
      const preact = await (await fetch(`${dashboard}/vendor/preact.mjs`)).text();
      expect(preact).toMatch(/export\s*\{/);

      // /docs: Swagger UI's files from the bundle's sw-dashboard/swagger/ (no node_modules here).
      const root = dashboard.replace(/\/ui$/, '');
      for (const [name, type] of [
        ['swagger-ui.css', 'text/css; charset=utf-8'],
        ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
      ] as const) {
        const docs = await fetch(`${root}/docs/${name}`);
        expect(docs.status, name).toBe(200);
        expect(docs.headers.get('content-type'), name).toBe(type);
        expect((await docs.arrayBuffer()).byteLength, name).toBeGreaterThan(10_000);
      }

      // The data routes work as well (no key: serve-api on loopback has none by default).
      const overview = await fetch(`${dashboard}/api/overview`);
      expect(overview.status).toBe(200);
      expect(await overview.json()).toMatchObject({ endpoints: expect.any(Array) });
    });
  });

  it('answers SW_DASHBOARD_UNAVAILABLE naming the folders looked in when the folder was not copied along', async () => {
    const folder = join(out, 'dist', BUNDLED_UI_FOLDER);
    await rename(folder, `${folder}-moved`);
    try {
      await withServedBundle(async (dashboard) => {
        for (const path of ['', '/static/app.js', '/vendor/preact.mjs']) {
          const answer = await fetch(`${dashboard}${path}`);
          expect(answer.status, path).toBe(503);
          const body = (await answer.json()) as { error: { code: string; message: string } };
          expect(body.error.code).toBe('SW_DASHBOARD_UNAVAILABLE');
          expect(body.error.message).toContain(folder);
        }
        // Nor can /docs find Swagger UI's files: its own code, naming the places looked in.
        const docs = await fetch(dashboard.replace(/\/ui$/, '/docs/swagger-ui-bundle.js'));
        expect(docs.status).toBe(503);
        const docsBody = (await docs.json()) as { error: { code: string; message: string } };
        expect(docsBody.error.code).toBe('SW_DOCS_UNAVAILABLE');
        expect(docsBody.error.message).toContain(join(folder, 'swagger'));
        // The queue API is not affected.
        const health = await fetch(dashboard.replace(/\/ui$/, '/v2/local/health'));
        expect(health.status).toBe(200);
      });
    } finally {
      await rename(`${folder}-moved`, folder);
    }
  });
});
