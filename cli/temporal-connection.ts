import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { loadDataConverter } from './data-converter-flag.js';
import { temporalSettings } from './settings.js';
import { UsageError } from './usage-error.js';

/** How long a command waits for the Temporal server before it gives up. */
export const CONNECT_TIMEOUT_MS = 5_000;

export function unreachable(address: string, error: unknown): UsageError {
  const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
  return new UsageError(
    `cannot reach the Temporal server at ${address} (${reason}); start one (temporal server start-dev) or set TEMPORAL_ADDRESS`,
  );
}

/** What {@link connectClient} takes besides the address and namespace. */
export interface ClientExtras {
  /** TLS, API key and gRPC metadata (from the profile and the `TEMPORAL_*` variables). */
  readonly connectionOptions?: ConnectionOptions;
  /** The workers' data converter (payload codecs), from `--data-converter`. */
  readonly dataConverter?: DataConverter;
}

/** A Temporal client for `address`/`namespace`; an unreachable server is a {@link UsageError}. */
export async function connectClient(address: string, namespace: string, extras: ClientExtras = {}): Promise<Client> {
  try {
    const connection = await Connection.connect({
      ...extras.connectionOptions,
      address,
      connectTimeout: CONNECT_TIMEOUT_MS,
    });
    return new Client({
      connection,
      namespace,
      ...(extras.dataConverter !== undefined ? { dataConverter: extras.dataConverter } : {}),
    });
  } catch (error) {
    throw unreachable(address, error);
  }
}

/**
 * The client a command's flags describe (`--address`, `--namespace`, `--profile`, the
 * `TEMPORAL_*` variables, `--data-converter`), with the settings it was made from.
 */
export async function clientFromFlags(
  command: string,
  flags: { address?: string; namespace?: string; profile?: string; 'task-queue'?: string; 'data-converter'?: string },
): Promise<{ client: Client; settings: ReturnType<typeof temporalSettings> }> {
  const settings = temporalSettings(flags);
  const dataConverter = await loadDataConverter(command, flags['data-converter']);
  const client = await connectClient(settings.address, settings.namespace, {
    connectionOptions: settings.connectionOptions,
    ...(dataConverter !== undefined ? { dataConverter } : {}),
  });
  return { client, settings };
}

/** True when a Temporal frontend answers at `address` within `timeoutMs`. */
export async function temporalReachable(
  address: string,
  timeoutMs = 1_500,
  connectionOptions: ConnectionOptions = {},
): Promise<boolean> {
  try {
    const connection = await Connection.connect({ ...connectionOptions, address, connectTimeout: timeoutMs });
    await connection.close();
    return true;
  } catch {
    return false;
  }
}
