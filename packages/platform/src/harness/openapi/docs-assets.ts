/**
 * @module harness/openapi/docs-assets
 * `/docs`: Swagger UI (the swagger-ui-dist package, maintained by the Swagger
 * project) reading `/openapi.json`. Its files are read when a browser first asks for
 * them, never from a CDN, and cost nothing until then: from a bundle's copy
 * (`serverless-worker build` writes them to `<outdir>/sw-dashboard/swagger/`, an image
 * has no node_modules), else from the installed swagger-ui-dist. Where neither holds
 * them, /docs answers SW_DOCS_UNAVAILABLE naming the places looked in.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { ServerlessWorkerError } from 'serverless-worker/internal';
import { bundledUiCandidates } from '../dashboard/static-files.js';
const { existsSync } = process.getBuiltinModule('node:fs');

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
  <link rel="stylesheet" href="/docs/login.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
  <nav class="sw-nav" aria-label="serverless-worker"><a href="/ui" data-test="back-to-ui">&larr; Dashboard (/ui)</a> <a href="/openapi.json">openapi.json</a></nav>
  <div id="swagger-ui"><noscript>The API docs need JavaScript; the document itself is at /openapi.json.</noscript></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

/**
 * Starts Swagger UI on /openapi.json. The page is public (it holds no data); the
 * document and every "Try it out" need the API key: when /openapi.json answers 401 the
 * page asks for the key (kept in the tab's session storage, under the same name as the
 * dashboard's, so a key given on either page serves both; a key the dashboard remembered on
 * this device, in local storage, serves too), then loads the document with it and adds it
 * to each request (unless Swagger's own Authorize set one). A kept key that is refused gets
 * a neutral prompt (the error is for a key typed here); the curl Swagger shows masks the key. Swagger's BaseLayout: no top
 * bar with its Explore box (this page shows one document); a link back to the dashboard.
 */
export const DOCS_INIT_JS = `(function () {
  var KEY = 'serverless-worker-api-key';
  var root = document.getElementById('swagger-ui');
  // Whether the key in use was typed on this page: a refused key kept from before (another
  // harness's, an old one) is no error of this visit, and gets a neutral prompt, not an alert.
  var typed = false;
  function key() { return sessionStorage.getItem(KEY) || localStorage.getItem(KEY) || ''; }
  function el(tag, props, children) {
    var node = document.createElement(tag);
    Object.keys(props || {}).forEach(function (name) { node[name] = props[name]; });
    (children || []).forEach(function (child) { node.append(child); });
    return node;
  }
  function askForKey(message, note) {
    root.textContent = '';
    var input = el('input', { type: 'password', id: 'docs-api-key', autocomplete: 'current-password', required: true, autofocus: true });
    var form = el('form', { className: 'sw-login' }, [
      el('h2', { textContent: 'serverless-worker API docs' }),
      el('p', { textContent: 'This harness needs its API key (--api-key or SERVERLESS_WORKER_API_KEY) to show its API. It is kept in this tab\\'s session storage only, and sent with each request you try.' }),
      el('label', { textContent: 'API key ' }, [input]),
      el('button', { type: 'submit', textContent: 'Log in', className: 'btn authorize' }),
    ]);
    if (message) form.append(el('p', { className: 'sw-error', role: 'alert', textContent: message }));
    if (note) form.append(el('p', { className: 'sw-note', textContent: note }));
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      sessionStorage.setItem(KEY, input.value);
      typed = true;
      load();
    });
    root.append(form);
    input.focus();
  }
  function load() {
    var headers = key() ? { authorization: 'Bearer ' + key() } : {};
    fetch('/openapi.json', { headers: headers }).then(function (response) {
      return response.json().catch(function () { return undefined; }).then(function (body) {
        if (response.status === 401) {
          if (typed) askForKey((body && body.error && (body.error.code + ': ' + body.error.message)) || 'Wrong API key');
          else if (key()) {
            // Kept from before and refused: forget it for this tab (a remembered one stays the dashboard's to forget).
            sessionStorage.removeItem(KEY);
            askForKey('', 'The API key this browser kept is not the one this harness was started with: enter its key.');
          } else askForKey('');
          return;
        }
        if (!response.ok) {
          root.textContent = 'Could not read /openapi.json: HTTP ' + response.status + ' ' + ((body && body.error && body.error.message) || '');
          return;
        }
        root.textContent = '';
        window.ui = SwaggerUIBundle({
          spec: body,
          dom_id: '#swagger-ui',
          deepLinking: true,
          presets: [SwaggerUIBundle.presets.apis],
          layout: 'BaseLayout',
          requestInterceptor: function (request) {
            if (key() && !request.headers.Authorization && !request.headers.authorization) request.headers.Authorization = 'Bearer ' + key();
            return request;
          },
          plugins: [maskedSnippets],
          // The snippets (curl for bash, cmd, PowerShell) that take their generators from plugins: Swagger's plain
          // Curl block calls its own generator, which maskedSnippets cannot reach.
          requestSnippetsEnabled: true,
          // The key as Swagger's own Authorize (scheme apiKey): its lock shows it set, and its curl carries it, masked.
          onComplete: function () {
            if (key() && window.ui) window.ui.preauthorizeApiKey('apiKey', key());
          },
        });
      });
    }, function (error) {
      root.textContent = 'The harness did not answer: ' + error.message;
    });
  }
  // The curl (bash, cmd, PowerShell) Swagger shows for a request: the key masked, so that a
  // screenshot or a pasted snippet does not carry it; paste your key in its place.
  function masked(request) {
    var out = request;
    var headers = request.get('headers');
    if (headers) headers.forEach(function (value, name) {
      if (String(name).toLowerCase() === 'authorization') out = out.setIn(['headers', name], String(value).replace(/^(Bearer +)?.*$/i, '$1<API key>'));
    });
    return out;
  }
  function maskedSnippets() {
    var own = SwaggerUIBundle.plugins.RequestSnippets().fn;
    var fn = {};
    ['requestSnippetGenerator_curl_bash', 'requestSnippetGenerator_curl_cmd', 'requestSnippetGenerator_curl_powershell'].forEach(function (name) {
      if (typeof own[name] === 'function') fn[name] = function (request) { return own[name](masked(request)); };
    });
    return { fn: fn };
  }
  load();
})();
`;

/** The login form's looks (the page has no inline style). */
export const DOCS_LOGIN_CSS = `.sw-login { max-width: 32rem; margin: 3rem auto; font: 14px/1.5 sans-serif; padding: 1rem 1.4rem; border: 1px solid #d0d7de; border-radius: 8px; }
.sw-login label { display: block; margin: .8rem 0; } .sw-login input { padding: .35rem .5rem; width: 16rem; }
.sw-login .sw-error { color: #c62828; }
.sw-login .sw-note { color: #5b6470; }
.sw-nav { font: 14px/1.5 sans-serif; padding: .5rem 1.4rem; border-bottom: 1px solid #d0d7de; display: flex; gap: 1.2rem; }
`;

const cache = new Map<string, Buffer>();

/**
 * Swagger UI's files as the packed platform package carries them (vendor/swagger-ui/,
 * copied from swagger-ui-dist at pack time by scripts/vendor-swagger-ui.mjs): users do not
 * install swagger-ui-dist, whose dependency runs an install-time telemetry script.
 */
export const VENDORED_DOCS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'vendor', 'swagger-ui');

/** The package's Swagger UI folder (vendored, else swagger-ui-dist, a dev dependency), or undefined when neither is there. */
export function packageDocsDir(): string | undefined {
  if (existsSync(join(VENDORED_DOCS_DIR, 'swagger-ui-bundle.js'))) return VENDORED_DOCS_DIR;
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
