/**
 * The part of a NATS JetStream client that {@link publishOnce} uses. The `nats` package's
 * `JetStreamClient` (`nc.jetstream()`) fits, so library code needs no runtime import of `nats`.
 */
export interface JetStreamPublisher {
  publish(
    subject: string,
    data?: Uint8Array,
    options?: { msgID?: string },
  ): Promise<{ readonly duplicate: boolean; readonly seq: number; readonly stream: string }>;
}

/** How {@link publishOnce} ended. */
export interface PublishOnceResult {
  /** `published`: this call stored the message; `duplicate`: the stream already had this message id. */
  readonly status: 'published' | 'duplicate';
  readonly stream: string;
  /** Sequence number of the stored message (for a duplicate, the original's). */
  readonly seq: number;
}

/**
 * Publishes to JetStream with the effect key as message id (`Nats-Msg-Id`). The stream drops a
 * message whose id it has seen within its duplicate window and acknowledges it with
 * `duplicate: true`, which counts as already applied. So a retry after a crash (publish done,
 * result lost) stores nothing new, and no `alreadyApplied` is needed.
 *
 * The guarantee lasts as long as the stream's `duplicate_window` (default 2 minutes): size it
 * beyond your retry horizon (Temporal's activity retry policy), or add an `alreadyApplied` that
 * looks the message up when retries can come later.
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
