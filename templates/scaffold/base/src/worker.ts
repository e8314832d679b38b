/**
 * The worker's entry point. Started without the platform's variables it runs
 * test_input.json once and exits (npm run dry-run); with --serve-api it serves the
 * local queue API (npm run dev); on the platform it takes jobs. `npm run build`
 * bundles this file into dist/worker.js for the image.
 */
import { serve } from 'serverless-worker';
import { handler, options } from './handler.js';

await serve(handler, options);
