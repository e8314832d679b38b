/**
 * @module harness/http/openapi/docs-assets
 * `/docs`: Swagger UI (the swagger-ui-dist package, maintained by the Swagger
 * project) reading `/openapi.json`. Its files are read when a browser first asks for
 * them, never from a CDN, and cost nothing until then: from a bundle's copy
 * (`serverless-worker build` writes them to `<outdir>/sw-dashboard/swagger/`, an image
 * has no node_modules), else from the installed swagger-ui-dist. Where neither holds
 * them, /docs answers SW_DOCS_UNAVAILABLE naming the places looked in.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ServerlessWorkerError } from '../../../job/errors.js';
import { bundledUiCandidates } from '../ui/static-files.js';

/** The folder under a bundle's sw-dashboard/ that holds Swagger UI's files. */
export const BUNDLED_DOCS_FOLDER = 'swagger';

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

/** The installed swagger-ui-dist's folder, or undefined when it is not installed. */
export function packageDocsDir(): string | undefined {
  try {
    return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  } catch {
    return undefined;
  }
}

/** Folders that may hold the files, in the order looked in. */
function docsDirs(): string[] {
  const bundled = bundledUiCandidates().map((dir) => join(dir, BUNDLED_DOCS_FOLDER));
  const installed = packageDocsDir();
  return installed === undefined ? bundled : [...bundled, installed];
}

/** The bytes of one Swagger UI file (read once, then kept); SW_DOCS_UNAVAILABLE when no folder holds it. */
export async function readDocsAsset(name: string): Promise<Buffer> {
  const cached = cache.get(name);
  if (cached) return cached;
  const dirs = docsDirs();
  const dir = dirs.find((candidate) => existsSync(join(candidate, name)));
  if (dir === undefined) {
    throw new ServerlessWorkerError(
      'SW_DOCS_UNAVAILABLE',
      `Swagger UI's ${name} is in none of ${dirs.join(', ') || '(no folder: swagger-ui-dist is not installed)'}; copy the whole outdir of serverless-worker build (with sw-dashboard/swagger/) or install swagger-ui-dist`,
      { file: name, lookedIn: dirs },
    );
  }
  const bytes = await readFile(join(dir, name));
  cache.set(name, bytes);
  return bytes;
}
