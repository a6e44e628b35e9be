import { InvalidEffectStoreSpecError } from '../src/errors/errors.js';
import { createEffectStore, type ManagedEffectStore } from '../src/stores/index.js';
import { parseStoreSpec } from '../src/stores/store-spec.js';
import { ENV, setting } from './settings.js';
import { UsageError } from './usage-error.js';

/**
 * Opens the effect store named by `--store` or CHAMVI_STORE (an SQLite path or `sqlite:` URL, or a
 * `postgres://` URL) and checks it answers, so a malformed spec or an unreachable database is one
 * clear line (exit 2) before any work starts.
 */
export async function openStore(command: string, flag: string | undefined): Promise<ManagedEffectStore> {
  const spec = setting(flag, ENV.store);
  if (spec === undefined) {
    throw new UsageError(`${command}: --store is required (or set ${ENV.store}): an SQLite path or a postgres:// URL`);
  }
  let store: ManagedEffectStore;
  try {
    const parsed = parseStoreSpec(spec);
    if (parsed.kind === 'memory') {
      throw new UsageError(
        `${command}: the memory store lives in one process only; use an SQLite path or a postgres:// URL`,
      );
    }
    store = createEffectStore(spec);
  } catch (error) {
    if (error instanceof InvalidEffectStoreSpecError) throw new UsageError(`${command}: bad --store: ${error.message}`);
    throw error;
  }
  try {
    await store.get('chamvi:cli:probe');
  } catch (error) {
    await store.close().catch(() => undefined);
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new UsageError(`${command}: cannot open the effect store (${reason})`);
  }
  return store;
}
