import { ChamviError } from '../src/errors/chamvi-error.js';

/**
 * A test environment could not start its Temporal server: no binary was found where the testing
 * kit looks (the env var, then `PATH`, then `./.tools/py/bin`), and the Temporal SDK's download
 * of one failed too (offline, a proxy, a firewall). The message names each place and the fix.
 * Not retryable: install the binary (or set the env var) and run the tests again.
 */
export class TemporalServerNotFoundError extends ChamviError {
  static override readonly errorName = 'TemporalServerNotFoundError';
}
