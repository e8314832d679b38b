/**
 * @module zod-version
 * The package needs zod 4, its peer dependency. npm refuses to install it beside zod 3,
 * but a forced install (`--force`, `--legacy-peer-deps`) would make the first schema
 * fail with "z.looseObject is not a function". Imported first by the package's entry
 * points, this says what is wrong instead.
 */
import * as z from 'zod';

if (typeof (z as { looseObject?: unknown }).looseObject !== 'function') {
  throw new Error(
    'serverless-worker needs zod 4 (peer dependency zod@^4.0.0), but the zod installed beside it is older; run `npm install zod@^4` in your project',
  );
}

export {};
