/** How many approval tokens a run checks at once and fails to verify, before it rations the checks. */
export const VERIFICATION_BURST = 10;

/** After the burst, one more check per this many ms of workflow time (one an hour). */
export const VERIFICATION_REFILL_MS = 3_600_000;

/**
 * How many approval decisions a run still sends to `chamvi.verifyApproval`: a token bucket of
 * {@link VERIFICATION_BURST} checks, refilled by one every {@link VERIFICATION_REFILL_MS} of
 * workflow time. Each check costs the run about 11 history events; a check that verifies is given
 * back (it decides a call, which happens once per call), so only tokens that fail verification
 * (a forged signature, an expired token, a worker without the secret) use it up. Everything else
 * wrong with a token is refused before any check (see the gate's validator). So an approval
 * decision sent by anyone, however often, adds at most 10 checks plus one an hour to the history.
 *
 * Workflow state: `take` and `giveBack` run in update and signal handlers (replayed from
 * history); `available` is pure, for validators, which must not change state.
 */
export class VerificationBudget {
  private tokens = VERIFICATION_BURST;
  private at: number | undefined;

  /** Checks left at `now` (workflow time, ms), fractions included. */
  available(now: number): number {
    const elapsed = this.at === undefined ? 0 : Math.max(0, now - this.at);
    return Math.min(VERIFICATION_BURST, this.tokens + elapsed / VERIFICATION_REFILL_MS);
  }

  /** When (workflow time, ms) the next check is possible, once the budget is used up. */
  nextAt(now: number): number {
    return now + Math.ceil((1 - this.available(now)) * VERIFICATION_REFILL_MS);
  }

  /** Takes one check; `false`, taking nothing, when none is left. */
  take(now: number): boolean {
    this.tokens = this.available(now);
    this.at = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Gives back a check that verified. */
  giveBack(): void {
    this.tokens = Math.min(VERIFICATION_BURST, this.tokens + 1);
  }
}
