/**
 * @module build/dashboard-assets
 * The dashboard's files beside a bundle. A worker run with `--serve-api` serves the
 * dashboard at /ui; its page, modules and the browser builds of Preact, htm and uPlot
 * are files, not code esbuild can bundle, and the image has no node_modules. So
 * `serverless-worker build` copies them to `<outdir>/sw-dashboard/` (vendor files
 * under `vendor/`, by the names the page imports), where the dashboard looks first
 * (harness/dashboard/static-files.ts). About 210 KiB, read only when /ui is asked for.
 * Swagger UI's files for /docs go to `sw-dashboard/swagger/` (about 2.2 MiB, read only
 * when /docs is asked for; harness/openapi/docs-assets.ts).
 */
import { copyFile, mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BUNDLED_DOCS_FOLDER, DOCS_ASSETS, packageDocsDir } from '../harness/openapi/docs-assets.js';
import { BUNDLED_UI_FOLDER, PAGE_FILE_NAME, UI_DIR, VENDOR_FILES, packageVendorPath } from '../harness/dashboard/static-files.js';

/** Copy the dashboard's files into `<outdir>/sw-dashboard/`; answers each file written with its size. */
export async function copyDashboardAssets(outdir: string, uiDir: string = UI_DIR): Promise<{ path: string; bytes: number }[]> {
  const target = join(outdir, BUNDLED_UI_FOLDER);
  await mkdir(join(target, 'vendor'), { recursive: true });
  const copies: Array<readonly [string, string]> = [];
  for (const name of await readdir(uiDir)) {
    if (PAGE_FILE_NAME.test(name)) copies.push([join(uiDir, name), join(target, name)]);
  }
  for (const name of Object.keys(VENDOR_FILES)) copies.push([packageVendorPath(name), join(target, 'vendor', name)]);
  const docsDir = packageDocsDir();
  if (docsDir !== undefined) {
    await mkdir(join(target, BUNDLED_DOCS_FOLDER), { recursive: true });
    for (const name of Object.keys(DOCS_ASSETS)) copies.push([join(docsDir, name), join(target, BUNDLED_DOCS_FOLDER, name)]);
  }
  return Promise.all(
    copies.map(async ([from, to]) => {
      await copyFile(from, to);
      return { path: to, bytes: (await stat(to)).size };
    }),
  );
}
