/**
 * The Node.js lines the packages claim (engines: >= 22.12): the packed packages are
 * installed and run under each (node-lines.ts fetches their binaries), and the CI workflow's
 * matrix names the same lines (workflows.unit.test.ts). A constant alone, so that a unit
 * test can read it without the system tier's helpers.
 */
export const NODE_LINES = [22, 24, 26] as const;
