/**
 * A problem the user can fix (a bad flag, a malformed store URL, an unreachable server). The CLI
 * prints its message as one line on stderr, without a stack trace, and exits with code 2.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  /** The process exit code; 2 for every usage and environment problem. */
  readonly exitCode: number;

  constructor(message: string, exitCode = 2) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** The one line printed for an error that ends a command. */
export function errorLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return `chamvi: ${message.split('\n')[0] ?? message}`;
}

/**
 * Ends the process for an error: a {@link UsageError} prints one line and exits with its code
 * (2); anything else prints one line too (the stack with CHAMVI_DEBUG=1) and exits with 1.
 */
export function exitWithError(error: unknown): never {
  process.stderr.write(`${errorLine(error)}\n`);
  if (!(error instanceof UsageError) && process.env['CHAMVI_DEBUG'] === '1' && error instanceof Error) {
    process.stderr.write(`${error.stack ?? ''}\n`);
  }
  process.exit(error instanceof UsageError ? error.exitCode : 1);
}
