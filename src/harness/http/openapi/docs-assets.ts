/**
 * @module harness/http/openapi/docs-assets
 * `/docs`: Swagger UI (the swagger-ui-dist package, maintained by the Swagger
 * project) reading `/openapi.json`. Its files are read from node_modules when a
 * browser first asks for them, never from a CDN, and cost nothing until then.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The files served under /docs/, with their content types. */
export const DOCS_ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/** The page at /docs (no inline script: init.js starts the UI). */
export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>serverless-worker API docs</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

/** Starts Swagger UI on /openapi.json. */
export const DOCS_INIT_JS = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
});
`;

const cache = new Map<string, Buffer>();

/** The bytes of one Swagger UI file (read once, then kept). */
export async function readDocsAsset(name: string): Promise<Buffer> {
  const cached = cache.get(name);
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  const dir = dirname(require.resolve('swagger-ui-dist/package.json'));
  const bytes = await readFile(join(dir, name));
  cache.set(name, bytes);
  return bytes;
}
