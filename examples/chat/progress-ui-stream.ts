import type { Client } from '@temporalio/client';
import type { UIMessageChunk } from 'ai';
import { loadConversation, type ConversationStore } from '../../src/index.js';
import { agentProgressQuery, type AgentRunOutput, type ConversationSource } from '../../worker/index.js';
import { readRunState, type RunState } from './run-state.js';

/** A message of the run's conversation, as `loadConversation` reads it. */
type Message = { readonly role: string; readonly content: unknown };
type Part = {
  readonly type?: string;
  readonly text?: string;
  readonly toolCallId?: string;
  readonly toolName?: string;
};

/** The chunks one stored assistant message shows: its text, then its tool calls. */
function messageChunks(message: Message, index: number): UIMessageChunk[] {
  const parts: Part[] = Array.isArray(message.content)
    ? (message.content as Part[])
    : [{ type: 'text', text: String(message.content) }];
  const chunks: UIMessageChunk[] = [{ type: 'start-step' }];
  parts.forEach((part, i) => {
    if (part.type === 'text' && part.text) {
      const id = `text-${index}-${i}`;
      chunks.push({ type: 'text-start', id }, { type: 'text-delta', id, delta: part.text }, { type: 'text-end', id });
    } else if (part.type === 'tool-call' && part.toolCallId !== undefined && part.toolName !== undefined) {
      const input = (part as { input?: unknown }).input;
      chunks.push({ type: 'tool-input-available', toolCallId: part.toolCallId, toolName: part.toolName, input });
    }
  });
  chunks.push({ type: 'finish-step' });
  return chunks;
}

/**
 * A UI message stream of a run built from what Temporal and the store already hold, for workers
 * that do not stream: every `pollMs` it reads the run's progress, and emits each assistant message
 * of the conversation once it is stored (a whole step's text at a time), and each effect call as a
 * `data-chamvi-effect` part (one id per call, so a newer outcome replaces the older one on the
 * page). It ends with `finish` when the run closes. Read from the start, it replays the run.
 */
export function progressUIMessageStream(options: {
  readonly client: Client;
  readonly store: ConversationStore;
  readonly workflowId: string;
  readonly pollMs?: number;
}): ReadableStream<UIMessageChunk> {
  const { client, store, workflowId, pollMs = 250 } = options;
  const lastSeen = new Map<string, RunState>();
  let shownMessages = 0;
  const shownEffects = new Map<string, string>();
  let cancelled = false;
  return new ReadableStream<UIMessageChunk>({
    async start(controller) {
      controller.enqueue({ type: 'start', messageId: workflowId });
      try {
        for (;;) {
          if (cancelled) return;
          const state = await readRunState(client, workflowId, lastSeen);
          const handle = client.workflow.getHandle(workflowId);
          const source: ConversationSource | undefined =
            state.status === 'completed'
              ? ((await handle.result()) as AgentRunOutput)
              : state.stale
                ? undefined
                : await handle.query(agentProgressQuery).catch(() => undefined);
          if (source !== undefined) {
            const messages = await loadConversation(store, source);
            const assistant = messages.filter((m) => m.role === 'assistant');
            for (; shownMessages < assistant.length; shownMessages++) {
              for (const chunk of messageChunks(assistant[shownMessages]!, shownMessages)) controller.enqueue(chunk);
            }
          }
          for (const effect of state.effects) {
            const id = effect.toolCallId ?? effect.key;
            const seen = JSON.stringify(effect);
            if (shownEffects.get(id) === seen) continue;
            shownEffects.set(id, seen);
            controller.enqueue({ type: 'data-chamvi-effect', id, data: effect });
          }
          if (state.status !== 'running') {
            if (state.error !== undefined) controller.enqueue({ type: 'error', errorText: state.error });
            controller.enqueue({ type: 'finish' });
            controller.close();
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, pollMs));
        }
      } catch (error) {
        if (!cancelled) controller.error(error);
      }
    },
    cancel() {
      cancelled = true;
    },
  });
}
