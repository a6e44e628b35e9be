/**
 * The environment variables the CLI reads, and their defaults. docker-compose.yml's worker
 * service sets the same names (a test keeps the two in step).
 */
export const ENV = {
  /** host:port of the Temporal frontend. */
  address: 'TEMPORAL_ADDRESS',
  /** Temporal namespace. */
  namespace: 'TEMPORAL_NAMESPACE',
  /** Effect store: an SQLite path or `sqlite:` URL, or a `postgres://` URL. */
  store: 'CHAMVI_STORE',
  /** Task queue the worker polls and runs are started on. */
  taskQueue: 'CHAMVI_TASK_QUEUE',
  /** Module exporting the agents `chamvi worker` serves (instead of `--agents`). */
  agents: 'CHAMVI_AGENTS',
} as const;

export const DEFAULT_ADDRESS = 'localhost:7233';
export const DEFAULT_NAMESPACE = 'default';
export const DEFAULT_TASK_QUEUE = 'chamvi';
/** Where `chamvi dev` keeps its Temporal database and SQLite effect store (git-ignored). */
export const STATE_DIR = '.chamvi';

/** A flag's value, else the env var's (empty counts as unset), else the fallback. */
export function setting(flag: string | undefined, envVar: string, fallback: string): string;
export function setting(flag: string | undefined, envVar: string, fallback?: undefined): string | undefined;
export function setting(flag: string | undefined, envVar: string, fallback?: string): string | undefined {
  if (flag !== undefined && flag !== '') return flag;
  const fromEnv = process.env[envVar];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  return fallback;
}

/** The Temporal address, namespace and task queue from flags and env. */
export function temporalSettings(flags: { address?: string; namespace?: string; 'task-queue'?: string }): {
  address: string;
  namespace: string;
  taskQueue: string;
} {
  return {
    address: setting(flags.address, ENV.address, DEFAULT_ADDRESS),
    namespace: setting(flags.namespace, ENV.namespace, DEFAULT_NAMESPACE),
    taskQueue: setting(flags['task-queue'], ENV.taskQueue, DEFAULT_TASK_QUEUE),
  };
}
