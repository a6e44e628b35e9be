import { z } from 'zod';
import {
  defineEffectTool,
  inputFingerprint,
  publishOnce,
  type JetStreamPublisher,
  type PublishOnceResult,
} from '../../src/index.js';

/** What the notification tool needs. */
export interface NatsNotifyToolConfig {
  /**
   * The JetStream client, or a function that returns it (connect lazily in the worker):
   * `async () => (await connect({ servers })).jetstream()` from the `nats` package.
   */
  readonly jetstream: JetStreamPublisher | (() => Promise<JetStreamPublisher>);
  /** Subject to publish to; a stream must capture it (with a duplicate window beyond the retry horizon). */
  readonly subject: string;
}

const input = z.object({
  text: z.string().min(1).describe('Notification text'),
  severity: z.enum(['info', 'warning', 'critical']).default('info'),
});

/**
 * An effect tool that publishes a notification to NATS JetStream at most once per effect key:
 * the key is the message id (`Nats-Msg-Id`), so the stream drops a repeat within its duplicate
 * window and acknowledges it with `duplicate: true`. After a crash the retry publishes again and
 * the stream deduplicates; no `alreadyApplied` is needed (within the window).
 *
 * The key must be known inside `execute`, so it is built by `effectKey` and recomputed from the
 * same data: `<runId>:notify:<sha256 of the canonical input>` (no raw text in the message id).
 */
export function createNatsNotifyTool(config: NatsNotifyToolConfig) {
  let client: Promise<JetStreamPublisher> | undefined;
  const js = () =>
    (client ??= typeof config.jetstream === 'function' ? config.jetstream() : Promise.resolve(config.jetstream));
  return defineEffectTool({
    description: 'Sends a notification to the on-call channel.',
    inputSchema: input,
    effectKey: (call, ctx) => notifyEffectKey(ctx.run.runId, call),
    execute: async (call, { context }): Promise<PublishOnceResult> => {
      const key = notifyEffectKey(context.run.runId, call);
      const data = new TextEncoder().encode(JSON.stringify({ ...call, run: context.run.runId }));
      return publishOnce(await js(), config.subject, data, key);
    },
  });
}

/** `<runId>:notify:<sha256 of the canonical input>`, the default key's form with a fixed tool name. */
export function notifyEffectKey(runId: string, call: z.infer<typeof input>): string {
  return `${runId}:notify:${inputFingerprint(call)}`;
}
