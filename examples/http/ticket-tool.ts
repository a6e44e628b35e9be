import { z } from 'zod';
import { defineEffectTool, idempotentFetch, inputFingerprint } from '../../src/index.js';

/** What the ticket tool needs. */
export interface TicketToolConfig {
  /** Base URL of the ticket API, e.g. `http://127.0.0.1:8080` (testing/http/idempotent-server.ts). */
  readonly baseUrl: string;
  /** Extra headers (authorization). Kept in the worker, never in run state. */
  readonly headers?: Record<string, string>;
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
 * key is sent as that header, so after a crash (ticket created, answer lost) the retry gets the
 * first answer replayed and no second ticket. No `alreadyApplied` is needed. A 409 (still in
 * progress) fails retryably, a 422 (key reused with another request) fails for good; see
 * `idempotentFetch`.
 *
 * The key is `<runId>:ticket:<sha256 of the canonical input>`: the same call in the same run is one
 * ticket, and the API, which logs keys, learns nothing of the input from it.
 */
export function createTicketTool(config: TicketToolConfig) {
  return defineEffectTool({
    description: 'Opens a ticket in the issue tracker of the operations team.',
    inputSchema: input,
    effectKey: (call, ctx) => ticketEffectKey(ctx.run.runId, call),
    execute: async (call, { context }): Promise<TicketResult> => {
      const response = await idempotentFetch(
        new URL('/tickets', config.baseUrl),
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...config.headers },
          body: JSON.stringify(call),
          signal: context.run.signal,
        },
        ticketEffectKey(context.run.runId, call),
      );
      return (await response.json()) as TicketResult;
    },
  });
}

/** `<runId>:ticket:<sha256 of the canonical input>`. */
export function ticketEffectKey(runId: string, call: z.infer<typeof input>): string {
  return `${runId}:ticket:${inputFingerprint(call)}`;
}
