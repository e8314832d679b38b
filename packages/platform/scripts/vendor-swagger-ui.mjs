// `npm run build` (and so `npm pack`) of the platform package: Swagger UI's three files
// that /docs serves, and its licence, copied from swagger-ui-dist (a dev dependency) to
// vendor/swagger-ui/, which the package ships. Users then never install swagger-ui-dist,
// whose dependency @scarf/scarf runs an install-time telemetry script.
import { copyFile, mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FILES = [
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-32x32.png',
  'LICENSE',
  'NOTICE',
  'swagger-ui-bundle.js.LICENSE.txt',
  'swagger-ui-standalone-preset.js.LICENSE.txt',
];
const source = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const target = fileURLToPath(new URL('../vendor/swagger-ui/', import.meta.url));
await mkdir(target, { recursive: true });
for (const name of FILES) await copyFile(join(source, name), join(target, name));
