import { z } from 'zod';
import { defineEffectTool, effectFenceOf, effectKeyOf, inputFingerprint } from '@chamvi/temporal';
import { idempotentFetch } from '@chamvi/temporal/strategies';

/** What the ticket tool needs. */
export interface TicketToolConfig {
  /** Base URL of the ticket API, e.g. `http://127.0.0.1:8080` (test/fixtures/idempotent-server.ts). */
  readonly baseUrl: string;
  /** Extra headers (authorization). Kept in the worker, never in run state. */
  readonly headers?: Record<string, string>;
  /**
   * The header in which the API accepts a fencing token, if it documents one: the claim's fence
   * (`effectFenceOf`) is sent there, so the API can refuse the late request of an attempt that was
   * paused past its lease even after it has forgotten the key. Default: none.
   */
  readonly fenceHeader?: string;
  /** The `fetch` to use (a proxy agent, instrumentation). Default: the global `fetch`. */
  readonly fetch?: typeof fetch;
}

const input = z.object({
  title: z.string().min(1).describe('Ticket title'),
  priority: z.enum(['low', 'normal', 'high']).default('normal'),
});

/** The ticket the API answered with (the first answer, replayed on a repeat). */
export interface TicketResult {
  readonly id: number;
  readonly title: string;
  readonly priority: string;
}

/**
 * An effect tool that opens a ticket through an HTTP API supporting `Idempotency-Key`: the effect
 * key (`effectKeyOf(options)`) is sent as that header, so after a crash (ticket created, answer
 * lost) the retry gets the first answer replayed and no second ticket; an attempt paused past its
 * lease that sends its request late gets the replay too, as long as the API remembers the key.
 * With `fenceHeader`, the claim's fence is sent as well, and an API that checks it refuses the
 * late request with 412 (`EffectFenceRefusedError`) even after forgetting the key. No
 * `alreadyApplied` is needed. A 409 (still in progress) fails retryably, a 422 (key reused with
 * another request) fails for good; see `idempotentFetch`.
 *
 * The key is `<runId>:ticket:<sha256 of the canonical input>`: the same call in the same run is one
 * ticket, and the API, which logs keys, learns nothing of the input from it.
 */
export function createTicketTool(config: TicketToolConfig) {
  return defineEffectTool({
    description: 'Opens a ticket in the issue tracker of the operations team.',
    inputSchema: input,
    effectKey: (call, ctx) => ticketEffectKey(ctx.run.runId, call),
    execute: async (call, options): Promise<TicketResult> => {
      const response = await idempotentFetch(
        new URL('/tickets', config.baseUrl),
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...config.headers },
          body: JSON.stringify(call),
          signal: options.context.run.signal,
        },
        effectKeyOf(options),
        {
          ...(config.fetch ? { fetch: config.fetch } : {}),
          ...(config.fenceHeader ? { fenceHeader: config.fenceHeader, fence: effectFenceOf(options) } : {}),
        },
      );
      return (await response.json()) as TicketResult;
    },
  });
}

/** `<runId>:ticket:<sha256 of the canonical input>`. */
export function ticketEffectKey(runId: string, call: z.infer<typeof input>): string {
  return `${runId}:ticket:${inputFingerprint(call)}`;
}
