/**
 * @module worker/node-version
 * The Node.js line the packages need: 22.12 or newer (their `engines`, and what the image
 * build checks). Below it the runtime still runs, as it did silently on Node 20 while the
 * image build refused that same Node; now it says so once at start, in every mode, so the
 * author learns it before the image build does.
 */
import type { Logger } from 'pino';

/** The oldest Node.js the packages need. */
export const MIN_NODE = { major: 22, minor: 12 } as const;

/** Set to `off` to leave the warning out (a CI that runs an older Node on purpose). */
export const NODE_WARNING_ENV = 'SW_NODE_VERSION_WARNING';

/** The warning for Node `version` (`process.versions.node`), or undefined when it is new enough. */
export function nodeVersionWarning(version: string): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10));
  if (major > MIN_NODE.major || (major === MIN_NODE.major && minor >= MIN_NODE.minor)) return undefined;
  return `Node.js ${version} is older than ${MIN_NODE.major}.${MIN_NODE.minor}, which serverless-worker needs (its engines; the image build refuses it): it runs here, untested; use Node ${MIN_NODE.major}.${MIN_NODE.minor} or newer (the image runs 24)`;
}

let warned = false;

/**
 * Warn once per process when this Node is too old. A worker `--serve-api` supervises
 * (SW_SUPERVISOR_PID set) leaves it to its parent, which said it already.
 */
export function warnOnOldNode(logger: Logger, env: NodeJS.ProcessEnv = process.env, version: string = process.versions.node): void {
  if (warned || env[NODE_WARNING_ENV] === 'off' || env.SW_SUPERVISOR_PID !== undefined) return;
  const warning = nodeVersionWarning(version);
  if (warning === undefined) return;
  warned = true;
  logger.warn({ node: version, needs: `>=${MIN_NODE.major}.${MIN_NODE.minor}` }, warning);
}
