/**
 * The part of a NATS JetStream client that {@link publishOnce} uses. The `nats` package's
 * `JetStreamClient` (`nc.jetstream()`) fits, so library code needs no runtime import of `nats`.
 * @public
 */
export interface JetStreamPublisher {
  /** Publishes `data` on `subject`; `msgID` becomes the `Nats-Msg-Id` header the stream dedupes by. */
  publish(
    subject: string,
    data?: Uint8Array,
    options?: { msgID?: string },
  ): Promise<{ readonly duplicate: boolean; readonly seq: number; readonly stream: string }>;
}

/** How {@link publishOnce} ended. @public */
export interface PublishOnceResult {
  /** `published`: this call stored the message; `duplicate`: the stream already had this message id. */
  readonly status: 'published' | 'duplicate';
  /** The stream that stored the message. */
  readonly stream: string;
  /** Sequence number of the stored message (for a duplicate, the original's). */
  readonly seq: number;
}

/**
 * Publishes to JetStream with the effect key as message id (`Nats-Msg-Id`). The stream drops a
 * message whose id it has seen within its duplicate window and acknowledges it with
 * `duplicate: true` (and the first message's `seq`), which counts as already applied. So a retry
 * after a crash (publish done, result lost) stores nothing new, and so does the late publish of an
 * attempt that was paused past its lease while another attempt published; no `alreadyApplied` is
 * needed.
 *
 * The guarantee is bounded by the stream's `duplicate_window` (default 2 minutes, and never more
 * than the stream's `max_age`, which the server enforces), exactly:
 * - the window runs from the moment the stream stored the **first** message with this id (the
 *   server's clock); a duplicate within it does not extend it;
 * - a publish with the same id within the window is not stored, even if the first message has
 *   since been deleted or the stream purged;
 * - a publish after the window is stored again: a second application;
 * - ids are remembered per stream (across all its subjects), not per subject or server-wide.
 *
 * So size `duplicate_window` beyond the longest time from the first publish to the last retry or
 * late publish of the same call (Temporal's retry policy, plus how long a process can be paused),
 * or add an `alreadyApplied` that looks the message up when retries can come later. The claim's
 * fence is not used: JetStream's publish preconditions compare stream sequences, not a caller's
 * number.
 * @public
 */
export async function publishOnce(
  js: JetStreamPublisher,
  subject: string,
  data: Uint8Array,
  key: string,
): Promise<PublishOnceResult> {
  if (typeof key !== 'string' || key === '') throw new TypeError('publishOnce: the key must be a non-empty string.');
  const ack = await js.publish(subject, data, { msgID: key });
  return { status: ack.duplicate ? 'duplicate' : 'published', stream: ack.stream, seq: ack.seq };
}
