import { InvalidEffectStoreSpecError } from '../src/errors/errors.js';
import { parseStoreSpec } from '../src/stores/store-spec.js';
import { ENV, setting } from './settings.js';
import { UsageError } from './usage-error.js';

/**
 * The run stream spec of `--stream` or CHAMVI_STREAM (`store`: CHAMVI_STORE's spec), checked;
 * `undefined` when neither is set.
 *
 * @throws UsageError for a malformed spec, or `store` without CHAMVI_STORE.
 */
export function streamSpecOf(command: string, flag: string | undefined): string | undefined {
  const spec = setting(flag, ENV.stream);
  if (spec !== 'store') return spec === undefined ? undefined : checkStreamSpec(command, spec);
  const store = setting(undefined, ENV.store);
  if (store === undefined)
    throw new UsageError(`${command}: --stream store needs ${ENV.store} (the effect store's spec)`);
  return checkStreamSpec(command, store);
}

/** `spec` when it is a store spec the stream can use; a {@link UsageError} otherwise. */
export function checkStreamSpec(command: string, spec: string): string {
  try {
    if (parseStoreSpec(spec).kind === 'memory') {
      throw new UsageError(
        `${command}: the memory stream lives in one process only; use an SQLite path or a postgres:// URL`,
      );
    }
  } catch (error) {
    if (error instanceof InvalidEffectStoreSpecError)
      throw new UsageError(`${command}: bad --stream: ${error.message}`);
    throw error;
  }
  return spec;
}
