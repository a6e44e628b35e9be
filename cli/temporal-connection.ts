import { Client, Connection } from '@temporalio/client';
import { UsageError } from './usage-error.js';

/** How long a command waits for the Temporal server before it gives up. */
export const CONNECT_TIMEOUT_MS = 5_000;

export function unreachable(address: string, error: unknown): UsageError {
  const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
  return new UsageError(
    `cannot reach the Temporal server at ${address} (${reason}); start one (chamvi dev, or temporal server start-dev) or set TEMPORAL_ADDRESS`,
  );
}

/** A Temporal client for `address`/`namespace`; an unreachable server is a {@link UsageError}. */
export async function connectClient(address: string, namespace: string): Promise<Client> {
  try {
    const connection = await Connection.connect({ address, connectTimeout: CONNECT_TIMEOUT_MS });
    return new Client({ connection, namespace });
  } catch (error) {
    throw unreachable(address, error);
  }
}

/** True when a Temporal frontend answers at `address` within `timeoutMs`. */
export async function temporalReachable(address: string, timeoutMs = 1_500): Promise<boolean> {
  try {
    const connection = await Connection.connect({ address, connectTimeout: timeoutMs });
    await connection.close();
    return true;
  } catch {
    return false;
  }
}
