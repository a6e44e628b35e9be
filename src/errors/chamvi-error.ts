import { failurePolicyOf } from './failure-policy.js';

const brand = Symbol.for('@chamvi/temporal/error');

/**
 * Base of every error this library throws.
 *
 * `name` is stable (it becomes the failure `type` when Temporal serialises the error), and
 * `isInstance` recognises errors from another realm or another copy of the library (jest
 * sandboxes, the workflow bundle), where `instanceof` fails. Sandbox-safe: workflow code may
 * construct these errors (and throw them as failures with `toFailure`).
 * @public
 */
export abstract class ChamviError extends Error {
  /** Stable name of the error class; subclasses override it. */
  static readonly errorName: string = 'ChamviError';

  /**
   * Whether retrying the same call may succeed. Read from the failure catalogue
   * (`FAILURE_CATALOGUE`, by `name`): `true` exactly when its entry says `retried: true` (a
   * subclass whose entry says `'by-status'` decides per instance). Temporal activities fail with a
   * `false` one non-retryably.
   */
  readonly retryable: boolean;

  /** The brand {@link ChamviError.isInstance} checks, on every error of this library. */
  declare readonly [brand]: true;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = (new.target as unknown as { readonly errorName: string }).errorName;
    this.retryable = failurePolicyOf(this.name)?.retried === true;
    Object.defineProperty(this, brand, { value: true, enumerable: false });
  }

  /**
   * Realm-safe type guard: matches any error carrying this library's brand and this class's
   * `errorName` (for `ChamviError` itself, any error of this library).
   */
  static isInstance<T>(this: { readonly errorName: string; readonly prototype: T }, error: unknown): error is T {
    if (typeof error !== 'object' || error === null) return false;
    if ((error as { [brand]?: unknown })[brand] !== true) return false;
    return this.errorName === 'ChamviError' || (error as Error).name === this.errorName;
  }
}
