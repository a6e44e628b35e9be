import { z } from 'zod';
import { defineEffectTool, effectKeyOf, inputFingerprint } from '@chamvi/temporal';
import { publishOnce, type JetStreamPublisher, type PublishOnceResult } from '@chamvi/temporal/strategies';

/** What the notification tool needs. */
export interface NatsNotifyToolConfig {
  /**
   * The JetStream client, or a function that returns it (connect lazily in the worker):
   * `async () => (await connect({ servers })).jetstream()` from the `nats` package.
   */
  readonly jetstream: JetStreamPublisher | (() => Promise<JetStreamPublisher>);
  /**
   * Subject to publish to; a stream must capture it, with a `duplicate_window` longer than the
   * longest time from the first publish to the last retry or late publish of the same call.
   */
  readonly subject: string;
}

const input = z.object({
  text: z.string().min(1).describe('Notification text'),
  severity: z.enum(['info', 'warning', 'critical']).default('info'),
});

/**
 * An effect tool that publishes a notification to NATS JetStream at most once per effect key,
 * **within the stream's `duplicate_window`**: the key (`effectKeyOf(options)`) is the message id
 * (`Nats-Msg-Id`), so the stream drops a repeat that arrives within the window after it stored
 * the first message with that id, and acknowledges it with `duplicate: true`. After a crash the
 * retry publishes again and the stream deduplicates; an attempt paused past its lease that
 * publishes late is deduplicated the same way. No `alreadyApplied` is needed as long as every
 * retry and every late publish falls within the window (see `publishOnce`).
 *
 * The key is `<runId>:notify:<sha256 of the canonical input>` (no raw text in the message id).
 */
export function createNatsNotifyTool(config: NatsNotifyToolConfig) {
  let client: Promise<JetStreamPublisher> | undefined;
  const js = () =>
    (client ??= typeof config.jetstream === 'function' ? config.jetstream() : Promise.resolve(config.jetstream));
  return defineEffectTool({
    description: 'Sends a notification to the on-call channel.',
    inputSchema: input,
    effectKey: (call, ctx) => notifyEffectKey(ctx.run.runId, call),
    execute: async (call, options): Promise<PublishOnceResult> => {
      const data = new TextEncoder().encode(JSON.stringify({ ...call, run: options.context.run.runId }));
      return publishOnce(await js(), config.subject, data, effectKeyOf(options));
    },
  });
}

/** `<runId>:notify:<sha256 of the canonical input>`, the default key's form with a fixed tool name. */
export function notifyEffectKey(runId: string, call: z.infer<typeof input>): string {
  return `${runId}:notify:${inputFingerprint(call)}`;
}
