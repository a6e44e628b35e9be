import { Client, Connection, type ClientOptions, type ConnectionOptions } from '@temporalio/client';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { createRequire } from 'node:module';
import { MissingPeerDependencyError } from '../src/errors/errors.js';

/** Where a Temporal connection's settings come from; every field is optional. @public */
export interface TemporalConnectionSettings {
  /**
   * The `@temporalio/envconfig` profile to use. Default: `TEMPORAL_PROFILE`, else `default` (a
   * missing `default` profile is no error; a missing named one is).
   */
  readonly profile?: string;
  /**
   * The TOML config file. Default: `TEMPORAL_CONFIG_FILE`, else the user's
   * `<config dir>/temporalio/temporal.toml` (`~/.config/temporalio/temporal.toml` on Linux),
   * read only when it exists.
   */
  readonly configFile?: string;
  /** The frontend `host:port`; wins over the profile and `TEMPORAL_ADDRESS`. */
  readonly address?: string;
  /** The namespace; wins over the profile and `TEMPORAL_NAMESPACE`. */
  readonly namespace?: string;
  /** The environment to read (`TEMPORAL_*`). Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** A resolved connection: what to connect to and how, and the namespace to use. */
export interface ResolvedTemporalConnection {
  readonly address: string;
  readonly namespace: string;
  /**
   * Options for `Connection.connect` (client) and `NativeConnection.connect` (worker): the address,
   * TLS (on when the profile has a TLS table or an API key), the API key, gRPC metadata.
   */
  readonly connectionOptions: ConnectionOptions & NativeConnectionOptions;
}

/** The address and namespace used when nothing sets them (the local dev server's). */
export const DEFAULT_TEMPORAL_ADDRESS = 'localhost:7233';
export const DEFAULT_TEMPORAL_NAMESPACE = 'default';

interface EnvConfigModule {
  loadClientConnectConfig(options: {
    profile?: string;
    configSource?: { path: string };
    overrideEnvVars?: Record<string, string>;
  }): { namespace?: string; connectionOptions: NativeConnectionOptions };
}

/**
 * Resolves the connection to Temporal the way Temporal's own CLI and SDKs do, through
 * `@temporalio/envconfig`: a profile of the TOML config file (address, namespace, TLS client
 * certificates, API key, gRPC metadata), overridden by the `TEMPORAL_*` environment variables
 * (`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS*`, ...),
 * overridden by `address`/`namespace` given here. Without `@temporalio/envconfig` installed (an
 * optional peer) only `TEMPORAL_ADDRESS` and `TEMPORAL_NAMESPACE` are read, and asking for a
 * profile or config file throws `MissingPeerDependencyError`.
 */
export function resolveTemporalConnection(settings: TemporalConnectionSettings = {}): ResolvedTemporalConnection {
  const env = settings.env ?? process.env;
  const envconfig = loadEnvConfig(
    settings.profile !== undefined ||
      settings.configFile !== undefined ||
      nonEmpty(env['TEMPORAL_PROFILE']) ||
      nonEmpty(env['TEMPORAL_CONFIG_FILE']),
  );
  let loaded: { namespace?: string; connectionOptions: NativeConnectionOptions };
  if (envconfig === undefined) {
    loaded = {
      ...(nonEmpty(env['TEMPORAL_NAMESPACE']) ? { namespace: env['TEMPORAL_NAMESPACE'] } : {}),
      connectionOptions: nonEmpty(env['TEMPORAL_ADDRESS']) ? { address: env['TEMPORAL_ADDRESS'] } : {},
    };
  } else {
    loaded = envconfig.loadClientConnectConfig({
      ...(settings.profile !== undefined ? { profile: settings.profile } : {}),
      ...(settings.configFile !== undefined ? { configSource: { path: settings.configFile } } : {}),
      // An empty variable counts as unset, as the CLI's other settings do.
      overrideEnvVars: Object.fromEntries(
        Object.entries(env).filter((entry): entry is [string, string] => nonEmpty(entry[1])),
      ),
    });
  }
  const options = withoutUndefined(loaded.connectionOptions);
  const address = settings.address ?? options.address ?? DEFAULT_TEMPORAL_ADDRESS;
  const namespace = settings.namespace ?? (nonEmpty(loaded.namespace) ? loaded.namespace : DEFAULT_TEMPORAL_NAMESPACE);
  return { address, namespace, connectionOptions: { ...options, address } };
}

/** What {@link createAgentClient} takes: the connection settings, and the client's own options. @public */
export type AgentClientOptions = TemporalConnectionSettings &
  Omit<ClientOptions, 'connection' | 'namespace'> & {
    /** Give up connecting after this many ms. Default 10 000. */
    readonly connectTimeout?: number;
  };

/**
 * A Temporal client connected as {@link resolveTemporalConnection} says (profile, env vars,
 * explicit settings), with your client options (a `dataConverter` with payload codecs,
 * interceptors, plugins). Close it with `client.connection.close()`.
 * @public
 */
export async function createAgentClient(options: AgentClientOptions = {}): Promise<Client> {
  const { profile, configFile, address, namespace, env, connectTimeout, ...clientOptions } = options;
  const resolved = resolveTemporalConnection({
    ...(profile !== undefined ? { profile } : {}),
    ...(configFile !== undefined ? { configFile } : {}),
    ...(address !== undefined ? { address } : {}),
    ...(namespace !== undefined ? { namespace } : {}),
    ...(env !== undefined ? { env } : {}),
  });
  const connection = await Connection.connect({
    ...resolved.connectionOptions,
    connectTimeout: connectTimeout ?? 10_000,
  });
  return new Client({ ...clientOptions, connection, namespace: resolved.namespace });
}

function loadEnvConfig(required: boolean): EnvConfigModule | undefined {
  try {
    return createRequire(import.meta.url)('@temporalio/envconfig') as EnvConfigModule;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw error;
    if (required)
      throw new MissingPeerDependencyError({
        packageName: '@temporalio/envconfig',
        feature: 'Temporal connection profiles (TOML config files)',
        cause: error,
      });
    return undefined;
  }
}

function nonEmpty(value: string | undefined): value is string {
  return value !== undefined && value !== '';
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
