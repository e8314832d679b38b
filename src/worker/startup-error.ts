/**
 * @module worker/startup-error
 * How a worker that cannot start says why: the code and the message on one line, the
 * fix from the error registry on the next, and a hint where the stack is. The stack
 * itself only with `--verbose` or a debug log level (SW_LOG_LEVEL / LOG_LEVEL).
 */
import { errorCodeEntry, isServerlessWorkerError } from '../job/index.js';

/** True when the stack of a start-up error should be shown: `--verbose`/`--rp_debugger`, or a debug/trace level. */
export function wantsStack(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, level?: string): boolean {
  if (argv.some((arg) => arg === '--verbose' || arg === '--rp_debugger')) return true;
  const requested = (level ?? (env.SW_LOG_LEVEL || undefined) ?? env.LOG_LEVEL ?? '').toLowerCase();
  return requested === 'debug' || requested === 'trace';
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * The text printed on stderr for `error` (ends with a newline): at most three lines
 * without `withStack`; the stack follows with it.
 */
export function formatStartupError(error: unknown, withStack: boolean): string {
  const lines: string[] = [];
  const message = error instanceof Error ? error.message : String(error);
  if (isServerlessWorkerError(error)) {
    lines.push(`serverless-worker: ${error.code}: ${oneLine(message)}`);
    lines.push(`  fix: ${errorCodeEntry(error.code)?.fix ?? 'see docs/reference/error-codes.md'}`);
  } else {
    const name = error instanceof Error ? error.name : 'Error';
    lines.push(`serverless-worker: the worker failed to start: ${name}: ${oneLine(message)}`);
    lines.push("  fix: this error is not one of serverless-worker's codes; it came from the worker's code or a library it calls");
  }
  const stack = error instanceof Error ? error.stack : undefined;
  // The cause's stack is the one that names the worker's own lines (init's error, say).
  const causeStack = error instanceof Error && error.cause instanceof Error ? error.cause.stack : undefined;
  if (withStack && stack) lines.push(stack, ...(causeStack ? [`caused by: ${causeStack}`] : []));
  else if (stack) lines.push('  (run with --verbose or SW_LOG_LEVEL=debug for the stack)');
  return `${lines.join('\n')}\n`;
}
