import { resolve } from 'node:path';
import { createEffectStore, type ManagedEffectStore } from '../src/stores/create-effect-store.js';
import type { IEffectStore } from '../src/stores/effect-store.js';
import { parseStoreSpec } from '../src/stores/store-spec.js';
import { ChamviError } from '../src/errors/chamvi-error.js';

/** How long the start-up check waits for the store's answer, in ms. */
export const STORE_CHECK_TIMEOUT_MS = 15_000;

/**
 * The worker's effect store could not be opened when the worker started (a folder that cannot be
 * created, a file that is not a database, a PostgreSQL server that is down or refuses the login).
 * The worker is not created: every effect call would fail and retry against it. The message names
 * the store (an SQLite file as an absolute path, a URL with its password masked). Not retryable as
 * it is: fix the store, then start the worker again.
 * @public
 */
export class EffectStoreUnavailableError extends ChamviError {
  /** {@inheritDoc ChamviError.errorName} */
  static override readonly errorName = 'EffectStoreUnavailableError';
}

/** A store the worker checks, and the name its messages give it. */
export interface CheckedStore {
  readonly store: IEffectStore;
  /** Whether the worker opened it from a spec (and so closes it when its run ends). */
  readonly owned: boolean;
  readonly description: string;
}

/**
 * Opens `store` (a spec goes through `createEffectStore`) and reads one key from it, so a store
 * that cannot be opened fails now, naming itself, instead of on every effect call later.
 * `read: false` skips the read (a spec is still turned into a store).
 *
 * @throws EffectStoreUnavailableError when the store throws or does not answer within `timeoutMs`.
 * @throws InvalidEffectStoreSpecError for a malformed spec.
 */
export async function checkEffectStore(
  store: IEffectStore | string,
  options: { readonly read?: boolean; readonly timeoutMs?: number } = {},
): Promise<CheckedStore> {
  const timeoutMs = options.timeoutMs ?? STORE_CHECK_TIMEOUT_MS;
  const checked: CheckedStore =
    typeof store === 'string'
      ? { store: createEffectStore(store), owned: true, description: describeSpec(store) }
      : { store, owned: false, description: describeStore(store) };
  if (options.read === false) return checked;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      checked.store.get('chamvi:worker:store-check'),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
      }),
    ]);
    return checked;
  } catch (error) {
    if (checked.owned) await (checked.store as ManagedEffectStore).close().catch(() => undefined);
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    const reason = maskInText(message ?? '');
    throw new EffectStoreUnavailableError(
      `The effect store ${checked.description} cannot be opened: ${reason}. The worker was not started: fix the ` +
        `store's path or URL (CHAMVI_STORE for \`chamvi worker\`) or make its database reachable, then start it again.`,
      { cause: error },
    );
  } finally {
    clearTimeout(timer);
  }
}

/** "SQLite file /abs/path", "PostgreSQL postgres://user:***@host/db", "memory". */
export function describeSpec(spec: string): string {
  const parsed = parseStoreSpec(spec);
  if (parsed.kind === 'memory') return 'memory:';
  if (parsed.kind === 'sqlite') return sqliteFile(parsed.path);
  return `PostgreSQL ${maskPassword(parsed.url)}`;
}

/** "SQLite file /abs/path" for an SQLite store, else the store's class in parentheses. */
export function describeStore(store: object): string {
  // SqliteEffectStore exposes its path; other stores say where they are in their own errors.
  const path = (store as { path?: unknown }).path;
  if (typeof path === 'string') return sqliteFile(path);
  return `(${store.constructor.name})`;
}

function sqliteFile(path: string): string {
  return path === ':memory:' ? 'SQLite :memory:' : `SQLite file ${resolve(path)}`;
}

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db`; a URL without a password as it is. */
export function maskPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    return maskInText(url);
  }
}

// A driver's message may quote a connection string; its password must not reach the logs.
function maskInText(text: string): string {
  return text.replace(/\/\/([^:/@\s]*):[^@/\s]*@/g, '//$1:***@');
}
