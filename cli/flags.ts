import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './usage-error.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Flags every command accepts. */
export const COMMON_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

/** Temporal connection flags. */
export const TEMPORAL_OPTIONS = {
  address: { type: 'string' },
  namespace: { type: 'string' },
  profile: { type: 'string' },
  'task-queue': { type: 'string' },
  'data-converter': { type: 'string' },
} as const satisfies Options;

/**
 * `node:util` parseArgs in strict mode, with its errors turned into one-line {@link UsageError}s
 * that name the command and point at `--help`.
 */
export function parseFlags<O extends Options>(command: string, args: string[], options: O, maxPositionals: number) {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...COMMON_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new UsageError(`${command}: ${message} (see chamvi ${command} --help)`);
  }
  if (parsed.positionals.length > maxPositionals) {
    throw new UsageError(
      `${command}: unexpected argument "${parsed.positionals[maxPositionals] ?? ''}" (see chamvi ${command} --help)`,
    );
  }
  return parsed;
}

/** Throws a UsageError unless `value` is set. */
export function required(command: string, name: string, value: string | undefined, hint = ''): string {
  if (value === undefined || value === '') {
    throw new UsageError(`${command}: ${name} is required${hint ? ` (${hint})` : ''} (see chamvi ${command} --help)`);
  }
  return value;
}
