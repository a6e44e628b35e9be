import { resolveTemporalConnection, type ResolvedTemporalConnection } from '../worker/connection-settings.js';
import { UsageError } from './usage-error.js';

/**
 * The environment variables the CLI reads, and their defaults. docker-compose.yml's worker
 * service sets the same names (a test keeps the two in step).
 */
export const ENV = {
  /** host:port of the Temporal frontend (over the profile's). */
  address: 'TEMPORAL_ADDRESS',
  /** Temporal namespace. */
  namespace: 'TEMPORAL_NAMESPACE',
  /** Effect store: an SQLite path or `sqlite:` URL, or a `postgres://` URL. */
  store: 'CHAMVI_STORE',
  /** Task queue the worker polls and runs are started on. */
  taskQueue: 'CHAMVI_TASK_QUEUE',
  /** Module exporting the agents `chamvi worker` serves (instead of `--agents`). */
  agents: 'CHAMVI_AGENTS',
  /** Run stream (`chamvi worker` writes, `chamvi run --wait` reads): a store spec, or `store` for the effect store's. */
  stream: 'CHAMVI_STREAM',
} as const;

export const DEFAULT_ADDRESS = 'localhost:7233';
export const DEFAULT_NAMESPACE = 'default';
export const DEFAULT_TASK_QUEUE = 'chamvi';

/** A flag's value, else the env var's (empty counts as unset), else the fallback. */
export function setting(flag: string | undefined, envVar: string, fallback: string): string;
export function setting(flag: string | undefined, envVar: string, fallback?: undefined): string | undefined;
export function setting(flag: string | undefined, envVar: string, fallback?: string): string | undefined {
  if (flag !== undefined && flag !== '') return flag;
  const fromEnv = process.env[envVar];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  return fallback;
}

/**
 * The Temporal connection, namespace and task queue from flags and env: `--address`/`--namespace`
 * win, then `TEMPORAL_ADDRESS`/`TEMPORAL_NAMESPACE` and the other `TEMPORAL_*` variables, then the
 * `@temporalio/envconfig` profile (`--profile`, else `TEMPORAL_PROFILE`, else `default`, from
 * `TEMPORAL_CONFIG_FILE` or the user's `temporalio/temporal.toml`), then the defaults.
 */
export function temporalSettings(flags: {
  address?: string;
  namespace?: string;
  profile?: string;
  'task-queue'?: string;
}): {
  address: string;
  namespace: string;
  taskQueue: string;
  connectionOptions: ResolvedTemporalConnection['connectionOptions'];
} {
  let resolved: ResolvedTemporalConnection;
  try {
    resolved = resolveTemporalConnection({
      ...(flags.address !== undefined && flags.address !== '' ? { address: flags.address } : {}),
      ...(flags.namespace !== undefined && flags.namespace !== '' ? { namespace: flags.namespace } : {}),
      ...(flags.profile !== undefined && flags.profile !== '' ? { profile: flags.profile } : {}),
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new UsageError(
      `cannot read the Temporal connection profile (${reason}); check --profile and TEMPORAL_CONFIG_FILE`,
    );
  }
  return {
    address: resolved.address,
    namespace: resolved.namespace,
    taskQueue: setting(flags['task-queue'], ENV.taskQueue, DEFAULT_TASK_QUEUE),
    connectionOptions: resolved.connectionOptions,
  };
}
