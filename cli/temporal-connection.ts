import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { UsageError } from './usage-error.js';

/** How long a command waits for the Temporal server before it gives up. */
export const CONNECT_TIMEOUT_MS = 5_000;

function unreachable(address: string, error: unknown): UsageError {
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

/** A worker connection to `address`; an unreachable server is a {@link UsageError}. */
export async function connectWorker(address: string): Promise<NativeConnection> {
  const connecting = NativeConnection.connect({ address });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`)), CONNECT_TIMEOUT_MS);
  });
  try {
    return await Promise.race([connecting, timeout]);
  } catch (error) {
    connecting
      .then(
        (c) => c.close(),
        () => undefined,
      )
      .catch(() => undefined);
    throw unreachable(address, error);
  } finally {
    clearTimeout(timer);
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
